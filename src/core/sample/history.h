/* A recorded history read back, and the figures the report draws from it. The store (store/store.h)
 * gives back rows as they were recorded: the host's, a VM's and a disk's counters and gauges at
 * each sample; here they become the report's chart rows (core/sample/series.h's series_host_row
 * and series_vm_row): guest RAM split into private and merged, counters per second, CPU time as
 * percent of one CPU, ksmd's CPU. Pure: rows in, series out; each rate by core/base/rate.h's rule. */
#ifndef VMHOST_CORE_HISTORY_H
#define VMHOST_CORE_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/stalls.h"
#include "core/sample/series.h"
#include "parse/maybe.h"

/* A VM's sample. */
struct history_vm_point {
	double t;           /* Unix seconds */
	int resolution;     /* 0 raw, else the seconds a mean covers */
	bool populated;     /* guest RAM was fully populated: the overhead estimate is exact */
	bool exact;         /* overhead and PSS from the exact sources */
	maybe_i64 rss, rss_anon, rss_file, rss_shmem, swap, ksm_merging_pages, ksm_zero_pages, ksm_profit,
		ksm_saved, pss, overhead;
	maybe_i64 cpu_ms, vcpu_delay_ms; /* cumulative: VMM + helpers, and the vCPUs' delay */
	maybe_i64 cgroup_memory, cgroup_limit, oom_kills;
	maybe_i64 hugetlb, memory_cost; /* huge pages (not in rss or pss), and pss plus them */
	/* counters: storage bytes of the VMM and its helpers, its taps' bytes and drops summed */
	maybe_i64 io_read, io_write, net_rx, net_tx, net_dropped;
	/* counters: the VMM's threads' stall time by kind (core/base/stalls.h) and its copy-on-write copies */
	maybe_i64 stall_us[STALL_NKINDS], wpcopy_count;
};

/* One disk of a VM at one sample (record --io): QEMU's counters, cumulative, unknown where QEMU or
 * libvirt gave none. */
struct history_disk_point {
	double t;
	int resolution;
	char device[64];
	maybe_i64 read_bytes, write_bytes, read_ops, write_ops, flush_ops;
	maybe_i64 read_time_ns, write_time_ns, flush_time_ns; /* the time the operations took, summed */
};

/* The host's sample. */
struct history_host_point {
	double t;
	int resolution;
	double gather_seconds;
	maybe_i64 mem_total, mem_available, mem_free, swap_total, swap_free, page_size;
	maybe_i64 ksm_run, ksm_pages_shared, ksm_pages_sharing, ksm_pages_unshared, ksm_pages_volatile,
		ksm_zero_pages, ksm_full_scans, ksm_pages_scanned, ksm_general_profit, ksm_pages_to_scan,
		ksm_sleep_millisecs, ksmd_cpu_ns;
	maybe_i64 vm_count, skipped;
};

/* Host memory, KSM savings and ksmd CPU (enum series_host_row) of the n points, oldest first.
 * *ret_page_size is set to the recorded page size when a point has one (left as it is otherwise).
 * 0 or -ENOMEM. */
int history_host_series(const struct history_host_point *p, size_t n, struct series_set *ret,
			int64_t *ret_page_size);

/* One VM's memory stacked, its CPU, vCPU delay and I/O rates (enum series_vm_row; SERIES_VM_FIT
 * left NaN) of the n points, oldest first; page_size: the host's, for KSM's merged pages.
 * 0 or -ENOMEM. */
int history_vm_series(const struct history_vm_point *p, size_t n, int64_t page_size, struct series_set *ret);

#define HISTORY_DISKS_CHARTED 6 /* a VM's disks drawn in the report, by name: 12 lines */

/* A VM's disks (record --io) in bytes a second over the interval before each sample, on the times
 * of its disk rows: rows 2 d (read) and 2 d + 1 (written) of set for devices[d]; NaN where the disk
 * had no row or no rate (unknown, a reset). The first HISTORY_DISKS_CHARTED devices by name; more
 * says how many others it had. */
struct history_disk_series {
	struct series_set set;
	char devices[HISTORY_DISKS_CHARTED][64];
	size_t ndevices, more;
};
/* p: ordered by device, then time (store_vm_disk_points' order). -ENODATA when n is 0, or
 * -ENOMEM. */
int history_disk_series(const struct history_disk_point *p, size_t n, struct history_disk_series *ret);

/* A counter recorded only where it changed (n values v at times t, oldest first) per second, one
 * row on the times t[1..n-1]: each rate spans the time since the previous row; NaN where it went
 * down (a reset). -ENODATA with fewer than two values, or -ENOMEM. */
int history_rate_series(const double *t, const int64_t *v, size_t n, struct series_set *ret);

#endif
