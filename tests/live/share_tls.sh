#!/bin/bash
# share plan --from https://: vmhost serve with a web config of a self-signed certificate and
# basic auth on loopback; share plan reads /sketch over TLS with --ca-file (the same VMs and plan
# as the same bytes read from a file), refuses a certificate it cannot verify (not in the system's
# trust store, or for another name: exit 77, one line) and never falls back to plain HTTP; an
# http:// URL to the TLS port fails at once. --cert and --key show a client certificate to a server
# that demands one (openssl s_server). --auth-file gives basic auth's user and password from a file
# only its owner may read, over https and plain http, never shown; a URL's own win.
# (--timeout over the name's lookup: share_resolve.sh.)
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
. "$VMHOST_TESTS/e2e/web_config_lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root: process_vm_readv of other users' processes"
for tool in curl jq openssl bc /usr/bin/python3; do command -v $tool >/dev/null || die "$tool is missing"; done

# self_signed NAME SAN: $TEST_TMP/NAME.{crt,key}, a self-signed certificate for SAN.
self_signed() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=$1" \
		-addext "subjectAltName=$2" -keyout "$TEST_TMP/$1.key" -out "$TEST_TMP/$1.crt" 2>/dev/null ||
		die "openssl could not make a certificate for $1"
	chmod 600 "$TEST_TMP/$1.key"
}
self_signed vmhost-test-host IP:127.0.0.1,DNS:localhost
self_signed other.example DNS:other.example
# planner.{crt,key}: a client certificate that client-ca signed.
self_signed client-ca "DNS:client-ca"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=planner -keyout "$TEST_TMP/planner.key" \
	-out "$TEST_TMP/planner.csr" 2>/dev/null &&
	openssl x509 -req -in "$TEST_TMP/planner.csr" -CA "$TEST_TMP/client-ca.crt" -CAkey "$TEST_TMP/client-ca.key" \
		-CAcreateserial -days 2 -out "$TEST_TMP/planner.crt" 2>/dev/null || die "openssl could not sign a client certificate"

# serve_tls NAME: vmhost serve on 127.0.0.1 with NAME's certificate and user ops; sets SERVER, PORT.
serve_tls() {
	printf 'tls_server_config:\n  cert_file: %s.crt\n  key_file: %s.key\nbasic_auth_users:\n  ops: %s\n' \
		"$1" "$1" "$HASH" >"$TEST_TMP/$1.yml"
	spawn "$VMHOST" serve --listen 127.0.0.1:0 --min-interval 5 --no-kvm --sketch-sample 1/8 --sketch-cpu-budget 0 \
		--key-file "$KEY" --web-config "$TEST_TMP/$1.yml" 2>"$TEST_TMP/serve.log"
	SERVER=$SPAWNED
	serve_port "$TEST_TMP/serve.log" "$SERVER" || die "vmhost serve did not start"
}

# plan ARGS...: share plan ARGS --json into $TEST_TMP/out, stderr into err; its exit code in RC
# and how long it took in TOOK (seconds).
plan() {
	local t0
	t0=$(date +%s.%N)
	"$VMHOST" share plan "$@" --json >"$TEST_TMP/out" 2>"$TEST_TMP/err"
	RC=$?
	TOOK=$(echo "$(date +%s.%N) - $t0" | bc)
	cat "$TEST_TMP/out" "$TEST_TMP/err" >>"$TEST_TMP/all-output"
}
# exited CODE MAX: the last plan exited CODE within MAX seconds.
exited() { [ "$RC" = "$1" ] && le "$TOOK" "$2"; }
one_line() { [ "$(wc -l <"$TEST_TMP/err")" = 1 ] && grep -q "$1" "$TEST_TMP/err"; }

KEY=$TEST_TMP/fleet.key
HASH=$(web_hash 's3cret')
fake_guest tls-s1 -m 64 -fake-shared 0.5 -fake-zero 0.1 -fake-seed 7301 -fake-guest "$RANDOM" -fake-nomerge
S1=$SPAWNED
"$VMHOST" share --db "$TEST_TMP/vmhost.db" --pid "$S1" --sample 1/8 --cpu-budget 0 --key-file "$KEY" \
	--out "$TEST_TMP/s1.sketch" >/dev/null 2>&1 || die "share --out failed"

