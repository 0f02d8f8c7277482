/* The only layer that touches the filesystem: every path is relative to a proc or sys root. */
#ifndef VMHOST_IO_H
#define VMHOST_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct io_cache;

struct io_root {
	const char *proc; /* default "/proc" */
	const char *sys;  /* default "/sys"; debugfs is <sys>/kernel/debug */
	struct io_cache *cache; /* NULL, or where io_read and io_read_alloc keep their files open */
	/* NULL: debugfs is <sys>/kernel/debug and tracefs <sys>/kernel/tracing; else where they are
	 * mounted for this run alone (io/mountns.h), and every path under those two goes there */
	const char *debugfs, *tracefs;
};

enum io_base { IO_PROC, IO_SYS };

/* Formats "<root>/<rel>" into buf. Returns 0 or -ENAMETOOLONG. */
int io_path(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Reads a whole file into buf (cap includes the terminating NUL). Returns the length read or a
 * negative errno; -EFBIG when the file does not fit. */
ssize_t io_read(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* The first cap - 1 bytes of a file into buf, NUL-terminated: a longer file is cut, never -EFBIG
 * (what any process can make as long as it likes, its command line, is read this far only). */
ssize_t io_read_head(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Reads a whole file of any size into a fresh buffer (NUL-terminated); *ret_len excludes the NUL. */
int io_read_alloc(const struct io_root *root, enum io_base base, char **ret, size_t *ret_len, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Opens a file for repeated reads with io_reread(); returns an fd or a negative errno. */
int io_open(const struct io_root *root, enum io_base base, int flags, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Re-reads an open file from offset 0 with one pread (procfs/sysfs files fit one call). */
ssize_t io_reread(int fd, char *buf, size_t cap);
/* The rest of an open file, to its end, into a fresh NUL-terminated buffer (at most 64 MiB:
 * -EFBIG); 0 or a negative errno. */
int io_read_fd(int fd, char **ret, size_t *ret_len);

/* One pread at an offset (pagemap and other binary files); retries on EINTR. */
ssize_t io_pread(int fd, void *buf, size_t len, off_t offset);
void io_close(int fd);

/* Kept-open files (io/io_cache.c) for a reader that reads the same files over and over (`vmhost top`): with a
 * cache in the root, io_read, io_read_alloc, io_list_pids and io_list_tasks open each path once
 * and re-read it (pread, or getdents from the start), which skips the path walk that is most of
 * the cost of a small /proc file. A re-read that fails
 * (the process or cgroup behind the file is gone, and its pid or name may have been reused) is
 * tried once more on a fresh open of the path, so a read through the cache answers what a fresh
 * open would. Reads may come from several threads; io_cache_sweep and io_cache_free from one
 * thread while no read runs; a directory (io_list_pids, io_list_tasks) is listed by one thread
 * at a time. The cache keeps at most half the soft RLIMIT_NOFILE open, which
 * io_cache_new first raises to the hard limit (at most 65536). */
int io_cache_new(struct io_cache **ret);
/* Closes the files not read in the last keep + 1 rounds (processes that are gone; keep 0: not read
 * since the last sweep): call it between rounds of reads. A reader that reads some files only
 * every few rounds (top's slices) keeps them open over the rounds between. */
void io_cache_sweep(struct io_cache *c, unsigned keep);
void io_cache_free(struct io_cache *c);
/* Files held open, and reads served without an open since io_cache_new (tests check both). */
void io_cache_stats(const struct io_cache *c, size_t *ret_open, uint64_t *ret_hits);

/* Writes a value to a file (sysfs knobs). Returns 0 or a negative errno. */
int io_write(const struct io_root *root, enum io_base base, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Orders pids ascending, for qsort and bsearch: the lists below are so sorted. */
int io_pid_cmp(const void *a, const void *b);

/* Whether pid is in a list sorted ascending. */
bool io_pid_in(const pid_t *sorted, size_t n, pid_t pid);

/* Lists the numeric entries of <proc> (process ids), sorted ascending. */
int io_list_pids(const struct io_root *root, pid_t **ret, size_t *ret_n);

/* Lists a process's threads (<proc>/PID/task), sorted ascending. */
int io_list_tasks(const struct io_root *root, pid_t pid, pid_t **ret, size_t *ret_n);

/* Whether one of the process's file descriptors (<proc>/PID/fd/N) links to target, as
 * readlink says ("anon_inode:kvm-vm"): 1 or 0, or a negative errno (-ENOENT the process is
 * gone, -EACCES another user's). Costs a readlink per descriptor, of the first IO_FD_SCAN_MAX. */
#define IO_FD_SCAN_MAX 4096u
int io_proc_fd_links_to(const struct io_root *root, pid_t pid, const char *target);

/* Each of the process's file descriptors (<proc>/PID/fd/N) with its link's target as readlink
 * says ("/dev/net/tun", "anon_inode:kvm-vm", "socket:[123]"; cut at 255 bytes), in the directory's
 * order, the first IO_FD_SCAN_MAX of them: fn returns 0 to go on, more to stop there, a negative errno to stop and return it. One
 * listing and one readlinkat per descriptor; one closed meanwhile is left out. 0, or a negative
 * errno (-ENOENT the process is gone, -EACCES another user's). */
typedef int io_fd_fn(void *ctx, const char *fd, const char *target);
int io_proc_fds_each(const struct io_root *root, pid_t pid, io_fd_fn *fn, void *ctx);

/* How many file descriptors the process holds, from the size of <proc>/PID/fd (one stat, no
 * listing): Linux 6.2 and later count them there; 0 where the kernel does not (an older one), or a
 * negative errno. */
long io_proc_fd_count(const struct io_root *root, pid_t pid);

/* Lists the entry names of a directory, sorted; free with io_free_names(). */
int io_list_dir(const struct io_root *root, enum io_base base, char ***ret, size_t *ret_n, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void io_free_names(char **names, size_t n);

/* Creates or removes a directory (cgroups). 0 or a negative errno (-EEXIST, -EBUSY ...). */
int io_mkdir(const struct io_root *root, enum io_base base, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int io_rmdir(const struct io_root *root, enum io_base base, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The target of a symbolic link (/proc/PID/fd/N) into buf, NUL-terminated. Returns its length
 * or a negative errno; -ENAMETOOLONG when it does not fit. */
ssize_t io_readlink(const struct io_root *root, enum io_base base, char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* True when the path exists. */
int io_exists(const struct io_root *root, enum io_base base, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
