/* serve's connection guard: see serve_guard.h. */
#include "net/serve_guard.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "core/base/stop.h"
#include "net/mhd.h"

enum conn_state {
	SLOT_FREE,
	CONN_NEW,       /* no request yet: the deadline runs */
	CONN_ANSWERING, /* its request is being answered: never shed */
	CONN_KEPT,      /* answered, kept alive for the next request */
	CONN_SHED,      /* shut down by the guard, closing */
};

struct conn {
	enum conn_state state;
	int fd;
	struct sockaddr_storage addr;
	double since; /* when it entered its state (CLOCK_MONOTONIC) */
	double blame; /* its client's, when it came: shed ones go first */
};

/* A source address whose connections were shed before they sent a whole request: a flooder
 * that reconnects as soon as it is shed. Its new connections are shed before anyone else's. */
struct client {
	struct sockaddr_storage addr; /* ss_family AF_UNSPEC: a free entry */
	double unanswered;            /* connections shed so, halved every BLAME_HALF_LIFE */
};

#define CLIENTS 256
#define BLAME_HALF_LIFE 10.0 /* seconds */

struct serve_guard {
	struct serve_guard_config cfg;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t watchdog;
	bool stopping;
	struct conn *conns;
	size_t nslots;
	unsigned pending; /* accepted by the policy, not yet started */
	struct serve_guard_stats stats;
	struct client clients[CLIENTS];
	double decayed; /* when blame was last halved */
};

static bool same_client(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return false;
	if (b->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (b->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return true; /* unix sockets: one client */
}

static bool counted(const struct conn *c) { return c->state != SLOT_FREE && c->state != CONN_SHED; }

static struct client *client_of(struct serve_guard *g, const struct sockaddr *addr)
{
	for (size_t i = 0; i < CLIENTS; i++)
		if (g->clients[i].addr.ss_family != AF_UNSPEC && same_client(&g->clients[i].addr, addr))
			return &g->clients[i];
	return NULL;
}

/* c is shed without having sent a whole request: blamed on its address, in a new entry if it
 * has none (in place of the least blamed one when all are taken). */
static void blame(struct serve_guard *g, const struct conn *c)
{
	const struct sockaddr *addr = (const struct sockaddr *)&c->addr;
	struct client *e = client_of(g, addr);
	if (!e) {
		e = &g->clients[0];
		for (size_t i = 1; i < CLIENTS && e->addr.ss_family != AF_UNSPEC; i++)
			if (g->clients[i].addr.ss_family == AF_UNSPEC || g->clients[i].unanswered < e->unanswered)
				e = &g->clients[i];
		*e = (struct client){.addr = c->addr};
	}
	e->unanswered += 1;
}

static void shed(struct serve_guard *g, struct conn *c)
{
	if (c->state == CONN_NEW)
		blame(g, c);
	shutdown(c->fd, SHUT_RDWR);
	c->state = CONN_SHED;
}

/* The connection to shed, among those not being answered (from addr only, when given): the most
 * blamed client's, the oldest of them first; NULL when there is none. By age alone, a flood of
 * reconnects would shed a new client's connection before its request comes in. */
static struct conn *victim(struct serve_guard *g, const struct sockaddr *addr)
{
	struct conn *best = NULL;
	for (size_t i = 0; i < g->nslots; i++) {
		struct conn *c = &g->conns[i];
		if ((c->state != CONN_NEW && c->state != CONN_KEPT) || (addr && !same_client(&c->addr, addr)))
			continue;
		if (!best || c->blame > best->blame || (c->blame == best->blame && c->since < best->since))
			best = c;
	}
	return best;
}

enum MHD_Result serve_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	(void)len;
	struct serve_guard *g = cls;
	pthread_mutex_lock(&g->lock);
	unsigned total = g->pending, mine = 0;
	for (size_t i = 0; i < g->nslots; i++) {
		total += counted(&g->conns[i]);
		mine += counted(&g->conns[i]) && same_client(&g->conns[i].addr, addr);
	}
	bool ok = true;
	if (mine >= g->cfg.per_client || total >= g->cfg.max_connections) {
		struct conn *v = victim(g, mine >= g->cfg.per_client ? addr : NULL);
		if (v) {
			shed(g, v);
			g->stats.shed++;
		} else {
			ok = false;
			g->stats.refused++;
		}
	}
	if (ok)
		g->pending++;
	pthread_mutex_unlock(&g->lock);
	return ok ? MHD_YES : MHD_NO;
}

void serve_guard_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			    enum MHD_ConnectionNotificationCode toe)
{
	struct serve_guard *g = cls;
	pthread_mutex_lock(&g->lock);
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		struct conn *slot = *socket_context;
		if (slot)
			slot->state = SLOT_FREE; /* before libmicrohttpd closes the fd: never shut down after */
		*socket_context = NULL;
		pthread_mutex_unlock(&g->lock);
		return;
	}
	if (g->pending)
		g->pending--;
	const union MHD_ConnectionInfo *fd = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *addr = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct conn *slot = NULL;
	for (size_t i = 0; i < g->nslots && !slot; i++)
		slot = g->conns[i].state == SLOT_FREE ? &g->conns[i] : NULL;
	if (slot && fd) {
		*slot = (struct conn){.state = CONN_NEW, .fd = fd->connect_fd, .since = clock_monotonic_seconds()};
		if (addr && addr->client_addr) {
			memcpy(&slot->addr, addr->client_addr,
			       addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
			const struct client *e = client_of(g, addr->client_addr);
			slot->blame = e ? e->unanswered : 0;
		}
		*socket_context = slot;
	} else if (fd) {
		shutdown(fd->connect_fd, SHUT_RDWR); /* no room to watch it: not kept */
		g->stats.shed++;
	}
	pthread_mutex_unlock(&g->lock);
}