serve_tls vmhost-test-host
URL=https://ops:s3cret@127.0.0.1:$PORT/sketch
CA=$TEST_TMP/vmhost-test-host.crt
curl -s --cacert "$CA" -u ops:s3cret --max-time 300 -o "$TEST_TMP/served.sketch" -w '%{http_code}' \
	"https://127.0.0.1:$PORT/sketch" >"$TEST_TMP/code"
check "curl reads /sketch over TLS ($(cat "$TEST_TMP/code"))" [ "$(cat "$TEST_TMP/code")" = 200 ]
plan --from "$URL" --ca-file "$CA" --timeout 300
check "--from https:// with --ca-file: exit 0 ($RC: $(head -c 300 "$TEST_TMP/err"))" [ "$RC" = 0 ]
mv "$TEST_TMP/out" "$TEST_TMP/tls.json"
check "the URL's password is not in the output (the source: $(jq -c '[.hosts[].source]' "$TEST_TMP/tls.json"))" \
	sh -c "! grep -q s3cret '$TEST_TMP/tls.json' && jq -e '.hosts[0].source | test(\"^https://ops:[*]+@127.0.0.1:\")' '$TEST_TMP/tls.json' >/dev/null"
plan --sketch "$TEST_TMP/served.sketch"
same_plan() { jq -e --slurpfile f "$1" '.vms == $f[0].vms and .plan == $f[0].plan and (.vms | length) >= 1' "$2" >/dev/null; }
check "the same VMs and plan as the same bytes read from a file" same_plan "$TEST_TMP/out" "$TEST_TMP/tls.json"
check "s1 as served over TLS holds what share --out measured" sh -c "
	'$VMHOST' share plan --sketch '$TEST_TMP/s1.sketch' --json | jq -c '[.vms[] | {pid, bytes, zero_bytes}]' >'$TEST_TMP/file.vms' &&
	jq -c --argjson p $S1 '[.vms[] | select(.pid == \$p) | {pid, bytes, zero_bytes}]' '$TEST_TMP/tls.json' | cmp -s - '$TEST_TMP/file.vms'"

plan --from "https://ops:wrong@127.0.0.1:$PORT/sketch" --ca-file "$CA"
check "basic auth over TLS: a wrong password is 401, exit 77 ($RC)" sh -c "[ $RC = 77 ] && grep -q 'HTTP 401' '$TEST_TMP/err'"

# --auth-file FILE: USER:PASS on its first line, for each --from URL without its own.
auth_file() { printf '%s\n' "$2" >"$TEST_TMP/$1" && chmod "$3" "$TEST_TMP/$1"; }
auth_file auth ops:s3cret 600
auth_file auth.wrong ops:n0t-th1s 600
auth_file auth.open ops:s3cret 644
: >"$TEST_TMP/all-output"
plan --from "https://127.0.0.1:$PORT/sketch" --ca-file "$CA" --auth-file "$TEST_TMP/auth" --timeout 300
check "--auth-file over https: exit 0 ($RC: $(head -c 300 "$TEST_TMP/err"))" [ "$RC" = 0 ]
check "  ... the same VMs and plan as with the URL's password" same_plan "$TEST_TMP/out" "$TEST_TMP/tls.json"
plan --from "https://127.0.0.1:$PORT/sketch" --ca-file "$CA" --auth-file "$TEST_TMP/auth.open"
check "a --auth-file others may read (0644): exit 77 ($RC)" [ "$RC" = 77 ]
check "  ... in one line: chmod 600 FILE ($(cat "$TEST_TMP/err"))" one_line "chmod 600 $TEST_TMP/auth.open"
ln -s auth "$TEST_TMP/auth.link"
plan --from "https://127.0.0.1:$PORT/sketch" --ca-file "$CA" --auth-file "$TEST_TMP/auth.link"
check "a --auth-file that is a symbolic link is not followed: exit 1 ($RC)" sh -c "[ $RC = 1 ] && grep -q 'a symbolic link, not followed' '$TEST_TMP/err'"
plan --from "https://127.0.0.1:$PORT/sketch" --ca-file "$CA" --auth-file "$TEST_TMP/auth.wrong"
check "a wrong password in --auth-file: the server's 401, exit 77 ($RC: $(cat "$TEST_TMP/err"))" \
	sh -c "[ $RC = 77 ] && grep -q 'HTTP 401' '$TEST_TMP/err'"
