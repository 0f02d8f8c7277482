#include "io/state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/file.h"
#include "io/io.h"

/* Opens dir once, as the directory every later step works in (openat, renameat): it must be a
 * directory of ours, not a link, that no one else may write to, or another user could swap in
 * what it holds. An fd or a negative errno (-EPERM for someone else's). */
static int open_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR ? -EPERM : -errno;
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -errno : 0;
	if (r == 0 && (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)))
		r = -EPERM;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

static int check_name(const char *name)
{
	if (!*name || strchr(name, '/'))
		return -EINVAL;
	return strlen(name) > 200 ? -ENAMETOOLONG : 0;
}

int io_state_read(const char *dir, const char *name, size_t max, char **ret, size_t *ret_len)
{
	int r = check_name(name);
	int dir_fd = r < 0 ? r : open_dir(dir);
	if (dir_fd < 0)
		return dir_fd;
	int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dir_fd);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
		r = -EPERM;
	else if ((size_t)st.st_size > max)
		r = -EFBIG;
	else
		r = io_read_fd(fd, ret, ret_len);
	close(fd);
	return r;
}

int io_state_write(const char *dir, const char *name, const void *data, size_t len)
{
	int r = check_name(name);
	if (r < 0)
		return r;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	int dir_fd = open_dir(dir);
	if (dir_fd < 0)
		return dir_fd;
	struct io_replace rp;
	r = io_replace_at(dir_fd, name, 0600, &rp);
	if (r == 0)
		r = io_replace_with(&rp, data, len);
	close(dir_fd);
	return r;
}
