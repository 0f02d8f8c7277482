#include "core/model/vm_io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/rate.h"
#include "parse/io_stat.h"

void vm_io_unknown(struct vm_io *ret)
{
	*ret = (struct vm_io){.read_bytes = UNKNOWN, .write_bytes = UNKNOWN, .read_chars = UNKNOWN,
			     .write_chars = UNKNOWN, .read_bytes_per_second = NAN, .write_bytes_per_second = NAN,
			     .cgroup_read_bytes = UNKNOWN, .cgroup_write_bytes = UNKNOWN};
}

static void why_errno(char *why, size_t cap, const char *what, int err)
{
	snprintf(why, cap, "%s: %s", what, err == -EACCES || err == -EPERM ? "permission denied" : strerror(-err));
}

/* /proc/PID/io of the VMM and its helpers (a helper that cannot be read is left out, as its memory is). */
static void read_proc_io(const struct io_root *root, const pid_t *pids, size_t npids, struct vm_io *ret)
{
	for (size_t i = 0; i < npids; i++) {
		char buf[512];
		struct proc_io io;
		ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/io", pids[i]);
		int r = n < 0 ? (int)n : parse_proc_io(buf, (size_t)n, &io);
		if (r < 0 && i == 0) {
			why_errno(ret->why, sizeof(ret->why), "/proc/PID/io", r);
			return;
		}
		if (r < 0)
			continue;
		bool first = i == 0;
		ret->read_bytes = first ? io.read_bytes : maybe_add(ret->read_bytes, io.read_bytes);
		ret->write_bytes = first ? io.write_bytes : maybe_add(ret->write_bytes, io.write_bytes);
		ret->read_chars = first ? io.rchar : maybe_add(ret->read_chars, io.rchar);
		ret->write_chars = first ? io.wchar : maybe_add(ret->write_chars, io.wchar);
	}
}

/* The scope's block I/O: v2 io.stat (the unified tree, or "unified" on a hybrid host), v1 blkio. */
static void read_cgroup_io(const struct io_root *root, const char *scope, int version, struct vm_io *ret)
{
	char buf[4096];
	if (version == 1) {
		int64_t rd, wr;
		ssize_t n = io_read(root, IO_SYS, buf, sizeof(buf), "fs/cgroup/blkio%s/blkio.throttle.io_service_bytes",
				    scope);
		if (n >= 0 && parse_blkio(buf, (size_t)n, &rd, &wr) == 0) {
			ret->cgroup_read_bytes = MAYBE(rd);
			ret->cgroup_write_bytes = MAYBE(wr);
		}
		return;
	}
	ssize_t n = io_read(root, IO_SYS, buf, sizeof(buf), "fs/cgroup%s/io.stat", scope);
	if (n == -ENOENT)
		n = io_read(root, IO_SYS, buf, sizeof(buf), "fs/cgroup/unified%s/io.stat", scope);
	struct cgroup_io cio;
	if (n >= 0 && parse_cgroup_io_stat(buf, (size_t)n, &cio) == 0) {
		ret->cgroup_read_bytes = cio.read_bytes;
		ret->cgroup_write_bytes = cio.write_bytes;
	}
}

/* The interface whose ifindex is ifindex (/sys/class/net/NAME/ifindex) into name. 0, -ENOENT
 * when there is none, or a negative errno. */
static int iface_by_index(const struct io_root *root, int ifindex, char *name, size_t cap)
{
	char **names;
	size_t n;
	int r = io_list_dir(root, IO_SYS, &names, &n, "class/net");
	if (r < 0)
		return r;
	r = -ENOENT;
	for (size_t i = 0; i < n && r == -ENOENT; i++) {
		char buf[32];
		int64_t v;
		ssize_t len = io_read(root, IO_SYS, buf, sizeof(buf), "class/net/%s/ifindex", names[i]);
		if (len > 0 && buf[len - 1] == '\n')
			buf[len - 1] = '\0';
		if (len > 0 && parse_i64(buf, &v) == 0 && v == ifindex && strlen(names[i]) < cap) {
			snprintf(name, cap, "%s", names[i]);
			r = 0;
		}
	}
	io_free_names(names, n);
	return r;
}

/* The VMM's fds that may be a tap's: tun fds (-> /dev/net/tun) and macvtap fds (-> /dev/tapN), as
 * parse_dev_tun and parse_dev_tap read their links (also of a helper's namespace that is gone). */
struct tap_fd {
	int fd;
	int ifindex; /* a macvtap's interface; -1: a tun fd, its interface in its fdinfo */
};

