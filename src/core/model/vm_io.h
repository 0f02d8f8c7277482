/* What a VM moves through the host: the VMM's own I/O (/proc/PID/io over the VMM and its
 * helpers), its scope's block I/O (cgroup v2 io.stat, v1 blkio), and its taps and macvtaps (found
 * from its tun and /dev/tapN file descriptors, read from the VMM's /proc/PID/net/dev). A tap's rx
 * is what the guest sent. Counters only: a few small files per VM. Unknown figures stay unknown,
 * with a reason. */
#ifndef VMHOST_CORE_VM_IO_H
#define VMHOST_CORE_VM_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "io/io.h"
#include "parse/maybe.h"

#define VM_IO_IFACES_MAX 8
#define VM_IO_WHY_MAX 96

struct vm_iface {
	char name[16]; /* IFNAMSIZ */
	maybe_i64 rx_bytes, tx_bytes, rx_packets, tx_packets, rx_dropped, tx_dropped, rx_errors, tx_errors;
	double rx_bytes_per_second, tx_bytes_per_second; /* over an interval; NaN without one */
	char why[VM_IO_WHY_MAX]; /* why its counters are unknown ("" when read) */
};

struct vm_io {
	/* /proc/PID/io of the VMM and its helpers: storage bytes, and bytes through read/write. */
	maybe_i64 read_bytes, write_bytes, read_chars, write_chars;
	double read_bytes_per_second, write_bytes_per_second; /* NaN without an interval */
	char why[VM_IO_WHY_MAX];      /* why the /proc/PID/io figures are unknown ("" when read) */
	/* The scope's block I/O (v2 io.stat, v1 blkio.throttle.io_service_bytes); unknown without one. */
	maybe_i64 cgroup_read_bytes, cgroup_write_bytes;
	bool ifaces_known;            /* the VM's fds were looked at (no tun fd found: it has no tap) */
	long ifaces_fds;              /* the VMM's open fds when they were (0: the kernel does not say) */
	struct vm_iface ifaces[VM_IO_IFACES_MAX];
	size_t nifaces;
	char ifaces_why[VM_IO_WHY_MAX]; /* why the interface list is unknown ("" when known) */
};

/* Where a VM's counters are. */
struct vm_io_source {
	const pid_t *pids;  /* the VMM first, then its helpers */
	size_t npids;
	const char *scope;  /* its per-VM cgroup (NULL: none), in the unified tree (version 2) or under blkio (1) */
	int version;
};

/* Reads the VM's counters into ret. before (NULL: none): the same VM's reading before, whose
 * interface list is taken rather than the fds looked at again while the VMM holds as many fds as
 * then (Linux 6.2 and later count them; on older kernels every reading looks). Never fails: what
 * cannot be read is unknown, with its reason. */
void vm_io_read(const struct io_root *root, const struct vm_io_source *src, const struct vm_io *before,
		struct vm_io *ret);

/* The VM's taps summed: unknown when the list is, or when one tap's figure is (a tap gone). */
struct vm_io_totals {
	maybe_i64 rx_bytes, tx_bytes, dropped; /* dropped: both directions */
};
struct vm_io_totals vm_io_net_totals(const struct vm_io *io);

/* Rates of after over seconds since before (the same VM). */
void vm_io_rates(const struct vm_io *before, struct vm_io *after, double seconds);

/* For tests: a record with nothing read. */

/* Every figure unknown, no reason yet. */
void vm_io_unknown(struct vm_io *ret);

#endif
