/* What `vmhost serve --web-config FILE` reads before listening: the file parsed
 * (parse/http/web_config.h) and the certificate and key it names (relative paths are relative to the
 * file's directory, as exporter-toolkit has them). Read once: a new certificate needs a restart.
 * net/serve_http.c turns it into HTTPS and basic auth. */
#ifndef VMHOST_CORE_WEB_FILES_H
#define VMHOST_CORE_WEB_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "parse/http/web_config.h"

struct web_files {
	struct web_config config;
	char *cert_pem, *key_pem; /* NUL-terminated; NULL without TLS */
	char *client_ca_pem;      /* client_ca_file's; NULL without it */
	size_t key_len;
};

/* Loads FILE. Returns 0, or a negative errno with err saying what, naming the file and, for a
 * syntax error, its line: "web.yml line 7: unknown key 'foo' ...". ret is untouched on failure. */
int web_files_load(const char *path, struct web_files *ret, char *err, size_t errcap);
/* Frees it and clears the key; a zeroed one is fine. */
void web_files_free(struct web_files *w);

/* True when the file asks for TLS or basic auth: what makes listening beyond loopback safe. */
bool web_files_protect(const struct web_files *w);

#endif