struct tap_fds {
	struct tap_fd *v;
	size_t n, cap;
};

/* Notes a tun or macvtap fd (an io_fd_fn over the VMM's fds); any other is passed over. */
static int note_tap_fd(void *ctx, const char *fd, const char *target)
{
	struct tap_fds *t = ctx;
	int ifindex = -1;
	int64_t n;
	if (!parse_dev_tun(target) && parse_dev_tap(target, &ifindex) < 0)
		return 0;
	if (parse_i64(fd, &n) < 0 || n < 0 || n > INT32_MAX)
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct tap_fd *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct tap_fd){(int)n, ifindex};
	return 0;
}

static int cmp_tap_fd(const void *a, const void *b)
{
	return ((const struct tap_fd *)a)->fd - ((const struct tap_fd *)b)->fd;
}

/* The interface of one tun fd (fdinfo's iff:) or macvtap fd (the interface of ifindex N) into
 * name. 0, or a negative errno with why (-ENOENT: no iff:, or no interface has the ifindex). */
static int fd_iface(const struct io_root *root, pid_t pid, const struct tap_fd *f, char *name, size_t name_cap,
		    char *why, size_t cap)
{
	if (f->ifindex >= 0) {
		int r = iface_by_index(root, f->ifindex, name, name_cap);
		if (r == -ENOENT)
			snprintf(why, cap, "macvtap fd %d (/dev/tap%d): no interface has ifindex %d", f->fd, f->ifindex,
				 f->ifindex);
		else if (r < 0)
			why_errno(why, cap, "/sys/class/net", r);
		return r;
	}
	char buf[512];
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/fdinfo/%d", pid, f->fd);
	int r = n < 0 ? (int)n : parse_fdinfo_iff(buf, (size_t)n, name, name_cap);
	if (r == -ENOENT && n >= 0)
		snprintf(why, cap, "tun fd %d has no iff: in its fdinfo", f->fd);
	else if (r == -ENOENT)
		r = 0, name[0] = '\0'; /* closed since it was listed */
	else if (r < 0)
		why_errno(why, cap, "/proc/PID/fdinfo", r);
	return r;
}

/* One fd's interface added to ret, once (a multiqueue tap has one fd per queue). 0 or a
 * negative errno. */
static int take_iface_fd(const struct io_root *root, pid_t pid, const struct tap_fd *f, struct vm_io *ret, char *why,
			 size_t cap)
{
	char name[16];
	int r = fd_iface(root, pid, f, name, sizeof(name), why, cap);
	if (r < 0 || !name[0])
		return r;
	for (size_t i = 0; i < ret->nifaces; i++)
		if (!strcmp(ret->ifaces[i].name, name))
			return 0;
	if (ret->nifaces == VM_IO_IFACES_MAX)
		return 0;
	snprintf(ret->ifaces[ret->nifaces++].name, sizeof(ret->ifaces[0].name), "%s", name);
	return 0;
}

/* The interfaces of a process's tun and macvtap fds, in the order of their fds: one listing of
 * /proc/PID/fd with a readlinkat each, then fdinfo's iff: of each tun fd or the interface whose
 * /sys/class/net/NAME/ifindex is a macvtap's N. 0, -ENOENT: a tun fd without iff: or a macvtap
 * without its interface (ret_why says which), or another negative errno. */
static int vm_io_find_ifaces(const struct io_root *root, pid_t pid, struct vm_io *ret, char *ret_why, size_t cap)
{
	struct tap_fds fds = {0};
	int r = io_proc_fds_each(root, pid, note_tap_fd, &fds);
	if (r < 0) {
		why_errno(ret_why, cap, "/proc/PID/fd", r);
		free(fds.v);
		return r;
	}
	if (fds.n)
		qsort(fds.v, fds.n, sizeof(*fds.v), cmp_tap_fd);
	struct vm_io found = *ret;
	found.nifaces = 0;
	for (size_t i = 0; i < fds.n && r == 0; i++)
		r = take_iface_fd(root, pid, &fds.v[i], &found, ret_why, cap);
	free(fds.v);
	if (r < 0)
		return r;
	memcpy(ret->ifaces, found.ifaces, sizeof(found.ifaces));
	ret->nifaces = found.nifaces;
	return 0;
}

static void iface_unknown(struct vm_iface *f)
{
	f->rx_bytes = f->tx_bytes = f->rx_packets = f->tx_packets = UNKNOWN;
	f->rx_dropped = f->tx_dropped = f->rx_errors = f->tx_errors = UNKNOWN;
	f->rx_bytes_per_second = f->tx_bytes_per_second = NAN;
}

