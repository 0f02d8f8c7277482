/* The fan-out of parallel.h: shares taken by whichever thread is free. */
#include "core/base/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

enum { SHARES_PER_THREAD = 16 };

size_t parallel_threads(size_t n, size_t per_thread)
{
	static long cpus; /* sysconf reads /sys every call: once is enough to share work */
	if (!cpus)
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t t = n / per_thread, limit = cpus > 0 ? 2 * (size_t)cpus : 1;
	t = t < limit ? t : limit;
	t = t < PARALLEL_MAX ? t : PARALLEL_MAX;
	return t ? t : 1;
}

/* A round of parallel()'s: fn(arg, t, n) takes every n-th item from its t-th (share t of n). */
struct round {
	void (*fn)(void *arg, size_t t, size_t n);
	void *arg;
	size_t nshares;
	atomic_size_t next; /* the next share not yet taken */
};

static void *take_shares(void *p)
{
	struct round *r = p;
	for (size_t t; (t = atomic_fetch_add(&r->next, 1)) < r->nshares;)
		r->fn(r->arg, t, r->nshares);
	return NULL;
}

void parallel(size_t n, void (*fn)(void *arg, size_t t, size_t n), void *arg)
{
	pthread_t threads[PARALLEL_MAX];
	bool started[PARALLEL_MAX] = {false};
	n = n < 1 ? 1 : n < PARALLEL_MAX ? n : PARALLEL_MAX;
	struct round r = {.fn = fn, .arg = arg, .nshares = n == 1 ? 1 : n * SHARES_PER_THREAD};
	atomic_init(&r.next, 0);
	for (size_t t = 1; t < n; t++)
		started[t] = pthread_create(&threads[t], NULL, take_shares, &r) == 0;
	take_shares(&r);
	for (size_t t = 1; t < n; t++)
		if (started[t])
			pthread_join(threads[t], NULL);
}
