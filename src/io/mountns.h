/* debugfs and tracefs for one run of vmhost on a host that has not mounted them (no systemd to
 * mount them at boot, a container host): mounted where nothing else sees them, so the host's
 * mounts stay exactly as they were, and read through the root's usual paths (<sys>/kernel/debug,
 * <sys>/kernel/tracing: io_path sends those to the mount held here). The mount is a detached one
 * (fsopen and fsmount, Linux 5.2 and later), in no mount namespace anyone can list; where the
 * kernel has no fsmount, a short-lived child makes it in a private mount namespace of its own (/
 * made private first, so nothing propagates back), opens its root, passes that directory back over
 * a socketpair (SCM_RIGHTS) and exits. Either way the mount lives exactly as long as the directory
 * fd held here, and its paths are /proc/self/fd/N/...; it is mounted read-only, nosuid, nodev,
 * noexec. Only as root with CAP_SYS_ADMIN, and only on the host's own roots (/proc and /sys):
 * never under --sys-root fixtures. */
#ifndef VMHOST_IO_MOUNTNS_H
#define VMHOST_IO_MOUNTNS_H

#include "io/io.h"

enum io_kernel_fs { IO_DEBUGFS = 1u << 0, IO_TRACEFS = 1u << 1 };

struct io_private_mounts {
	int debugfs_fd, tracefs_fd;   /* the mounts' roots; -1: not mounted here */
	char debugfs[32], tracefs[32]; /* their paths, "/proc/self/fd/N" */
};

/* For each of want (IO_DEBUGFS, IO_TRACEFS) that the host has not mounted where root looks for it
 * (tracefs: at <sys>/kernel/tracing, nor through a debugfs at <sys>/kernel/debug), mounts it for
 * this process alone and points root's debugfs or tracefs at it; m holds the mounts and must
 * outlive root's use of them. Returns the IO_* bits mounted here: 0 when nothing was (not root, not
 * the host's roots, both there already, or the kernel refused: root is then as it was). */
unsigned io_mount_private(struct io_root *root, unsigned want, struct io_private_mounts *m);

/* Closes what io_mount_private mounted (the mounts go with their fds); the root that pointed at
 * them must not be read through after. m may be all -1 fds (nothing mounted). */
void io_private_mounts_close(struct io_private_mounts *m);

/* For tests: the way taken where the kernel has no fsmount, forced. Mounts a file system of type
 * ("debugfs", "tracefs") at where in a child's private mount namespace and returns the directory
 * fd of its root (close-on-exec), or a negative errno. */
int io_mount_by_child(const char *type, const char *where);

#endif
