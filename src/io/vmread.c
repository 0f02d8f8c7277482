#include "io/vmread.h"

#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

ssize_t io_process_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == EACCES ? -EPERM : -errno;
	return n;
}

int io_process_hold(pid_t pid, struct io_process *ret)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 && errno == ESRCH)
		return -ESRCH;
	*ret = (struct io_process){.pid = pid, .pidfd = fd < 0 ? -1 : fd};
	return 0;
}

void io_process_release(struct io_process *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
}

/* A pidfd is readable once its process has exited. */
bool io_process_alive(const struct io_process *p)
{
	struct pollfd fd = {.fd = p->pidfd, .events = POLLIN};
	int r = 0;
	while (p->pidfd >= 0 && (r = poll(&fd, 1, 0)) < 0 && errno == EINTR)
		;
	return p->pidfd < 0 || r == 0;
}

ssize_t io_process_read_held(const struct io_process *p, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = io_process_read(p->pid, addr, buf, len);
	return n >= 0 && !io_process_alive(p) ? -ESRCH : n;
}
