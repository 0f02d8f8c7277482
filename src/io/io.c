#include "io/io.h"
#include "io/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/statfs.h>
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

/* A whole file into buf: read() from where the fd is, or, kept (a file held open for re-reads),
 * pread from offset 0, which leaves the offset alone. */
static ssize_t read_fd(int fd, bool kept, char *buf, size_t cap)
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
	if (len + 1 == cap) {
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

/* One whole-file read of path, into buf (alloc NULL) or a fresh buffer, by a file the cache keeps
 * open (cache_read, below) or by open, read, close. */
struct whole_read {
	char *buf;
	size_t cap;
	char **alloc;
	size_t *alloc_len;
};

static ssize_t read_kept_or_not(int fd, bool kept, const struct whole_read *w)
{
	if (w->alloc)
		return alloc_fd(fd, kept, w->alloc, w->alloc_len);
	return read_fd(fd, kept, w->buf, w->cap);
}

static ssize_t cache_read(struct io_cache *c, const char *path, const struct whole_read *w);
static int list_numeric_fd(int fd, bool proc, bool fresh, pid_t **ret, size_t *ret_n);

static ssize_t vread(const struct io_root *root, enum io_base base, const struct whole_read *w, const char *fmt,
		     va_list ap)
{
	char path[PATH_MAX];
	int r = vpath(root, base, path, sizeof(path), fmt, ap);
	if (r < 0)
		return r;
	if (root && root->cache)
		return cache_read(root->cache, path, w);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read_kept_or_not(fd, false, w);
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

int io_read_alloc(const struct io_root *root, enum io_base base, char **ret, size_t *ret_len, const char *fmt, ...)
{
	struct whole_read w = {.alloc = ret, .alloc_len = ret_len};
	va_list ap;
	va_start(ap, fmt);
	ssize_t n = vread(root, base, &w, fmt, ap);
	va_end(ap);
	return n < 0 ? (int)n : 0;
}

/* ---- kept-open files ---- */

struct cache_slot {
	char *path;    /* NULL: free */
	uint64_t hash;
	int fd;
	bool used;     /* read since the last sweep */
};

struct io_cache {
	pthread_mutex_t lock;
	struct cache_slot *slots; /* open addressing, a power of two of them, at most half full */
	size_t nslots, n, max_files;
	int *retired;             /* fds replaced while another thread may still read them: closed at the sweep */
	size_t nretired, retired_cap;
	uint64_t hits;
};

static uint64_t path_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static struct cache_slot *slot_find(struct cache_slot *slots, size_t nslots, const char *path, uint64_t h)
{
	for (size_t i = h & (nslots - 1);; i = (i + 1) & (nslots - 1))
		if (!slots[i].path || (slots[i].hash == h && !strcmp(slots[i].path, path)))
			return &slots[i];
}

static int table_alloc(struct io_cache *c, size_t nslots)
{
	struct cache_slot *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < c->nslots; i++)
		if (c->slots[i].path)
			*slot_find(slots, nslots, c->slots[i].path, c->slots[i].hash) = c->slots[i];
	free(c->slots);
	c->slots = slots;
	c->nslots = nslots;
	return 0;
}

int io_cache_new(struct io_cache **ret)
{
	struct io_cache *c = calloc(1, sizeof(*c));
	if (!c || table_alloc(c, 256) < 0) {
		free(c);
		return -ENOMEM;
	}
	pthread_mutex_init(&c->lock, NULL);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rlim_t want = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
		if (rl.rlim_cur < want) {
			struct rlimit raised = {want, rl.rlim_max};
			if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
				rl.rlim_cur = want;
		}
		c->max_files = rl.rlim_cur == RLIM_INFINITY ? 32768 : (size_t)rl.rlim_cur / 2;
	}
	*ret = c;
	return 0;
}

/* Kept open only where a file stands for a live kernel object: procfs, sysfs and cgroupfs
 * answer a read on an fd whose process or cgroup is gone with an error, so a re-read never
 * returns the figures of what is gone. A regular file (a fixture tree) replaced by rename would
 * still read its old content through the old fd: those are opened afresh every time. */
static bool keepable(int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs) < 0)
		return false;
	return fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC || fs.f_type == CGROUP_SUPER_MAGIC ||
	       fs.f_type == CGROUP2_SUPER_MAGIC;
}

/* The cache's fd for path, opened when it has none; with stale, the fd that failed is replaced
 * by a fresh open. *ret_kept false: the fd is the caller's to close (the cache is full). */
