/* bench ksm's model without KSM: ksmtuned's law step by step, the series, the guests' workload,
 * the savings formula, the steady window and the summary's medians and verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bench/bench_ksm.h"
#include "core/tune/ksmtuned.h"

#define GIB_KB (1024 * 1024) /* one GiB in kB, the script's unit */

static void ksmtuned_stops_with_room(void **state)
{
	(void)state;
	struct ksmtuned_config c;
	ksmtuned_config_default(&c);
	int64_t npages = 0;
	struct ksmtuned_step st = {.run = true};
	/* 16 GiB host: threshold 20% = 3.2 GiB; 1 GiB committed and 8 GiB free leave room. */
	ksmtuned_adjust(&c, 16 * GIB_KB, 8 * GIB_KB, 1 * GIB_KB, &npages, &st);
	assert_false(st.run);
	assert_int_equal(npages, 0);
}

static void ksmtuned_boosts_decays_and_clamps(void **state)
{
	(void)state;
	struct ksmtuned_config c;
	ksmtuned_config_default(&c);
	int64_t npages = 0;
	struct ksmtuned_step st;
	/* Committed near the total, plenty free: decay from 0, clamped to the minimum. */
	ksmtuned_adjust(&c, 16 * GIB_KB, 8 * GIB_KB, 15 * GIB_KB, &npages, &st);
	assert_true(st.run);
	assert_int_equal(st.pages_to_scan, 64);
	assert_int_equal(npages, 64);
	assert_int_equal(st.sleep_millisecs, 10); /* KSM_SLEEP_MSEC on a 16 GiB host */
	/* Free below the threshold: boost by 300 each time, up to the maximum. */
	static const int64_t boosted[] = {364, 664, 964, 1250, 1250};
	for (size_t i = 0; i < sizeof(boosted) / sizeof(boosted[0]); i++) {
		ksmtuned_adjust(&c, 16 * GIB_KB, 1 * GIB_KB, 15 * GIB_KB, &npages, &st);
		assert_true(st.run);
		assert_int_equal(st.pages_to_scan, boosted[i]);
	}
	ksmtuned_adjust(&c, 16 * GIB_KB, 8 * GIB_KB, 15 * GIB_KB, &npages, &st);
	assert_int_equal(st.pages_to_scan, 1200);
	/* A stop leaves npages where it was. */
	ksmtuned_adjust(&c, 16 * GIB_KB, 8 * GIB_KB, 1 * GIB_KB, &npages, &st);
	assert_false(st.run);
	assert_int_equal(npages, 1200);
}

static void ksmtuned_sleep_and_threshold_follow_the_host(void **state)
{
	(void)state;
	struct ksmtuned_config c;
	ksmtuned_config_default(&c);
	int64_t npages = 0;
	struct ksmtuned_step st;
	/* 2 GiB: sleep scales up to 80 ms. */
	ksmtuned_adjust(&c, 2 * GIB_KB, 0, 2 * GIB_KB, &npages, &st);
	assert_true(st.run);
	assert_int_equal(st.sleep_millisecs, 80);
	/* 256 GiB: 10 * 16 GiB / 256 GiB rounds to 0, floored at 10. */
	ksmtuned_adjust(&c, 256 * (int64_t)GIB_KB, 0, 256 * (int64_t)GIB_KB, &npages, &st);
	assert_int_equal(st.sleep_millisecs, 10);
	/* A tiny host: 20% of 8000 kB is below KSM_THRES_CONST, so the threshold is 2048 kB. */
	npages = 0;
	ksmtuned_adjust(&c, 8000, 3000, 0, &npages, &st);
	assert_false(st.run);
	ksmtuned_adjust(&c, 8000, 2000, 0, &npages, &st);
	assert_true(st.run);
	assert_int_equal(st.pages_to_scan, 300);
	assert_int_equal(st.sleep_millisecs, 10 * 16 * 1024 * 1024 / 8000);
}

