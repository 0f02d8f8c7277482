/* A VM's disks as QEMU counts them: bytes, operations and the time they took, per device, from
 * QMP query-blockstats (one short visit: io/peer/qmp.h) or libvirt's block statistics (one call for
 * every domain: io/peer/virt.h), with the cache mode and AIO engine its command line gives each
 * disk (parse/cmdline/qemu_disks.h). Read only when asked (mem --io or --guest, serve --io): a monitor
 * serves one client at a time. */
#ifndef VMHOST_CORE_VM_DISKS_H
#define VMHOST_CORE_VM_DISKS_H

#include <stdbool.h>
#include <stddef.h>

#include "io/peer/virt.h"
#include "parse/maybe.h"
#include "parse/cmdline/qemu_disks.h"

#define VM_DISKS_MAX 16

struct vm_disk {
	char device[64];    /* the drive's name (query-blockstats "device"), else the -device id, else
	                     * the node name; libvirt: its target ("vda") */
	char node_name[64]; /* -blockdev's node ("" none) */
	char cache[16];     /* from the command line: "none", "writeback" ... ("" unknown) */
	char aio[16];       /* "threads", "native", "io_uring" ("" unknown) */
	maybe_i64 read_bytes, write_bytes, read_ops, write_ops, flush_ops;
	double read_seconds, write_seconds, flush_seconds; /* time the operations took, summed (NaN unknown) */
};

struct vm_disks {
	bool known;          /* read: d[] is the VM's disks (maybe none); else why says why not */
	const char *source;  /* "qmp" or "libvirt" when known */
	struct vm_disk d[VM_DISKS_MAX];
	size_t n;
	char why[256];
};

/* The mean time of one operation: seconds / ops, NaN when there were none or either is unknown. */
double vm_disk_latency(double seconds, maybe_i64 ops);

/* query-blockstats' return (an array) into ret, each device matched to the command line's disk
 * for its cache and AIO (cmd NULL: none known). 0, or -EBADMSG when the reply is not an array. */
struct json_doc;
struct json_value;

/* A libvirt domain's block.N.* statistics into ret, matched to the command line's disks by path. */
void vm_disks_from_virt(const struct virt_domain *dom, const struct qemu_disks *cmd, struct vm_disks *ret);

/* No disks known, and why ("not asked", the monitor's hint, the session's error). */
void vm_disks_unread(const char *why, struct vm_disks *ret);

/* query-blockstats on an open QMP session (io/peer/qmp.h), matched to the command line's disks (cmd:
 * NULL none). On failure the disks stay unknown and why says why (QEMU's error, the deadline). */
struct qmp;
void vm_disks_query(struct qmp *q, const struct qemu_disks *cmd, struct vm_disks *ret);

/* For tests: the disks from a reply already read. */

int vm_disks_from_blockstats(const struct json_doc *doc, const struct json_value *ret_array,
			     const struct qemu_disks *cmd, struct vm_disks *ret);

#endif
