/* debugfs and tracefs mounted for this run alone, where the host has neither: see mountns.h. */
#include "io/mountns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEBUGFS_MAGIC 0x64626720
#define TRACEFS_MAGIC 0x74726163

/* Whether the file system at <sys>/rel is of type magic (0: it is not, or not there). */
static bool is_fs(const struct io_root *root, const char *rel, long magic)
{
	char path[256];
	struct statfs fs;
	return io_path(root, IO_SYS, path, sizeof(path), "%s", rel) == 0 && statfs(path, &fs) == 0 &&
	       (long)fs.f_type == magic;
}

#ifdef FSOPEN_CLOEXEC /* glibc 2.36 and later declare fsopen and its kin */
/* A detached mount of type: in no mount namespace, gone with its last fd. */
static int detached_mount(const char *type)
{
	int fs = fsopen(type, FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	int m = fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0
			? -errno
			: fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (m == -1)
		m = -errno;
	close(fs);
	return m;
}
#else
static int detached_mount(const char *type)
{
	(void)type;
	return -ENOSYS;
}
#endif

/* The child's part: only system calls, then _exit (the parent may have threads). Sends an int,
 * 0 with the root's fd or an errno without. */
static void child_mount(int sock, const char *type, const char *where)
{
	int fd = -1, err = 0;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(type, where, type, MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		err = errno;
	/* read-only for this mount alone (MS_RDONLY on the mount itself would be the superblock's) */
	if (!err)
		(void)mount(NULL, where, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	if (!err && (fd = open(where, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		err = errno;
	char control[CMSG_SPACE(sizeof(int))];
	memset(control, 0, sizeof(control));
	struct iovec iov = {&err, sizeof(err)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		msg.msg_control = control;
		msg.msg_controllen = sizeof(control);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	_exit(sendmsg(sock, &msg, MSG_NOSIGNAL) < 0);
}

/* The child's answer: the fd it sent, or the errno it sent, or -EIO. */
static int receive_mount(int sock)
{
	int err = 0, fd = -1;
	char control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {&err, sizeof(err)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof(control)};
	ssize_t n;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(err))
		return -EIO;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (fd >= 0)
		return fd;
	return err > 0 ? -err : -EIO;
}

int io_mount_by_child(const char *type, const char *where)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		child_mount(sv[1], type, where);
	}
	close(sv[1]);
	int r = pid < 0 ? -errno : receive_mount(sv[0]);
	close(sv[0]);
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return r;
}

/* One file system mounted privately: its root's fd and path into *fd and path. */
static int mount_one(const struct io_root *root, const char *type, const char *rel, int *fd, char *path, size_t cap)
{
	int m = detached_mount(type);
	if (m == -ENOSYS) {
		char where[256];
		m = io_path(root, IO_SYS, where, sizeof(where), "%s", rel);
		if (m == 0)
			m = io_mount_by_child(type, where);
	}
	if (m < 0)
		return m;
	*fd = m;
	snprintf(path, cap, "/proc/self/fd/%d", m);
	return 0;
}

/* The host's own roots: the defaults, not a tree of fixtures. */
static bool host_roots(const struct io_root *root)
{
	return (!root->proc || !strcmp(root->proc, "/proc")) && (!root->sys || !strcmp(root->sys, "/sys"));
}

unsigned io_mount_private(struct io_root *root, unsigned want, struct io_private_mounts *m)
{
	*m = (struct io_private_mounts){.debugfs_fd = -1, .tracefs_fd = -1};
	if (geteuid() != 0 || !host_roots(root))
		return 0;
	bool host_debugfs = is_fs(root, "kernel/debug", DEBUGFS_MAGIC);
	unsigned done = 0;
	if ((want & IO_DEBUGFS) && !host_debugfs &&
	    mount_one(root, "debugfs", "kernel/debug", &m->debugfs_fd, m->debugfs, sizeof(m->debugfs)) == 0)
		done |= IO_DEBUGFS;
	/* a host debugfs has tracefs at tracing/ (io_tracefs_dir looks there too) */
	if ((want & IO_TRACEFS) && !host_debugfs && !is_fs(root, "kernel/tracing", TRACEFS_MAGIC) &&
	    mount_one(root, "tracefs", "kernel/tracing", &m->tracefs_fd, m->tracefs, sizeof(m->tracefs)) == 0)
		done |= IO_TRACEFS;
	if (done & IO_DEBUGFS)
		root->debugfs = m->debugfs;
	if (done & IO_TRACEFS)
		root->tracefs = m->tracefs;
	return done;
}

void io_private_mounts_close(struct io_private_mounts *m)
{
	if (m->debugfs_fd >= 0)
		close(m->debugfs_fd);
	if (m->tracefs_fd >= 0)
		close(m->tracefs_fd);
	m->debugfs_fd = m->tracefs_fd = -1;
}
