#include "io/http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/clock.h"
#include "io/resolve.h"

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

static int send_all(int fd, const char *data, size_t len, double deadline)
{
	while (len) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
		if (n > 0) {
			data += n;
			len -= (size_t)n;
			continue;
		}
		int r = n < 0 && (errno == EAGAIN || errno == EINTR) ? wait_for(fd, POLLOUT, deadline) : -errno;
		if (r < 0)
			return r;
	}
	return 0;
}

static int recv_all(int fd, size_t max, double deadline, char **ret, size_t *ret_len)
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
		ssize_t n = recv(fd, buf + len, cap - len, 0);
		if (n == 0)
			break;
		int r = n > 0 ? 0 : errno == EAGAIN || errno == EINTR ? wait_for(fd, POLLIN, deadline) : -errno;
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

int io_http_exchange(const char *host, const char *port, const char *request, size_t request_len,
		     double timeout_seconds, size_t max_bytes, char **ret, size_t *ret_len)
{
	double deadline = clock_monotonic_seconds() + timeout_seconds;
	int fd = connect_any(host, port, deadline);
	if (fd < 0)
		return fd;
	int r = send_all(fd, request, request_len, deadline);
	if (r == 0)
		r = recv_all(fd, max_bytes, deadline, ret, ret_len);
	close(fd);
	return r;
}
