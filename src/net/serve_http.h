/* The HTTP side of `vmhost serve`, on libmicrohttpd: GET/HEAD only, bounded connections,
 * request sizes and idle time; /metrics from the serve cache, / a small index page; HTTPS and
 * basic auth when a web config asks for them (net/web_files.h). */
#ifndef VMHOST_NET_SERVE_HTTP_H
#define VMHOST_NET_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "net/listen_addr.h"
#include "net/serve_cache.h"
#include "net/serve_guard.h"
#include "net/serve_sketch.h"
#include "net/web_files.h"

struct serve_http_config {
	int listen_fd;            /* a listening stream socket; the server owns it from here on */
	unsigned threads;         /* worker threads sharing the socket */
	unsigned max_connections; /* beyond it the oldest idle connection is shed (net/serve_guard.h) */
	unsigned per_client;      /* connections from one source address, likewise */
	double request_deadline;  /* seconds a new connection has for its first request */
	unsigned timeout_seconds; /* an idle (or trickling) connection is closed after this */
	double scrape_timeout;    /* /metrics is answered within it, late gathering or not; 0: 10 s */
	size_t connection_memory; /* per connection: request line and headers must fit */
	struct serve_cache *cache;
	struct serve_sketch *sketch; /* /sketch; NULL: 404 (no --key-file) */
	const struct web_files *web; /* --web-config: TLS and basic auth; NULL: plain HTTP, no auth */
	char *error;              /* libmicrohttpd's reason when starting fails ("" if it gave none) */
	size_t error_cap;
};

struct serve_http;

/* Starts serving on its own threads. Returns 0 or a negative errno (-ENOTSUP: this libmicrohttpd
 * lacks TLS or basic auth); cfg->error then says why when it can. */
int serve_http_start(const struct serve_http_config *cfg, struct serve_http **ret);
/* Stops accepting, closes every connection and the socket, joins the threads. NULL is fine. */
void serve_http_stop(struct serve_http *h);
/* What the connection guard did so far. */
struct serve_guard_stats serve_http_guard_stats(struct serve_http *h);

/* "127.0.0.1:9464" / "[::1]:9464" for the socket's actual address (port 0 resolved). */
int serve_socket_name(int fd, char *buf, size_t cap);

#endif
