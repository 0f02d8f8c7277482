/* The host's KSM state: every /sys/kernel/mm/ksm file this kernel has, ksmd's CPU time, the one
 * place of each KSM formula (saved bytes, rmap items, sharing ratio, profit), and the figures that
 * only exist over time (ksmd CPU %, scan rate, full scan time): `vmhost ksm`, tune, sweep, bench,
 * doctor, record and serve all derive them here. */
#ifndef VMHOST_CORE_KSM_H
#define VMHOST_CORE_KSM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/io.h"
#include "parse/maybe.h"

struct ksm_sysfs {
	bool present; /* /sys/kernel/mm/ksm exists */
	maybe_i64 run, pages_to_scan, sleep_millisecs, pages_shared, pages_sharing, pages_unshared,
		pages_volatile, full_scans, pages_scanned, pages_skipped, max_page_sharing,
		merge_across_nodes, use_zero_pages, ksm_zero_pages, general_profit, smart_scan,
		stable_node_chains, stable_node_dups, stable_node_chains_prune_millisecs,
		advisor_max_cpu, advisor_min_pages_to_scan, advisor_max_pages_to_scan,
		advisor_target_scan_time;
	char advisor_mode[16]; /* the selected word; "" when the kernel has no advisor */
};

/* Integer files, in the order `vmhost ksm` lists them. */
struct ksm_file {
	const char *name;
	size_t offset; /* of a maybe_i64 in struct ksm_sysfs */
};
extern const struct ksm_file ksm_files[];
extern const size_t ksm_nfiles;

/* Reads every KSM file. Returns 0, or -ENOENT when the kernel has no KSM (present = false). */
int ksm_read(const struct io_root *root, struct ksm_sysfs *ret);

/* "running", "stopped", "unmerging" (run = 1, 0, 2), "n/a" when unknown. */
const char *ksm_run_word(maybe_i64 run);

/* KSM is there and running (run = 1). */
bool ksm_is_running(const struct ksm_sysfs *k);
/* KSM is there and known not to run: stopped or unmerging (run = 0, 2). Neither this nor
 * ksm_is_running when run is unknown or the kernel has no KSM. */
bool ksm_is_off(const struct ksm_sysfs *k);

/* Pages KSM saves host-wide: pages_sharing + ksm_zero_pages (0 where the kernel has no such
 * file); unknown without KSM or pages_sharing. */
maybe_i64 ksm_saved_pages(const struct ksm_sysfs *k);
/* The same in bytes: ksm_saved_pages x page size. */
maybe_i64 ksm_saved_bytes(const struct ksm_sysfs *k, int64_t page_size);

/* The pages ksmd tracks host-wide, one rmap item each: shared + sharing + unshared + volatile
 * (the kernel derives volatile from its own count, so the sum is that count). */
maybe_i64 ksm_rmap_items(const struct ksm_sysfs *k);

/* ksmd's pid (a kernel thread named "ksmd"); -ENOENT when there is none. */
int ksmd_find(const struct io_root *root, pid_t *ret);

/* ksmd's CPU time so far in ns: /proc/PID/schedstat (precise), else stat utime+stime ticks. */
int ksmd_cpu_ns(const struct io_root *root, pid_t pid, int64_t *ret);

/* One reading of every KSM file plus ksmd's CPU time, at a monotonic time. */
struct ksm_sample {
	double t;                /* CLOCK_MONOTONIC seconds */
	struct ksm_sysfs k;
	maybe_i64 ksmd_cpu_ns;   /* unknown without a readable ksmd */
	maybe_i64 mem_total, mem_available; /* bytes, from meminfo (for the tuner) */
	maybe_i64 mem_anon;      /* AnonPages, bytes: the tuner looks for new processes when it rises */
};

/* Finds ksmd once; sampling then costs a few small reads. */
struct ksm_sampler {
	struct io_root root;
	pid_t ksmd_pid; /* 0 when not found */
};
void ksm_sampler_init(struct ksm_sampler *s, const struct io_root *root);
/* Returns 0, or -ENOENT when the kernel has no KSM (the sample still carries meminfo). */
int ksm_sample_take(struct ksm_sampler *s, struct ksm_sample *ret);

/* Times full scans from a series of samples: call for every sample in order. */
struct ksm_scan_clock {
	bool have_prev;
	int64_t prev_full_scans;
	double prev_t;
	double last_end_t;   /* < 0 until a scan end has been seen */
	double last_scan_seconds; /* < 0 until two consecutive ends were seen */
};
void ksm_scan_clock_init(struct ksm_scan_clock *c);
/* Returns true when a full scan ended since the previous sample. */
bool ksm_scan_clock_feed(struct ksm_scan_clock *c, const struct ksm_sample *s);

struct ksm_rates {
	double interval_seconds;
	maybe_i64 saved_bytes;        /* (pages_sharing + ksm_zero_pages) x page size */
	double sharing_ratio;         /* pages_sharing / pages_shared; NaN when unknown */
	double ksmd_cpu_percent;      /* of one CPU; NaN when unknown */
	double pages_scanned_per_second; /* NaN when unknown */
	double full_scan_seconds;     /* NaN when unknown or KSM is off */
	bool full_scan_measured;      /* false: estimated */
	maybe_i64 general_profit;     /* the kernel's file, else computed by the same formula */
	bool general_profit_computed;
	maybe_i64 rmap_items;         /* shared + sharing + unshared + volatile */
};

/* Derives the rates between two samples (b later than a). clock may be NULL; when it has
 * measured a full scan, full_scan_seconds is that measurement. */
void ksm_rates_compute(const struct ksm_sample *a, const struct ksm_sample *b, int64_t page_size,
		       const struct ksm_scan_clock *clock, struct ksm_rates *ret);

/* general_profit: the kernel's file, else saved bytes less 64 bytes per rmap item (*ret_computed
 * says which). */
maybe_i64 ksm_general_profit(const struct ksm_sysfs *k, int64_t page_size, bool *ret_computed);

#endif
