#include "io/peer/socket.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int io_listen(const struct sockaddr_storage *a, socklen_t len)
{
	int fd = socket(a->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1, zero = 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->ss_family == AF_INET6 &&
	    IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)a)->sin6_addr))
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (const struct sockaddr *)a, len) < 0 || listen(fd, 128) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

enum { LISTEN_FDS_START = 3, LISTEN_FDS_MAX = 64 };

/* Close-on-exec for each of the n passed fds that is a socket (what is not was not passed). */
static void passed_cloexec(long n)
{
	for (long i = 0; i < n && i < LISTEN_FDS_MAX; i++) {
		int fd = LISTEN_FDS_START + (int)i, flags = fcntl(fd, F_GETFD);
		struct stat st;
		if (flags >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
			fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
	}
}

int io_socket_activation(int *ret_fd)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	if (!pid || !fds)
		return -ENOENT;
	char *end;
	long p = strtol(pid, &end, 10);
	if (*end || p != (long)getpid())
		return -ENOENT;
	long n = strtol(fds, &end, 10);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (*end || n < 1)
		return -ENOENT;
	passed_cloexec(n);
	int fd = LISTEN_FDS_START, accepting = 0, type = 0;
	socklen_t l = sizeof(accepting);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &l) < 0 || !accepting)
		return -EINVAL;
	l = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_STREAM)
		return -EINVAL;
	*ret_fd = fd;
	return 0;
}
