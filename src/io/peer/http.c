#include "io/peer/http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/clock.h"
#include "io/peer/resolve.h"

/* Waits for events on fd until the deadline: 0, or -ETIMEDOUT, or a negative errno. */
static int wait_for(int fd, short events, double deadline)
{
	for (;;) {
		double left = deadline - clock_monotonic_seconds();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = {.fd = fd, .events = events};
		int n = poll(&p, 1, (int)(left * 1000) + 1);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* One address: a non-blocking socket connected to it by the deadline. An fd or a negative errno. */
static int connect_one(const struct addrinfo *a, double deadline)
{
	int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
	if (fd < 0)
		return -errno;
	int r = connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno != EINPROGRESS ? -errno : wait_for(fd, POLLOUT, deadline);
	if (r == 0) {
		int so = 0;
		socklen_t len = sizeof(so);
		r = getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len) < 0 ? -errno : -so;
	}
	if (r < 0)
		close(fd);
	return r < 0 ? r : fd;
}

/* A socket connected to one of the host's addresses, tried in turn. An fd or a negative errno. */
static int connect_any(const char *host, const char *port, double deadline)
{
	struct addrinfo *res = NULL;
	int fd = io_resolve(host, port, deadline, &res);
	if (fd < 0)
		return fd;
	fd = -ECONNREFUSED;
	for (struct addrinfo *a = res; a && fd < 0 && fd != -ETIMEDOUT; a = a->ai_next)
		fd = connect_one(a, deadline);
	freeaddrinfo(res);
	return fd;
}

/* A connection, plain or TLS; why says what TLS refused. */
struct conn {
	int fd;
	struct io_tls_session *tls;
	char *why;
	size_t why_cap;
};

/* Bytes moved, 0 at the end, -EAGAIN with *ret_events to wait for, or a negative errno. */
static ssize_t conn_send(struct conn *c, const char *data, size_t len, short *ret_events)
{
	if (c->tls)
		return io_tls_send(c->tls, data, len, ret_events, c->why, c->why_cap);
	ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
	*ret_events = POLLOUT;
	return n >= 0 ? n : errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
}

static ssize_t conn_recv(struct conn *c, char *buf, size_t len, short *ret_events)
{
	if (c->tls)
		return io_tls_recv(c->tls, buf, len, ret_events, c->why, c->why_cap);
	ssize_t n = recv(c->fd, buf, len, 0);
	*ret_events = POLLIN;
	return n >= 0 ? n : errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
}

static int send_all(struct conn *c, const char *data, size_t len, double deadline)
{
	while (len) {
		short events = 0;
		ssize_t n = conn_send(c, data, len, &events);
		if (n > 0) {
			data += n;
			len -= (size_t)n;
			continue;
		}
		int r = n == -EAGAIN ? wait_for(c->fd, events, deadline) : n < 0 ? (int)n : -EPIPE;
		if (r < 0)
			return r;
	}
	return 0;
}

static int recv_all(struct conn *c, size_t max, double deadline, char **ret, size_t *ret_len)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap + 1);
	for (;;) {
		if (!buf)
			return -ENOMEM;
		if (len == cap) {
			if (cap >= max) {
				free(buf);
				return -EFBIG;
			}
			cap = cap * 2 < max ? cap * 2 : max;
			char *bigger = realloc(buf, cap + 1);
			if (!bigger)
				free(buf);
			buf = bigger;
			continue;
		}
		short events = 0;
		ssize_t n = conn_recv(c, buf + len, cap - len, &events);
		if (n == 0)
			break;
		int r = n > 0 ? 0 : n == -EAGAIN ? wait_for(c->fd, events, deadline) : (int)n;
		if (r < 0) {
			free(buf);
			return r;
		}
		len += n > 0 ? (size_t)n : 0;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* The TLS session on c's socket, its handshake done and the server's certificate verified. */
static int tls_start(struct conn *c, const char *host, const struct io_tls *tls, double deadline)
{
	int r = io_tls_new(c->fd, host, tls, &c->tls, c->why, c->why_cap);
	for (short events = 0; r == 0;) {
		r = io_tls_handshake(c->tls, &events, c->why, c->why_cap);
		if (r != -EAGAIN)
			break;
		r = wait_for(c->fd, events, deadline);
	}
	return r;
}

int io_http_exchange(const struct io_http_request *req, char **ret, size_t *ret_len, char *why, size_t why_cap)
{
	double deadline = clock_monotonic_seconds() + req->timeout_seconds;
	if (why_cap)
		why[0] = '\0';
	struct conn c = {.fd = connect_any(req->host, req->port, deadline), .why = why, .why_cap = why_cap};
	if (c.fd < 0)
		return c.fd;
	int r = req->tls ? tls_start(&c, req->host, req->tls, deadline) : 0;
	if (r == 0)
		r = send_all(&c, req->data, req->len, deadline);
	if (r == 0)
		r = recv_all(&c, req->max_bytes, deadline, ret, ret_len);
	io_tls_free(c.tls);
	close(c.fd);
	return r;
}