static void series_grows_and_frees(void **state)
{
	(void)state;
	struct bench_ksm_series s = {0};
	for (int i = 0; i < 1000; i++)
		assert_int_equal(bench_ksm_series_add(&s, i, 2.0 * i, i % 7 ? i : -1), 0);
	assert_int_equal(s.n, 1000);
	assert_true(s.cap >= 1000);
	assert_true(s.t[999] == 999 && s.saved[500] == 1000);
	assert_int_equal(s.cpu_ns[7], -1);
	assert_int_equal(s.cpu_ns[8], 8);
	bench_ksm_series_free(&s);
	assert_null(s.t);
	assert_int_equal(s.n, 0);
	bench_ksm_series_free(&s); /* twice is fine */
	bench_ksm_series_free(NULL);
}

static void guest_spec_is_one_image(void **state)
{
	(void)state;
	struct bench_ksm_config c = {.guests = 4, .guest_bytes = 64 << 20};
	struct workload_spec a = bench_ksm_guest_spec(&c, 0), b = bench_ksm_guest_spec(&c, 3);
	assert_int_equal(a.guest_bytes, 64 << 20);
	assert_true(a.shared_fraction == 0.5 && a.zero_fraction == 0.1 && a.volatile_fraction == 0.1);
	assert_true(a.thp && a.mergeable);
	assert_int_equal(a.rewrite_ms, 200);
	assert_int_equal(a.image_seed, b.image_seed); /* the same image in every guest */
	assert_int_equal(a.guest_index, 0);
	assert_int_equal(b.guest_index, 3);
	assert_int_equal(a.grow_bytes_per_second, 0);
	assert_true(a.fill_seconds == 0);
}

static void policies_by_name(void **state)
{
	(void)state;
	for (int p = 0; p < BENCH_KSM_NPOLICIES; p++)
		assert_int_equal(bench_ksm_policy_parse(bench_ksm_policy_name((enum bench_ksm_policy)p)), p);
	assert_string_equal(bench_ksm_policy_name(BENCH_KSM_ADVISOR), "kernel-advisor");
	assert_int_equal(bench_ksm_policy_parse("ksm"), -EINVAL);
}

static void saved_bytes_count_shared_and_zero_pages(void **state)
{
	(void)state;
	/* 4 guests: 400 merging pages are 100 pages of content, 300 saved; zero pages whole. */
	assert_true(bench_ksm_saved_bytes(400, 0, 4, 4096) == 300.0 * 4096);
	assert_true(bench_ksm_saved_bytes(400, 10, 4, 4096) == 310.0 * 4096);
	assert_true(bench_ksm_saved_bytes(0, 0, 2, 4096) == 0);
}

static void fill(struct bench_ksm_run *run, const double *t, const double *saved, const int64_t *cpu, size_t n)
{
	run->available = true;
	run->steady_cpu_percent = NAN;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(bench_ksm_series_add(&run->s, t[i], saved[i], cpu[i]), 0);
}

static void steady_window_is_the_last_seconds(void **state)
{
	(void)state;
	struct bench_ksm_run run = {0};
	/* ksmd spends 0.5 s of CPU a second at first, then 0.1 s. */
	fill(&run, (double[]){0, 1, 2, 3, 4, 5}, (double[]){0, 10, 20, 30, 40, 50},
	     (int64_t[]){0, 500000000, 1000000000, 1100000000, 1200000000, 1300000000}, 6);
	bench_ksm_run_finish(&run, 3);
	assert_true(run.final_saved.known && run.final_saved.v == 50);
	assert_true(fabs(run.steady_cpu_percent - 10.0) < 1e-9);
	bench_ksm_series_free(&run.s);

	/* ksmd's CPU unknown: no steady figure; one sample: nothing at all. */
	struct bench_ksm_run blind = {0};
	fill(&blind, (double[]){0, 1, 2}, (double[]){0, 1, 2}, (int64_t[]){-1, -1, -1}, 3);
	bench_ksm_run_finish(&blind, 1);
	assert_true(blind.final_saved.known && isnan(blind.steady_cpu_percent));
	bench_ksm_series_free(&blind.s);
	struct bench_ksm_run one = {0};
	fill(&one, (double[]){0}, (double[]){5}, (int64_t[]){0}, 1);
	bench_ksm_run_finish(&one, 1);
	assert_false(one.final_saved.known);
	bench_ksm_series_free(&one.s);
}

