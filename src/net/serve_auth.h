/* HTTP basic auth for `vmhost serve --web-config`: the users' bcrypt hashes checked with
 * crypt(3) (libxcrypt), one check at a time, and each result kept for a short time per
 * credential: the (user, password) pairs that matched, so a Prometheus scraping every few seconds
 * costs one bcrypt per password and minute, not one per scrape (exporter-toolkit caches likewise);
 * and, as keyed hashes, the pairs that did not, so a client repeating a wrong password (a flood,
 * or a misconfigured scraper) costs one bcrypt per distinct credential, not one per request. An
 * unknown user costs a bcrypt too, against a configured user's salt and cost, so timing does not
 * tell which users exist. */
#ifndef VMHOST_NET_SERVE_AUTH_H
#define VMHOST_NET_SERVE_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "net/web_files.h"

struct serve_auth;

struct serve_auth_stats {
	unsigned long bcrypt;  /* hashes computed (misses of the cache, right or wrong) */
	unsigned long cached;  /* checks answered from the cache, right or wrong */
	unsigned long refused; /* checks that failed */
};

#define SERVE_AUTH_CACHE_SECONDS 60.0

/* The verifier for n >= 1 users (hashes checked by web_config_parse), keeping each result
 * cache_seconds. 0, -EINVAL, -ENOMEM, or -ELIBACC without libcrypt (xcrypt_load says why). */
int serve_auth_new(const struct web_user *users, size_t n, double cache_seconds, struct serve_auth **ret);
/* NULL is fine; clears the cached passwords. */
void serve_auth_free(struct serve_auth *a);
/* True when the user exists and the password is hers. Thread-safe. */
bool serve_auth_check(struct serve_auth *a, const char *user, const char *password);
struct serve_auth_stats serve_auth_stats(struct serve_auth *a);

#endif
