#include "io/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io.h"

int io_random_key(void *ret, size_t len)
{
	unsigned char *p = ret;
	size_t got = 0;
	while (got < len) {
		ssize_t n = getrandom(p + got, len - got, 0);
		if (n < 0 && errno != EINTR)
			return -errno;
		got += n > 0 ? (size_t)n : 0;
	}
	return 0;
}

/* A new key file: written whole and synced before anyone may read it. */
static int create_key(const char *path, void *ret, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	int r = io_random_key(ret, len);
	if (r == 0 && (write(fd, ret, len) != (ssize_t)len || fsync(fd) < 0))
		r = errno ? -errno : -EIO;
	close(fd);
	if (r < 0)
		unlink(path);
	return r;
}

/* fd's file as a secret: regular, only its owner may read or write it, and that owner root or
 * us (a secret others may read is none). Its size, or -EPERM, or -errno. */
static off_t private_file(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077) || (st.st_uid != 0 && st.st_uid != geteuid()))
		return -EPERM;
	return st.st_size;
}

int io_secret_key(const char *path, void *ret, size_t len, int *ret_created)
{
	*ret_created = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT) {
		int r = create_key(path, ret, len);
		if (r == 0)
			*ret_created = 1;
		return r;
	}
	if (fd < 0)
		return -errno;
	off_t size = private_file(fd);
	int r = size < 0 ? (int)size : read(fd, ret, len) == (ssize_t)len ? 0 : -EINVAL; /* too short: no key */
	close(fd);
	return r;
}

int io_read_secret(const char *path, size_t max, char **ret, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	off_t size = private_file(fd);
	int r = size < 0 ? (int)size : (uint64_t)size > max ? -EFBIG : io_read_fd(fd, ret, ret_len);
	close(fd);
	return r;
}
