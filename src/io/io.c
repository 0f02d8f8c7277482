#include "io/io.h"
#include "io/file.h"
#include "io/io_cache_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *root_dir(const struct io_root *root, enum io_base base)
{
	if (base == IO_SYS)
		return root && root->sys ? root->sys : "/sys";
	return root && root->proc ? root->proc : "/proc";
}

/* The length of dir when rel is dir or lies under it, else 0. */
static size_t under(const char *rel, const char *dir)
{
	size_t len = strlen(dir);
	return !strncmp(rel, dir, len) && (rel[len] == '/' || rel[len] == '\0') ? len : 0;
}

/* A path under kernel/debug or kernel/tracing when the root has that file system mounted for this
 * run (io/mountns.h): the relative part of buf, from offset at, goes under that mount instead. */
static int private_mount_path(const struct io_root *root, char *buf, size_t cap, size_t at)
{
	const char *rel = buf + at, *mount = NULL;
	size_t skip = 0;
	if (root->debugfs && (skip = under(rel, "kernel/debug")))
		mount = root->debugfs;
	else if (root->tracefs && (skip = under(rel, "kernel/tracing")))
		mount = root->tracefs;
	if (!mount)
		return 0;
	size_t mlen = strlen(mount), rest = strlen(rel + skip);
	if (mlen + rest >= cap)
		return -ENAMETOOLONG;
	memmove(buf + mlen, rel + skip, rest + 1);
	memcpy(buf, mount, mlen);
	return 0;
}

static int vpath(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, va_list ap)
{
	int n = snprintf(buf, cap, "%s/", root_dir(root, base));
	if (n < 0 || (size_t)n >= cap)
		return -ENAMETOOLONG;
	int m = vsnprintf(buf + n, cap - (size_t)n, fmt, ap);
	if (m < 0 || (size_t)m >= cap - (size_t)n)
		return -ENAMETOOLONG;
	if (base == IO_SYS && root && (root->debugfs || root->tracefs))
		return private_mount_path(root, buf, cap, (size_t)n);
	return 0;
}

/* Opens "<root>/<fmt...>"; returns an fd or a negative errno. */
static int vopen(const struct io_root *root, enum io_base base, int flags, const char *fmt, va_list ap)
{
	char path[PATH_MAX];
	int r = vpath(root, base, path, sizeof(path), fmt, ap);
	if (r < 0)
		return r;
	int fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int io_path(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(root, base, buf, cap, fmt, ap);
	va_end(ap);
	return r;
}

/* A whole file into buf: read() from where the fd is, or, kept (a file held open for re-reads),
 * pread from offset 0, which leaves the offset alone. */
static ssize_t read_fd(int fd, bool kept, char *buf, size_t cap, bool head)
{
	size_t len = 0;
	while (len + 1 < cap) {
		ssize_t n = kept ? pread(fd, buf + len, cap - 1 - len, (off_t)len) : read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		/* procfs and sysfs hand out the whole text in one read when it fits: a short read is the
		 * end (this saves the second read that would return 0). */
		if (len + 1 < cap)
			break;
	}
	buf[len] = '\0';
	if (len + 1 == cap && !head) {
		char probe;
		ssize_t n = kept ? pread(fd, &probe, 1, (off_t)len) : read(fd, &probe, 1);
		if (n > 0)
			return -EFBIG;
	}
	return (ssize_t)len;
}

/* A whole file of any size into a fresh buffer: read() to the end, or pread from 0 when kept. */
static int alloc_fd(int fd, bool kept, char **ret, size_t *ret_len)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len + 1 >= cap) {
			char *bigger = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
			if (!bigger) {
				free(buf);
				return cap < (64u << 20) ? -ENOMEM : -EFBIG;
			}
			buf = bigger;
			cap *= 2;
		}
		ssize_t n = kept ? pread(fd, buf + len, cap - 1 - len, (off_t)len) : read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;
			free(buf);
			return e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		/* No stopping at a short read here: tracefs' format files (seq_file) and long cmdlines come
		 * in pieces; only read() returning 0 is the end. */
	}
	buf[len] = '\0';
	*ret = buf;
	if (ret_len)
		*ret_len = len;
	return 0;
}

int io_read_fd(int fd, char **ret, size_t *ret_len)
{
	return alloc_fd(fd, false, ret, ret_len);
}

ssize_t io_read_kept_or_not(int fd, bool kept, const struct whole_read *w)
{
	if (w->alloc)
		return alloc_fd(fd, kept, w->alloc, w->alloc_len);
	return read_fd(fd, kept, w->buf, w->cap, w->head);
}


