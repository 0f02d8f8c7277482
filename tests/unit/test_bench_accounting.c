/* bench accounting's model without KSM: the guests of each scenario, the calibrated method's cost
 * rule, the error in percent of RSS and its summary over guests, and the timed reads' medians on a
 * fixture tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "core/bench/bench_accounting.h"
#include "core/bench/workload.h"
#include "core/sample/sampler.h"
#include "testutil.h"

#define MIB ((uint64_t)1 << 20)
/* cmocka's assert_float_equal rounds to float: too coarse for microseconds. */
#define assert_near(a, b, eps) \
	do { \
		double a_ = (a), b_ = (b); \
		if (!(fabs(a_ - b_) <= (eps))) \
			fail_msg("%.17g is not %.17g", a_, b_); \
	} while (0)

static void symmetric_guests_are_one_image(void **state)
{
	(void)state;
	struct bench_accounting_config c = {.guests = 6, .repeat = 3, .guest_bytes = 256 * MIB};
	struct bench_accounting_scenario s;
	bench_accounting_scenario_init(&s, BENCH_ACCOUNTING_SYMMETRIC, &c);
	assert_string_equal(s.name, "symmetric");
	assert_int_equal(s.n, 6);
	for (size_t i = 0; i < s.n; i++) {
		const struct workload_spec *w = &s.g[i].spec;
		assert_string_equal(s.g[i].label, "one image");
		assert_int_equal(w->guest_bytes, 256 * MIB);
		assert_true(w->shared_fraction == 0.7 && w->zero_fraction == 0.1 && w->volatile_fraction == 0);
		assert_int_equal(w->image_seed, 1);
		assert_int_equal(w->guest_index, i);
		assert_true(w->thp && w->mergeable);
		assert_int_equal(s.g[i].pid, 0);
	}
}

static void asymmetric_guests_share_differently(void **state)
{
	(void)state;
	static const struct { const char *label; double shared, zero; bool thp; } want[] = {
		{"shares 80%", 0.8, 0.05, true},
		{"shares 50%", 0.5, 0.05, true},
		{"shares 20%", 0.2, 0.05, true},
		{"60% zero pages", 0.1, 0.6, false},
	};
	struct bench_accounting_config c = {.guests = 16, .repeat = 3, .guest_bytes = 2048 * MIB};
	struct bench_accounting_scenario s;
	bench_accounting_scenario_init(&s, BENCH_ACCOUNTING_ASYMMETRIC, &c);
	assert_string_equal(s.name, "asymmetric");
	assert_int_equal(s.n, 4); /* four at most, whatever --guests says */
	for (size_t i = 0; i < s.n; i++) {
		const struct workload_spec *w = &s.g[i].spec;
		assert_string_equal(s.g[i].label, want[i].label);
		assert_true(w->shared_fraction == want[i].shared && w->zero_fraction == want[i].zero);
		assert_int_equal(w->thp, want[i].thp);
		assert_true(w->mergeable);
		assert_int_equal(w->image_seed, 1);
		assert_int_equal(w->guest_index, 100 + i); /* unique content apart from the symmetric guests' */
		assert_int_equal(w->guest_bytes, 2048 * MIB);
	}
	/* Fewer guests asked for: the first of the mix. */
	c.guests = 2;
	bench_accounting_scenario_init(&s, BENCH_ACCOUNTING_ASYMMETRIC, &c);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.g[1].label, "shares 50%");
}

static void method_names(void **state)
{
	(void)state;
	assert_string_equal(bench_accounting_method_name(BENCH_ACCOUNTING_STATUS), "status-rss");
	assert_string_equal(bench_accounting_method_name(BENCH_ACCOUNTING_ESTIMATE), "vmhost-estimate");
	assert_string_equal(bench_accounting_method_name(BENCH_ACCOUNTING_CALIBRATED), "calibrated");
	assert_string_equal(bench_accounting_method_name(BENCH_ACCOUNTING_CGROUP), "cgroup");
	assert_string_equal(bench_accounting_method_name(BENCH_ACCOUNTING_SMAPS), "smaps_rollup");
	assert_string_equal(bench_accounting_method_name(BENCH_ACCOUNTING_NMETHODS), "?");
}

static struct bench_accounting_scenario *timed(size_t n, double weights, double smaps)
{
	struct bench_accounting_scenario *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->n = n;
	s->read_seconds[BENCH_ACCOUNTING_STATUS] = 2e-6;
	s->read_seconds[BENCH_ACCOUNTING_ESTIMATE] = 8e-6;
	s->read_seconds[BENCH_ACCOUNTING_CALIBRATED] = weights;
	s->read_seconds[BENCH_ACCOUNTING_SMAPS] = smaps;
	s->read_seconds[BENCH_ACCOUNTING_HOST_KSM] = 50e-6;
	return s;
}

