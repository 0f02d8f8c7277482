# Shared by the --web-config tests, sourced after lib.sh: a certificate authority and a server
# certificate made with openssl for the test, a second CA that did not sign it, and web configs.

# web_pki DIR: DIR/ca.crt signs DIR/server.{crt,key} (CN localhost, SAN localhost and 127.0.0.1);
# DIR/other-ca.crt signs nothing here.
web_pki() {
	local d=$1 ca
	mkdir -p "$d" || return 1
	for ca in ca other-ca; do
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
			-subj "/CN=vmhost test $ca" -keyout "$d/$ca.key" -out "$d/$ca.crt" 2>/dev/null || return 1
	done
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
		-keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null || return 1
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$d/san.ext"
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
		-extfile "$d/san.ext" -out "$d/server.crt" 2>/dev/null || return 1
	chmod 600 "$d/server.key"
}

# web_hash PASSWORD: its bcrypt hash ($2b$, cost 10), from Debian's python3 (the crypt module).
web_hash() { /usr/bin/python3 -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))' "$1"; }

# web_example DIR: contrib's example web config with DIR's certificate and key (relative paths:
# the file sits in DIR); its user is prometheus, password change-me.
web_example() {
	sed -e 's|^  cert_file: .*|  cert_file: server.crt|' -e 's|^  key_file: .*|  key_file: server.key|' \
		"$VMHOST_TESTS/../contrib/web-config.yml" >"$1/web.yml"
}
