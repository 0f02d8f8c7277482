/* Secrets read from files only their owner may read: the fleet key of the page hashes that leave
 * the host, passwords; and random keys. */
#ifndef VMHOST_IO_SECRET_H
#define VMHOST_IO_SECRET_H

#include <stddef.h>

/* The fleet's secret: len bytes from the key file at path, which must be a regular file that only
 * its owner may read or write (mode 0600 or 0400) and owned by root or by us; -EPERM otherwise.
 * When path does not exist, a new random key is created there with mode 0600 (O_EXCL: two runs
 * never write two keys) and *ret_created set. -errno on failure. */
int io_secret_key(const char *path, void *ret, size_t len, int *ret_created);

/* A whole secret file (a password) into a fresh NUL-terminated buffer, for the caller to wipe:
 * refused as io_secret_key refuses a key file (-EPERM), never created; -EFBIG past max bytes.
 * 0 or -errno. */
int io_read_secret(const char *path, size_t max, char **ret, size_t *ret_len);

/* A random key for one run (getrandom). 0 or -errno. */
int io_random_key(void *ret, size_t len);

#endif
