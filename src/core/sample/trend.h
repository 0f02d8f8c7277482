/* Robust trends and the memory-growth verdict `vmhost growth` and `vmhost report` share. Pure:
 * numbers in, numbers out. */
#ifndef VMHOST_CORE_TREND_H
#define VMHOST_CORE_TREND_H

#include <stdbool.h>
#include <stddef.h>

/* Series longer than this are thinned to this many equal-count bucket means first (Theil-Sen
 * costs n^2/2 pairs). */
#define TREND_MAX_POINTS 400

struct trend {
	double slope;       /* y units per x unit: median of the pairwise slopes (Theil-Sen) */
	double intercept;   /* median of y - slope * x */
	double consistency; /* Kendall's tau: +1 every later point higher, 0 no order, -1 falling */
	size_t n;           /* points used (after thinning) */
};

/* ---- growth of a VM's overhead ---- */

struct growth_params {
	double threshold_bytes_per_hour; /* flag at or above this slope */
	double min_growth_bytes;         /* ... when the fitted growth over the samples is this much */
	double min_consistency;          /* ... and it is sustained (Kendall's tau at least this) */
	double warmup_seconds;           /* ignore this long after the VM started */
	size_t min_samples;              /* fewer usable samples: no verdict */
};
extern const struct growth_params growth_defaults;

struct growth_point {
	double t;          /* seconds */
	double overhead;   /* bytes */
	bool populated;    /* guest RAM fully populated: the overhead figure is not a lower bound */
};

enum growth_state {
	GROWTH_STEADY,   /* enough samples, not flagged */
	GROWTH_FLAGGED,  /* sustained growth beyond the threshold */
	GROWTH_WARMUP,   /* every sample is in warm-up (young VM, or guest RAM not yet populated) */
	GROWTH_TOO_FEW,  /* some usable samples, fewer than min_samples */
};
const char *growth_state_name(enum growth_state s);

struct growth_result {
	enum growth_state state;
	bool flagged;
	size_t samples;          /* usable samples (after warm-up) */
	size_t warmup_samples;   /* ignored ones */
	double bytes_per_hour;   /* NaN without a trend */
	double growth_bytes;     /* slope x span of the usable samples; NaN without a trend */
	double consistency;      /* NaN without a trend */
	double anchor_bytes;     /* the fitted line's overhead at first_t (Theil-Sen's intercept); NaN without a trend */
	double first_t, last_t;  /* usable span; NaN when none */
};

/* Judges one VM's series (t ascending). started_seconds is when the VM started (NaN unknown:
 * the time warm-up is then counted from its first sample). */
int growth_assess(const struct growth_point *p, size_t n, double started_seconds, const struct growth_params *g,
		  struct growth_result *ret);

/* For tests: the fit itself. */

/* Theil-Sen line through (x, y), x ascending. Returns 0, -EINVAL with fewer than 2 distinct x,
 * or -ENOMEM. Outliers (up to ~29% of the points) do not move it. */
int trend_theil_sen(const double *x, const double *y, size_t n, struct trend *ret);

#endif
