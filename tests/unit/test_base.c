/* core/base: the one rule for a counter's rate (rate.h), clock ticks to seconds, and the fan-out
 * of parallel.h. */
#include <math.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/base/parallel.h"
#include "parse/elements.h"
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

struct tally {
	size_t nitems;
	atomic_uint taken[1000];
	atomic_size_t calls;
};

static void take_some(void *arg, size_t t, size_t n)
{
	struct tally *y = arg;
	atomic_fetch_add(&y->calls, 1);
	for (size_t i = t; i < y->nitems; i += n)
		atomic_fetch_add(&y->taken[i], 1);
}

/* Every item is taken once, whatever the threads and however the items fall into shares. */
static void test_parallel(void **state)
{
	(void)state;
	static struct tally y;
	const size_t items[] = {0, 1, 7, 64, 999, 1000};
	for (size_t threads = 0; threads <= PARALLEL_MAX + 2; threads++)
		for (size_t k = 0; k < ELEMENTSOF(items); k++) {
			y.nitems = items[k];
			atomic_store(&y.calls, 0);
			for (size_t i = 0; i < 1000; i++)
				atomic_store(&y.taken[i], 0);
			parallel(threads, take_some, &y);
			for (size_t i = 0; i < 1000; i++)
				assert_int_equal(atomic_load(&y.taken[i]), i < y.nitems ? 1 : 0);
			/* one share on one thread; else 16 shares per thread, each taken once */
			size_t n = threads < 1 ? 1 : threads < PARALLEL_MAX ? threads : PARALLEL_MAX;
			assert_int_equal(atomic_load(&y.calls), n == 1 ? 1 : 16 * n);
		}
}

static void test_parallel_threads(void **state)
{
	(void)state;
	assert_int_equal(parallel_threads(0, 16), 1);
	assert_int_equal(parallel_threads(15, 16), 1);
	size_t t = parallel_threads(32, 16);
	assert_true(t >= 1 && t <= 2);
	assert_true(parallel_threads(100000, 16) <= PARALLEL_MAX);
	assert_true(parallel_threads(100000, 16) >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_rate),
		cmocka_unit_test(test_counter_rate_double),
		cmocka_unit_test(test_percent),
		cmocka_unit_test(test_ticks),
		cmocka_unit_test(test_parallel),
		cmocka_unit_test(test_parallel_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
