/* The guest's own view of its memory, from QEMU's monitor: the balloon's size (query-balloon)
 * and, when the guest's balloon driver reports them, its free, available and cache memory
 * (qom-get guest-stats of the balloon device). One short QMP visit per VM, never held: QEMU serves
 * one monitor client at a time, and libvirt or Proxmox tools may be waiting. A QEMU whose monitor
 * libvirt holds: the same from libvirt's balloon statistics (guest_view_from_libvirt). */
#ifndef VMHOST_CORE_GUEST_VIEW_H
#define VMHOST_CORE_GUEST_VIEW_H

#include "parse/maybe.h"
#include "parse/vmcmd.h"

struct guest_view {
	maybe_i64 balloon_bytes;       /* query-balloon "actual": the guest's RAM less the inflated balloon */
	maybe_i64 available_bytes;     /* the guest's MemAvailable (stat-available-memory) */
	maybe_i64 free_bytes;          /* stat-free-memory */
	maybe_i64 caches_bytes;        /* stat-disk-caches */
	maybe_i64 major_faults;        /* stat-major-faults, since the guest booted */
	maybe_i64 maximum_bytes;       /* libvirt's balloon.maximum: the most the balloon may return (QMP: unknown) */
	double stats_age_seconds;      /* since the guest last reported (NaN: never, or polling is off) */
	char why[512];                 /* "" when read; else why not, in one line */
};

/* Reads the VM's guest view on an open QMP session (io/peer/qmp.h; the caller opens and closes it, with
 * its deadline). On any failure the figures stay unknown and why says why (no balloon device,
 * QEMU's error). poll_seconds > 0 first sets the device's guest-stats-polling-interval (QEMU keeps
 * it: only when the user asks). now_wall is the current Unix time (for the stats' age). After a
 * failed call the session can only be closed. */
struct qmp;
void guest_view_read(struct qmp *q, const struct vm_config *cfg, int poll_seconds, double now_wall,
		     struct guest_view *ret);

/* Every figure unknown, and why: the VM has no QMP socket or no balloon device, else why (the
 * session could not be opened). */
void guest_view_unread(const struct vm_config *cfg, const char *why, struct guest_view *ret);

/* The same from libvirt's statistics of the running domains (group VIRT_STATS_BALLOON), the VM's
 * found by the uuid on its command line (pure): balloon.current and .maximum (KiB), and once the
 * guest has reported (balloon.last-update), .usable (its MemAvailable), .unused, .disk_caches and
 * .major_fault. No such domain: why says so. */
struct virt_domains;
void guest_view_from_libvirt(const struct virt_domains *doms, const struct vm_config *cfg, double now_wall,
			     struct guest_view *ret);

#endif
