/* What `vmhost serve --web-config FILE` sets up before listening: the file parsed
 * (parse/web_config.h), the certificate and key it names read (relative paths are relative to
 * the file's directory, as exporter-toolkit has them), the GnuTLS priorities for its TLS
 * versions, and the basic auth verifier. Read once: a new certificate needs a restart. */
#ifndef VMHOST_NET_SERVE_WEB_H
#define VMHOST_NET_SERVE_WEB_H

#include <stdbool.h>
#include <stddef.h>

#include "net/serve_auth.h"
#include "parse/web_config.h"

struct serve_web {
	struct web_config config;
	char *cert_pem, *key_pem;   /* NUL-terminated; NULL without TLS */
	size_t key_len;
	const char *tls_priorities; /* GnuTLS: the versions from min_version to max_version */
	struct serve_auth *auth;    /* NULL without basic_auth_users */
};

/* Loads FILE. Returns 0, or a negative errno with err saying what, naming the file and, for a
 * syntax error, its line: "web.yml line 7: unknown key 'foo' ...". ret is untouched on failure. */
int serve_web_load(const char *path, struct serve_web *ret, char *err, size_t errcap);
/* Frees it and clears the key; a zeroed one is fine. */
void serve_web_free(struct serve_web *w);

/* True when the file asks for TLS or basic auth: what makes listening beyond loopback safe. */
bool serve_web_protects(const struct serve_web *w);

#endif
