/* core/sample/series.c: thinning by time and by count, the anchor and the drawing of a fitted
 * line, resampling onto a grid, a row's last value and mean. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/sample/series.h"

#define MiB (1024.0 * 1024.0)

static bool near(double a, double b, double tol) { return fabs(a - b) <= tol; }

/* n points every dt seconds from t0, row 0 = 2 t, row 1 = NaN where i % 3 == 0, else 1. */
static void fill(struct series_set *s, size_t n, double t0, double dt)
{
	assert_int_equal(series_alloc(s, n, 2), 0);
	for (size_t i = 0; i < n; i++) {
		s->t[i] = t0 + dt * (double)i;
		series_row(s, 0)[i] = 2 * s->t[i];
		series_row(s, 1)[i] = i % 3 ? 1 : NAN;
	}
}

static void short_series_is_kept(void **state)
{
	(void)state;
	struct series_set s;
	fill(&s, 50, 0, 1);
	assert_int_equal(series_thin(&s, 50, SERIES_EQUAL_TIME), 0);
	assert_int_equal(s.n, 50);
	assert_true(isnan(series_row(&s, 1)[0]));
	series_free(&s);
}

static void equal_count_buckets(void **state)
{
	(void)state;
	struct series_set s;
	fill(&s, 1000, 0, 1);
	assert_int_equal(series_thin(&s, 100, SERIES_EQUAL_COUNT), 0);
	assert_int_equal(s.n, 100);
	for (size_t b = 0; b < 100; b++) {
		assert_true(near(s.t[b], 10.0 * (double)b + 4.5, 1e-9)); /* mean of 10 consecutive times */
		assert_true(near(series_row(&s, 0)[b], 2 * s.t[b], 1e-9));
		assert_true(near(series_row(&s, 1)[b], 1, 0)); /* NaN skipped, not counted as 0 */
	}
	series_free(&s);
}

/* Points of 1200 samples (606 s, a pause, 594 s from 3000 s) thinned to 100 by rule, in the pause. */
static size_t points_in_pause(enum series_buckets rule)
{
	struct series_set s;
	assert_int_equal(series_alloc(&s, 1200, 1), 0);
	for (size_t i = 0; i < 1200; i++) {
		s.t[i] = i < 606 ? (double)i : 3000 + (double)(i - 606);
		series_row(&s, 0)[i] = i < 606 ? 10 : 20;
	}
	assert_int_equal(series_thin(&s, 100, rule), 0);
	size_t in_pause = 0;
	for (size_t i = 0; i < s.n; i++)
		in_pause += s.t[i] > 605 && s.t[i] < 3000;
	if (rule == SERIES_EQUAL_TIME) {
		assert_true(s.n < 100); /* the spans of the pause are dropped */
		for (size_t i = 0; i < s.n; i++) /* and no bucket mixes the two sides */
			assert_true(series_row(&s, 0)[i] == (s.t[i] < 1000 ? 10 : 20));
	}
	series_free(&s);
	return in_pause;
}

static void equal_time_keeps_a_pause(void **state)
{
	(void)state;
	/* The chart breaks its line where no point falls; equal counts would bridge the pause. */
	assert_int_equal(points_in_pause(SERIES_EQUAL_TIME), 0);
	assert_int_equal(points_in_pause(SERIES_EQUAL_COUNT), 1);
}

static void a_bucket_without_values_is_nan(void **state)
{
	(void)state;
	struct series_set s;
	assert_int_equal(series_alloc(&s, 40, 1), 0);
	for (size_t i = 0; i < 40; i++) {
		s.t[i] = (double)i;
		series_row(&s, 0)[i] = i < 20 ? NAN : 5;
	}
	assert_int_equal(series_thin(&s, 4, SERIES_EQUAL_COUNT), 0);
	assert_int_equal(s.n, 4);
	assert_true(isnan(series_row(&s, 0)[0]) && isnan(series_row(&s, 0)[1]));
	assert_true(series_row(&s, 0)[2] == 5 && series_row(&s, 0)[3] == 5);
	series_free(&s);
}

static void anchor_is_the_median_residual(void **state)
{
	(void)state;
	double x[101], y[101];
	for (int i = 0; i < 101; i++) {
		x[i] = i;
		y[i] = 3.0 * i + 7;
	}
	for (int i = 0; i < 101; i += 4) /* a quarter of the points far off, one without a value */
		y[i] = 1e9;
	y[1] = NAN;
	double b = -1;
	assert_int_equal(series_anchor(x, y, 101, 3.0, &b), 0);
	assert_true(near(b, 7, 1e-9));
	double all_nan[3] = {NAN, NAN, NAN};
	b = -1;
	assert_int_equal(series_anchor(x, all_nan, 3, 3.0, &b), -EINVAL);
	assert_true(b == -1); /* untouched */
}

static void line_over_its_span_only(void **state)
{
	(void)state;
	double t[6] = {0, 10, 20, 30, 40, 50}, out[6] = {NAN, NAN, NAN, NAN, NAN, NAN};
	series_line(t, 6, 10, 40, 0.5, 100, out);
	assert_true(isnan(out[0]) && isnan(out[5]));
	assert_true(out[1] == 100 && out[2] == 105 && out[4] == 115);
	double v[5] = {1, NAN, 3, 5, NAN};
	assert_true(series_last(v, 5) == 5);
	assert_true(series_mean(v, 5) == 3);
	assert_true(isnan(series_last(v, 0)) && isnan(series_mean(v + 4, 1)));
}

/* A VM's points onto the host's times: a cell's mean, NaN for a cell without a point (the VM had
 * not started), the outer cells half a step wide, points beyond them left out. */
static void resample_onto_a_grid(void **state)
{
	(void)state;
	const double grid[] = {10, 20, 30, 40};
	const double t[] = {1, 4, 16, 24, 26, 31, 45, 46};
	const double y[] = {99, 1, 2, 4, NAN, 8, 16, 99};
	double out[4];
	series_resample(t, y, 8, grid, 4, out);
	assert_true(isnan(out[0]));    /* 1 and 4 are before 5, where the first cell starts */
	assert_true(out[1] == 3);      /* 16 and 24: (2 + 4) / 2; 26's NaN skipped */
	assert_true(out[2] == 8);
	assert_true(out[3] == 16);     /* 45 is on the last cell's end, 46 beyond it */
	series_resample(t, y, 0, grid, 4, out);
	assert_true(isnan(out[0]) && isnan(out[3]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(short_series_is_kept),
		cmocka_unit_test(equal_count_buckets),
		cmocka_unit_test(equal_time_keeps_a_pause),
		cmocka_unit_test(a_bucket_without_values_is_nan),
		cmocka_unit_test(anchor_is_the_median_residual),
		cmocka_unit_test(line_over_its_span_only),
		cmocka_unit_test(resample_onto_a_grid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
