/* out/html_chart axis helpers: tick steps, alignment and labels of the report's charts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "out/html_chart.h"

static void time_steps(void **state)
{
	(void)state;
	assert_true(chart_time_step(20, 8) == 5);
	assert_true(chart_time_step(300, 8) == 60);
	assert_true(chart_time_step(3600, 8) == 600);
	assert_true(chart_time_step(86400, 8) == 3 * 3600);
	assert_true(chart_time_step(30 * 86400, 8) == 7 * 86400);
	assert_true(chart_time_step(365 * 86400.0, 8) == 91 * 86400);
}

static void ticks_align_in_local_time(void **state)
{
	(void)state;
	/* 10:07:13 UTC with 15-minute steps -> 10:15:00; one hour east of UTC -> still :15 local. */
	double t = 1796205600 + 7 * 60 + 13; /* 2026-12-02 10:07:13 UTC */
	assert_true(chart_time_first_tick(t, 900, 0) == 1796205600 + 900);
	assert_true(chart_time_first_tick(t, 900, 3600) == 1796205600 + 900);
	/* Day ticks fall on local midnight. */
	double day = chart_time_first_tick(t, 86400, 3600);
	assert_true(fmod(day + 3600, 86400) == 0);
}

static void labels(void **state)
{
	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	char b[64];
	chart_time_label(1796205600 + 30, 10, b, sizeof(b));
	assert_string_equal(b, "10:00:30");
	chart_time_label(1796205600, 600, b, sizeof(b));
	assert_string_equal(b, "10:00");
	chart_time_label(1796205600, 86400, b, sizeof(b));
	assert_string_equal(b, "Dec 02");
	chart_value_label(1.5 * 1024 * 1024 * 1024, CHART_BYTES, 0.5 * 1024 * 1024 * 1024, b, sizeof(b));
	assert_string_equal(b, "1.5 GiB");
	chart_value_label(256.0 * 1024 * 1024, CHART_BYTES, 128.0 * 1024 * 1024, b, sizeof(b));
	assert_string_equal(b, "256 MiB");
	chart_value_label(12.5, CHART_PERCENT, 2.5, b, sizeof(b));
	assert_string_equal(b, "12.5%");
}

static void nice_steps(void **state)
{
	(void)state;
	assert_true(chart_nice_step(100, 5) == 20);
	assert_true(chart_nice_step(23.5, 5) == 5);
	assert_true(chart_nice_step(1.1, 5) == 0.25);
	assert_true(chart_nice_step(0, 5) == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(time_steps),
		cmocka_unit_test(ticks_align_in_local_time),
		cmocka_unit_test(labels),
		cmocka_unit_test(nice_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
