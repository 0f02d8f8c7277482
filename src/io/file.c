#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/clock.h"
#include "io/io.h"

/* A hard-to-guess suffix for a temporary name: O_EXCL makes a guessed one fail, not follow. */
static uint64_t temp_suffix(void)
{
	uint64_t x;
	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) == (ssize_t)sizeof(x))
		return x;
	return (uint64_t)(clock_monotonic_seconds() * 1e9) ^ ((uint64_t)getpid() << 32);
}

int io_replace_at(int dir_fd, const char *name, mode_t mode, struct io_replace *ret)
{
	struct io_replace rp = {.dir_fd = dir_fd, .fd = -1};
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if (snprintf(rp.name, sizeof(rp.name), "%s", name) >= (int)sizeof(rp.name))
		return -ENAMETOOLONG;
	for (int attempt = 0; attempt < 16; attempt++) {
		/* ".NAME.XXXXXXXXXXXXXXXX", the name cut to fit NAME_MAX */
		snprintf(rp.temp, sizeof(rp.temp), ".%.200s.%016llx", name, (unsigned long long)temp_suffix());
		rp.fd = openat(dir_fd, rp.temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (rp.fd >= 0) {
			*ret = rp;
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* path's directory into dir ("." when it has no '/'), and where its last name starts. */
static int split_dir(const char *path, char *dir, size_t cap, const char **ret_name)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
	if (dir_len >= cap)
		return -ENAMETOOLONG;
	memcpy(dir, slash ? path : ".", dir_len);
	dir[dir_len] = '\0';
	*ret_name = slash ? slash + 1 : path;
	return 0;
}

int io_replace_path(const char *path, mode_t mode, struct io_replace *ret)
{
	char dir[4096];
	const char *name;
	int r = split_dir(path, dir, sizeof(dir), &name);
	if (r < 0)
		return r;
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		return -errno;
	r = io_replace_at(dir_fd, name, mode, ret);
	if (r < 0)
		close(dir_fd);
	else
		ret->own_dir = 1;
	return r;
}

int io_replace_write(struct io_replace *rp, const void *data, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = write(rp->fd, (const char *)data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

FILE *io_replace_stream(struct io_replace *rp)
{
	if (!rp->stream)
		rp->stream = fdopen(rp->fd, "w");
	return rp->stream;
}

/* Closes the new file (the stream with it): 0, or the first error its writes or close met. */
static int close_temp(struct io_replace *rp, int r)
{
	if (rp->stream) {
		if ((fflush(rp->stream) != 0 || ferror(rp->stream)) && r == 0)
			r = errno ? -errno : -EIO;
		if (r == 0 && fsync(rp->fd) < 0)
			r = -errno;
		if (fclose(rp->stream) != 0 && r == 0)
			r = -errno;
	} else if (rp->fd >= 0) {
		if (r == 0 && fsync(rp->fd) < 0)
			r = -errno;
		if (close(rp->fd) < 0 && r == 0)
			r = -errno; /* a full disk may only say so here */
	}
	rp->stream = NULL;
	rp->fd = -1;
	return r;
}

static void finish(struct io_replace *rp, int r)
{
	if (r < 0)
		unlinkat(rp->dir_fd, rp->temp, 0);
	if (rp->own_dir)
		close(rp->dir_fd);
	rp->dir_fd = -1;
	rp->own_dir = 0;
}

int io_replace_commit(struct io_replace *rp)
{
	errno = 0;
	int r = close_temp(rp, 0);
	if (r == 0 && renameat(rp->dir_fd, rp->temp, rp->dir_fd, rp->name) < 0)
		r = -errno;
	if (r == 0)
		fsync(rp->dir_fd); /* the rename itself on disk; a directory that cannot is still renamed */
	finish(rp, r);
	return r;
}

void io_replace_abort(struct io_replace *rp)
{
	close_temp(rp, -ECANCELED);
	finish(rp, -ECANCELED);
}

/* A file or directory only the effective user may change: theirs, and no group or other write. */
static bool ours_alone(const struct stat *st) { return st->st_uid == geteuid() && !(st->st_mode & 022); }

int io_private_dir(const char *dir, bool create)
{
	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR ? -EPERM : -errno;
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -errno : 0;
	if (r == 0 && (!S_ISDIR(st.st_mode) || !ours_alone(&st)))
		r = -EPERM;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int io_lock_fd(int fd, unsigned flags)
{
	int r;
	while ((r = flock(fd, LOCK_EX | (flags & IO_LOCK_WAIT ? 0 : LOCK_NB))) < 0 && errno == EINTR)
		;
	return r < 0 ? (errno == EWOULDBLOCK ? -EBUSY : -errno) : 0;
}

const char *io_lock_strerror(int err)
{
	if (err == -EPERM)
		return "refused: a link, or its directory or the file another user's or writable by others";
	return strerror(-err);
}

/* Opens and locks name in dir_fd: 0 with *ret_fd; 1 when the file locked is no longer the one
 * at the name (its holder removed it, io_lock_remove, while we waited: try again); or a negative
 * errno. */
static int lock_at(int dir_fd, const char *name, unsigned flags, int *ret_fd)
{
	int fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	struct stat st, named;
	int r = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) || !ours_alone(&st) ? -EPERM : 0;
	if (r == 0)
		r = io_lock_fd(fd, flags);
	if (r == 0 && (fstatat(dir_fd, name, &named, AT_SYMLINK_NOFOLLOW) < 0 || named.st_dev != st.st_dev ||
		       named.st_ino != st.st_ino))
		r = 1;
	if (r != 0)
		close(fd);
	else
		*ret_fd = fd;
	return r;
}

int io_lock(const char *path, unsigned flags)
{
	char dir[4096];
	const char *name;
	int r = split_dir(path, dir, sizeof(dir), &name);
	if (r < 0 || !*name)
		return r < 0 ? r : -EINVAL;
	int dir_fd = io_private_dir(dir, true);
	if (dir_fd < 0)
		return dir_fd;
	int fd = -1;
	for (int attempt = 0; attempt < 16 && (r = lock_at(dir_fd, name, flags, &fd)) == 1; attempt++)
		;
	close(dir_fd);
	return r == 0 ? fd : r == 1 ? -EAGAIN : r;
}

void io_lock_remove(const char *path, int fd)
{
	if (fd < 0)
		return;
	unlink(path); /* while still held: whoever waits on it then sees it gone and makes it anew */
	close(fd);
}

int io_open_owned(const char *path, mode_t mode)
{
	/* O_NONBLOCK: a FIFO planted at the name must not hang the open (it is refused below) */
	int fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -errno : 0;
	if (r == 0 && !S_ISREG(st.st_mode))
		r = -EINVAL;
	else if (r == 0 && (st.st_uid != geteuid() || (st.st_mode & S_IWOTH)))
		r = -EPERM;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int io_read_path(const char *path, size_t max, char **ret, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -errno : (size_t)st.st_size > max ? -EFBIG : io_read_fd(fd, ret, ret_len);
	close(fd);
	return r;
}

int io_replace_with(struct io_replace *rp, const void *data, size_t len)
{
	int r = io_replace_write(rp, data, len);
	if (r < 0) {
		io_replace_abort(rp);
		return r;
	}
	return io_replace_commit(rp);
}

int io_write_whole(const char *path, const void *data, size_t len, mode_t mode)
{
	struct io_replace rp;
	int r = io_replace_path(path, mode, &rp);
	return r < 0 ? r : io_replace_with(&rp, data, len);
}

ssize_t io_read_small(const char *path, char *buf, size_t cap)
{
	if (!cap)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n;
	while ((n = read(fd, buf, cap - 1)) < 0 && errno == EINTR)
		;
	int e = n < 0 ? -errno : 0;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return e < 0 ? e : n;
}

int io_write_path(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(value);
	ssize_t n;
	while ((n = write(fd, value, len)) < 0 && errno == EINTR)
		;
	int e = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (close(fd) < 0 && e == 0)
		e = -errno;
	return e;
}

bool io_can_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int io_redirect_std(const char *in_path, const char *out_path, int out_flags)
{
	int in = open(in_path, O_RDONLY);
	if (in < 0)
		return -errno;
	int out = open(out_path, O_WRONLY | out_flags, 0600);
	if (out < 0) {
		int e = -errno;
		close(in);
		return e;
	}
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		return -errno;
	if (in > 2)
		close(in);
	if (out > 2)
		close(out);
	return 0;
}

int io_remove(const char *path) { return unlink(path) < 0 ? -errno : 0; }

int io_remove_dir(const char *path) { return rmdir(path) < 0 ? -errno : 0; }

int io_make_temp_dir(char *template_path) { return mkdtemp(template_path) ? 0 : -errno; }
