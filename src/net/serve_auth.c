#include "net/serve_auth.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/siphash.h"
#include "io/clock.h"
#include "io/secret.h"
#include "net/xcrypt.h"

#define AUTH_CACHE_ENTRIES 64
#define AUTH_CACHE_PASSWORD_MAX 128 /* longer passwords are checked every time, never cached */
#define AUTH_REFUSED_ENTRIES 256    /* a flood of distinct ones evicts only these, not the right ones */

struct cached {
	size_t user; /* index into users; valid when len > 0 */
	size_t len;
	char password[AUTH_CACHE_PASSWORD_MAX];
	double until; /* CLOCK_MONOTONIC */
};

/* A credential that did not match, as a keyed hash of its user and password (never the password). */
struct refused {
	uint64_t hash;
	double until; /* 0: a free entry */
};

struct serve_auth {
	struct web_user *users;
	size_t nusers;
	double cache_seconds;
	pthread_mutex_t cache_lock; /* the caches and the counters */
	struct cached cache[AUTH_CACHE_ENTRIES];
	size_t next;                /* the entry the next match replaces (oldest first) */
	struct refused refused[AUTH_REFUSED_ENTRIES];
	size_t next_refused;
	struct siphash_key key;     /* random, for the refused credentials' hashes */
	struct serve_auth_stats stats;
	pthread_mutex_t crypt_lock; /* one bcrypt at a time: a guessing client takes one CPU at most */
	struct crypt_data crypt;
};

/* Compares every byte whatever differs, so the time taken says nothing about where. */
static bool same_bytes(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

int serve_auth_new(const struct web_user *users, size_t n, double cache_seconds, struct serve_auth **ret)
{
	if (!n)
		return -EINVAL;
	int r = xcrypt_load(NULL, 0);
	if (r < 0)
		return r;
	struct serve_auth *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->users = calloc(n, sizeof(*a->users));
	if (!a->users) {
		free(a);
		return -ENOMEM;
	}
	a->nusers = n;
	a->cache_seconds = cache_seconds;
	if ((r = io_random_key(&a->key, sizeof(a->key))) < 0) {
		free(a->users);
		free(a);
		return r;
	}
	for (size_t i = 0; i < n; i++) {
		a->users[i].name = strdup(users[i].name);
		a->users[i].hash = strdup(users[i].hash);
		if (!a->users[i].name || !a->users[i].hash) {
			serve_auth_free(a);
			return -ENOMEM;
		}
	}
	pthread_mutex_init(&a->cache_lock, NULL);
	pthread_mutex_init(&a->crypt_lock, NULL);
	*ret = a;
	return 0;
}

void serve_auth_free(struct serve_auth *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nusers; i++) {
		free(a->users[i].name);
		free(a->users[i].hash);
	}
	free(a->users);
	explicit_bzero(a->cache, sizeof(a->cache));
	explicit_bzero(&a->key, sizeof(a->key));
	explicit_bzero(&a->crypt, sizeof(a->crypt));
	free(a);
}

static bool cache_has(struct serve_auth *a, size_t user, const char *password, size_t len, double now)
{
	bool hit = false;
	for (size_t i = 0; i < AUTH_CACHE_ENTRIES; i++) {
		const struct cached *c = &a->cache[i];
		hit |= c->len == len && c->user == user && same_bytes(c->password, password, len) && now < c->until;
	}
	return hit;
}

static void cache_add(struct serve_auth *a, size_t user, const char *password, size_t len, double now)
{
	if (len == 0 || len > AUTH_CACHE_PASSWORD_MAX || cache_has(a, user, password, len, now))
		return;
	struct cached *c = &a->cache[a->next];
	a->next = (a->next + 1) % AUTH_CACHE_ENTRIES;
	c->user = user;
	c->len = len;
	memcpy(c->password, password, len);
	c->until = now + a->cache_seconds;
}

/* The keyed hash of a credential: the user, a NUL, the password. */
static uint64_t credential_hash(const struct serve_auth *a, const char *user, const char *password)
{
	uint64_t h[2] = {siphash13(&a->key, user, strlen(user) + 1), 0};
	h[1] = siphash13(&a->key, password, strlen(password));
	return siphash13(&a->key, h, sizeof(h));
}

static bool refused_has(const struct serve_auth *a, uint64_t hash, double now)
{
	for (size_t i = 0; i < AUTH_REFUSED_ENTRIES; i++)
		if (a->refused[i].hash == hash && now < a->refused[i].until)
			return true;
	return false;
}

static void refused_add(struct serve_auth *a, uint64_t hash, double now)
{
	a->refused[a->next_refused] = (struct refused){hash, now + a->cache_seconds};
	a->next_refused = (a->next_refused + 1) % AUTH_REFUSED_ENTRIES;
}

/* crypt(3) of the password with the hash's salt and cost equals the hash. */
static bool bcrypt_matches(struct serve_auth *a, const char *hash, const char *password)
{
	pthread_mutex_lock(&a->crypt_lock);
	const char *out = xcrypt.rn(password, hash, &a->crypt, sizeof(a->crypt));
	size_t n = strlen(hash);
	bool ok = out && strlen(out) == n && same_bytes(out, hash, n);
	pthread_mutex_unlock(&a->crypt_lock);
	return ok;
}

bool serve_auth_check(struct serve_auth *a, const char *user, const char *password)
{
	size_t u = 0;
	bool known = false;
	for (size_t i = 0; i < a->nusers; i++)
		if (!known && !strcmp(a->users[i].name, user)) {
			u = i;
			known = true;
		}
	size_t len = strlen(password);
	uint64_t hash = credential_hash(a, user, password);
	double now = clock_monotonic_seconds();
	pthread_mutex_lock(&a->cache_lock);
	bool right = known && cache_has(a, u, password, len, now), wrong = !right && refused_has(a, hash, now);
	a->stats.cached += right || wrong;
	a->stats.refused += wrong;
	pthread_mutex_unlock(&a->cache_lock);
	if (right || wrong)
		return right;
	/* An unknown user is hashed against the first user's salt and cost, then refused. */
	bool ok = bcrypt_matches(a, a->users[u].hash, password) && known;
	pthread_mutex_lock(&a->cache_lock);
	a->stats.bcrypt++;
	if (ok) {
		cache_add(a, u, password, len, now);
	} else {
		refused_add(a, hash, now);
		a->stats.refused++;
	}
	pthread_mutex_unlock(&a->cache_lock);
	return ok;
}

struct serve_auth_stats serve_auth_stats(struct serve_auth *a)
{
	pthread_mutex_lock(&a->cache_lock);
	struct serve_auth_stats s = a->stats;
	pthread_mutex_unlock(&a->cache_lock);
	return s;
}