plan --from "$URL" --ca-file "$CA" --auth-file "$TEST_TMP/auth.wrong" --timeout 300
check "a URL's own user and password win over --auth-file's: exit 0 ($RC: $(head -c 300 "$TEST_TMP/err"))" [ "$RC" = 0 ]
plan --sketch "$TEST_TMP/s1.sketch" --auth-file "$TEST_TMP/auth"
check "--auth-file without a --from URL: a usage error, exit 2 ($RC: $(cat "$TEST_TMP/err"))" \
	sh -c "[ $RC = 2 ] && grep -q 'auth-file is for --from URLs' '$TEST_TMP/err'"

plan --from "$URL" --timeout 10
check "without --ca-file (self-signed, not in the system's trust store): exit 77 ($RC)" [ "$RC" = 77 ]
check "  ... in one line: its issuer is not trusted ($(cat "$TEST_TMP/err"))" one_line "certificate is not trusted for 127.0.0.1: its issuer"
check "  ... without the URL's password" sh -c "! grep -q s3cret '$TEST_TMP/err'"
plan --from "$URL" --ca-file "$TEST_TMP/other.example.crt" --timeout 10
check "--ca-file of another certificate: exit 77 ($RC)" [ "$RC" = 77 ]
plan --from "http://ops:s3cret@127.0.0.1:$PORT/sketch" --timeout 5
check "http:// to the TLS port: exit 1 ($RC) in $TOOK s (within the timeout)" exited 1 6
check "  ... saying so in one line ($(cat "$TEST_TMP/err"))" one_line "https://"
plan --from "$URL" --ca-file "$TEST_TMP/missing.crt"
check "a missing --ca-file: exit 1, naming it ($RC)" sh -c "[ $RC = 1 ] && grep -q 'missing.crt: No such file' '$TEST_TMP/err'"
plan --sketch "$TEST_TMP/s1.sketch" --ca-file "$CA"
check "--ca-file without an https:// URL: a usage error, exit 2 ($RC)" sh -c "[ $RC = 2 ] && grep -q 'for https:// URLs' '$TEST_TMP/err'"
stop_pid "$SERVER"

serve_tls other.example
plan --from "https://ops:s3cret@127.0.0.1:$PORT/sketch" --ca-file "$TEST_TMP/other.example.crt" --timeout 10
check "a certificate for another name (other.example at 127.0.0.1): exit 77 ($RC)" [ "$RC" = 77 ]
check "  ... in one line: for another host name ($(cat "$TEST_TMP/err"))" one_line "not trusted for 127.0.0.1: it is for another host name"
stop_pid "$SERVER"

# Plain http on loopback with basic auth: --auth-file there too.
printf 'basic_auth_users:\n  ops: %s\n' "$HASH" >"$TEST_TMP/basic.yml"
spawn "$VMHOST" serve --listen 127.0.0.1:0 --min-interval 5 --no-kvm --sketch-sample 1/8 --sketch-cpu-budget 0 \
	--key-file "$KEY" --web-config "$TEST_TMP/basic.yml" 2>"$TEST_TMP/serve.log"
SERVER=$SPAWNED
serve_port "$TEST_TMP/serve.log" "$SERVER" || die "vmhost serve did not start"
plan --from "http://127.0.0.1:$PORT/sketch" --timeout 300
check "plain http with basic auth, no password given: the server's 401, exit 77 ($RC)" \
	sh -c "[ $RC = 77 ] && grep -q 'HTTP 401' '$TEST_TMP/err'"
plan --from "http://127.0.0.1:$PORT/sketch" --auth-file "$TEST_TMP/auth" --timeout 300
check "--auth-file over plain http: exit 0 ($RC: $(head -c 300 "$TEST_TMP/err"))" [ "$RC" = 0 ]
check "  ... s1 among its VMs" sh -c "jq -e --argjson p $S1 'any(.vms[]; .pid == \$p)' '$TEST_TMP/out' >/dev/null"
stop_pid "$SERVER"
check "no password of a --auth-file in any output or message of these runs" \
	sh -c "[ -s '$TEST_TMP/all-output' ] && ! grep -q -e s3cret -e n0t-th1s '$TEST_TMP/all-output'"

# serve requiring client certificates (client_ca_file, RequireAndVerifyClientCert), no basic auth,
# beyond loopback: /sketch is served to a client with a certificate client-ca signed, and nothing
# to one without.
printf 'tls_server_config:\n  cert_file: vmhost-test-host.crt\n  key_file: vmhost-test-host.key\n  client_ca_file: client-ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n' \
	>"$TEST_TMP/mtls.yml"
