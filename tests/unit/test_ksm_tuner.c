/* The tuner's control law, scenario by scenario: start fast, stay fast while merging or while
 * new memory appears, go idle after flat full scans, come back for a new guest, fit the CPU
 * budget, and take memory pressure into account. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "core/tuner.h"

struct sim {
	struct tuner_config c;
	struct tuner_state s;
	struct tuner_input in;
	struct tuner_decision d;
};

static void sim_init(struct sim *m)
{
	memset(m, 0, sizeof(*m));
	tuner_config_default(&m->c);
	tuner_init(&m->s);
	m->in = (struct tuner_input){
		.interval_seconds = 2, .pages_shared = 0, .pages_sharing = 0, .pages_unshared = 0,
		.pages_volatile = 0, .ksm_zero_pages = 0, .full_scans = 0, .ksmd_cpu_percent = NAN,
		.mem_total_bytes = 16LL << 30, .mem_available_bytes = 12LL << 30, .run = 0,
		.pages_to_scan = 100, .sleep_millisecs = 20,
	};
}

/* One interval: the kernel ran the previous decision. */
static void step(struct sim *m)
{
	tuner_step(&m->c, &m->s, &m->in, &m->d);
	m->in.run = m->d.run;
	m->in.pages_to_scan = m->d.pages_to_scan;
	m->in.sleep_millisecs = m->d.sleep_millisecs;
}

static void test_start_fast(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_int_equal(m.d.run, 1);
	assert_int_equal(m.d.pages_to_scan, 1000);
	assert_int_equal(m.d.sleep_millisecs, 20);
	assert_true(m.d.changed);
	assert_non_null(strstr(m.d.reason, "start"));
}

static void test_flat_scans_go_idle_and_new_guest_wakes(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	/* First scan meets 60000 pages; the second merges 20000. */
	m.in.pages_unshared = 40000, m.in.pages_volatile = 20000, m.in.full_scans = 1;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	m.in.pages_shared = 5000, m.in.pages_sharing = 20000, m.in.pages_unshared = 15000, m.in.full_scans = 2;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	/* Scans that find nothing: one is not enough, two are. */
	m.in.full_scans = 3;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	m.in.full_scans = 4;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_int_equal(m.d.pages_to_scan, 100);
	assert_int_equal(m.d.sleep_millisecs, 1000);
	assert_true(m.d.changed);
	assert_non_null(strstr(m.d.reason, "idle: 2 full scans"));
	/* Idle holds while nothing changes, volatile churn included. */
	m.in.pages_volatile = 20100, m.in.pages_unshared = 14900, m.in.full_scans = 5;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_false(m.d.changed);
	/* A new guest: ksmd meets pages it has never seen. */
	m.in.pages_volatile = 30000;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_int_equal(m.d.sleep_millisecs, 20);
	assert_non_null(strstr(m.d.reason, "new pages"));
}

static void test_merging_keeps_fast(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	m.in.pages_unshared = 1000;
	for (int i = 1; i <= 6; i++) {
		/* Every scan gains: never idle, however many scans. */
		m.in.full_scans = i;
		m.in.pages_sharing += 5000;
		m.in.pages_shared += 1000;
		step(&m);
		assert_int_equal(m.d.mode, TUNER_FAST);
	}
}

static void test_cpu_budget(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m); /* 1000 pages */
	m.in.ksmd_cpu_percent = 40; /* twice the default budget of 20% */
	step(&m); /* first interval with this setting: it only settles */
	assert_int_equal(m.d.pages_to_scan, 1000);
	step(&m);
	assert_int_equal(m.d.pages_to_scan, 500);
	assert_non_null(strstr(m.d.reason, "pages_to_scan 1000 -> 500"));
	/* Far below budget: at most doubles a step, and never above max_pages_to_scan. */
	m.in.ksmd_cpu_percent = 1;
	for (int i = 0; i < 10; i++)
		step(&m);
	assert_int_equal(m.d.pages_to_scan, m.c.max_pages_to_scan);
	/* Within 10% of the budget: no churn. */
	m.in.ksmd_cpu_percent = 19;
	m.c.max_pages_to_scan = 1000000;
	int64_t before = m.d.pages_to_scan;
	step(&m);
	assert_int_equal(m.d.pages_to_scan, before);
	/* Someone else changed the kernel's setting: the measured CPU is not ours to fit. */
	m.in.pages_to_scan = 77;
	m.in.ksmd_cpu_percent = 90;
	step(&m);
	assert_int_equal(m.d.pages_to_scan, before);
	assert_non_null(strstr(m.d.reason, "not fitted"));
	/* Unknown CPU: rate kept. */
	m.in.ksmd_cpu_percent = NAN;
	step(&m);
	assert_int_equal(m.d.pages_to_scan, before);
}

static void test_fast_rate_remembered_after_idle(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	m.in.ksmd_cpu_percent = 5;
	step(&m);
	step(&m);
	int64_t fitted = m.d.pages_to_scan;
	assert_int_equal(fitted, 2000);
	m.in.full_scans = 1;
	step(&m);
	m.in.full_scans = 2;
	step(&m);
	m.in.full_scans = 3;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	m.in.pages_sharing = 10000; /* merging happened while idle */
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_true(m.d.pages_to_scan >= fitted);
}

static void test_memory_pressure(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	m.in.mem_available_bytes = 1LL << 30; /* 1 of 16 GiB: under 10% */
	step(&m);
	assert_true(m.d.pressure);
	m.in.ksmd_cpu_percent = 30; /* within the doubled budget (40%) */
	step(&m);
	step(&m);
	assert_true(m.d.pages_to_scan > 1000);
	assert_non_null(strstr(m.d.reason, "memory pressure"));
	/* Twice as patient before idling. */
	for (int i = 1; i <= 3; i++) {
		m.in.full_scans = i;
		step(&m);
		assert_int_equal(m.d.mode, TUNER_FAST);
	}
	m.in.full_scans = 4;
	step(&m);
	m.in.full_scans = 5;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_fast),
		cmocka_unit_test(test_flat_scans_go_idle_and_new_guest_wakes),
		cmocka_unit_test(test_merging_keeps_fast),
		cmocka_unit_test(test_cpu_budget),
		cmocka_unit_test(test_fast_rate_remembered_after_idle),
		cmocka_unit_test(test_memory_pressure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
