#include "io/peer/resolve.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "io/clock.h"

/* One lookup, shared by the caller and the thread that runs getaddrinfo: whichever lets go last
 * frees it. A caller past its deadline lets go at once; the thread, when the resolver answers. */
struct lookup {
	pthread_mutex_t lock;
	pthread_cond_t answered;
	int refs;
	bool done;
	int result; /* getaddrinfo's, and errno for EAI_SYSTEM */
	int error;
	struct addrinfo *res;
	char host[256], port[8];
};

static const struct addrinfo tcp_hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};

/* Called with the lock held; releases it, and the lookup with the last reference. */
static void lookup_put(struct lookup *l)
{
	bool last = --l->refs == 0;
	pthread_mutex_unlock(&l->lock);
	if (!last)
		return;
	if (l->res)
		freeaddrinfo(l->res);
	pthread_cond_destroy(&l->answered);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

static void *lookup_run(void *arg)
{
	struct lookup *l = arg;
	struct addrinfo *res = NULL;
	int r = getaddrinfo(l->host, l->port, &tcp_hints, &res);
	int e = errno;
	pthread_mutex_lock(&l->lock);
	l->done = true;
	l->result = r;
	l->error = e;
	l->res = res;
	pthread_cond_signal(&l->answered);
	lookup_put(l);
	return NULL;
}

static struct lookup *lookup_new(const char *host, const char *port)
{
	struct lookup *l = calloc(1, sizeof(*l));
	pthread_condattr_t attr;
	if (!l || pthread_condattr_init(&attr)) {
		free(l);
		return NULL;
	}
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&l->answered, &attr);
	pthread_condattr_destroy(&attr);
	pthread_mutex_init(&l->lock, NULL);
	l->refs = 2;
	memcpy(l->host, host, strlen(host) + 1);
	memcpy(l->port, port, strlen(port) + 1);
	return l;
}

/* The thread, detached, with every signal blocked: SIGINT and SIGTERM stay the caller's. */
static int lookup_start(struct lookup *l)
{
	pthread_attr_t attr;
	pthread_t thread;
	sigset_t all, old;
	if (pthread_attr_init(&attr))
		return -ENOMEM;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&thread, &attr, lookup_run, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -r;
}

static int lookup_errno(int result, int error)
{
	switch (result) {
	case 0:
		return 0;
	case EAI_SYSTEM:
		return error > 0 ? -error : -EIO;
	case EAI_MEMORY:
		return -ENOMEM;
	default: /* EAI_NONAME, EAI_AGAIN, EAI_FAIL, EAI_NODATA, EAI_ADDRFAMILY */
		return -EHOSTUNREACH;
	}
}

int io_resolve(const char *host, const char *port, double deadline, struct addrinfo **ret)
{
	struct addrinfo numeric = tcp_hints, *res = NULL;
	numeric.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if (getaddrinfo(host, port, &numeric, &res) == 0) {
		*ret = res;
		return 0;
	}
	if (strlen(host) >= sizeof(((struct lookup *)0)->host) || strlen(port) >= sizeof(((struct lookup *)0)->port))
		return -EINVAL;
	struct lookup *l = lookup_new(host, port);
	if (!l)
		return -ENOMEM;
	int r = lookup_start(l);
	if (r < 0) {
		l->refs = 1;
		pthread_mutex_lock(&l->lock);
		lookup_put(l);
		return r;
	}
	struct timespec until = clock_timespec(deadline > 0 ? deadline : 0);
	pthread_mutex_lock(&l->lock);
	while (!l->done && pthread_cond_timedwait(&l->answered, &l->lock, &until) != ETIMEDOUT)
		;
	r = l->done ? lookup_errno(l->result, l->error) : -ETIMEDOUT;
	if (l->done && r == 0) {
		*ret = l->res;
		l->res = NULL;
	}
	lookup_put(l);
	return r;
}