/* weights + max(smaps, min(5 ms, n * smaps)) / n: the budget's share, and at least one exact read. */
static void calibrated_cost_pays_for_its_exact_reads(void **state)
{
	(void)state;
	assert_true(SAMPLER_CALIBRATION_BUDGET_SECONDS == 0.005);
	/* Cheap reads: every VM read once per sample within the budget, its own read each. */
	struct bench_accounting_scenario *s = timed(4, 10e-6, 0.5e-3);
	assert_near(bench_accounting_cost(s, BENCH_ACCOUNTING_CALIBRATED), 10e-6 + 0.5e-3, 1e-12);
	free(s);
	/* Many VMs: the 5 ms budget shared by all of them. */
	s = timed(16, 10e-6, 1e-3);
	assert_near(bench_accounting_cost(s, BENCH_ACCOUNTING_CALIBRATED), 10e-6 + 5e-3 / 16, 1e-12);
	free(s);
	/* One read costs more than the budget: still one per sample, shared by the VMs. */
	s = timed(4, 10e-6, 10e-3);
	assert_near(bench_accounting_cost(s, BENCH_ACCOUNTING_CALIBRATED), 10e-6 + 10e-3 / 4, 1e-12);
	/* The other methods cost what their reads do. */
	assert_near(bench_accounting_cost(s, BENCH_ACCOUNTING_STATUS), 2e-6, 0);
	assert_near(bench_accounting_cost(s, BENCH_ACCOUNTING_ESTIMATE), 8e-6, 0);
	assert_near(bench_accounting_cost(s, BENCH_ACCOUNTING_SMAPS), 10e-3, 0);
	free(s);
}

static void guest(struct bench_accounting_guest *g, int64_t rss, int64_t pss, int64_t estimate)
{
	memset(g, 0, sizeof(*g));
	g->mem.rss = MAYBE(rss);
	g->exact.pss = MAYBE(pss);
	g->estimate = MAYBE(estimate);
	g->calibrated = UNKNOWN;
}

static void error_in_percent_of_rss(void **state)
{
	(void)state;
	struct bench_accounting_guest g;
	guest(&g, 2000, 1000, 1100);
	assert_near(bench_accounting_error_pct(g.estimate, &g), 5.0, 1e-12);
	assert_near(bench_accounting_error_pct(MAYBE(900), &g), 5.0, 1e-12); /* under counts alike */
	assert_near(bench_accounting_error_pct(g.exact.pss, &g), 0.0, 0);
	assert_near(bench_accounting_error_pct(g.mem.rss, &g), 50.0, 1e-12);
	assert_true(isnan(bench_accounting_error_pct(UNKNOWN, &g)));
	g.exact.pss = UNKNOWN;
	assert_true(isnan(bench_accounting_error_pct(g.estimate, &g)));
	guest(&g, 0, 0, 0);
	assert_true(isnan(bench_accounting_error_pct(g.estimate, &g)));
	g.mem.rss = UNKNOWN;
	assert_true(isnan(bench_accounting_error_pct(g.estimate, &g)));
	/* The bound alike, in percent of RSS. */
	guest(&g, 4000, 1000, 1000);
	g.bound = MAYBE(100);
	assert_near(bench_accounting_bound_pct(&g), 2.5, 1e-12);
	g.bound = UNKNOWN;
	assert_true(isnan(bench_accounting_bound_pct(&g)));
	g.bound = MAYBE(100);
	g.mem.rss = MAYBE(0);
	assert_true(isnan(bench_accounting_bound_pct(&g)));
}

