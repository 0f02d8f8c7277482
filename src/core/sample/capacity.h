/* How many more guests of a size this host can take (`vmhost capacity`, serve's
 * vmhost_host_capacity_vms, doctor, the report's first screen), from one snapshot of the host and
 * its VMs: now (MemAvailable less a reserve, each new guest costing its RAM and the VMM's overhead
 * measured on today's VMs of its kind), after reclaim (what the guests would give back with every
 * action of core/model/guest_view.h's struct reclaim, at the lower side of its bound), and with
 * sharing (less what a new guest like an existing one would share by KSM: the share plan's figure,
 * which the caller brings). Every figure unknown, with the reason, where its source is missing.
 * docs/capacity.md derives them. */
#ifndef VMHOST_CORE_CAPACITY_H
#define VMHOST_CORE_CAPACITY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/model/host.h"
#include "core/model/vm.h"

#define CAPACITY_RESERVE_PERCENT 10.0 /* of MemTotal kept free: the KSM tuner's memory-pressure line */

struct capacity_opts {
	int64_t size_bytes;          /* each new guest's RAM */
	double reserve_percent;      /* of MemTotal kept free */
	maybe_i64 overhead_bytes;    /* per new guest; unknown: the median of today's VMs of its kind */
	unsigned overhead_vms;       /* the VMs overhead_bytes was measured on (0: the user's figure) */
	enum vmm_kind kind;          /* the new guests' VMM: whose overhead counts */
	bool hugetlb;                /* their RAM on huge pages (the image's is): the free pool bounds */
	maybe_i64 shared_bytes;      /* what one would share by KSM (--image); unknown: sharing_why */
	const char *sharing_why;     /* why shared_bytes is unknown ("" or NULL: not asked) */
};

struct capacity {
	int64_t size_bytes;
	maybe_i64 reserve_bytes, mem_available_bytes, overhead_bytes_per_vm;
	unsigned overhead_vms;       /* the VMs the overhead was measured on (0: the user's) */
	maybe_i64 reclaimable_bytes; /* summed over the VMs whose guests report, at the lower side */
	unsigned reclaim_vms, reclaim_unknown_vms; /* VMs with a figure, VMs without */
	maybe_i64 shared_bytes_per_vm;
	maybe_i64 fit_now, fit_after_reclaim, fit_with_sharing;
	const char *limited_by;      /* "memory", "reserve", "hugepages"; NULL when fit_now is unknown */
	char why[256];               /* fit_now unknown: why */
	char sharing_why[256];       /* fit_with_sharing unknown: why */
};

/* The figures for one size from a snapshot (pure). */
void capacity_compute(const struct host *h, const struct vm_list *vms, const struct capacity_opts *o,
		      struct capacity *ret);

#endif