/* Each interface's line of the VMM's /proc/PID/net/dev (its network namespace, where its taps are). */
static void read_ifaces(const struct io_root *root, pid_t pid, struct vm_io *ret)
{
	char *buf = NULL;
	size_t len = 0;
	int r = io_read_alloc(root, IO_PROC, &buf, &len, "%d/net/dev", pid);
	for (size_t i = 0; i < ret->nifaces; i++) {
		struct vm_iface *f = &ret->ifaces[i];
		struct net_dev_stats s;
		iface_unknown(f);
		int p = r < 0 ? r : parse_net_dev(buf, len, f->name, &s);
		if (p == -ENOENT)
			snprintf(f->why, sizeof(f->why), "gone: not in the VMM's network namespace");
		else if (p < 0)
			why_errno(f->why, sizeof(f->why), "/proc/PID/net/dev", p);
		if (p < 0)
			continue;
		f->why[0] = '\0';
		f->rx_bytes = MAYBE(s.rx_bytes), f->tx_bytes = MAYBE(s.tx_bytes);
		f->rx_packets = MAYBE(s.rx_packets), f->tx_packets = MAYBE(s.tx_packets);
		f->rx_dropped = MAYBE(s.rx_dropped), f->tx_dropped = MAYBE(s.tx_dropped);
		f->rx_errors = MAYBE(s.rx_errors), f->tx_errors = MAYBE(s.tx_errors);
	}
	free(buf);
}

void vm_io_read(const struct io_root *root, const struct vm_io_source *src, const struct vm_io *before,
		struct vm_io *ret)
{
	vm_io_unknown(ret);
	if (src->npids == 0)
		return;
	pid_t vmm = src->pids[0];
	read_proc_io(root, src->pids, src->npids, ret);
	if (src->scope)
		read_cgroup_io(root, src->scope, src->version, ret);
	/* The taps, from the VMM's fds whatever its command line says: QMP's getfd and netdev_add (as
	 * libvirt's attach-interface) add one that no command line shows. The list of the reading
	 * before stands while the VMM holds as many fds as then (one stat); else, or where the kernel
	 * does not count them, the fds are looked at again. */
	long nfds = io_proc_fd_count(root, vmm);
	if (before && before->ifaces_known && nfds > 0 && nfds == before->ifaces_fds) {
		memcpy(ret->ifaces, before->ifaces, sizeof(ret->ifaces));
		ret->nifaces = before->nifaces;
		ret->ifaces_known = true;
	} else
		ret->ifaces_known = vm_io_find_ifaces(root, vmm, ret, ret->ifaces_why, sizeof(ret->ifaces_why)) == 0;
	ret->ifaces_fds = nfds > 0 ? nfds : 0;
	if (ret->ifaces_known && ret->nifaces)
		read_ifaces(root, vmm, ret);
}

void vm_io_rates(const struct vm_io *before, struct vm_io *after, double seconds)
{
	after->read_bytes_per_second = counter_rate(before->read_bytes, after->read_bytes, seconds);
	after->write_bytes_per_second = counter_rate(before->write_bytes, after->write_bytes, seconds);
	for (size_t i = 0; i < after->nifaces; i++) {
		struct vm_iface *a = &after->ifaces[i];
		for (size_t j = 0; j < before->nifaces; j++) {
			const struct vm_iface *b = &before->ifaces[j];
			if (strcmp(a->name, b->name) != 0)
				continue;
			a->rx_bytes_per_second = counter_rate(b->rx_bytes, a->rx_bytes, seconds);
			a->tx_bytes_per_second = counter_rate(b->tx_bytes, a->tx_bytes, seconds);
		}
	}
}

struct vm_io_totals vm_io_net_totals(const struct vm_io *io)
{
	struct vm_io_totals t = {UNKNOWN, UNKNOWN, UNKNOWN};
	if (!io->ifaces_known)
		return t;
	t = (struct vm_io_totals){MAYBE(0), MAYBE(0), MAYBE(0)};
	for (size_t i = 0; i < io->nifaces; i++) {
		const struct vm_iface *f = &io->ifaces[i];
		t.rx_bytes = maybe_add(t.rx_bytes, f->rx_bytes);
		t.tx_bytes = maybe_add(t.tx_bytes, f->tx_bytes);
		t.dropped = maybe_add(t.dropped, maybe_add(f->rx_dropped, f->tx_dropped));
	}
	return t;
}
