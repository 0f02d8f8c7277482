/* The guest's own view of its memory, from QEMU's monitor: the balloon's size (query-balloon)
 * and, when the guest's balloon driver reports them, its free, available and cache memory
 * (qom-get guest-stats of the balloon device). One short QMP visit per VM, never held: QEMU serves
 * one monitor client at a time, and libvirt or Proxmox tools may be waiting. A QEMU whose monitor
 * libvirt holds: the same from libvirt's balloon statistics. Read by core/model/vm_visit.h's
 * visits. */
#ifndef VMHOST_CORE_GUEST_VIEW_H
#define VMHOST_CORE_GUEST_VIEW_H

#include "parse/maybe.h"

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

#endif
