/* The guest's own view of its memory, from QEMU's monitor: the balloon's size (query-balloon)
 * and, when the guest's balloon driver reports them, its free, available and cache memory
 * (qom-get guest-stats of the balloon device) and how often it reports. One short QMP visit per
 * VM, never held: QEMU serves one monitor client at a time, and libvirt or Proxmox tools may be
 * waiting. A QEMU whose monitor libvirt holds: the same from libvirt's balloon statistics. Read by
 * core/model/vm_visit.h's visits, which also work out from it what the host could take back from
 * the VM (struct reclaim, below). */
#ifndef VMHOST_CORE_GUEST_VIEW_H
#define VMHOST_CORE_GUEST_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "parse/maybe.h"

/* ---- what the host could take back ---- */

/* What the host could take back from a VM (`mem --guest`'s "reclaimable"): of the guest RAM
 * resident on the host and not merged by KSM, what the guest reports free and what it could drop as
 * cache, each with its share of one error bound, by which action (inflating the balloon, turning
 * free page reporting on, dropping the guest's caches), and the guest-free memory the host may hold
 * in swap (the worst case: memory the guest does not use, swapped out instead of given back). A
 * figure only where the guest reports through its balloon's statistics (QMP or libvirt), recently;
 * else unknown with the reason and how to turn the statistics on. docs/accounting.md "Reclaimable
 * memory" derives each figure and what its bound promises.
 *
 * A report older than this is stale when the polling interval is unknown (libvirt's); with a
 * known interval P, older than 2 P + RECLAIM_STALE_SLACK_SECONDS. */
#define RECLAIM_STALE_SECONDS 60.0
#define RECLAIM_STALE_SLACK_SECONDS 2.0

/* How to turn the balloon's statistics on, for a reason to end with. */
#define RECLAIM_POLLING_HINT                                                                                      \
	"turn it on: QEMU qom-set <balloon> guest-stats-polling-interval 5 (or vmhost mem --guest --guest-poll 5); " \
	"libvirt virsh dommemstat DOMAIN --period 5 --live --config (<memballoon><stats period='5'/>); Proxmox VE "  \
	"keeps it on while the VM's balloon option is not 0"

/* What the figures are made of, in bytes; unknown where the source is missing. */
struct reclaim_input {
	maybe_i64 guest_ram;       /* G: the guest's RAM at start */
	maybe_i64 balloon;         /* B: what the balloon leaves the guest (unknown: all of G) */
	maybe_i64 guest_total;     /* T: the guest's MemTotal */
	maybe_i64 guest_free;      /* F: the guest's MemFree */
	maybe_i64 guest_available; /* A: the guest's MemAvailable (free, and what it can drop) */
	maybe_i64 guest_resident;  /* Rg: guest RAM pages in the VMM's RSS (KSM's merged pages included) */
	maybe_i64 ksm_merged;      /* M: the VMM's pages merged by KSM (ksm_merging_pages) */
	maybe_i64 ksm_zero;        /* Z: its pages KSM put on the zero page (ksm_zero_pages; not in RSS) */
	maybe_i64 swap;            /* S: the VMM's swap (VmSwap): the most of guest RAM in host swap */
	double stats_age_seconds;  /* since the guest's last report; NaN: it never reported */
	maybe_i64 polling_seconds; /* the balloon's statistics polling interval; 0: off */
	int free_page_reporting;   /* the balloon's free-page-reporting: 1 on, 0 off, -1 unknown */
	bool ram_hugetlb;          /* guest RAM on huge pages: neither action returns part of one */
	const char *resident_why;  /* guest_resident unknown: why ("" or NULL otherwise) */
};

/* Bytes of the host's memory; the truth, at the moment of the guest's report, is within bytes +-
 * error_bound_bytes (docs/accounting.md says what that rests on). */
struct reclaim {
	bool known;                /* false: the figures are unknown, why says why */
	char why[512];
	int64_t bytes;             /* free and droppable cache of the guest, resident on the host */
	int64_t error_bound_bytes;
	maybe_i64 by_balloon;      /* resident free memory an inflation by as much surely returns */
	maybe_i64 by_free_page_reporting; /* the same, by turning reporting on (0: it is on) */
	maybe_i64 by_drop_caches;  /* the resident cache the guest can drop (unknown: no MemAvailable) */
	maybe_i64 guest_resident_bytes;   /* Rg less M: guest RAM resident on the host, not merged */
	maybe_i64 free_in_swap_bytes;     /* the most guest-free memory the host may hold in swap */
	double stats_age_seconds;
	maybe_i64 stats_polling_seconds;
	int free_page_reporting;   /* 1, 0, -1 as in reclaim_input */
};

/* How old a guest's report may be before it is stale: 2 P + RECLAIM_STALE_SLACK_SECONDS with a
 * known polling interval P > 0, else RECLAIM_STALE_SECONDS (pure; doctor's vm-balloon-no-stats
 * judges by it too). */
double reclaim_stale_seconds(maybe_i64 polling_seconds);

/* The figures from what the guest reported and the host counted (pure). Unknown with the reason
 * when the guest never reported, its report is stale, polling is off, guest RAM is on huge pages,
 * or which of its pages are resident is unknown. */
void reclaim_compute(const struct reclaim_input *in, struct reclaim *ret);

/* Unknown, because why (a guest view that could not be read). */
void reclaim_unknown(struct reclaim *r, const char *why);

/* ---- the guest's view ---- */

struct guest_view {
	maybe_i64 balloon_bytes;       /* query-balloon "actual": the guest's RAM less the inflated balloon */
	maybe_i64 available_bytes;     /* the guest's MemAvailable (stat-available-memory) */
	maybe_i64 free_bytes;          /* stat-free-memory */
	maybe_i64 caches_bytes;        /* stat-disk-caches */
	maybe_i64 major_faults;        /* stat-major-faults, since the guest booted */
	maybe_i64 maximum_bytes;       /* libvirt's balloon.maximum: the most the balloon may return (QMP: unknown) */
	double stats_age_seconds;      /* since the guest last reported (NaN: never, or polling is off) */
	char why[512];                 /* "" when read; else why not, in one line */
	maybe_i64 total_bytes;         /* the guest's MemTotal (stat-total-memory, libvirt's balloon.available) */
	maybe_i64 polling_seconds;     /* guest-stats-polling-interval (0: off); unknown through libvirt */
	struct reclaim reclaim;        /* what the host could take back (above) */
};

#endif