spawn "$VMHOST" serve --listen 0.0.0.0:0 --min-interval 5 --no-kvm --sketch-sample 1/8 --sketch-cpu-budget 0 \
	--key-file "$KEY" --web-config "$TEST_TMP/mtls.yml" 2>"$TEST_TMP/serve.log"
SERVER=$SPAWNED
serve_port "$TEST_TMP/serve.log" "$SERVER" || die "vmhost serve did not start"
check "serve says /sketch is served there ($(grep sketch "$TEST_TMP/serve.log"))" grep -q "/sketch serves" "$TEST_TMP/serve.log"
code() { curl -s -o "$TEST_TMP/body" -w '%{http_code}' --cacert "$CA" "$@"; }
check "client certificates required: /metrics without one is 403" [ "$(code "https://127.0.0.1:$PORT/metrics")" = 403 ]
check "  ... saying why" grep -q "client certificate signed by the web config's client_ca_file is required" "$TEST_TMP/body"
check "  ... with one client-ca signed: 200" [ "$(code --cert "$TEST_TMP/planner.crt" --key "$TEST_TMP/planner.key" "https://127.0.0.1:$PORT/metrics")" = 200 ]
check "  ... with one client-ca did not sign: 403" \
	[ "$(code --cert "$TEST_TMP/other.example.crt" --key "$TEST_TMP/other.example.key" "https://127.0.0.1:$PORT/metrics")" = 403 ]
plan --from "https://127.0.0.1:$PORT/sketch" --ca-file "$CA" --cert "$TEST_TMP/planner.crt" --key "$TEST_TMP/planner.key" --timeout 300
check "share plan --cert --key reads /sketch beyond loopback without basic auth: exit 0 ($RC $(cat "$TEST_TMP/err"))" [ "$RC" = 0 ]
check "  ... s1 among its VMs" jq -e --argjson p "$S1" 'any(.vms[]; .pid == $p)' "$TEST_TMP/out"
plan --from "https://127.0.0.1:$PORT/sketch" --ca-file "$CA"
check "  ... without them: exit 77 ($RC), the server's 403 in one line" one_line "HTTP 403: a client certificate"
stop_pid "$SERVER"

# --cert and --key: openssl s_server, which demands a client certificate signed by client-ca,
# serves the sketch file (-WWW: GET /FILE answers ./FILE).
PORT=$(free_port)
(cd "$TEST_TMP" && exec openssl s_server -quiet -accept "127.0.0.1:$PORT" -cert "$CA" -key vmhost-test-host.key \
	-Verify 1 -CAfile client-ca.crt -WWW -http_server_binmode) >"$TEST_TMP/s_server.log" 2>&1 &
SSERVER=$!
adopt "$SSERVER"
wait_for 5 curl -sf --cacert "$CA" -o /dev/null --cert "$TEST_TMP/planner.crt" --key "$TEST_TMP/planner.key" \
	"https://127.0.0.1:$PORT/s1.sketch" || die "openssl s_server did not start: $(cat "$TEST_TMP/s_server.log")"
plan --from "https://127.0.0.1:$PORT/s1.sketch" --ca-file "$CA" --cert "$TEST_TMP/planner.crt" --key "$TEST_TMP/planner.key"
check "--cert and --key to a server that demands a client certificate: exit 0 ($RC $(cat "$TEST_TMP/err"))" [ "$RC" = 0 ]
check "  ... it read the sketch file" jq -e --argjson p "$S1" 'any(.vms[]; .pid == $p)' "$TEST_TMP/out"
plan --from "https://127.0.0.1:$PORT/s1.sketch" --ca-file "$CA" --timeout 10
check "without them: exit 1 ($RC), TLS's reason in one line ($(cat "$TEST_TMP/err"))" sh -c "[ $RC = 1 ] && [ \$(wc -l <'$TEST_TMP/err') = 1 ] && grep -q ': TLS: ' '$TEST_TMP/err'"
plan --from "https://127.0.0.1:$PORT/s1.sketch" --ca-file "$CA" --cert "$TEST_TMP/planner.crt"
check "--cert without --key: a usage error ($RC)" [ "$RC" = 2 ]
stop_pid "$SSERVER"
stop_pid "$S1"
finish