static void summary_medians_and_verdict(void **state)
{
	(void)state;
	struct bench_ksm_config c = {.guests = 2, .guest_bytes = 16 << 20, .duration_seconds = 30, .steady_seconds = 10,
				     .repeat = 1};
	for (int p = 0; p < BENCH_KSM_NPOLICIES; p++)
		c.policy_on[p] = true;
	struct bench_ksm_result *r;
	assert_int_equal(bench_ksm_result_new(&c, &r), 0);
	struct bench_ksm_run *runs = r->runs[0];
	const double t[] = {0, 10, 20, 30};
	/* default: 100 at 10 s; conservative: 100 at 20 s; ksmtuned: never; vmhost: 96 at 10 s. */
	fill(&runs[BENCH_KSM_DEFAULT], t, (double[]){0, 100, 100, 100}, (int64_t[]){0, 4000000000, 8000000000, 12000000000}, 4);
	fill(&runs[BENCH_KSM_CONSERVATIVE], t, (double[]){0, 50, 100, 100}, (int64_t[]){0, 1000000000, 2000000000, 3000000000}, 4);
	fill(&runs[BENCH_KSM_KSMTUNED], t, (double[]){0, 0, 10, 20}, (int64_t[]){0, 0, 0, 0}, 4);
	fill(&runs[BENCH_KSM_KSMTUNED_MODEL], t, (double[]){0, 0, 0, 0}, (int64_t[]){0, 0, 0, 0}, 4);
	runs[BENCH_KSM_ADVISOR].available = false; /* no advisor_mode on this kernel */
	runs[BENCH_KSM_ADVISOR].steady_cpu_percent = NAN;
	fill(&runs[BENCH_KSM_VMHOST], t, (double[]){0, 96, 99, 99}, (int64_t[]){0, 2000000000, 2500000000, 3000000000}, 4);
	for (int p = 0; p < BENCH_KSM_NPOLICIES; p++)
		bench_ksm_run_finish(&runs[p], c.steady_seconds);

	struct bench_ksm_summary s;
	bench_ksm_summarize(r, &s);
	assert_true(s.achievable_bytes == 100);
	assert_true(s.seconds_to_95pct[BENCH_KSM_DEFAULT] == 10);
	assert_true(s.ksmd_cpu_seconds_to_95pct[BENCH_KSM_DEFAULT] == 4);
	assert_true(s.seconds_to_95pct[BENCH_KSM_CONSERVATIVE] == 20);
	assert_true(isnan(s.seconds_to_95pct[BENCH_KSM_KSMTUNED]));
	assert_true(isnan(s.seconds_to_95pct[BENCH_KSM_KSMTUNED_MODEL]));
	assert_true(isnan(s.seconds_to_95pct[BENCH_KSM_ADVISOR]));
	assert_true(s.seconds_to_95pct[BENCH_KSM_VMHOST] == 10);
	assert_true(s.saved_bytes[BENCH_KSM_VMHOST] == 99);
	assert_int_equal(s.fastest_static, BENCH_KSM_DEFAULT);
	assert_true(s.vmhost_time_ratio == 1.0);
	/* vmhost's steady 5% against conservative's 10% (the last 10 s). */
	assert_true(fabs(s.steady_cpu_percent[BENCH_KSM_VMHOST] - 5) < 1e-9);
	assert_true(fabs(s.steady_cpu_percent[BENCH_KSM_CONSERVATIVE] - 10) < 1e-9);
	assert_true(s.vmhost_cpu_ok);
	assert_true(isnan(s.vmhost_time_ratio_advisor));
	/* Half of 16 MiB is identical across the two guests, a tenth of each is zero (hashed: near). */
	assert_true(fabs((double)s.mergeable_bytes / (8 << 20) - 1) < 0.05);
	assert_true(fabs((double)s.zero_bytes / (2 * 0.1 * (16 << 20)) - 1) < 0.1);

	/* Without the static policies there is no verdict on time. */
	r->cfg.policy_on[BENCH_KSM_DEFAULT] = r->cfg.policy_on[BENCH_KSM_CONSERVATIVE] = false;
	bench_ksm_summarize(r, &s);
	assert_int_equal(s.fastest_static, -1);
	assert_true(isnan(s.vmhost_time_ratio));
	assert_false(s.vmhost_cpu_ok);
	bench_ksm_result_free(r);
	bench_ksm_result_free(NULL);
}

