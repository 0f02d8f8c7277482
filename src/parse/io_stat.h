/* A VM's I/O counters: /proc/PID/io, the cgroup's io.stat (v2) and blkio (v1), and the tap a tun
 * file descriptor is attached to (/proc/PID/fdinfo/N). */
#ifndef VMHOST_PARSE_IO_STAT_H
#define VMHOST_PARSE_IO_STAT_H

#include <stdbool.h>

#include "parse/parse.h"

/* /proc/PID/io: bytes that reached storage (read_bytes, write_bytes) and bytes passed through
 * read/write calls of any kind (rchar, wchar). */
struct proc_io {
	maybe_i64 rchar, wchar, read_bytes, write_bytes;
};
extern const struct kv_table proc_io_keys;
/* The number of fields found; -EINVAL when neither read_bytes nor write_bytes is there. */
int parse_proc_io(const char *buf, size_t len, struct proc_io *ret);

/* A cgroup's block I/O, summed over its devices. */
struct cgroup_io {
	maybe_i64 read_bytes, write_bytes, read_ios, write_ios;
};
/* v2 io.stat: "MAJ:MIN rbytes=N wbytes=N rios=N wios=N ..." per device; an empty file is a
 * cgroup that did no I/O yet (every figure 0). A line without its newline or a field that is not
 * a number: -EINVAL. */
int parse_cgroup_io_stat(const char *buf, size_t len, struct cgroup_io *ret);
/* v1 blkio.throttle.io_service_bytes or io_serviced: "MAJ:MIN Read N" ... and "Total N" lines;
 * the Read and Write lines of every device, summed into ret_read and ret_write. -EINVAL on a
 * malformed line, -ERANGE on a sum past int64. */
int parse_blkio(const char *buf, size_t len, int64_t *ret_read, int64_t *ret_write);

/* The interface of /proc/PID/fdinfo/N ("iff:\ttap0") into name (cap includes the NUL); -ENOENT
 * when there is no iff: line (a tun fd not attached yet, or a kernel before 3.x), -EINVAL when
 * the name does not fit or is none the kernel allows (a NUL, '/', ':' or a blank in it). */
int parse_fdinfo_iff(const char *buf, size_t len, char *name, size_t cap);

/* Whether a VMM's fd links to the tun device: "/dev/net/tun", or "/net/tun" when the mount
 * namespace it was opened in is gone (a helper under ip netns exec that opened the tap and passed
 * it on with QMP's getfd, then exited): that /dev is detached then, and readlink stops at its root. */
bool parse_dev_tun(const char *target);

/* A macvtap's character device, as a VMM's fd links to it ("/dev/tap12", or "/tap12" as above),
 * into its interface's ifindex (12). 0, or -EINVAL when target is no /dev/tapN. */
int parse_dev_tap(const char *target, int *ret_ifindex);

/* One interface's line of /proc/PID/net/dev (the process's network namespace), as the host sees
 * it: for a tap, rx is what the guest sent. */
struct net_dev_stats {
	int64_t rx_bytes, rx_packets, rx_errors, rx_dropped, tx_bytes, tx_packets, tx_errors, tx_dropped;
};
/* 0, -ENOENT when name has no line, -EINVAL when its line is malformed. */
int parse_net_dev(const char *buf, size_t len, const char *name, struct net_dev_stats *ret);

/* /proc/PID/net/unix: the inodes (at most max, into ret) of the listening unix sockets bound at
 * path (flags __SO_ACCEPTCON, the path the last field); how many there are (more than max: max).
 * A socket unlinked and bound again leaves two with one path: each is a candidate. */
size_t parse_unix_listeners(const char *buf, size_t len, const char *path, uint64_t *ret, size_t max);

#endif
