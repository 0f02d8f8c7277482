/* Private to io/io.c and io/io_cache.c: the kept-open file cache (io_cache_new and its kin in
 * io/io.h) and the whole-file reads both share. The cache has its own threading rules (io/io.h): a
 * read may come from several threads at once, a sweep or a free from one at a time. */
#ifndef VMHOST_IO_CACHE_INTERNAL_H
#define VMHOST_IO_CACHE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "io/io.h"

/* One whole-file read of path, into buf (alloc NULL) or a fresh buffer, by a file the cache keeps
 * open (cache_read, below) or by open, read, close. */
struct whole_read {
	char *buf;
	size_t cap;
	bool head; /* into buf: a longer file is cut to what fits, not -EFBIG */
	char **alloc;
	size_t *alloc_len;
};

/* Reads fd whole as w asks (kept: the fd stays open and is read from offset 0 with pread). */
ssize_t io_read_kept_or_not(int fd, bool kept, const struct whole_read *w);
/* The numeric entries of an open directory, sorted (io.c's list_numeric, below the cache). */
int io_list_numeric_fd(int fd, bool proc, bool fresh, pid_t **ret, size_t *ret_n);

/* A whole read of path through the cache's kept fd for it (opened on first use; a failed read is
 * tried once more on a fresh open). */
ssize_t io_cache_read(struct io_cache *c, const char *path, const struct whole_read *w);
/* The numeric entries of the directory at path, through the cache's kept fd for it. */
int io_cache_list(struct io_cache *c, const char *path, pid_t **ret, size_t *ret_n);

#endif