static ssize_t vread(const struct io_root *root, enum io_base base, const struct whole_read *w, const char *fmt,
		     va_list ap)
{
	char path[PATH_MAX];
	int r = vpath(root, base, path, sizeof(path), fmt, ap);
	if (r < 0)
		return r;
	if (root && root->cache)
		return io_cache_read(root->cache, path, w);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = io_read_kept_or_not(fd, false, w);
	close(fd);
	return n;
}

ssize_t io_read(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, ...)
{
	if (cap == 0)
		return -EINVAL;
	struct whole_read w = {.buf = buf, .cap = cap};
	va_list ap;
	va_start(ap, fmt);
	ssize_t n = vread(root, base, &w, fmt, ap);
	va_end(ap);
	return n;
}

ssize_t io_read_head(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, ...)
{
	if (cap == 0)
		return -EINVAL;
	struct whole_read w = {.buf = buf, .cap = cap, .head = true};
	va_list ap;
	va_start(ap, fmt);
	ssize_t n = vread(root, base, &w, fmt, ap);
	va_end(ap);
	return n;
}

int io_read_alloc(const struct io_root *root, enum io_base base, char **ret, size_t *ret_len, const char *fmt, ...)
{
	struct whole_read w = {.alloc = ret, .alloc_len = ret_len};
	va_list ap;
	va_start(ap, fmt);
	ssize_t n = vread(root, base, &w, fmt, ap);
	va_end(ap);
	return n < 0 ? (int)n : 0;
}

int io_open(const struct io_root *root, enum io_base base, int flags, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int fd = vopen(root, base, flags, fmt, ap);
	va_end(ap);
	return fd;
}

