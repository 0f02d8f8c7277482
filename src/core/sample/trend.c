#include "core/sample/trend.h"
#include "core/sample/series.h"
#include "core/base/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Defaults (docs/record.md explains them): 10 MiB/h is 240 MiB a day, a VM's whole usual QEMU
 * overhead again every day; the published RBD-cache leak grew ~100 MiB per benchmark run. */
const struct growth_params growth_defaults = {
	.threshold_bytes_per_hour = 10.0 * 1024 * 1024,
	.min_growth_bytes = 32.0 * 1024 * 1024,
	.min_consistency = 0.6,
	.warmup_seconds = 600,
	.min_samples = 8,
};

const char *growth_state_name(enum growth_state s)
{
	switch (s) {
	case GROWTH_STEADY: return "steady";
	case GROWTH_FLAGGED: return "growing";
	case GROWTH_WARMUP: return "warm-up";
	case GROWTH_TOO_FEW: return "too few samples";
	}
	return "?";
}

int trend_theil_sen(const double *x, const double *y, size_t n, struct trend *ret)
{
	if (n < 2)
		return -EINVAL;
	/* Equal-count bucket means, so a long series keeps its shape in TREND_MAX_POINTS. */
	struct series_set pts;
	double *slopes = NULL;
	int r = series_alloc(&pts, n, 1);
	if (r == 0) {
		memcpy(pts.t, x, n * sizeof(*x));
		memcpy(series_row(&pts, 0), y, n * sizeof(*y));
		r = series_thin(&pts, TREND_MAX_POINTS, SERIES_EQUAL_COUNT);
	}
	size_t m = pts.n;
	if (r == 0 && !(slopes = malloc(m * (m - 1) / 2 * sizeof(*slopes))))
		r = -ENOMEM;
	if (r < 0)
		goto out;
	const double *tx = pts.t, *ty = series_row(&pts, 0);
	size_t k = 0;
	long long concordant = 0, discordant = 0, pairs = 0;
	for (size_t i = 0; i < m; i++) {
		for (size_t j = i + 1; j < m; j++) {
			double dx = tx[j] - tx[i], dy = ty[j] - ty[i];
			if (dx == 0)
				continue;
			slopes[k++] = dy / dx;
			pairs++;
			if (dy * dx > 0)
				concordant++;
			else if (dy * dx < 0)
				discordant++;
		}
	}
	if (k == 0) {
		r = -EINVAL;
		goto out;
	}
	double slope = median(slopes, k), intercept;
	r = series_anchor(tx, ty, m, slope, &intercept);
	if (r < 0)
		goto out;
	*ret = (struct trend){
		.slope = slope,
		.intercept = intercept,
		.consistency = (double)(concordant - discordant) / (double)pairs,
		.n = m,
	};
out:
	series_free(&pts);
	free(slopes);
	return r;
}

int growth_assess(const struct growth_point *p, size_t n, double started_seconds, const struct growth_params *g,
		  struct growth_result *ret)
{
	*ret = (struct growth_result){.state = GROWTH_WARMUP, .bytes_per_hour = NAN, .growth_bytes = NAN,
				      .consistency = NAN, .anchor_bytes = NAN, .first_t = NAN, .last_t = NAN};
	if (n == 0)
		return 0;
	double start = isfinite(started_seconds) ? started_seconds : p[0].t;
	double *x = malloc(n * sizeof(*x)), *y = malloc(n * sizeof(*y));
	if (!x || !y) {
		free(x);
		free(y);
		return -ENOMEM;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		/* Warm-up: a young VM's caches fill once; an unpopulated guest hides its overhead. */
		if (!p[i].populated || p[i].t < start + g->warmup_seconds || !isfinite(p[i].overhead)) {
			ret->warmup_samples++;
			continue;
		}
		/* Seconds from the first usable sample keep the products well conditioned. */
		x[m] = m ? p[i].t - ret->first_t : 0;
		if (!m)
			ret->first_t = p[i].t;
		ret->last_t = p[i].t;
		y[m++] = p[i].overhead;
	}
	ret->samples = m;
	int r = 0;
	if (m == 0)
		goto out;
	ret->state = GROWTH_TOO_FEW;
	if (m < g->min_samples || m < 2)
		goto out;
	struct trend t;
	r = trend_theil_sen(x, y, m, &t);
	if (r == -EINVAL) { /* every usable sample at the same instant */
		r = 0;
		goto out;
	}
	if (r < 0)
		goto out;
	ret->bytes_per_hour = t.slope * 3600.0;
	ret->growth_bytes = t.slope * (ret->last_t - ret->first_t);
	ret->consistency = t.consistency;
	ret->anchor_bytes = t.intercept; /* x counts from first_t */
	ret->flagged = ret->bytes_per_hour >= g->threshold_bytes_per_hour && ret->growth_bytes >= g->min_growth_bytes &&
		       t.consistency >= g->min_consistency;
	ret->state = ret->flagged ? GROWTH_FLAGGED : GROWTH_STEADY;
out:
	free(x);
	free(y);
	return r;
}