static void values_and_summary_over_guests(void **state)
{
	(void)state;
	struct bench_accounting_scenario *s = timed(3, 10e-6, 1e-3);
	guest(&s->g[0], 1000, 500, 510); /* estimate 1% off */
	guest(&s->g[1], 1000, 500, 530); /* 3% */
	guest(&s->g[2], 1000, 500, 0);
	s->g[2].estimate = UNKNOWN;      /* left out, not counted as 0 */
	s->g[0].calibrated = MAYBE(501);
	assert_int_equal(bench_accounting_value(&s->g[0], BENCH_ACCOUNTING_STATUS).v, 1000);
	assert_int_equal(bench_accounting_value(&s->g[0], BENCH_ACCOUNTING_ESTIMATE).v, 510);
	assert_int_equal(bench_accounting_value(&s->g[0], BENCH_ACCOUNTING_CALIBRATED).v, 501);
	assert_int_equal(bench_accounting_value(&s->g[0], BENCH_ACCOUNTING_SMAPS).v, 500);
	assert_false(bench_accounting_value(&s->g[0], BENCH_ACCOUNTING_NMETHODS).known);
	/* cgroup: the guest's charge, unknown without a cgroup (then no error, not 0%) */
	assert_false(bench_accounting_value(&s->g[0], BENCH_ACCOUNTING_CGROUP).known);
	s->g[0].cgroup_bytes = MAYBE(900);
	assert_int_equal(bench_accounting_value(&s->g[0], BENCH_ACCOUNTING_CGROUP).v, 900);
	assert_true(fabs(bench_accounting_error_pct(s->g[0].cgroup_bytes, &s->g[0]) - 40.0) < 1e-9);
	s->g[0].cgroup_bytes = UNKNOWN;

	struct bench_accounting_summary sum;
	bench_accounting_summarize(s, BENCH_ACCOUNTING_ESTIMATE, &sum);
	assert_near(sum.max_error_pct, 3.0, 1e-12);
	assert_near(sum.mean_error_pct, 2.0, 1e-12);
	assert_near(sum.cost_seconds, 8e-6, 0);
	assert_near(sum.vs_smaps, 1e-3 / 8e-6, 1e-9);
	bench_accounting_summarize(s, BENCH_ACCOUNTING_STATUS, &sum);
	assert_near(sum.max_error_pct, 50.0, 1e-12);
	assert_near(sum.mean_error_pct, 50.0, 1e-12);
	bench_accounting_summarize(s, BENCH_ACCOUNTING_CALIBRATED, &sum);
	assert_near(sum.max_error_pct, 0.1, 1e-12);
	assert_near(sum.cost_seconds, 10e-6 + 3e-3 / 3, 1e-12);
	bench_accounting_summarize(s, BENCH_ACCOUNTING_SMAPS, &sum);
	assert_near(sum.max_error_pct, 0, 0);
	assert_near(sum.vs_smaps, 1.0, 0);
	/* No guest with a known figure: no error, not 0%. */
	for (size_t i = 0; i < s->n; i++)
		s->g[i].calibrated = UNKNOWN;
	bench_accounting_summarize(s, BENCH_ACCOUNTING_CALIBRATED, &sum);
	assert_true(isnan(sum.max_error_pct) && isnan(sum.mean_error_pct));
	free(s);
}

/* Every read times something on the fixture tree (no KSM, no live process): a finite median. */
static void timed_reads_have_medians(void **state)
{
	(void)state;
	char proc[4096], sys[4096];
	struct io_root root = fixture_root("host-mixed", proc, sys, sizeof(proc));
	struct bench_accounting_config c = {.guests = 2, .repeat = 3, .guest_bytes = 16 * MIB};
	struct bench_accounting_scenario s;
	bench_accounting_scenario_init(&s, BENCH_ACCOUNTING_SYMMETRIC, &c);
	s.g[0].pid = 1005;
	s.g[1].pid = 1002;
	for (int m = 0; m < BENCH_ACCOUNTING_NREADS; m++) {
		double t = bench_accounting_time(&root, &s, m, c.repeat);
		assert_true(isfinite(t) && t >= 0 && t < 1);
	}
	/* No reads: no median. */
	assert_true(isnan(bench_accounting_time(&root, &s, BENCH_ACCOUNTING_STATUS, 0)));
}

/* A guest joins its cgroup under the sys root it was given (--sys-root), not under /sys: on a
 * fixture root, the child writes itself ("0") into that tree's cgroup.procs. */
static void workload_joins_cgroup_under_root(void **state)
{
	(void)state;
	char *dir = tmp_tree_new("wlroot"), path[PATH_MAX];
	mkdirf("%s/fs/cgroup", dir);
	snprintf(path, sizeof(path), "%s/fs/cgroup/cgroup.procs", dir);
	put(path, "");
	struct io_root root = {.proc = "/proc", .sys = dir};
	struct workload_spec spec = {.guest_bytes = 2 * MIB, .cgroup = "fs/cgroup", .root = &root};
	pid_t pid = 0;
	assert_int_equal(workload_spawn(&spec, &pid), 0);
	workload_stop(pid);
	char buf[8] = "";
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "0");
	tmp_tree_free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(workload_joins_cgroup_under_root),
		cmocka_unit_test(symmetric_guests_are_one_image),
		cmocka_unit_test(asymmetric_guests_share_differently),
		cmocka_unit_test(method_names),
		cmocka_unit_test(calibrated_cost_pays_for_its_exact_reads),
		cmocka_unit_test(error_in_percent_of_rss),
		cmocka_unit_test(values_and_summary_over_guests),
		cmocka_unit_test(timed_reads_have_medians),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
