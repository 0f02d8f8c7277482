/* out/svg.c: the axis helpers and the chart features: tick steps, alignment and labels of the report's charts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "out/svg.h"

static void time_steps(void **state)
{
	(void)state;
	assert_true(svg_time_step(20, 8) == 5);
	assert_true(svg_time_step(300, 8) == 60);
	assert_true(svg_time_step(3600, 8) == 600);
	assert_true(svg_time_step(86400, 8) == 3 * 3600);
	assert_true(svg_time_step(30 * 86400, 8) == 7 * 86400);
	assert_true(svg_time_step(365 * 86400.0, 8) == 91 * 86400);
}

static void ticks_align_in_local_time(void **state)
{
	(void)state;
	/* 10:07:13 UTC with 15-minute steps -> 10:15:00; one hour east of UTC -> still :15 local. */
	double t = 1796205600 + 7 * 60 + 13; /* 2026-12-02 10:07:13 UTC */
	assert_true(svg_time_first_tick(t, 900, 0) == 1796205600 + 900);
	assert_true(svg_time_first_tick(t, 900, 3600) == 1796205600 + 900);
	/* Day ticks fall on local midnight. */
	double day = svg_time_first_tick(t, 86400, 3600);
	assert_true(fmod(day + 3600, 86400) == 0);
}

static void labels(void **state)
{
	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	char b[64];
	svg_time_label(1796205600 + 30, 10, b, sizeof(b));
	assert_string_equal(b, "10:00:30");
	svg_time_label(1796205600, 600, b, sizeof(b));
	assert_string_equal(b, "10:00");
	svg_time_label(1796205600, 86400, b, sizeof(b));
	assert_string_equal(b, "Dec 02");
	svg_value_label(1.5 * 1024 * 1024 * 1024, SVG_BYTES, 0.5 * 1024 * 1024 * 1024, b, sizeof(b));
	assert_string_equal(b, "1.5 GiB");
	svg_value_label(256.0 * 1024 * 1024, SVG_BYTES, 128.0 * 1024 * 1024, b, sizeof(b));
	assert_string_equal(b, "256 MiB");
	svg_value_label(12.5, SVG_PERCENT, 2.5, b, sizeof(b));
	assert_string_equal(b, "12.5%");
}

static void nice_steps(void **state)
{
	(void)state;
	assert_true(svg_nice_step(100, 5) == 20);
	assert_true(svg_nice_step(23.5, 5) == 5);
	assert_true(svg_nice_step(1.1, 5) == 0.25);
	assert_true(svg_nice_step(0, 5) == 1);
}

static int count(const char *text, const char *what)
{
	int n = 0;
	for (const char *c = text; (c = strstr(c, what)); c++)
		n++;
	return n;
}

