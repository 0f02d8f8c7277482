/* core/trend: Theil-Sen against known lines, outliers and noise; the growth verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "core/sample/trend.h"

#define MiB (1024.0 * 1024.0)

/* Deterministic noise in [-1, 1]. */
static double noise(unsigned *state)
{
	*state = *state * 1103515245u + 12345u;
	return ((*state >> 8) & 0xffff) / 32767.5 - 1.0;
}

static void exact_line(void **state)
{
	(void)state;
	double x[50], y[50];
	for (int i = 0; i < 50; i++) {
		x[i] = i;
		y[i] = 3.0 * i + 7;
	}
	struct trend t;
	assert_int_equal(trend_theil_sen(x, y, 50, &t), 0);
	assert_true(fabs(t.slope - 3.0) < 1e-9);
	assert_true(fabs(t.intercept - 7.0) < 1e-9);
	assert_true(fabs(t.consistency - 1.0) < 1e-9);
}

static void outliers_do_not_move_it(void **state)
{
	(void)state;
	double x[100], y[100];
	for (int i = 0; i < 100; i++) {
		x[i] = i;
		y[i] = 2.0 * i;
	}
	/* 20% wild outliers (a least-squares fit would follow them). */
	for (int i = 0; i < 100; i += 5)
		y[i] = 1e6;
	struct trend t;
	assert_int_equal(trend_theil_sen(x, y, 100, &t), 0);
	assert_true(fabs(t.slope - 2.0) < 0.2);
}

static void flat_noise_has_no_order(void **state)
{
	(void)state;
	double x[300], y[300];
	unsigned s = 42;
	for (int i = 0; i < 300; i++) {
		x[i] = i;
		y[i] = 100 + 10 * noise(&s);
	}
	struct trend t;
	assert_int_equal(trend_theil_sen(x, y, 300, &t), 0);
	assert_true(fabs(t.slope) < 0.02);
	assert_true(fabs(t.consistency) < 0.15);
}

static void long_series_is_thinned(void **state)
{
	(void)state;
	size_t n = 20000;
	double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
	assert_non_null(x);
	assert_non_null(y);
	for (size_t i = 0; i < n; i++) {
		x[i] = (double)i;
		y[i] = 0.5 * (double)i + 1000;
	}
	struct trend t;
	assert_int_equal(trend_theil_sen(x, y, n, &t), 0);
	assert_int_equal(t.n, TREND_MAX_POINTS);
	assert_true(fabs(t.slope - 0.5) < 1e-6);
	free(x);
	free(y);
}

static void degenerate_input(void **state)
{
	(void)state;
	double x[3] = {5, 5, 5}, y[3] = {1, 2, 3};
	struct trend t;
	assert_int_equal(trend_theil_sen(x, y, 1, &t), -EINVAL);
	assert_int_equal(trend_theil_sen(x, y, 3, &t), -EINVAL);
}

/* A series of n samples every dt seconds with overhead(t) = base + rate * t (+ noise). */
static struct growth_point *series(size_t n, double dt, double base, double rate_per_s, double noise_bytes,
				   size_t unpopulated)
{
	struct growth_point *p = calloc(n, sizeof(*p));
	unsigned s = 7;
	for (size_t i = 0; i < n; i++) {
		p[i].t = 1e9 + (double)i * dt;
		p[i].overhead = base + rate_per_s * (double)i * dt + noise_bytes * noise(&s);
		p[i].populated = i >= unpopulated;
	}
	return p;
}

static void steady_growth_is_flagged(void **state)
{
	(void)state;
	/* 20 MiB/hour over 6 hours at 10 s, with 2 MiB of noise. */
	struct growth_point *p = series(2160, 10, 200 * MiB, 20 * MiB / 3600, 2 * MiB, 0);
	struct growth_result r;
	assert_int_equal(growth_assess(p, 2160, NAN, &growth_defaults, &r), 0);
	assert_true(r.flagged);
	assert_int_equal(r.state, GROWTH_FLAGGED);
	assert_true(fabs(r.bytes_per_hour - 20 * MiB) < 1 * MiB);
	assert_true(r.consistency > 0.9);
	/* The line the report draws starts on the series at its first usable sample (after 600 s). */
	assert_true(r.first_t == p[60].t);
	assert_true(fabs(r.anchor_bytes - (200 * MiB + 20 * MiB / 3600 * 600)) < 1 * MiB);
	free(p);
}

