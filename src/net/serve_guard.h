/* Keeps `vmhost serve` reachable when clients hold connections it cannot afford (a port
 * scanner, a broken client, slowloris): a cap on open connections and one per client (a source
 * address's IPv4 /24 or IPv6 /64; every loopback address is one client), both met by shedding a
 * connection that is not being answered rather than by refusing the new one (the most blamed
 * client's, one that never sent a request before a kept-alive one), and a deadline for a new
 * connection's first request. libmicrohttpd calls it
 * (accept policy, connection and request notifications); a watchdog thread enforces the deadline.
 * Shedding is shutdown(2) on the connection's socket: libmicrohttpd then sees the end of it and
 * closes it on its own thread. */
#ifndef VMHOST_NET_SERVE_GUARD_H
#define VMHOST_NET_SERVE_GUARD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <sys/socket.h>

#define SERVE_GUARD_DEADLINE_SECONDS 5.0

struct serve_guard_config {
	unsigned max_connections;  /* open connections at most (then the oldest idle one goes) */
	unsigned per_client;       /* from one client at most (likewise, among its own); 0: max */
	double request_deadline;   /* seconds a new connection has for its first whole request; 0: 5 */
};

struct serve_guard_stats {
	unsigned long shed;      /* idle connections closed to make room */
	unsigned long deadline;  /* connections closed for not sending a request in time */
	unsigned long refused;   /* new connections refused: every open one was being answered */
};

struct serve_guard;

/* Starts the watchdog. Returns 0 or a negative errno. */
int serve_guard_new(const struct serve_guard_config *cfg, struct serve_guard **ret);
/* Stops the watchdog; after the daemon is stopped. NULL is fine. */
void serve_guard_free(struct serve_guard *g);
struct serve_guard_stats serve_guard_stats(struct serve_guard *g);
/* The connection limit to give libmicrohttpd: room for shed connections still closing. */
unsigned serve_guard_daemon_limit(const struct serve_guard *g);

/* libmicrohttpd's callbacks (cls: the guard). */
enum MHD_Result serve_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len);
void serve_guard_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			    enum MHD_ConnectionNotificationCode toe);
void serve_guard_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe);
/* From the request handler, once a request's headers are in: it is being answered. */
void serve_guard_answering(struct serve_guard *g, struct MHD_Connection *c);

/* For tests: whether two source addresses are one client. */
bool serve_guard_same_client(const struct sockaddr *a, const struct sockaddr *b);

#endif
