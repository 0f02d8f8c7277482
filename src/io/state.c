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
#include "io/test_hook.h"

const char *io_runtime_dir(char *buf, size_t cap)
{
	const char *dir = io_test_hook("VMHOST_RUNTIME_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
	int n;
	if (dir)
		n = snprintf(buf, cap, "%s", dir);
	else if (geteuid() == 0)
		n = snprintf(buf, cap, IO_RUNTIME_DIR_ROOT);
	else if (xdg && *xdg == '/')
		n = snprintf(buf, cap, "%s/vmhost", xdg);
	else
		return NULL;
	return n > 0 && (size_t)n < cap ? buf : NULL;
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
	/* dir is opened once, as the directory every later step works in (openat, renameat) */
	int dir_fd = r < 0 ? r : io_private_dir(dir, false);
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
	int dir_fd = io_private_dir(dir, true);
	if (dir_fd < 0)
		return dir_fd;
	struct io_replace rp;
	r = io_replace_at(dir_fd, name, 0600, &rp);
	if (r == 0)
		r = io_replace_with(&rp, data, len);
	close(dir_fd);
	return r;
}