static int cache_fd(struct io_cache *c, const char *path, int stale, bool *ret_kept)
{
	uint64_t h = path_hash(path);
	pthread_mutex_lock(&c->lock);
	struct cache_slot *s = slot_find(c->slots, c->nslots, path, h);
	if (s->path && s->fd >= 0 && s->fd != stale) {
		s->used = true;
		c->hits++;
		int fd = s->fd;
		pthread_mutex_unlock(&c->lock);
		*ret_kept = true;
		return fd;
	}
	pthread_mutex_unlock(&c->lock);

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_kept = false;
	if (!keepable(fd))
		return fd;
	pthread_mutex_lock(&c->lock);
	s = slot_find(c->slots, c->nslots, path, h);
	if (s->path && s->fd >= 0 && s->fd != stale) {
		/* another thread opened or replaced it meanwhile: ours is not needed */
		close(fd);
		fd = s->fd;
		s->used = *ret_kept = true;
	} else if (s->path && s->fd == stale && stale >= 0) {
		if (c->nretired == c->retired_cap) {
			size_t cap = c->retired_cap ? 2 * c->retired_cap : 16;
			int *bigger = realloc(c->retired, cap * sizeof(*bigger));
			if (bigger) {
				c->retired = bigger;
				c->retired_cap = cap;
			}
		}
		if (c->nretired < c->retired_cap) {
			c->retired[c->nretired++] = stale;
			s->fd = fd;
			s->used = *ret_kept = true;
		}
	} else if (!s->path && c->n + c->nretired < c->max_files &&
		   (2 * (c->n + 1) <= c->nslots || table_alloc(c, 2 * c->nslots) == 0)) {
		s = slot_find(c->slots, c->nslots, path, h);
		if ((s->path = strdup(path))) {
			s->hash = h;
			s->fd = fd;
			s->used = *ret_kept = true;
			c->n++;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return fd;
}

static ssize_t cache_read(struct io_cache *c, const char *path, const struct whole_read *w)
{
	bool kept;
	int fd = cache_fd(c, path, -1, &kept);
	if (fd < 0)
		return fd;
	ssize_t n = read_kept_or_not(fd, true, w);
	if (n < 0 && n != -EFBIG && n != -ENOMEM && n != -ESPIPE && kept) {
		/* The process (or cgroup) the file was opened for may be gone: ask the path again. */
		int stale = fd;
		if ((fd = cache_fd(c, path, stale, &kept)) < 0)
			return fd;
		n = read_kept_or_not(fd, true, w);
	}
	if (n == -ESPIPE) {
		/* a file without pread (debugfs): read it from a fresh open */
		int once = open(path, O_RDONLY | O_CLOEXEC);
		n = once < 0 ? -errno : read_kept_or_not(once, false, w);
		if (once >= 0)
			close(once);
	}
	if (!kept)
		close(fd);
	return n;
}

/* A kept directory listed again from its start. A process's task directory lists at least one
 * thread while the process lives: none, or an error, means it is gone, and the path is asked
 * again (its pid may be another process's now). */
static int cache_list(struct io_cache *c, const char *path, pid_t **ret, size_t *ret_n)
{
	bool kept;
	int fd = cache_fd(c, path, -1, &kept);
	if (fd < 0)
		return fd;
	int r = list_numeric_fd(fd, kept, !kept, ret, ret_n);
	if (kept && (r == -ENOENT || r == -ESRCH || (r == 0 && *ret_n == 0))) {
		if (r == 0)
			free(*ret);
		int stale = fd;
		if ((fd = cache_fd(c, path, stale, &kept)) < 0)
			return fd;
		r = list_numeric_fd(fd, kept, !kept, ret, ret_n);
	}
	if (!kept)
		close(fd);
	return r;
}

void io_cache_sweep(struct io_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nretired; i++)
		close(c->retired[i]);
	c->nretired = 0;
	struct cache_slot *old = c->slots;
	size_t nold = c->nslots;
	struct cache_slot *slots = calloc(nold, sizeof(*slots));
	if (!slots)
		return; /* kept as it is until the next sweep */
	c->n = 0;
	for (size_t i = 0; i < nold; i++) {
		if (!old[i].path)
			continue;
		if (!old[i].used) {
			if (old[i].fd >= 0)
				close(old[i].fd);
			free(old[i].path);
			continue;
		}
		struct cache_slot *s = slot_find(slots, nold, old[i].path, old[i].hash);
		*s = old[i];
		s->used = false;
		c->n++;
	}
	free(old);
	c->slots = slots;
}

void io_cache_free(struct io_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nslots; i++) {
		if (c->slots[i].path && c->slots[i].fd >= 0)
			close(c->slots[i].fd);
		free(c->slots[i].path);
	}
	for (size_t i = 0; i < c->nretired; i++)
		close(c->retired[i]);
	pthread_mutex_destroy(&c->lock);
	free(c->slots);
	free(c->retired);
	free(c);
}

void io_cache_stats(const struct io_cache *c, size_t *ret_open, uint64_t *ret_hits)
{
	*ret_open = c ? c->n : 0;
	*ret_hits = c ? c->hits : 0;
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

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* The numeric entries of an open directory from its start (fresh: just opened, so there
 * already; else rewound first), sorted. procfs fills getdents' buffer until the next entry does
 * not fit: with proc set, a reply that left room for one more entry was the last, and the call
 * that would return 0 is saved. */
static int list_numeric_fd(int fd, bool proc, bool fresh, pid_t **ret, size_t *ret_n)
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
	qsort(pids, n, sizeof(*pids), cmp_pid);
	*ret = pids;
	*ret_n = n;
	return 0;
}

static int cache_list(struct io_cache *c, const char *path, pid_t **ret, size_t *ret_n);

/* The numeric entries of a directory, sorted. Under the live /proc (the default root: procfs
 * wherever a system has one) the call that would return 0 is saved, one in each VM's thread list. */
static int list_numeric(const struct io_root *root, const char *path, pid_t **ret, size_t *ret_n)
{
	if (root && root->cache)
		return cache_list(root->cache, path, ret, ret_n);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = list_numeric_fd(fd, !strcmp(root_dir(root, IO_PROC), "/proc"), true, ret, ret_n);
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

int io_proc_fd_links_to(const struct io_root *root, pid_t pid, const char *target)
{
	char path[PATH_MAX];
	int r = io_path(root, IO_PROC, path, sizeof(path), "%d/fd", pid);
	if (r < 0)
		return r;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	size_t want = strlen(target);
	char link[64];
	struct dirent *de;
	int found = 0;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link));
		found = n == (ssize_t)want && !memcmp(link, target, want);
	}
	closedir(d);
	return found;
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
