/* serve's connection guard: see serve_guard.h. */
#include "net/serve_guard.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

/* Which client a connection is from: its source address's network (client_of_addr). */
struct client_key {
	unsigned char b[9]; /* b[0]: KEY_OTHER, KEY_LOOPBACK, KEY_V4 (then the /24), KEY_V6 (the /64) */
};
enum { KEY_OTHER, KEY_LOOPBACK, KEY_V4, KEY_V6 };

struct conn {
	enum conn_state state;
	int fd;
	struct client_key client;
	double since;      /* when it entered its state (CLOCK_MONOTONIC) */
	double blame;      /* its client's (kept up to date): the most blamed client's go first */
	unsigned answered; /* requests answered on it: a scraper's kept-alive connection goes last */
};

/* A client whose connections were shed before they sent a whole request: a flooder that
 * reconnects as soon as it is shed. Its connections are shed before anyone else's. */
struct client {
	struct client_key key;
	bool used;
	double unanswered; /* connections shed so, halved every BLAME_HALF_LIFE */
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

/* A source address's client: its IPv4 /24 or IPv6 /64, where one holder has every address (an
 * IPv4-mapped IPv6 address is its IPv4 one); every loopback address is one client, any local
 * user being able to use any of 127.0.0.0/8; a unix socket's peers are one client. */
static struct client_key client_of_addr(const struct sockaddr *a)
{
	struct client_key k = {{KEY_OTHER}};
	const unsigned char *ip = NULL;
	if (a->sa_family == AF_INET) {
		ip = (const unsigned char *)&((const struct sockaddr_in *)a)->sin_addr;
	} else if (a->sa_family == AF_INET6) {
		const struct in6_addr *v6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(v6))
			k.b[0] = KEY_LOOPBACK;
		else if (IN6_IS_ADDR_V4MAPPED(v6))
			ip = v6->s6_addr + 12;
		else {
			k.b[0] = KEY_V6;
			memcpy(k.b + 1, v6->s6_addr, 8);
		}
	}
	if (ip && ip[0] == 127)
		k.b[0] = KEY_LOOPBACK;
	else if (ip) {
		k.b[0] = KEY_V4;
		memcpy(k.b + 1, ip, 3);
	}
	return k;
}

static bool same_key(const struct client_key *a, const struct client_key *b) { return !memcmp(a, b, sizeof(*a)); }

bool serve_guard_same_client(const struct sockaddr *a, const struct sockaddr *b)
{
	struct client_key ka = client_of_addr(a), kb = client_of_addr(b);
	return same_key(&ka, &kb);
}

static bool counted(const struct conn *c) { return c->state != SLOT_FREE && c->state != CONN_SHED; }

static struct client *client_of(struct serve_guard *g, const struct client_key *key)
{
	for (size_t i = 0; i < CLIENTS; i++)
		if (g->clients[i].used && same_key(&g->clients[i].key, key))
			return &g->clients[i];
	return NULL;
}

/* c is shed without having sent a whole request: blamed on its client, in a new entry if it
 * has none (in place of the least blamed one when all are taken); its client's connections carry
 * the new blame. */
static void blame(struct serve_guard *g, const struct conn *c)
{
	struct client *e = client_of(g, &c->client);
	if (!e) {
		e = &g->clients[0];
		for (size_t i = 1; i < CLIENTS && e->used; i++)
			if (!g->clients[i].used || g->clients[i].unanswered < e->unanswered)
				e = &g->clients[i];
		*e = (struct client){.key = c->client, .used = true};
	}
	e->unanswered += 1;
	for (size_t i = 0; i < g->nslots; i++)
		if (g->conns[i].state != SLOT_FREE && same_key(&g->conns[i].client, &e->key))
			g->conns[i].blame = e->unanswered;
}

static void shed(struct serve_guard *g, struct conn *c)
{
	if (c->state == CONN_NEW)
		blame(g, c);
	shutdown(c->fd, SHUT_RDWR);
	c->state = CONN_SHED;
}

/* Bytes the client sent that libmicrohttpd has not read yet: a request just in, on a connection
 * still new (a scraper on a busy host), unlike an idle or trickling one, whose bytes it reads as
 * they come. */
static bool request_waiting(const struct conn *c)
{
	int n = 0;
	return c->state == CONN_NEW && ioctl(c->fd, FIONREAD, &n) == 0 && n > 0;
}

/* Whether a goes before b (waiting: whether each has a request waiting): the more blamed
 * client's first; then a connection that never sent a request before one that did, or before a
 * kept-alive one; among those, the oldest; among kept-alive ones, the one answered least (a
 * scraper's, answered scrape after scrape, goes last), then the oldest. */
static bool sheds_before(const struct conn *a, bool a_waiting, const struct conn *b, bool b_waiting)
{
	if (a->blame != b->blame)
		return a->blame > b->blame;
	if (a->state != b->state)
		return a->state == CONN_NEW;
	if (a_waiting != b_waiting)
		return !a_waiting;
	if (a->state == CONN_KEPT && a->answered != b->answered)
		return a->answered < b->answered;
	return a->since < b->since;
}

/* The connection to shed, among those not being answered (from client only, when given); NULL
 * when there is none. By age alone, a flood of reconnects would shed a new client's connection
 * before its request comes in, and a scraper's kept-alive connection, the oldest, first. */
static struct conn *victim(struct serve_guard *g, const struct client_key *client)
{
	struct conn *best = NULL;
	bool best_waiting = false;
	for (size_t i = 0; i < g->nslots; i++) {
		struct conn *c = &g->conns[i];
		if ((c->state != CONN_NEW && c->state != CONN_KEPT) || (client && !same_key(&c->client, client)))
			continue;
		bool waiting = request_waiting(c);
		if (!best || sheds_before(c, waiting, best, best_waiting)) {
			best = c;
			best_waiting = waiting;
		}
	}
	return best;
}

enum MHD_Result serve_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	(void)len;
	struct serve_guard *g = cls;
	struct client_key key = client_of_addr(addr);
	pthread_mutex_lock(&g->lock);
	unsigned total = g->pending, mine = 0;
	for (size_t i = 0; i < g->nslots; i++) {
		total += counted(&g->conns[i]);
		mine += counted(&g->conns[i]) && same_key(&g->conns[i].client, &key);
	}
	bool ok = true;
	if (mine >= g->cfg.per_client || total >= g->cfg.max_connections) {
		struct conn *v = victim(g, mine >= g->cfg.per_client ? &key : NULL);
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
			slot->client = client_of_addr(addr->client_addr);
			const struct client *e = client_of(g, &slot->client);
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
		slot->answered++;
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
				e->used = e->used && e->unanswered >= 0.5;
			}
			for (size_t i = 0; i < g->nslots; i++)
				g->conns[i].blame /= 2;
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