static struct conn *slot_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

void serve_guard_answering(struct serve_guard *g, struct MHD_Connection *c)
{
	pthread_mutex_lock(&g->lock);
	struct conn *slot = slot_of(c);
	if (slot && slot->state != SLOT_FREE && slot->state != CONN_SHED) {
		slot->state = CONN_ANSWERING;
		slot->since = clock_monotonic_seconds();
	}
	pthread_mutex_unlock(&g->lock);
}

void serve_guard_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)con_cls;
	(void)toe;
	struct serve_guard *g = cls;
	pthread_mutex_lock(&g->lock);
	struct conn *slot = slot_of(c);
	if (slot && slot->state == CONN_ANSWERING) {
		slot->state = CONN_KEPT;
		slot->since = clock_monotonic_seconds();
	}
	pthread_mutex_unlock(&g->lock);
}

/* Every quarter second: new connections past their deadline are shut down, and blame fades. */
static void *watchdog(void *arg)
{
	struct serve_guard *g = arg;
	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		double t = clock_monotonic_seconds();
		g->pending = 0; /* an accepted connection starts at once; one that never did is not waited for */
		for (size_t i = 0; i < g->nslots; i++) {
			struct conn *c = &g->conns[i];
			if (c->state == CONN_NEW && t - c->since > g->cfg.request_deadline) {
				shed(g, c);
				g->stats.deadline++;
			}
		}
		if (t - g->decayed >= BLAME_HALF_LIFE) {
			g->decayed = t;
			for (size_t i = 0; i < CLIENTS; i++) {
				struct client *e = &g->clients[i];
				e->unanswered /= 2;
				if (e->unanswered < 0.5)
					e->addr.ss_family = AF_UNSPEC;
			}
		}
		struct timespec until = clock_timespec(clock_monotonic_seconds() + 0.25);
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

unsigned serve_guard_daemon_limit(const struct serve_guard *g) { return (unsigned)g->nslots; }

int serve_guard_new(const struct serve_guard_config *cfg, struct serve_guard **ret)
{
	struct serve_guard *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->cfg = *cfg;
	if (!g->cfg.per_client || g->cfg.per_client > g->cfg.max_connections)
		g->cfg.per_client = g->cfg.max_connections;
	if (!(g->cfg.request_deadline > 0))
		g->cfg.request_deadline = SERVE_GUARD_DEADLINE_SECONDS;
	g->decayed = clock_monotonic_seconds();
	g->nslots = 2 * (size_t)g->cfg.max_connections + 16; /* shed ones take a moment to close */
	g->conns = calloc(g->nslots, sizeof(*g->conns));
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int r = g->conns ? 0 : -ENOMEM;
	if (r == 0) {
		pthread_mutex_init(&g->lock, NULL);
		pthread_cond_init(&g->wake, &ca);
		r = -pthread_create(&g->watchdog, NULL, watchdog, g);
		if (r < 0) {
			pthread_cond_destroy(&g->wake);
			pthread_mutex_destroy(&g->lock);
		}
	}
	pthread_condattr_destroy(&ca);
	if (r < 0) {
		free(g->conns);
		free(g);
		return r;
	}
	*ret = g;
	return 0;
}

void serve_guard_free(struct serve_guard *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->stopping = true;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->watchdog, NULL);
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->lock);
	free(g->conns);
	free(g);
}

struct serve_guard_stats serve_guard_stats(struct serve_guard *g)
{
	pthread_mutex_lock(&g->lock);
	struct serve_guard_stats s = g->stats;
	pthread_mutex_unlock(&g->lock);
	return s;
}
