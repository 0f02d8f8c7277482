/* KSM figures that only exist over time: ksmd CPU %, scan rate, full scan time, and the one
 * place for saved bytes / sharing ratio / profit formulas. `vmhost ksm`, tune, sweep, bench,
 * record and serve all derive them here. */
#ifndef VMHOST_CORE_KSM_RATES_H
#define VMHOST_CORE_KSM_RATES_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/model/ksm.h"
#include "io/io.h"

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
/* Writes run=2 through the guard and waits until nothing is merged. 0, -EINTR when *stop became
 * set, -ETIMEDOUT, or the guard's error. */
int ksm_unmerge_wait(struct ksm_sampler *sm, double timeout_seconds, double poll_seconds,
		     volatile sig_atomic_t *stop);

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

/* Formulas, one place each. */
maybe_i64 ksm_general_profit(const struct ksm_sysfs *k, int64_t page_size, bool *ret_computed);

#endif
