#include "core/sample/series.h"
#include "core/base/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int series_alloc(struct series_set *s, size_t n, size_t k)
{
	s->n = n;
	s->k = k;
	s->t = calloc(n ? n : 1, sizeof(double));
	s->y = calloc((n ? n : 1) * (k ? k : 1), sizeof(double));
	return s->t && s->y ? 0 : -ENOMEM;
}

void series_free(struct series_set *s)
{
	free(s->t);
	free(s->y);
	s->t = s->y = NULL;
	s->n = 0;
}

double *series_row(const struct series_set *s, size_t row) { return s->y + row * s->n; }

/* The end (exclusive) of bucket b of max, starting at index i. */
static size_t bucket_end(const struct series_set *s, size_t b, size_t max, size_t i, enum series_buckets rule)
{
	if (rule == SERIES_EQUAL_COUNT)
		return (b + 1) * s->n / max;
	double t0 = s->t[0], width = (s->t[s->n - 1] - t0) / (double)max;
	double end = b + 1 == max ? INFINITY : t0 + width * (double)(b + 1);
	while (i < s->n && s->t[i] < end)
		i++;
	return i;
}

/* Means of the points [lo, hi) of s into column m of o. */
static void bucket_mean(const struct series_set *s, size_t lo, size_t hi, struct series_set *o, size_t m)
{
	double st = 0;
	for (size_t j = lo; j < hi; j++)
		st += s->t[j];
	o->t[m] = st / (double)(hi - lo);
	for (size_t r = 0; r < s->k; r++) {
		const double *v = series_row(s, r);
		double sum = 0;
		size_t cnt = 0;
		for (size_t j = lo; j < hi; j++)
			if (isfinite(v[j])) {
				sum += v[j];
				cnt++;
			}
		series_row(o, r)[m] = cnt ? sum / (double)cnt : NAN;
	}
}

int series_thin(struct series_set *s, size_t max, enum series_buckets rule)
{
	if (s->n <= max || max == 0)
		return 0;
	struct series_set o;
	if (series_alloc(&o, max, s->k) < 0) {
		series_free(&o);
		return -ENOMEM;
	}
	size_t m = 0, i = 0;
	for (size_t b = 0; b < max && i < s->n; b++) {
		size_t start = i;
		i = bucket_end(s, b, max, i, rule);
		if (i == start)
			continue; /* no sample in this span: the chart shows a gap */
		bucket_mean(s, start, i, &o, m++);
	}
	/* Rows were laid out max apart: close them up to m. */
	for (size_t r = 0; r < s->k; r++)
		memmove(o.y + r * m, series_row(&o, r), m * sizeof(double));
	o.n = m;
	series_free(s);
	*s = o;
	return 0;
}

int series_anchor(const double *x, const double *y, size_t n, double slope, double *ret)
{
	double *res = malloc((n ? n : 1) * sizeof(*res));
	if (!res)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		res[i] = y[i] - slope * x[i];
	double b = median(res, n); /* skips the points without a value */
	free(res);
	if (isnan(b))
		return -EINVAL;
	*ret = b;
	return 0;
}

void series_line(const double *t, size_t n, double from, double to, double slope, double anchor, double *out)
{
	for (size_t i = 0; i < n; i++)
		if (t[i] >= from && t[i] <= to)
			out[i] = anchor + slope * (t[i] - from);
}

/* Where cell j of the grid ends: halfway to the next time, or as far past the last one. */
static double cell_end(const double *grid, size_t m, size_t j)
{
	if (j + 1 < m)
		return (grid[j] + grid[j + 1]) / 2;
	return m > 1 ? grid[j] + (grid[j] - grid[j - 1]) / 2 : grid[j];
}

void series_resample(const double *t, const double *y, size_t n, const double *grid, size_t m, double *out)
{
	if (m == 0)
		return;
	double start = m > 1 ? grid[0] - (grid[1] - grid[0]) / 2 : grid[0];
	size_t i = 0;
	while (i < n && t[i] < start)
		i++;
	for (size_t j = 0; j < m; j++) {
		double end = cell_end(grid, m, j), sum = 0;
		size_t cnt = 0;
		for (; i < n && (t[i] < end || (j + 1 == m && t[i] <= end)); i++)
			if (isfinite(y[i])) {
				sum += y[i];
				cnt++;
			}
		out[j] = cnt ? sum / (double)cnt : NAN;
	}
}

double series_last(const double *v, size_t n)
{
	for (size_t i = n; i-- > 0;)
		if (isfinite(v[i]))
			return v[i];
	return NAN;
}

double series_mean(const double *v, size_t n)
{
	double s = 0;
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i])) {
			s += v[i];
			c++;
		}
	return c ? s / (double)c : NAN;
}
