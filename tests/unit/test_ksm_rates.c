/* Derived KSM figures: saved bytes, ratio, CPU %, scan rate, full scan time, profit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "core/model/ksm.h"

static struct ksm_sample sample(double t, int64_t scanned, int64_t full_scans, int64_t cpu_ms)
{
	struct ksm_sample s;
	memset(&s, 0, sizeof(s));
	s.t = t;
	s.k.present = true;
	s.k.run = MAYBE(1);
	s.k.pages_to_scan = MAYBE(100);
	s.k.sleep_millisecs = MAYBE(20);
	s.k.pages_shared = MAYBE(1000);
	s.k.pages_sharing = MAYBE(3000);
	s.k.pages_unshared = MAYBE(5000);
	s.k.pages_volatile = MAYBE(1000);
	s.k.ksm_zero_pages = MAYBE(500);
	s.k.general_profit = UNKNOWN;
	s.k.pages_scanned = MAYBE(scanned);
	s.k.full_scans = MAYBE(full_scans);
	s.ksmd_cpu_ns = cpu_ms >= 0 ? MAYBE(cpu_ms * 1000000) : UNKNOWN;
	return s;
}

static void test_rates_basic(void **state)
{
	(void)state;
	struct ksm_sample a = sample(10, 100000, 3, 1000), b = sample(12, 110000, 3, 1100);
	struct ksm_rates r;
	ksm_rates_compute(&a, &b, 4096, NULL, &r);
	assert_true(r.saved_bytes.known);
	assert_int_equal(r.saved_bytes.v, (3000 + 500) * 4096);
	assert_true(fabs(r.sharing_ratio - 3.0) < 1e-9);
	assert_true(fabs(r.ksmd_cpu_percent - 5.0) < 1e-9); /* 100 ms over 2 s */
	assert_true(fabs(r.pages_scanned_per_second - 5000) < 1e-9);
	/* No file: computed as (sharing + zero) x page - rmap_items x 64. */
	assert_true(r.general_profit.known && r.general_profit_computed);
	assert_int_equal(r.general_profit.v, (3000 + 500) * 4096 - (1000 + 3000 + 5000 + 1000) * 64);
	/* Estimated scan: (rmap items + zero pages) at the measured rate. */
	assert_false(r.full_scan_measured);
	assert_true(fabs(r.full_scan_seconds - 10500.0 / 5000) < 1e-9);
}

static void test_rates_unknowns(void **state)
{
	(void)state;
	struct ksm_sample a = sample(10, 100000, 3, -1), b = sample(10, 100000, 3, -1);
	b.k.pages_shared = MAYBE(0);
	b.k.general_profit = MAYBE(12345);
	struct ksm_rates r;
	ksm_rates_compute(&a, &b, 4096, NULL, &r);
	assert_true(isnan(r.ksmd_cpu_percent));       /* no ksmd */
	assert_true(isnan(r.pages_scanned_per_second)); /* zero interval */
	assert_true(isnan(r.sharing_ratio));          /* nothing shared */
	assert_int_equal(r.general_profit.v, 12345);  /* the kernel's own figure wins */
	assert_false(r.general_profit_computed);
	/* Zero rate: the estimate falls back to the nominal rate of the settings (100 / 20 ms). */
	assert_true(fabs(r.full_scan_seconds - 9500.0 / 5000) < 1e-9);
	/* KSM off: no scan time at all. */
	b.k.run = MAYBE(0);
	ksm_rates_compute(&a, &b, 4096, NULL, &r);
	assert_true(isnan(r.full_scan_seconds));
	/* Counters going backwards (KSM restarted) are not a rate. */
	b = sample(12, 50, 3, 1);
	a = sample(10, 100000, 3, 1000);
	ksm_rates_compute(&a, &b, 4096, NULL, &r);
	assert_true(isnan(r.pages_scanned_per_second));
	assert_true(isnan(r.ksmd_cpu_percent));
	/* No KSM at all. */
	b.k.present = false;
	b.k.pages_sharing = UNKNOWN;
	ksm_rates_compute(&a, &b, 4096, NULL, &r);
	assert_false(r.saved_bytes.known);
}

static void test_scan_clock(void **state)
{
	(void)state;
	struct ksm_scan_clock c;
	ksm_scan_clock_init(&c);
	struct ksm_sample s = sample(0, 0, 5, 0);
	assert_false(ksm_scan_clock_feed(&c, &s));
	s = sample(1, 0, 5, 0);
	assert_false(ksm_scan_clock_feed(&c, &s));
	s = sample(2, 0, 6, 0); /* ended in (1, 2]: 1.5 */
	assert_true(ksm_scan_clock_feed(&c, &s));
	assert_true(c.last_scan_seconds < 0); /* one end is not a duration */
	s = sample(9, 0, 6, 0);
	ksm_scan_clock_feed(&c, &s);
	s = sample(10, 0, 7, 0); /* ended in (9, 10]: 9.5 */
	assert_true(ksm_scan_clock_feed(&c, &s));
	assert_true(fabs(c.last_scan_seconds - 8.0) < 1e-9);
	struct ksm_rates r;
	struct ksm_sample a = sample(0, 0, 5, 0);
	ksm_rates_compute(&a, &s, 4096, &c, &r);
	assert_true(r.full_scan_measured);
	assert_true(fabs(r.full_scan_seconds - 8.0) < 1e-9);
	/* Two scans ending between two samples share the time. */
	s = sample(11, 0, 7, 0);
	ksm_scan_clock_feed(&c, &s);
	s = sample(12, 0, 9, 0);
	assert_true(ksm_scan_clock_feed(&c, &s));
	assert_true(fabs(c.last_scan_seconds - 1.0) < 1e-9);
}

/* KSM running, off (stopped or unmerging), or neither when unknown or absent. */
static void test_running(void **state)
{
	(void)state;
	struct ksm_sysfs k = {.present = true, .run = MAYBE(1)};
	assert_true(ksm_is_running(&k));
	assert_false(ksm_is_off(&k));
	k.run = MAYBE(0);
	assert_false(ksm_is_running(&k));
	assert_true(ksm_is_off(&k));
	k.run = MAYBE(2);
	assert_true(ksm_is_off(&k));
	k.run = UNKNOWN;
	assert_false(ksm_is_running(&k));
	assert_false(ksm_is_off(&k));
	k = (struct ksm_sysfs){.present = false, .run = MAYBE(0)};
	assert_false(ksm_is_off(&k));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rates_basic),
		cmocka_unit_test(test_rates_unknowns),
		cmocka_unit_test(test_scan_clock),
		cmocka_unit_test(test_running),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
