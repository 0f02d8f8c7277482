/* Files vmhost writes for the user or for itself, replaced whole: a reader sees the old file or
 * the new one, never half, and a crash leaves the old one or the new one, never a torn one.
 *
 *   struct io_replace rp;
 *   int r = io_replace_path(out_path, 0644, &rp);   // or io_replace_at(dir_fd, name, ...)
 *   if (r == 0)
 *           r = io_replace_write(&rp, data, len);  // or write to io_replace_stream()
 *   r = r == 0 ? io_replace_commit(&rp) : (io_replace_abort(&rp), r);
 *
 * The new contents go to a temporary file beside the target, under a fresh name made with
 * O_CREAT|O_EXCL|O_NOFOLLOW relative to the directory's fd (a link planted at any name is never
 * followed, and the directory cannot be swapped between the steps), are fsync'd, then renamed
 * over the target with renameat and the directory fsync'd. */
#ifndef VMHOST_IO_FILE_H
#define VMHOST_IO_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct io_replace {
	int dir_fd;    /* the target's directory */
	int own_dir;   /* dir_fd was opened by io_replace_path and is closed with the rest */
	int fd;        /* the temporary file, -1 once closed */
	FILE *stream;  /* io_replace_stream's, over fd; NULL until asked for */
	char name[256]; /* the target, in dir_fd */
	char temp[256]; /* the temporary file, in dir_fd */
};

/* Starts replacing name (no '/') in the open directory dir_fd (kept open by the caller until the
 * commit or abort); the new file gets mode (less the umask). 0 or a negative errno; on failure
 * nothing was created and *ret is untouched. */
int io_replace_at(int dir_fd, const char *name, mode_t mode, struct io_replace *ret);
/* The same for a path: its directory ("." when it has no '/') is opened here. */
int io_replace_path(const char *path, mode_t mode, struct io_replace *ret);

/* Appends bytes to the new file. 0 or a negative errno. */
int io_replace_write(struct io_replace *rp, const void *data, size_t len);
/* A stdio stream over the new file (owned by rp, closed by the commit or abort), or NULL. */
FILE *io_replace_stream(struct io_replace *rp);

/* Flushes, fsyncs and renames the new file over the target. 0 or a negative errno; on failure
 * the target is as it was and the temporary file is removed. rp is finished either way. */
int io_replace_commit(struct io_replace *rp);
/* Removes the new file; the target stays as it was. */
void io_replace_abort(struct io_replace *rp);

/* Writes data as the whole new file and commits (or, on a failed write, aborts). 0 or a
 * negative errno. */
int io_replace_with(struct io_replace *rp, const void *data, size_t len);
/* The whole of a file replaced by data at once (io_replace_path, io_replace_with). 0 or a
 * negative errno; on failure the old file stays. */
int io_write_whole(const char *path, const void *data, size_t len, mode_t mode);

/* Reads a whole file (a log, a script) into a fresh NUL-terminated buffer; -EFBIG past max bytes.
 * 0 or a negative errno. */
int io_read_path(const char *path, size_t max, char **ret, size_t *ret_len);
/* One read of a small file into buf (NUL-terminated; at most cap - 1 bytes), async-signal-safe
 * (open, read, close): for signal handlers. The length read or a negative errno. */
ssize_t io_read_small(const char *path, char *buf, size_t cap);
/* Writes value to an existing file (a sysfs knob) by its full path, async-signal-safe (open,
 * write, close): for signal handlers that restore settings. 0 or a negative errno. */
int io_write_path(const char *path, const char *value);
/* True when path can be opened with flags (O_RDWR on /dev/kvm: KVM is usable). */
bool io_can_open(const char *path, int flags);
/* For a child between fork and exec (async-signal-safe): stdin from in_path, stdout and stderr
 * to out_path, opened with out_flags (O_TRUNC or O_APPEND, with O_CREAT, mode 0600). 0 or a
 * negative errno. */
int io_redirect_std(const char *in_path, const char *out_path, int out_flags);

/* Opens path (read-only), a file the effective user writes for itself (a database): created with
 * mode when missing, never through a link, and used only when it is a regular file of the
 * effective user that others may not write (REVIEW S-M5). An fd or a negative errno: -ELOOP for a
 * link, -EPERM for another user's file or one others may write, -EINVAL for no regular file. */
int io_open_owned(const char *path, mode_t mode);

/* Removes a file (not a directory). Async-signal-safe. 0 or a negative errno. */
int io_remove(const char *path);
/* Removes an empty directory. Async-signal-safe. 0 or a negative errno. */
int io_remove_dir(const char *path);
/* Creates a private directory from a template ending in XXXXXX (mkdtemp), filled in place.
 * 0 or a negative errno. */
int io_make_temp_dir(char *template_path);

/* Opens dir as a private directory, for every later step to work in (openat): a directory of the
 * effective user, not a link, that no one else may write (else another user could swap in what
 * it holds). create: made, mode 0700, when missing (its parent must exist). An fd or a negative
 * errno: -EPERM for a link, another user's directory or one others may write. */
int io_private_dir(const char *dir, bool create);

/* Lock files (flock, held until the fd is closed), in a private directory (io_private_dir, made
 * when missing): the file is opened without following a link (created 0600) and used only when it
 * is a regular file of the effective user that no one else may write. Another user can neither
 * open it nor plant it, so none can hold it (REVIEW S-M3: in /run/lock, mode 1777, anyone could). */
enum {
	IO_LOCK_WAIT = 1, /* wait for the holder rather than answer -EBUSY */
};
/* Locks path exclusively. An fd or a negative errno: -EBUSY while another holds it (without
 * IO_LOCK_WAIT), -EPERM when its directory or the file is not the effective user's alone. The
 * lock held is the file still at path (one its holder removed meanwhile is let go and the new one
 * taken). */
int io_lock(const char *path, unsigned flags);
/* Removes the lock file at path while it still holds it (fd, from io_lock), then releases it. For
 * locks only vmhost takes: io_lock makes the file anew for one that waited on the removed one. */
void io_lock_remove(const char *path, int fd);
/* Locks an open file itself (flock on fd), as io_lock: 0, -EBUSY or another negative errno. */
int io_lock_fd(int fd, unsigned flags);
/* What io_lock's error means, for a message after the lock's path. */
const char *io_lock_strerror(int err);

#endif
