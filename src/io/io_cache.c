#include "io/io_cache_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <unistd.h>

struct cache_slot {
	char *path;    /* NULL: free */
	uint64_t hash;
	int fd;
	unsigned idle; /* sweeps since it was last read (0: read since the last one) */
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
		s->idle = 0;
		c->hits++;
		int fd = s->fd;
		pthread_mutex_unlock(&c->lock);
		*ret_kept = true;
		return fd;
	}
	/* A full cache keeps no new path: no fstatfs for one it would not keep (a dense host's). */
	bool room = (s->path && s->fd == stale && stale >= 0) || c->n + c->nretired < c->max_files;
	pthread_mutex_unlock(&c->lock);

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_kept = false;
	if (!room || !keepable(fd))
		return fd;
	pthread_mutex_lock(&c->lock);
	s = slot_find(c->slots, c->nslots, path, h);
	if (s->path && s->fd >= 0 && s->fd != stale) {
		/* another thread opened or replaced it meanwhile: ours is not needed */
		close(fd);
		fd = s->fd;
		s->idle = 0;
		*ret_kept = true;
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
			s->idle = 0;
		*ret_kept = true;
		}
	} else if (!s->path && c->n + c->nretired < c->max_files &&
		   (2 * (c->n + 1) <= c->nslots || table_alloc(c, 2 * c->nslots) == 0)) {
		s = slot_find(c->slots, c->nslots, path, h);
		if ((s->path = strdup(path))) {
			s->hash = h;
			s->fd = fd;
			s->idle = 0;
		*ret_kept = true;
			c->n++;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return fd;
}

ssize_t io_cache_read(struct io_cache *c, const char *path, const struct whole_read *w)
{
	bool kept;
	int fd = cache_fd(c, path, -1, &kept);
	if (fd < 0)
		return fd;
	ssize_t n = io_read_kept_or_not(fd, true, w);
	if (n < 0 && n != -EFBIG && n != -ENOMEM && n != -ESPIPE && kept) {
		/* The process (or cgroup) the file was opened for may be gone: ask the path again. */
		int stale = fd;
		if ((fd = cache_fd(c, path, stale, &kept)) < 0)
			return fd;
		n = io_read_kept_or_not(fd, true, w);
	}
	if (n == -ESPIPE) {
		/* a file without pread (debugfs): read it from a fresh open */
		int once = open(path, O_RDONLY | O_CLOEXEC);
		n = once < 0 ? -errno : io_read_kept_or_not(once, false, w);
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
int io_cache_list(struct io_cache *c, const char *path, pid_t **ret, size_t *ret_n)
{
	bool kept;
	int fd = cache_fd(c, path, -1, &kept);
	if (fd < 0)
		return fd;
	int r = io_list_numeric_fd(fd, kept, !kept, ret, ret_n);
	if (kept && (r == -ENOENT || r == -ESRCH || (r == 0 && *ret_n == 0))) {
		if (r == 0)
			free(*ret);
		int stale = fd;
		if ((fd = cache_fd(c, path, stale, &kept)) < 0)
			return fd;
		r = io_list_numeric_fd(fd, kept, !kept, ret, ret_n);
	}
	if (!kept)
		close(fd);
	return r;
}

void io_cache_sweep(struct io_cache *c, unsigned keep)
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
		if (old[i].idle > keep) {
			if (old[i].fd >= 0)
				close(old[i].fd);
			free(old[i].path);
			continue;
		}
		struct cache_slot *s = slot_find(slots, nold, old[i].path, old[i].hash);
		*s = old[i];
		s->idle++;
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