ssize_t io_reread(int fd, char *buf, size_t cap)
{
	if (cap == 0)
		return -EINVAL;
	ssize_t n;
	do
		n = pread(fd, buf, cap - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (size_t)n == cap - 1 ? -EFBIG : n;
}

ssize_t io_pread(int fd, void *buf, size_t len, off_t offset)
{
	ssize_t n;
	do
		n = pread(fd, buf, len, offset);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

void io_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

static int make_dir(const char *path) { return mkdir(path, 0755); }

/* A directory call on "<root>/<fmt...>": 0 or a negative errno. */
static int dir_op(int (*op)(const char *), const struct io_root *root, enum io_base base, const char *fmt, va_list ap)
{
	char path[PATH_MAX];
	int r = vpath(root, base, path, sizeof(path), fmt, ap);
	return r < 0 ? r : op(path) < 0 ? -errno : 0;
}

int io_mkdir(const struct io_root *root, enum io_base base, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = dir_op(make_dir, root, base, fmt, ap);
	va_end(ap);
	return r;
}

int io_rmdir(const struct io_root *root, enum io_base base, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = dir_op(rmdir, root, base, fmt, ap);
	va_end(ap);
	return r;
}

int io_write(const struct io_root *root, enum io_base base, const char *value, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(root, base, path, sizeof(path), fmt, ap);
	va_end(ap);
	return r < 0 ? r : io_write_path(path, value);
}

int io_pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

bool io_pid_in(const pid_t *sorted, size_t n, pid_t pid)
{
	return n && bsearch(&pid, sorted, n, sizeof(pid), io_pid_cmp);
}

/* The numeric entries of an open directory from its start (fresh: just opened, so there
 * already; else rewound first), sorted. procfs fills getdents' buffer until the next entry does
 * not fit: with proc set, a reply that left room for one more entry was the last, and the call
 * that would return 0 is saved. */
int io_list_numeric_fd(int fd, bool proc, bool fresh, pid_t **ret, size_t *ret_n)
{
	if (!fresh && lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	size_t n = 0, cap = 256;
	pid_t *pids = malloc(cap * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	char buf[16384];
	for (;;) {
		ssize_t len = getdents64(fd, buf, sizeof(buf));
		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0) {
			int e = -errno;
			free(pids);
			return e;
		}
		if (len == 0)
			break;
		for (ssize_t off = 0; off < len;) {
			const struct dirent64 *de = (const struct dirent64 *)(buf + off);
			off += de->d_reclen;
			char *end;
			long v = strtol(de->d_name, &end, 10);
			if (*end || end == de->d_name || v <= 0 || v > INT_MAX)
				continue;
			if (n == cap) {
				pid_t *bigger = realloc(pids, 2 * cap * sizeof(*pids));
				if (!bigger) {
					free(pids);
					return -ENOMEM;
				}
				pids = bigger;
				cap *= 2;
			}
			pids[n++] = (pid_t)v;
		}
		if (proc && (size_t)len + sizeof(struct dirent64) + NAME_MAX + 1 < sizeof(buf))
			break;
	}
	qsort(pids, n, sizeof(*pids), io_pid_cmp);
	*ret = pids;
	*ret_n = n;
	return 0;
}

/* The numeric entries of a directory, sorted. Under the live /proc (the default root: procfs
 * wherever a system has one) the call that would return 0 is saved, one in each VM's thread list. */
static int list_numeric(const struct io_root *root, const char *path, pid_t **ret, size_t *ret_n)
{
	if (root && root->cache)
		return io_cache_list(root->cache, path, ret, ret_n);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = io_list_numeric_fd(fd, !strcmp(root_dir(root, IO_PROC), "/proc"), true, ret, ret_n);
	close(fd);
	return r;
}

int io_list_pids(const struct io_root *root, pid_t **ret, size_t *ret_n)
{
	return list_numeric(root, root_dir(root, IO_PROC), ret, ret_n);
}

int io_list_tasks(const struct io_root *root, pid_t pid, pid_t **ret, size_t *ret_n)
{
	char path[PATH_MAX];
	int r = io_path(root, IO_PROC, path, sizeof(path), "%d/task", pid);
	return r < 0 ? r : list_numeric(root, path, ret, ret_n);
}

int io_proc_fds_each(const struct io_root *root, pid_t pid, io_fd_fn *fn, void *ctx)
{
	char path[PATH_MAX];
	int r = io_path(root, IO_PROC, path, sizeof(path), "%d/fd", pid);
	if (r < 0)
		return r;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	char link[256];
	struct dirent *de;
	/* procfs lists fds in order, and a VMM opens its devices early: past the first IO_FD_SCAN_MAX
	 * a process is not looked at further (any process can hold a million fds). */
	for (unsigned seen = 0; r == 0 && seen < IO_FD_SCAN_MAX && (de = readdir(d)); seen++) {
		if (de->d_name[0] == '.')
			continue;
		/* relative to the directory: no walk of the whole path for each fd */
		ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n < 0)
			continue; /* closed meanwhile */
		link[n] = '\0';
		r = fn(ctx, de->d_name, link);
	}
	closedir(d);
	return r < 0 ? r : 0;
}

long io_proc_fd_count(const struct io_root *root, pid_t pid)
{
	char path[PATH_MAX];
	int r = io_path(root, IO_PROC, path, sizeof(path), "%d/fd", pid);
	struct stat st;
	if (r < 0)
		return r;
	return stat(path, &st) < 0 ? -errno : (long)st.st_size;
}

struct link_wanted {
	const char *target;
	int found;
};

static int link_is(void *ctx, const char *fd, const char *target)
{
	struct link_wanted *w = ctx;
	(void)fd;
	w->found = !strcmp(target, w->target);
	return w->found;
}

int io_proc_fd_links_to(const struct io_root *root, pid_t pid, const char *target)
{
	struct link_wanted w = {target, 0};
	int r = io_proc_fds_each(root, pid, link_is, &w);
	return r < 0 ? r : w.found;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void io_free_names(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int io_list_dir(const struct io_root *root, enum io_base base, char ***ret, size_t *ret_n, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(root, base, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	size_t n = 0, cap = 16;
	char **names = malloc(cap * sizeof(*names));
	struct dirent *de = NULL;
	while (names && (de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (n == cap) {
			char **bigger = realloc(names, 2 * cap * sizeof(*names));
			if (!bigger)
				break;
			names = bigger;
			cap *= 2;
		}
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	int failed = !names || de != NULL;
	closedir(d);
	if (failed) {
		io_free_names(names, n);
		return -ENOMEM;
	}
	qsort(names, n, sizeof(*names), cmp_name);
	*ret = names;
	*ret_n = n;
	return 0;
}

int io_exists(const struct io_root *root, enum io_base base, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(root, base, path, sizeof(path), fmt, ap);
	va_end(ap);
	struct stat st;
	return r == 0 && stat(path, &st) == 0;
}

ssize_t io_readlink(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(root, base, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	if (cap == 0)
		return -ENAMETOOLONG;
	ssize_t n = readlink(path, buf, cap);
	if (n < 0)
		return -errno;
	if ((size_t)n >= cap)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return n;
}