static void medians_over_repeats(void **state)
{
	(void)state;
	struct bench_ksm_config c = {.guests = 2, .guest_bytes = 4 << 20, .duration_seconds = 30, .steady_seconds = 10,
				     .repeat = 3};
	c.policy_on[BENCH_KSM_VMHOST] = true;
	struct bench_ksm_result *r;
	assert_int_equal(bench_ksm_result_new(&c, &r), 0);
	/* 95 at 10 s, at 30 s, and never: the median is 30 s (NaN counts as the slowest). */
	const double t[] = {0, 10, 20, 30};
	fill(&r->runs[0][BENCH_KSM_VMHOST], t, (double[]){0, 100, 100, 100}, (int64_t[]){0, 1, 2, 3}, 4);
	fill(&r->runs[1][BENCH_KSM_VMHOST], t, (double[]){0, 10, 20, 95}, (int64_t[]){0, 1, 2, 3}, 4);
	fill(&r->runs[2][BENCH_KSM_VMHOST], t, (double[]){0, 10, 20, 30}, (int64_t[]){0, 1, 2, 3}, 4);
	struct bench_ksm_summary s;
	bench_ksm_summarize(r, &s);
	assert_true(s.seconds_to_95pct[BENCH_KSM_VMHOST] == 30);
	bench_ksm_result_free(r);
	c.repeat = 0;
	r = NULL;
	assert_int_equal(bench_ksm_result_new(&c, &r), -EINVAL);
	assert_null(r);
}

static void scenarios_plan_arrivals_and_departures(void **state)
{
	(void)state;
	struct bench_ksm_guest_plan plan[BENCH_KSM_MAX_GUESTS];
	struct bench_ksm_config c = {.guests = 4, .guest_bytes = 16 << 20, .duration_seconds = 120};
	for (int sc = 0; sc < BENCH_KSM_NSCENARIOS; sc++)
		assert_int_equal(bench_ksm_scenario_parse(bench_ksm_scenario_name((enum bench_ksm_scenario)sc)), sc);
	assert_int_equal(bench_ksm_scenario_parse("late "), -EINVAL);

	/* start: everyone up before the policy, nobody leaves; times count from 0. */
	assert_true(bench_ksm_plan(&c, plan) == 0);
	for (int i = 0; i < 4; i++)
		assert_true(plan[i].start == 0 && isinf(plan[i].stop));
	assert_int_equal(bench_ksm_plan_final_guests(&c), 4);

	/* late: one resident guest, three arriving at a third of the run. */
	c.scenario = BENCH_KSM_LATE;
	assert_true(bench_ksm_plan(&c, plan) == 40);
	assert_true(plan[0].start == 0 && plan[1].start == 40 && plan[3].start == 40 && isinf(plan[3].stop));
	assert_int_equal(bench_ksm_plan_final_guests(&c), 4);

	/* churn: one every 15 s, the first leaves at 60 s, which is when times start counting. */
	c.scenario = BENCH_KSM_CHURN;
	assert_true(bench_ksm_plan(&c, plan) == 60);
	assert_true(plan[0].start == 0 && plan[1].start == 15 && plan[3].start == 45);
	assert_true(plan[0].stop == 60 && isinf(plan[1].stop));
	assert_int_equal(bench_ksm_plan_final_guests(&c), 3);
	/* with two guests nobody leaves (one alone would merge nothing with anyone). */
	c.guests = 2;
	assert_true(bench_ksm_plan(&c, plan) == 30);
	assert_true(isinf(plan[0].stop));

	/* volatile: as start, most of the memory rewritten. */
	c.scenario = BENCH_KSM_VOLATILE;
	assert_true(bench_ksm_plan(&c, plan) == 0);
	struct workload_spec hot = bench_ksm_guest_spec(&c, 1);
	assert_true(hot.volatile_fraction == 0.6 && hot.shared_fraction == 0.2);
}

