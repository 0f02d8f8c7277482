/* The web configuration of `vmhost serve --web-config FILE`: the YAML file of Prometheus'
 * exporter-toolkit (what node_exporter's --web.config.file reads), the part of it vmhost serves:
 *
 *   tls_server_config:
 *     cert_file: server.crt
 *     key_file: server.key
 *     min_version: TLS12        # TLS12 (default) or TLS13; max_version likewise (default TLS13)
 *     cipher_suites:            # TLS 1.2's, by Go's names (parse/http/web_cipher.h); or [A, B]
 *       - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
 *     client_ca_file: clients.pem                  # with client_auth_type
 *     client_auth_type: RequireAndVerifyClientCert # or NoClientCert (default)
 *   basic_auth_users:
 *     prometheus: $2y$10$...    # bcrypt
 *
 * A pure parser of the YAML subset that format uses (block mappings two levels deep, plain,
 * 'single' and "double" quoted scalars, comments; cipher_suites' list as "- NAME" lines or a flow
 * list of names on its line). Strict like exporter-toolkit: an unknown key,
 * a key twice or a key vmhost does not implement is an error naming its line
 * (fuzz/fuzz_web_config.c). */
#ifndef VMHOST_PARSE_WEB_CONFIG_H
#define VMHOST_PARSE_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "parse/http/web_cipher.h"

#define WEB_CIPHER_SUITES_MAX 32

enum web_tls_version { WEB_TLS12 = 12, WEB_TLS13 = 13 };

struct web_user {
	char *name;
	char *hash; /* bcrypt: "$2a$", "$2b$" or "$2y$", cost, 53 characters of salt and hash */
	int line;
};

struct web_config {
	bool tls;                 /* tls_server_config has keys: serve HTTPS */
	char *cert_file;          /* PEM, the chain after the certificate; as written */
	char *key_file;           /* PEM, unencrypted */
	enum web_tls_version min_version, max_version; /* TLS12 and TLS13 when not given */
	const struct web_cipher_suite *cipher_suites[WEB_CIPHER_SUITES_MAX]; /* as listed, repeats dropped */
	size_t ncipher_suites;    /* 0: vmhost's default (ECDHE with AEAD ciphers for TLS 1.2) */
	char *client_ca_file;     /* PEM: the CAs a client's certificate must chain to; NULL: none */
	bool client_cert_required; /* client_auth_type RequireAndVerifyClientCert (needs client_ca_file) */
	struct web_user *users;   /* basic_auth_users; none: no authentication */
	size_t nusers;
};

/* Parses the file's text. Returns 0, -EINVAL with *ret_line (1-based) and err saying why, or
 * -ENOMEM (*ret_line 0). ret is untouched on failure. */
int web_config_parse(const char *buf, size_t len, struct web_config *ret, int *ret_line, char *err, size_t errcap);
/* Frees what parsing allocated; a zeroed or freed config is fine. */
void web_config_free(struct web_config *c);

/* True for a bcrypt hash crypt(3) can check: "$2[aby]$NN$" and 53 characters of [./A-Za-z0-9]. */
bool web_bcrypt_hash_ok(const char *s);

/* "TLS12" / "TLS13". */
const char *web_tls_version_name(enum web_tls_version v);

#endif
