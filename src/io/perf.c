#include "io/perf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int io_tracefs_dir(const struct io_root *root, char *ret, size_t cap)
{
	static const char *const dirs[] = {"kernel/tracing", "kernel/debug/tracing"};
	int denied = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int fd = io_open(root, IO_SYS, O_RDONLY | O_DIRECTORY, "%s/events", dirs[i]);
		if (fd >= 0) {
			io_close(fd);
			if (snprintf(ret, cap, "%s", dirs[i]) >= (int)cap)
				return -ENAMETOOLONG;
			return 0;
		}
		if (fd == -EACCES || fd == -EPERM)
			denied = fd;
	}
	return denied ? denied : -ENOENT; /* tracefs mounted but closed to us: say so, not "unmounted" */
}

static int tracepoint(unsigned id, pid_t tid, int group_fd, bool inherit)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = id;
	attr.read_format = PERF_FORMAT_GROUP;
	attr.disabled = 1; /* counting starts once its filter is set (io_perf_enable_group) */
	attr.inherit = inherit;
	long fd = syscall(SYS_perf_event_open, &attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int io_perf_tracepoint(unsigned id, pid_t tid, int group_fd) { return tracepoint(id, tid, group_fd, false); }

int io_perf_tracepoint_inherit(unsigned id, pid_t pid, int group_fd) { return tracepoint(id, pid, group_fd, true); }

int io_perf_tracepoint_any(unsigned id)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = id;
	long fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int io_perf_enable_group(int leader_fd)
{
	return ioctl(leader_fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0 ? -errno : 0;
}

int io_perf_set_filter(int fd, const char *filter)
{
	return ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0 ? -errno : 0;
}

ssize_t io_perf_read_group(int leader_fd, uint64_t *counts, size_t cap)
{
	uint64_t small[1 + 256];
	uint64_t *buf = cap < 256 ? small : malloc((cap + 1) * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	ssize_t n;
	do
		n = read(leader_fd, buf, (cap + 1) * sizeof(*buf));
	while (n < 0 && errno == EINTR);
	ssize_t r;
	if (n < 0)
		r = -errno;
	else if (n < (ssize_t)sizeof(uint64_t) || buf[0] > cap || (size_t)n < (1 + buf[0]) * sizeof(uint64_t))
		r = -EIO;
	else {
		memcpy(counts, buf + 1, buf[0] * sizeof(*buf));
		r = (ssize_t)buf[0];
	}
	if (buf != small)
		free(buf);
	return r;
}
