/* core/base: the one rule for a counter's rate (rate.h), and clock ticks to seconds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/base/rate.h"

static void test_counter_rate(void **state)
{
	(void)state;
	assert_true(counter_rate(MAYBE(100), MAYBE(300), 2) == 100);
	assert_true(counter_rate(MAYBE(5), MAYBE(5), 1) == 0); /* still: a real 0 */
	assert_true(isnan(counter_rate(UNKNOWN, MAYBE(300), 2)));
	assert_true(isnan(counter_rate(MAYBE(100), UNKNOWN, 2)));
	assert_true(isnan(counter_rate(MAYBE(300), MAYBE(100), 2))); /* went down: a reset */
	assert_true(isnan(counter_rate(MAYBE(100), MAYBE(300), 0)));  /* no time passed */
	assert_true(isnan(counter_rate(MAYBE(100), MAYBE(300), -1)));
	assert_true(isnan(counter_rate(MAYBE(100), MAYBE(300), NAN)));
}

static void test_counter_rate_double(void **state)
{
	(void)state;
	assert_true(counter_rate_double(1.5, 2.5, 0.5) == 2);
	assert_true(isnan(counter_rate_double(NAN, 2.5, 1)));
	assert_true(isnan(counter_rate_double(1, INFINITY, 1)));
	assert_true(isnan(counter_rate_double(2.5, 1.5, 1)));
	assert_true(isnan(counter_rate_double(1.5, 2.5, 0)));
}

static void test_percent(void **state)
{
	(void)state;
	/* half a second of CPU in two seconds: 25% of one CPU */
	assert_true(counter_percent_ns(MAYBE(1000000000), MAYBE(1500000000), 2) == 25);
	assert_true(counter_percent_seconds(10, 10.5, 2) == 25);
	assert_true(counter_percent_seconds(10, 12, 1) == 200); /* two CPUs */
	assert_true(isnan(counter_percent_ns(UNKNOWN, MAYBE(1), 1)));
	assert_true(isnan(counter_percent_ns(MAYBE(2), MAYBE(1), 1)));
	assert_true(isnan(counter_percent_seconds(NAN, 1, 1)));
	assert_true(isnan(counter_percent_seconds(0, 1, 0)));
}

static void test_ticks(void **state)
{
	(void)state;
	long hz = ticks_per_second();
	assert_true(hz > 0);
	assert_true(ticks_to_seconds(0) == 0);
	assert_true(fabs(ticks_to_seconds((uint64_t)hz * 3) - 3) < 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_rate),
		cmocka_unit_test(test_counter_rate_double),
		cmocka_unit_test(test_percent),
		cmocka_unit_test(test_ticks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
