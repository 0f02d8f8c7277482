#!/bin/bash
# vmhost serve --web-config on the fixture host, with curl as the client: HTTPS with a CA made for
# the test, basic auth (right, wrong and no password, unknown user), a wrong CA, plain HTTP to the
# TLS port, TLS versions, malformed configs (exit 2, the line named), a key that is not the
# certificate's, and the loopback rule: a non-loopback address (or passed socket) refused without
# TLS or auth, allowed with --web-config or --insecure-listen.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
. "$VMHOST_TESTS/e2e/web_config_lib.sh"
FIX=$VMHOST_FIXTURES/serve
V="$VMHOST --proc-root $FIX/proc --sys-root $FIX/sys"
for tool in openssl curl /usr/bin/python3; do
	command -v $tool >/dev/null || die "$tool is missing (scripts/deps/test/serve.txt)"
done
PKI=$TEST_TMP/pki
web_pki "$PKI" || die "openssl could not make the test certificates"
web_example "$PKI"

said() { grep -qF -- "$1" "$TEST_TMP/err" || { say "stderr: $(cat "$TEST_TMP/err")"; return 1; }; }

# status ARGS...: the HTTP status curl got ("000" when there was no HTTP answer).
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

serve_start "$TEST_TMP/tls.log" "$FIX" --web-config "$PKI/web.yml" || die "serve with the example web config did not start"
TLS=$SERVER
URL=https://127.0.0.1:$PORT/metrics
check "says it serves https with basic auth" grep -q "listening on https://127.0.0.1:$PORT/metrics (basic auth)" "$TEST_TMP/tls.log"
check "the example's user and password get the metrics over TLS" sh -c \
	"curl -sf --cacert '$PKI/ca.crt' -u prometheus:change-me '$URL' | grep -q '^vmhost_vms 2$'"
check "  ... by name too (localhost is in the certificate)" test "$(status --cacert "$PKI/ca.crt" -u prometheus:change-me "https://localhost:$PORT/metrics")" = 200
check "a wrong password gets 401" test "$(status --cacert "$PKI/ca.crt" -u prometheus:change-you "$URL")" = 401
check "no password gets 401" test "$(status --cacert "$PKI/ca.crt" "$URL")" = 401
check "an unknown user gets 401" test "$(status --cacert "$PKI/ca.crt" -u grafana:change-me "$URL")" = 401
check "  ... with a Basic challenge" sh -c "curl -s -D - -o /dev/null --cacert '$PKI/ca.crt' '$URL' | grep -qi '^WWW-Authenticate: Basic realm=\"vmhost\"'"
check "  ... on every path and method (/ and POST)" test "$(status --cacert "$PKI/ca.crt" "https://127.0.0.1:$PORT/")$(status --cacert "$PKI/ca.crt" -X POST "$URL")" = 401401
check "  ... and no metrics in the body" sh -c "! curl -s --cacert '$PKI/ca.crt' -u prometheus:x '$URL' | grep -q vmhost_"
curl -s -o /dev/null --cacert "$PKI/other-ca.crt" -u prometheus:change-me "$URL"
check "a client trusting another CA fails verification (curl 60)" test $? = 60
curl -s -o /dev/null -u prometheus:change-me "http://127.0.0.1:$PORT/metrics"
rc=$?
check "plain HTTP to the TLS port gets no HTTP answer (curl $rc)" test "$rc" = 52 -o "$rc" = 56
check "TLS 1.1 is refused" test "$(status --cacert "$PKI/ca.crt" -u prometheus:change-me --tlsv1.1 --tls-max 1.1 "$URL")" = 000
check "TLS 1.2 is served" test "$(status --cacert "$PKI/ca.crt" -u prometheus:change-me --tlsv1.2 --tls-max 1.2 "$URL")" = 200
check "still serving after the bad clients" test "$(status --cacert "$PKI/ca.crt" -u prometheus:change-me "$URL")" = 200
stop_pid "$TLS"
check "nothing from the bad clients' TLS errors on stderr" sh -c "! grep -qi 'tls\|handshake' '$TEST_TMP/tls.log'"

# min_version TLS13, a user with a quoted name, no TLS 1.2.
H=$(web_hash 's3cret: "x"')
cat >"$PKI/tls13.yml" <<EOF
tls_server_config:
  cert_file: $PKI/server.crt
  key_file: '$PKI/server.key'
  min_version: TLS13
basic_auth_users:
  "scraper one": "$H"
