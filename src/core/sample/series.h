/* Time series as growth and the report use them: k series over the same n times, thinned to a
 * few hundred bucket means, and the anchor of a fitted line. Pure: numbers in, numbers out. */
#ifndef VMHOST_CORE_SERIES_H
#define VMHOST_CORE_SERIES_H

#include <stddef.h>

struct series_set {
	size_t n, k;
	double *t; /* n times, ascending */
	double *y; /* k rows of n values; NaN: no value at that time */
};

/* n times and k rows of zeros. 0, or -ENOMEM (s can still be freed). */
int series_alloc(struct series_set *s, size_t n, size_t k);
void series_free(struct series_set *s); /* NULL members are fine */
double *series_row(const struct series_set *s, size_t row);

enum series_buckets {
	SERIES_EQUAL_TIME,  /* charts: equal time spans; an empty span adds no point, so a pause stays a gap */
	SERIES_EQUAL_COUNT, /* fits: the same number of points in each, so every sample weighs alike */
};

/* Replaces s by at most max points (max > 0), each the mean time and the mean of each row's
 * values (NaN skipped; NaN when none) over one bucket. Nothing changes when s has at most max
 * points. 0, or -ENOMEM (s untouched). */
int series_thin(struct series_set *s, size_t max, enum series_buckets rule);

/* Where a line of the given slope sits on the points (x, y): the median of y - slope * x over
 * the points with a finite y (Theil-Sen's intercept). 0, -EINVAL without such a point, or
 * -ENOMEM; *ret untouched on failure. */
int series_anchor(const double *x, const double *y, size_t n, double slope, double *ret);

/* The line anchor + slope * (t - from) at the times t in [from, to]; out is untouched elsewhere. */
void series_line(const double *t, size_t n, double from, double to, double slope, double anchor, double *out);

/* The means of the finite (t, y) points in each cell of an ascending grid of m times (a cell
 * reaches halfway to its neighbours, as far on the outer side) into out; NaN where a cell has
 * none. Puts series of their own times on one axis, to be stacked. */
void series_resample(const double *t, const double *y, size_t n, const double *grid, size_t m, double *out);

/* The last finite value, or NaN. */
double series_last(const double *v, size_t n);
/* The mean of the finite values, or NaN. */
double series_mean(const double *v, size_t n);

/* ---- the report's charts: what each row of their sets holds ---- */

enum series_host_row {
	SERIES_HOST_USED,       /* bytes: MemTotal - MemAvailable */
	SERIES_HOST_TOTAL,      /* bytes: MemTotal */
	SERIES_HOST_SWAP,       /* bytes: SwapTotal - SwapFree */
	SERIES_HOST_KSM_SAVED,  /* bytes: (pages_sharing + ksm_zero_pages) x page size */
	SERIES_HOST_KSM_PROFIT, /* bytes: general_profit */
	SERIES_HOST_KSMD_CPU,   /* percent of one CPU over the interval before the sample */
	SERIES_HOST_NROWS
};

enum series_vm_row {
	SERIES_VM_PRIVATE,  /* bytes: guest RAM resident and not merged by KSM */
	SERIES_VM_MERGED,   /* bytes: guest RAM merged by KSM */
	SERIES_VM_OVERHEAD, /* bytes: resident beyond guest RAM */
	SERIES_VM_SAVED,    /* bytes: saved by KSM */
	SERIES_VM_FIT,      /* bytes: the fitted overhead trend over the growth window, NaN elsewhere */
	SERIES_VM_CPU,      /* percent of one CPU: the VMM and helpers, over the interval before the sample */
	SERIES_VM_VCPU_DELAY, /* percent of one CPU: vCPU threads waiting for a host CPU, likewise */
	SERIES_VM_HUGETLB,  /* bytes: guest RAM on huge pages (hugetlbfs), not in RSS; NaN unknown */
	SERIES_VM_COST,     /* bytes: memory cost (PSS plus huge pages); PSS alone in older recordings */
	SERIES_VM_IO_READ,  /* bytes a second the VMM and its helpers read from storage, over the interval before */
	SERIES_VM_IO_WRITE, /* bytes a second they wrote to storage, likewise */
	SERIES_VM_NET_RX,   /* bytes a second the host received on the VM's taps (what the guest sent) */
	SERIES_VM_NET_TX,   /* bytes a second the host sent on them */
	SERIES_VM_STALL,    /* percent of one thread: the VMM's threads stalled on memory (delay accounting), likewise */
	SERIES_VM_NROWS
};

#endif
