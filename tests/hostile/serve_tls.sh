#!/bin/bash
# serve's TLS against clients that would weaken it, and share plan's against a server that would:
# by default TLS 1.2 is ECDHE with AEAD ciphers only (a static-RSA or CBC handshake is refused);
# the web config's cipher_suites, min_version and max_version are honoured as exporter-toolkit's
# (a combination of listed parts that no listed suite is gets no answer); a client certificate
# must be a client's (one for servers only, though client_ca_file signed it, is refused); share
# plan --from refuses a server that offers TLS 1.1 at most. openssl makes the certificates, curl
# (OpenSSL) is the client, openssl s_server the old server.
. "$VMHOST_TESTS/lib.sh"
. "$VMHOST_TESTS/e2e/serve_lib.sh"
for tool in curl openssl; do command -v $tool >/dev/null || die "$tool is missing"; done
cd "$TEST_TMP" || die "no TEST_TMP"
FIX=$VMHOST_FIXTURES/serve

# An RSA server certificate (a static RSA key exchange needs one), a client CA and three clients:
# one for TLS clients, one for TLS servers only, one without an extended key usage.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1" \
	-keyout server.key -out server.crt 2>/dev/null || die "openssl: server certificate"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=client-ca \
	-keyout ca.key -out ca.crt 2>/dev/null || die "openssl: client CA"
for who in client serveronly none; do
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$who" -keyout "$who.key" \
		-out "$who.csr" 2>/dev/null || die "openssl: $who request"
	case $who in
	client) echo "extendedKeyUsage=clientAuth" >"$who.ext" ;;
	serveronly) echo "extendedKeyUsage=serverAuth" >"$who.ext" ;;
	none) : >"$who.ext" ;;
	esac
	openssl x509 -req -in "$who.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile "$who.ext" \
		-out "$who.crt" 2>/dev/null || die "openssl: $who certificate"
done
chmod 600 ./*.key

# serve_with LINES: serve with a web config of the server certificate and LINES (more
# tls_server_config keys, printf's format); sets SERVER and PORT.
serve_with() {
	printf "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n$1" >web.yml
	spawn "$VMHOST" --proc-root "$FIX/proc" --sys-root "$FIX/sys" serve --listen 127.0.0.1:0 --web-config web.yml \
		2>serve.log
	SERVER=$SPAWNED
	serve_port serve.log "$SERVER" || die "serve did not start: $(cat serve.log)"
}
# get ARGS...: curl's HTTP code for /metrics over TLS with ARGS (000: no answer, the handshake
# refused or the connection closed).
get() { curl -s -o /dev/null -w '%{http_code}' --cacert server.crt --max-time 10 "$@" "https://127.0.0.1:$PORT/metrics"; }
tls12() { get --tlsv1.2 --tls-max 1.2 --ciphers "$1"; }

# shakes NOTE CIPHER=CODE...: each TLS 1.2 handshake with CIPHER (tls13: TLS 1.3 with its own)
# gets CODE for /metrics (000: refused, or closed unanswered).
shakes() {
	local note=$1 pair cipher want got
	shift
	for pair in "$@"; do
		cipher=${pair%=*} want=${pair#*=}
		if [ "$cipher" = tls13 ]; then got=$(get --tlsv1.3); else got=$(tls12 "$cipher"); fi
		check "$note: $cipher $([ "$want" = 200 ] && echo answered || echo refused) ($got)" [ "$got" = "$want" ]
	done
}

# By default ECDHE with GCM or ChaCha20; no static RSA key exchange, no CBC.
serve_with ""
shakes "default" ECDHE-RSA-AES128-GCM-SHA256=200 ECDHE-RSA-CHACHA20-POLY1305=200 AES128-SHA=000 \
	AES128-GCM-SHA256=000 ECDHE-RSA-AES128-SHA=000 tls13=200
stop_pid "$SERVER"
# The suites listed, and no other, though ECDHE-RSA-AES128-SHA's parts each are in one of them.
serve_with "  cipher_suites:\n    - TLS_RSA_WITH_AES_128_CBC_SHA\n    - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n"
shakes "cipher_suites" AES128-SHA=200 ECDHE-RSA-AES256-GCM-SHA384=200 ECDHE-RSA-AES128-GCM-SHA256=000 \
	ECDHE-RSA-AES128-SHA=000 tls13=200
stop_pid "$SERVER"
serve_with "  min_version: TLS13\n"
shakes "min_version TLS13" ECDHE-RSA-AES128-GCM-SHA256=000 tls13=200
stop_pid "$SERVER"
serve_with "  max_version: TLS12\n"
shakes "max_version TLS12" ECDHE-RSA-AES128-GCM-SHA256=200 tls13=000
stop_pid "$SERVER"

serve_with "  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n"
check "client certificates: a client's (clientAuth): 200" [ "$(get --cert client.crt --key client.key)" = 200 ]
check "... one without an extended key usage: 200" [ "$(get --cert none.crt --key none.key)" = 200 ]
check "... a server's (serverAuth only), though client_ca_file signed it: 403" \
	[ "$(get --cert serveronly.crt --key serveronly.key)" = 403 ]
stop_pid "$SERVER"

# share plan --from to a server that speaks TLS 1.1 at most.
PORT=$(free_port)
echo sketch >s.sketch
spawn openssl s_server -accept "127.0.0.1:$PORT" -cert server.crt -key server.key -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' -WWW
OLD=$SPAWNED
wait_for 10 sh -c "openssl s_client -connect 127.0.0.1:$PORT -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' </dev/null >/dev/null 2>&1" ||
	die "openssl s_server -tls1_1 did not start"
"$VMHOST" share plan --from "https://127.0.0.1:$PORT/s.sketch" --ca-file server.crt --timeout 10 >/dev/null 2>err
rc=$?
check "share plan --from a TLS 1.1 server: refused in the handshake, exit 1 ($rc: $(cat err))" sh -c "[ $rc = 1 ] && grep -q ': TLS: ' err"
stop_pid "$OLD"
finish