static void stacking_and_gaps(void **state)
{
	(void)state;
	/* Areas stack, NaN adds nothing, a line is not stacked. */
	double t[] = {0, 10, 20, 30, 40, 100, 110};
	double a[] = {1, 2, NAN, 1, 1, 1, 1}, b[] = {1, 1, 5, 1, -3, 1, 1}, c[] = {9, 0, 0, 0, 0, 0, 0};
	struct svg_series se[] = {
		{.name = "a", .x = t, .y = a, .n = 7, .style = SVG_AREA | SVG_LINES},
		{.name = "b", .x = t, .y = b, .n = 7, .style = SVG_AREA | SVG_LINES},
		{.name = "c & d", .x = t, .y = c, .n = 7, .style = SVG_LINES | SVG_DASHED},
	};
	assert_true(svg_stacked_max(se, 2) == 5);
	assert_true(svg_stacked_max(se, 3) == 9);
	/* The median step is 10 s: a 60 s pause is a gap, 10 s steps are not. */
	assert_true(svg_gap_for(t, 7) == 35);
	assert_true(svg_gap_for(t, 2) == 0);
	for (size_t i = 0; i < 3; i++)
		se[i].gap = svg_gap_for(t, 7);
	/* Drawn on a real date/time axis: the same steps from a Unix time. */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	struct svg *s = svg_begin_inline(f, 960, 200);
	struct svg_plot p;
	svg_plot_begin(s, &p, &(struct svg_plot_spec){
		.left = 78, .top = 12, .width = 866, .height = 148,
		.x = {.min = 1796205600, .max = 1796205600 + 110, .time = true},
		.y = {.min = 0, .max = svg_stacked_max(se, 3), .unit = SVG_PERCENT},
		.legend = SVG_LEGEND_NONE,
	});
	double unix_t[7];
	for (size_t i = 0; i < 7; i++)
		unix_t[i] = 1796205600 + t[i];
	for (size_t i = 0; i < 3; i++) {
		se[i].x = unix_t;
		assert_int_equal(svg_plot_add(&p, &se[i]), 0);
	}
	/* b's top at t=0 is a + b = 2: a fifth of the 0..10 axis. */
	assert_true(fabs(svg_plot_y(&p, 2) - (12 + 148 * 0.8)) < 1e-6);
	svg_plot_end(&p);
	assert_int_equal(svg_end(s), 0);
	fclose(f);
	assert_null(strstr(text, "<?xml"));
	assert_non_null(strstr(text, "role=\"img\""));
	/* a: runs 0-10, 30-40, 100-110 (NaN and the gap break it); b: 0-40 and 100-110. */
	assert_int_equal(count(text, "<path class=\"area\""), 2);
	assert_int_equal(count(text, "Z"), 3 + 2);
	assert_int_equal(count(text, "<polyline"), 3 + 2 + 2);
	assert_int_equal(count(text, "stroke-dasharray"), 2);
	assert_non_null(strstr(text, "data-name=\"c &amp; d\""));
	assert_non_null(strstr(text, ">10%</text>"));
	/* Time ticks every 15 s in local time, with the date under the first one. */
	assert_int_equal(count(text, "class=\"xlab\""), 8);
	assert_int_equal(count(text, "<tspan"), 1);
	assert_null(strstr(text, "legend"));
	free(text);
}

static void point_labels(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	struct svg *s = svg_begin(f, 760, 480);
	struct svg_plot p;
	svg_plot_begin(s, &p, &(struct svg_plot_spec){
		.x = {.min = 0, .max = 11}, .y = {.min = 0, .max = 4.4, .unit = SVG_BYTES}, .legend = SVG_LEGEND_NONE});
	double x[] = {1, 10, NAN}, y[] = {4, 1, 2};
	const char *labels[] = {"100/20 <a>", NULL, "never drawn"};
	svg_plot_add(&p, &(struct svg_series){.name = "s", .x = x, .y = y, .n = 3, .style = SVG_POINTS, .labels = labels});
	svg_plot_end(&p);
	svg_end(s);
	fclose(f);
	assert_int_equal(count(text, "<circle"), 2);
	assert_non_null(strstr(text, ">100/20 &lt;a&gt;</text>"));
	assert_null(strstr(text, "never drawn"));
	assert_non_null(strstr(text, ">4 B</text>"));
	free(text);
}

/* A table cell's sparkline: the largest value (not mean) at the top row, 0 at the bottom, a new
 * stroke after a stretch without values, at most one point per 2 px (means of the values it covers). */
static void sparkline(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	const double y[] = {0, 10, NAN, 5, 10};
	svg_sparkline(f, y, 5, 41, 12, "#123456");
	const double many[] = {2, 4, 6, 8, 10, 12, 14, 16};
	svg_sparkline(f, many, 8, 4, 10, "red"); /* 2 points, the means 5 and 13, under 16 */
	fclose(f);
	assert_non_null(strstr(text, "<svg class=\"spark\" width=\"41\" height=\"12\" viewBox=\"0 0 41 12\">"));
	assert_non_null(strstr(text, "stroke=\"#123456\""));
	assert_non_null(strstr(text, "d=\"M0.0 11.0L10.0 1.0M30.0 6.0L40.0 1.0\""));
	assert_non_null(strstr(text, "d=\"M0.0 6.5L3.0 2.5\""));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(time_steps),
		cmocka_unit_test(ticks_align_in_local_time),
		cmocka_unit_test(labels),
		cmocka_unit_test(nice_steps),
		cmocka_unit_test(stacking_and_gaps),
		cmocka_unit_test(point_labels),
		cmocka_unit_test(sparkline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
