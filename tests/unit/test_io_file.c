/* io's platform pieces beyond reading: the one clock and its timespec. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/clock.h"

static void test_clock_timespec(void **state)
{
	(void)state;
	struct timespec ts = clock_timespec(12.25);
	assert_int_equal(ts.tv_sec, 12);
	assert_int_equal(ts.tv_nsec, 250000000L);
	ts = clock_timespec(0);
	assert_int_equal(ts.tv_sec, 0);
	assert_int_equal(ts.tv_nsec, 0);
	ts = clock_timespec(3.9999999999999);
	assert_true(ts.tv_nsec < 1000000000L);
	assert_true(ts.tv_sec == 3 || ts.tv_sec == 4);
}

static void test_clocks_move(void **state)
{
	(void)state;
	double m0 = clock_monotonic_seconds(), c0 = clock_thread_cpu_seconds();
	volatile uint64_t spin = 0;
	while (clock_thread_cpu_seconds() - c0 < 0.01)
		spin++;
	assert_true(clock_monotonic_seconds() - m0 >= 0.01);
	assert_true(clock_wall_seconds() > 1.7e9); /* after 2023 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_timespec),
		cmocka_unit_test(test_clocks_move),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