static void anchor_counts_from_the_first_usable_sample(void **state)
{
	(void)state;
	/* 36 MiB/hour from 100 MiB, no noise; the first 200 samples are warm-up (not populated). */
	struct growth_point *p = series(1000, 10, 100 * MiB, 36 * MiB / 3600, 0, 200);
	struct growth_params g = growth_defaults;
	g.warmup_seconds = 0;
	struct growth_result r;
	assert_int_equal(growth_assess(p, 1000, NAN, &g, &r), 0);
	assert_true(r.flagged);
	assert_true(r.first_t == p[200].t);
	assert_true(fabs(r.anchor_bytes - p[200].overhead) < 1024);
	assert_true(fabs(r.anchor_bytes + r.bytes_per_hour / 3600 * (r.last_t - r.first_t) - p[999].overhead) < 1024);
	free(p);
}

static void flat_is_not_flagged(void **state)
{
	(void)state;
	struct growth_point *p = series(2160, 10, 200 * MiB, 0, 8 * MiB, 0);
	struct growth_result r;
	assert_int_equal(growth_assess(p, 2160, NAN, &growth_defaults, &r), 0);
	assert_false(r.flagged);
	assert_int_equal(r.state, GROWTH_STEADY);
	assert_true(fabs(r.bytes_per_hour) < 1 * MiB);
	free(p);
}

static void one_step_is_not_sustained(void **state)
{
	(void)state;
	/* A cache that filled once, in the middle of the window: a big jump, then flat. */
	struct growth_point *p = series(2000, 10, 200 * MiB, 0, 1 * MiB, 0);
	for (size_t i = 1000; i < 2000; i++)
		p[i].overhead += 300 * MiB;
	struct growth_result r;
	assert_int_equal(growth_assess(p, 2000, NAN, &growth_defaults, &r), 0);
	assert_false(r.flagged);
	assert_true(r.consistency < 0.6);
	free(p);
}

static void warmup_is_ignored(void **state)
{
	(void)state;
	/* The guest populates its RAM for the first 300 samples (the estimate climbs), then flat. */
	struct growth_point *p = series(1000, 10, 100 * MiB, 0, 0.5 * MiB, 300);
	for (size_t i = 0; i < 300; i++)
		p[i].overhead = (double)i * MiB;
	struct growth_result r;
	struct growth_params g = growth_defaults;
	g.warmup_seconds = 0;
	assert_int_equal(growth_assess(p, 1000, NAN, &g, &r), 0);
	assert_false(r.flagged);
	assert_int_equal(r.samples, 700);
	assert_int_equal(r.warmup_samples, 300);
	/* Time warm-up: a VM that started 4400 s after the first sample (same pid reused in the
	 * fixture) is young until 5000 s in: samples 0..499 are ignored. */
	g.warmup_seconds = 600;
	assert_int_equal(growth_assess(p, 1000, p[0].t + 4400, &g, &r), 0);
	assert_int_equal(r.samples, 500);
	free(p);
}

static void too_few_and_empty(void **state)
{
	(void)state;
	struct growth_point *p = series(5, 10, 100 * MiB, 1e6, 0, 0);
	struct growth_result r;
	assert_int_equal(growth_assess(p, 5, NAN, &growth_defaults, &r), 0);
	assert_int_equal(r.state, GROWTH_WARMUP); /* all within the first 600 s of the series */
	struct growth_params g = growth_defaults;
	g.warmup_seconds = 0;
	assert_int_equal(growth_assess(p, 5, NAN, &g, &r), 0);
	assert_int_equal(r.state, GROWTH_TOO_FEW);
	assert_false(r.flagged);
	assert_true(isnan(r.bytes_per_hour));
	assert_true(isnan(r.anchor_bytes));
	assert_int_equal(growth_assess(p, 0, NAN, &g, &r), 0);
	assert_int_equal(r.samples, 0);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_line),
		cmocka_unit_test(outliers_do_not_move_it),
		cmocka_unit_test(flat_noise_has_no_order),
		cmocka_unit_test(long_series_is_thinned),
		cmocka_unit_test(degenerate_input),
		cmocka_unit_test(steady_growth_is_flagged),
		cmocka_unit_test(anchor_counts_from_the_first_usable_sample),
		cmocka_unit_test(flat_is_not_flagged),
		cmocka_unit_test(one_step_is_not_sustained),
		cmocka_unit_test(warmup_is_ignored),
		cmocka_unit_test(too_few_and_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
