#include "io/vmread.h"

#include <errno.h>
#include <sys/uio.h>

ssize_t io_process_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == EACCES ? -EPERM : -errno;
	return n;
}