EOF
serve_start "$TEST_TMP/tls13.log" "$FIX" --web-config "$PKI/tls13.yml" || die "serve with min_version TLS13 did not start"
URL=https://127.0.0.1:$PORT/metrics
check "min_version TLS13: TLS 1.2 is refused" test "$(status --cacert "$PKI/ca.crt" -u 'scraper one:s3cret: "x"' --tls-max 1.2 "$URL")" = 000
check "min_version TLS13: TLS 1.3 is served, to a quoted user name" test "$(status --cacert "$PKI/ca.crt" -u 'scraper one:s3cret: "x"' --tlsv1.3 "$URL")" = 200
stop_pid "$SERVER"

# Malformed configs: exit 2, one line naming the file and the line.
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\n# a comment\n\n  foo: 1\n' >"$PKI/bad.yml"
check "an unknown key: exit 2" expect_exit 2 --listen 127.0.0.1:0 --web-config "$PKI/bad.yml"
check "  ... naming the file, line 7 and the key" said "web config: $PKI/bad.yml line 7: unknown key 'foo' in tls_server_config"
printf 'basic_auth_users:\n  alice: s3cret\n' >"$PKI/plain.yml"
check "a password instead of a hash: exit 2" expect_exit 2 --listen 127.0.0.1:0 --web-config "$PKI/plain.yml"
check "  ... line 2, not a bcrypt hash" said "plain.yml line 2: user 'alice': not a bcrypt hash"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS10\n' >"$PKI/old.yml"
check "min_version TLS10: exit 2" expect_exit 2 --web-config "$PKI/old.yml"
check "  ... line 4" said "old.yml line 4: min_version TLS10: vmhost serves TLS 1.2 at least"
check "a missing web config: exit 2" expect_exit 2 --web-config "$PKI/none.yml"
check "  ... naming it" said "$PKI/none.yml: No such file or directory"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: missing.key\n' >"$PKI/nokey.yml"
check "a missing key file: exit 2" expect_exit 2 --web-config "$PKI/nokey.yml"
check "  ... naming its path, beside the config" said "key_file $PKI/missing.key: No such file or directory"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: other-ca.key\n' >"$PKI/mismatch.yml"
check "a key that is not the certificate's: exit 1" expect_exit 1 --listen 127.0.0.1:0 --web-config "$PKI/mismatch.yml"
check "  ... with GnuTLS's reason" said "do not match"

# The loopback rule.
check "every address without a web config: refused, exit 2" expect_exit 2 --listen :0
check "  ... saying how to fix it" said "give --web-config FILE"
check "0.0.0.0 likewise" expect_exit 2 --listen 0.0.0.0:0
check "a web config without TLS or users does not count" sh -c "printf '# empty\n' >'$PKI/empty.yml' && ! $V serve --listen 0.0.0.0:0 --web-config '$PKI/empty.yml' 2>/dev/null"
spawn $V serve --listen 0.0.0.0:0 --insecure-listen 2>"$TEST_TMP/insecure.log"
serve_port "$TEST_TMP/insecure.log" "$SPAWNED" || fail "--insecure-listen did not start"
check "--insecure-listen: serves plain HTTP on every address" test "$(status "http://127.0.0.1:$PORT/metrics")" = 200
check "  ... with a warning" grep -q 'warning: listening on 0.0.0.0:0: reachable from other hosts' "$TEST_TMP/insecure.log"
stop_pid "$SPAWNED"
spawn $V serve --listen 0.0.0.0:0 --web-config "$PKI/web.yml" 2>"$TEST_TMP/any.log"
serve_port "$TEST_TMP/any.log" "$SPAWNED" || fail "every address with a web config did not start"
check "every address with TLS and auth: allowed, no warning" sh -c "! grep -q warning '$TEST_TMP/any.log'"
check "  ... and served" test "$(status --cacert "$PKI/ca.crt" -u prometheus:change-me "https://127.0.0.1:$PORT/metrics")" = 200
stop_pid "$SPAWNED"
# A socket passed by systemd on every address: refused likewise.
/usr/bin/python3 -c '
import os, socket, sys
s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen(16)
os.dup2(s.fileno(), 3); os.set_inheritable(3, True)
os.environ["LISTEN_PID"] = str(os.getpid()); os.environ["LISTEN_FDS"] = "1"
os.execv(sys.argv[1], sys.argv[1:])' $V serve >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
check "a socket-activated non-loopback socket without a web config: exit 2" test $? = 2
check "  ... refused by its address" said "refusing 0.0.0.0:"
finish