static void late_times_count_from_the_arrival(void **state)
{
	(void)state;
	struct bench_ksm_config c = {.scenario = BENCH_KSM_LATE, .guests = 4, .guest_bytes = 16 << 20,
				     .duration_seconds = 30, .steady_seconds = 5, .repeat = 1};
	c.policy_on[BENCH_KSM_DEFAULT] = c.policy_on[BENCH_KSM_VMHOST] = true;
	struct bench_ksm_result *r;
	assert_int_equal(bench_ksm_result_new(&c, &r), 0);
	assert_true(r->arrival == 10);
	const double t[] = {0, 5, 10, 15, 20, 25, 30};
	/* The resident's zero pages merged early (50) must not count: after 10 s, default gets to
	 * 100 at 15 s (5 s after the arrival, 2 s of ksmd CPU), vmhost at 25 s. */
	fill(&r->runs[0][BENCH_KSM_DEFAULT], t, (double[]){0, 50, 50, 100, 100, 100, 100},
	     (int64_t[]){0, 1000000000, 2000000000, 4000000000, 5000000000, 6000000000, 7000000000}, 7);
	fill(&r->runs[0][BENCH_KSM_VMHOST], t, (double[]){0, 50, 50, 50, 60, 97, 98},
	     (int64_t[]){0, 0, 0, 1000000000, 2000000000, 3000000000, 3000000000}, 7);
	for (int p = 0; p < BENCH_KSM_NPOLICIES; p++)
		bench_ksm_run_finish(&r->runs[0][p], c.steady_seconds);
	struct bench_ksm_summary s;
	bench_ksm_summarize(r, &s);
	assert_true(s.achievable_bytes == 100);
	assert_true(s.seconds_to_95pct[BENCH_KSM_DEFAULT] == 5);
	assert_true(s.ksmd_cpu_seconds_to_95pct[BENCH_KSM_DEFAULT] == 2);
	assert_true(s.seconds_to_95pct[BENCH_KSM_VMHOST] == 15);
	assert_true(s.ksmd_cpu_seconds_to_95pct[BENCH_KSM_VMHOST] == 3);
	assert_true(s.vmhost_time_ratio == 3);
	bench_ksm_result_free(r);

	/* A peak before the arrival is not achievable afterwards (churn: a guest left). */
	c.scenario = BENCH_KSM_CHURN;
	c.duration_seconds = 20;
	c.policy_on[BENCH_KSM_DEFAULT] = false;
	assert_int_equal(bench_ksm_result_new(&c, &r), 0);
	assert_true(r->arrival == 10);
	fill(&r->runs[0][BENCH_KSM_VMHOST], (double[]){0, 5, 10, 15, 20}, (double[]){0, 200, 80, 90, 100},
	     (int64_t[]){0, 0, 0, 0, 0}, 5);
	bench_ksm_summarize(r, &s);
	assert_true(s.achievable_bytes == 100);
	assert_true(s.seconds_to_95pct[BENCH_KSM_VMHOST] == 10);
	bench_ksm_result_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ksmtuned_stops_with_room),
		cmocka_unit_test(ksmtuned_boosts_decays_and_clamps),
		cmocka_unit_test(ksmtuned_sleep_and_threshold_follow_the_host),
		cmocka_unit_test(series_grows_and_frees),
		cmocka_unit_test(guest_spec_is_one_image),
		cmocka_unit_test(policies_by_name),
		cmocka_unit_test(saved_bytes_count_shared_and_zero_pages),
		cmocka_unit_test(steady_window_is_the_last_seconds),
		cmocka_unit_test(summary_medians_and_verdict),
		cmocka_unit_test(medians_over_repeats),
		cmocka_unit_test(scenarios_plan_arrivals_and_departures),
		cmocka_unit_test(late_times_count_from_the_arrival),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
