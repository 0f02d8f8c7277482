#include "io/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

static int vpath(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, va_list ap)
{
	int n = snprintf(buf, cap, "%s/", root_dir(root, base));
	if (n < 0 || (size_t)n >= cap)
		return -ENAMETOOLONG;
	int m = vsnprintf(buf + n, cap - (size_t)n, fmt, ap);
	if (m < 0 || (size_t)m >= cap - (size_t)n)
		return -ENAMETOOLONG;
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

static ssize_t read_fd(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	while (len + 1 < cap) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
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
	if (len + 1 == cap) {
		char probe;
		ssize_t n = read(fd, &probe, 1);
		if (n > 0)
			return -EFBIG;
	}
	return (ssize_t)len;
}

ssize_t io_read(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, ...)
{
	if (cap == 0)
		return -EINVAL;
	va_list ap;
	va_start(ap, fmt);
	int fd = vopen(root, base, O_RDONLY, fmt, ap);
	va_end(ap);
	if (fd < 0)
		return fd;
	ssize_t n = read_fd(fd, buf, cap);
	close(fd);
	return n;
}

int io_read_alloc(const struct io_root *root, enum io_base base, char **ret, size_t *ret_len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int fd = vopen(root, base, O_RDONLY, fmt, ap);
	va_end(ap);
	if (fd < 0)
		return fd;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (len + 1 >= cap) {
			char *bigger = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
			if (!bigger) {
				free(buf);
				close(fd);
				return cap < (64u << 20) ? -ENOMEM : -EFBIG;
			}
			buf = bigger;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;
			free(buf);
			close(fd);
			return e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		/* No stopping at a short read here: tracefs' format files (seq_file) and long cmdlines come
		 * in pieces; only read() returning 0 is the end. */
	}
	close(fd);
	buf[len] = '\0';
	*ret = buf;
	if (ret_len)
		*ret_len = len;
	return 0;
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
	va_list ap;
	va_start(ap, fmt);
	int fd = vopen(root, base, O_WRONLY, fmt, ap);
	va_end(ap);
	if (fd < 0)
		return fd;
	size_t len = strlen(value);
	ssize_t n;
	do
		n = write(fd, value, len);
	while (n < 0 && errno == EINTR);
	int e = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (close(fd) < 0 && e == 0)
		e = -errno;
	return e;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* The numeric entries of a directory, sorted. */
static int list_numeric(const char *path, pid_t **ret, size_t *ret_n)
{
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	size_t n = 0, cap = 256;
	pid_t *pids = malloc(cap * sizeof(*pids));
	if (!pids) {
		closedir(d);
		return -ENOMEM;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || v <= 0 || v > INT_MAX)
			continue;
		if (n == cap) {
			pid_t *bigger = realloc(pids, 2 * cap * sizeof(*pids));
			if (!bigger) {
				free(pids);
				closedir(d);
				return -ENOMEM;
			}
			pids = bigger;
			cap *= 2;
		}
		pids[n++] = (pid_t)v;
	}
	closedir(d);
	qsort(pids, n, sizeof(*pids), cmp_pid);
	*ret = pids;
	*ret_n = n;
	return 0;
}

int io_list_pids(const struct io_root *root, pid_t **ret, size_t *ret_n)
{
	return list_numeric(root_dir(root, IO_PROC), ret, ret_n);
}

int io_list_tasks(const struct io_root *root, pid_t pid, pid_t **ret, size_t *ret_n)
{
	char path[PATH_MAX];
	int r = io_path(root, IO_PROC, path, sizeof(path), "%d/task", pid);
	return r < 0 ? r : list_numeric(path, ret, ret_n);
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
