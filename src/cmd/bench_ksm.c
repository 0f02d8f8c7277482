/* vmhost bench ksm: options, progress and the results of the KSM policy experiment
 * (core/bench/bench_ksm.c) as a table, CSV, JSON and an SVG of saved bytes over time. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/experiment.h"
#include "cmd/opts.h"
#include "core/bench/bench_ksm.h"
#include "core/base/stop.h"
#include "core/tune/ksm_guard.h"
#include "core/model/ksm.h"
#include "out/fmt.h"
#include "out/json.h"
#include "out/svg.h"
#include "out/table.h"

struct bench_opts {
	struct bench_ksm_config k;
	const char *svg;
	bool quick;
	bool delayacct; /* turn kernel.task_delayacct on for the run (the guard puts it back) */
	/* Read once --quick's defaults are in place, whatever the order on the command line. */
	const char *guests, *guest_size, *duration, *steady, *policies;
};

static void bench_ksm_help(void)
{
	printf("usage: vmhost bench ksm [--quick] [--scenario NAME] [--guests N] [--guest-size SIZE]\n"
	       "                        [--duration SEC] [--steady SEC] [--repeat N] [--policies LIST]\n"
	       "                        [--svg FILE] [--json]\n"
	       "\n"
	       "KSM policies compared on one identical, reproducible workload: N VM-like processes with\n"
	       "guest RAM on transparent huge pages, 50%% identical across guests (one image), 10%% zero,\n"
	       "10%% volatile (rewritten every 200 ms), the rest unique. Each policy starts from unmerged\n"
	       "state (fresh guests, run=2) and runs for --duration:\n"
	       "  kernel-default  100 pages / 20 ms\n"
	       "  conservative    100 pages / 120 ms\n"
	       "  ksmtuned        Debian's ksmtuned daemon itself with its defaults (package ksmtuned)\n"
	       "  ksmtuned-model  its algorithm and defaults, simulated at its 60 s cadence\n"
	       "  kernel-advisor  advisor_mode=scan-time (kernel defaults)\n"
	       "  vmhost          the 'vmhost ksm tune' control law with its defaults\n"
	       "The real ksmtuned counts only processes matching '^qemu-system.*-enable-kvm' as committed\n"
	       "memory and the model counts the guests' RSS; both stop KSM on a host whose committed memory\n"
	       "is under 80%% of MemTotal and free memory over 20%% of it.\n"
	       "\n"
	       "--scenario, when the guests come and go (marked in the SVG):\n"
	       "  start     every guest up before the policy starts (the default)\n"
	       "  late      one guest from the start; the others arrive at a third of --duration, once\n"
	       "            every policy has scanned the first (has it gone idle and missed them?)\n"
	       "  churn     one guest arrives every --duration / (2 x N); with 3 or more, the first leaves\n"
	       "            at half the duration\n"
	       "  volatile  as start, with 20%% identical and 60%% of each guest rewritten every 200 ms\n"
	       "\n"
	       "Achievable savings = the most any policy saved after the last guest arrived or left; a\n"
	       "policy's time to 95%% counts from that moment to its first sample at or above 95%% of it.\n"
	       "Steady ksmd CPU is measured over the last --steady seconds of each run.\n"
	       "\n"
	       "  --quick           4 x 128 MiB guests, 120 s per policy, 40 s steady window\n"
	       "  (default)         4 x 256 MiB guests, 600 s per policy, 120 s steady window\n"
	       "  --policies LIST   a subset, e.g. kernel-default,vmhost\n"
	       "  --repeat N        run every policy N times (interleaved); medians are reported\n"
	       "  --svg FILE        saved bytes over time, one line per policy\n"
	       "  --delayacct       turn the kernel's delay accounting on for the run (kernel.task_delayacct=1,\n"
	       "                    put back with the KSM settings), so that the guests' copy stalls are read\n"
	       "\n"
	       "COPY STALLS: the time the guests waited for copies of pages KSM merged that they wrote to,\n"
	       "summed over a run's guests (delay accounting: n/a while kernel.task_delayacct is 0).\n"
	       "\n"
	       "Takes the machine-wide KSM lock (waits) and restores every KSM setting at the end.\n");
}
enum { B_POLICY, B_T95, B_CPU95, B_STEADY, B_SAVED, B_NOTE, B_COPY, B_NCOLS };
static const struct col bench_cols[B_NCOLS] = {
	[B_POLICY] = {"name", "POLICY", COL_STR, COL_LEFT, 0},
	[B_T95] = {"seconds_to_95pct", "TO 95%", COL_FLOAT, 0, 1},
	[B_CPU95] = {"ksmd_cpu_seconds_to_95pct", "KSMD CPU-S TO 95%", COL_FLOAT, 0, 2},
	[B_STEADY] = {"steady_ksmd_cpu_percent", "STEADY KSMD CPU %", COL_FLOAT, 0, 2},
	[B_SAVED] = {"saved_bytes", "SAVED", COL_BYTES, 0, 0},
	[B_NOTE] = {"note", "NOTE", COL_STR, COL_LEFT, 0},
	[B_COPY] = {"guest_copy_stall_seconds", "COPY STALLS", COL_FLOAT, 0, 3}, /* appended: CSV keeps its columns */
};

static int opt_scenario(struct ctx *ctx, void *opts, const char *arg)
{
	int sc = bench_ksm_scenario_parse(arg);
	if (sc < 0)
		return usage_error(ctx, "unknown scenario '%s' (start, late, churn, volatile)", arg);
	((struct bench_opts *)opts)->k.scenario = (enum bench_ksm_scenario)sc;
	return EXIT_OK;
}

static const struct opt bench_opt_table[] = {
	{OPT("quick", 'q', OPT_FLAG), OPT_AT(struct bench_opts, quick)},
	{OPT("scenario", 'S', OPT_CALL), .call = opt_scenario},
	{OPT("guests", 'g', OPT_STRING), OPT_AT(struct bench_opts, guests)},
	{OPT("guest-size", 'm', OPT_STRING), OPT_AT(struct bench_opts, guest_size)},
	{OPT("duration", 'd', OPT_STRING), OPT_AT(struct bench_opts, duration)},
	{OPT("steady", 's', OPT_STRING), OPT_AT(struct bench_opts, steady)},
	{OPT("repeat", 'r', OPT_COUNT), OPT_AT(struct bench_opts, k.repeat), .lo = 1, .hi = BENCH_KSM_MAX_REPEAT,
	 .error = "--repeat takes 1 to " OPT_TEXT(BENCH_KSM_MAX_REPEAT) ", not '%s'"},
	{OPT("policies", 'p', OPT_STRING), OPT_AT(struct bench_opts, policies)},
	{OPT("svg", 'o', OPT_STRING), OPT_AT(struct bench_opts, svg)},
	{OPT("delayacct", 'D', OPT_FLAG), OPT_AT(struct bench_opts, delayacct)},
	{OPT("help", 'h', OPT_HELP)},
};

/* The workload's size and the run's times: --quick's or the default, then the options over them. */
static int read_workload(struct ctx *ctx, struct bench_opts *o)
{
	o->k.guests = 4;
	o->k.guest_bytes = (o->quick ? 128ull : 256ull) << 20;
	o->k.duration_seconds = o->quick ? 120 : 600;
	o->k.steady_seconds = o->quick ? 40 : 120;
	long guests;
	if (o->guests) {
		if (arg_count(o->guests, &guests) < 0 || guests < 2 || guests > BENCH_KSM_MAX_GUESTS)
			return usage_error(ctx, "--guests takes 2 to %d, not '%s'", BENCH_KSM_MAX_GUESTS, o->guests);
		o->k.guests = (unsigned)guests;
	}
	if (o->guest_size && (arg_size(o->guest_size, &o->k.guest_bytes) < 0 || o->k.guest_bytes < (4u << 20)))
		return usage_error(ctx, "--guest-size takes a size of at least 4M (e.g. 256M), not '%s'", o->guest_size);
	if (o->duration && arg_seconds(o->duration, &o->k.duration_seconds) < 0)
		return usage_error(ctx, "--duration takes seconds, not '%s'", o->duration);
	if (o->steady && arg_seconds(o->steady, &o->k.steady_seconds) < 0)
		return usage_error(ctx, "--steady takes seconds, not '%s'", o->steady);
	if (o->k.steady_seconds >= o->k.duration_seconds)
		return usage_error(ctx, "--steady (%.0f s) must be shorter than --duration (%.0f s)", o->k.steady_seconds,
				   o->k.duration_seconds);
	return EXIT_OK;
}

/* --policies, or every policy. */
static int read_policies(struct ctx *ctx, struct bench_opts *o)
{
	if (!o->policies) {
		for (int p = 0; p < BENCH_KSM_NPOLICIES; p++)
			o->k.policy_on[p] = true;
		return EXIT_OK;
	}
	char *items[BENCH_KSM_NPOLICIES * 2];
	int n = arg_list((char *)o->policies, items, BENCH_KSM_NPOLICIES * 2); /* argv's word, split in place */
	if (n < 0)
		return usage_error(ctx, "--policies takes a comma-separated list of policy names");
	for (int i = 0; i < n; i++) {
		int hit = bench_ksm_policy_parse(items[i]);
		if (hit < 0)
			return usage_error(ctx, "unknown policy '%s' (kernel-default, conservative, ksmtuned, ksmtuned-model, "
					   "kernel-advisor, vmhost)",
					   items[i]);
		o->k.policy_on[hit] = true;
	}
	return EXIT_OK;
}

/* OPTS_GO, or the exit code after the help or a usage error. */
static int parse_opts(struct ctx *ctx, int argc, char **argv, struct bench_opts *o)
{
	static const struct opts_spec spec = OPTS_SPEC(bench_opt_table, 0, bench_ksm_help);
	o->k.repeat = 1;
	int rc = opts_parse(ctx, &spec, argc, argv, o);
	if (rc != OPTS_GO)
		return rc;
	if ((rc = read_workload(ctx, o)) != EXIT_OK || (rc = read_policies(ctx, o)) != EXIT_OK)
		return rc;
	return OPTS_GO;
}

/* Saved bytes over time, one line per policy, from the first run. */
static int write_svg(const char *path, const struct bench_ksm_result *res)
{
	double tmax = 0, ymax = 0;
	for (int p = 0; p < BENCH_KSM_NPOLICIES; p++) {
		const struct bench_ksm_run *run = &res->runs[0][p];
		for (size_t i = 0; res->cfg.policy_on[p] && run->available && i < run->s.n; i++) {
			tmax = fmax(tmax, run->s.t[i]);
			ymax = fmax(ymax, run->s.saved[i]);
		}
	}
	struct svg_file file;
	int r = svg_file_open(path, 900, 480, &file);
	if (r < 0)
		return r;
	struct svg_plot plot;
	svg_plot_begin(file.svg, &plot, &(struct svg_plot_spec){
		.x = {.min = 0, .max = tmax > 0 ? tmax : 1, .label = "seconds since start"},
		.y = {.min = 0, .max = ymax > 0 ? ymax * 1.05 : 1, .unit = SVG_BYTES, .label = "saved"},
		.title = "KSM savings over time per policy (first run)",
		.legend = SVG_LEGEND_RIGHT,
	});
	for (unsigned i = 0; i < res->cfg.guests; i++) {
		char label[32];
		const struct bench_ksm_guest_plan *g = &res->plan[i];
		if (g->start > 0) {
			snprintf(label, sizeof(label), "guest %u starts", i + 1);
			svg_plot_mark(&plot, g->start, label);
		}
		if (isfinite(g->stop)) {
			snprintf(label, sizeof(label), "guest %u stops", i + 1);
			svg_plot_mark(&plot, g->stop, label);
		}
	}
	for (int p = 0; p < BENCH_KSM_NPOLICIES; p++) {
		const struct bench_ksm_run *run = &res->runs[0][p];
		if (res->cfg.policy_on[p] && run->available && run->s.n)
			svg_plot_series(&plot, bench_ksm_policy_name((enum bench_ksm_policy)p), run->s.t, run->s.saved,
					run->s.n, SVG_LINES);
	}
	svg_plot_end(&plot);
	return svg_file_close(&file);
}

struct progress {
	const struct ctx *ctx;
	const struct bench_ksm_config *k;
	bool verbose; /* VMHOST_BENCH_VERBOSE: every change vmhost's law makes */
};

static void on_event(const struct bench_ksm_event *e, void *arg)
{
	const struct progress *pg = arg;
	if (e->kind == BENCH_KSM_READY && pg->ctx->format == OUT_HUMAN)
		fprintf(stderr, "vmhost: bench ksm: %s: %u guests ready, unmerged, running %.0f s\n",
			bench_ksm_policy_name(e->policy), pg->k->guests, pg->k->duration_seconds);
	else if (e->kind == BENCH_KSM_TUNED && pg->verbose)
		fprintf(stderr, "  t=%.0fs vmhost %s %lld/%lld: %s\n", e->t, tuner_mode_name(e->decision->mode),
			(long long)e->decision->pages_to_scan, (long long)e->decision->sleep_millisecs, e->decision->reason);
}

/* One row per policy asked for; NULL when out of memory. */
static struct table *policy_table(const struct bench_ksm_result *res, const struct bench_ksm_summary *sum)
{
	struct table *t = table_new(bench_cols, B_NCOLS);
	if (!t)
		return NULL;
	for (int p = 0; p < BENCH_KSM_NPOLICIES; p++) {
		if (!res->cfg.policy_on[p])
			continue;
		table_add_row(t);
		table_set_str(t, B_POLICY, bench_ksm_policy_name((enum bench_ksm_policy)p));
		if (!res->runs[0][p].available) {
			table_set_str(t, B_NOTE, res->runs[0][p].note ? res->runs[0][p].note : "not run");
			continue;
		}
		table_set_float(t, B_T95, sum->seconds_to_95pct[p]);
		table_set_float(t, B_CPU95, sum->ksmd_cpu_seconds_to_95pct[p]);
		table_set_float(t, B_STEADY, sum->steady_cpu_percent[p]);
		table_set_float(t, B_COPY, sum->copy_stall_seconds[p]);
		if (isfinite(sum->saved_bytes[p]))
			table_set_maybe(t, B_SAVED, MAYBE((int64_t)sum->saved_bytes[p]));
		table_set_str(t, B_NOTE, isnan(sum->seconds_to_95pct[p]) ? "did not reach 95% within the run" : "");
	}
	return t;
}

static void print_json(const struct bench_ksm_result *res, const struct bench_ksm_summary *sum, const struct table *t)
{
	const struct bench_ksm_config *k = &res->cfg;
	struct workload_spec spec = bench_ksm_guest_spec(k, 0);
	struct json j;
	bench_json_begin(&j, k->guests, k->guest_bytes);
	json_int(&j, "mergeable_bytes", sum->mergeable_bytes);
	json_int(&j, "zero_bytes", sum->zero_bytes);
	json_double(&j, "shared_fraction", spec.shared_fraction);
	json_double(&j, "zero_fraction", spec.zero_fraction);
	json_double(&j, "volatile_fraction", spec.volatile_fraction);
	json_object_end(&j);
	json_string(&j, "scenario", bench_ksm_scenario_name(k->scenario));
	json_double(&j, "arrival_seconds", res->arrival);
	json_object_begin(&j, "guest_plan");
	json_array_begin(&j, "start_seconds");
	for (unsigned i = 0; i < k->guests; i++)
		json_double(&j, NULL, res->plan[i].start);
	json_array_end(&j);
	json_array_begin(&j, "stop_seconds");
	for (unsigned i = 0; i < k->guests; i++)
		json_double(&j, NULL, res->plan[i].stop); /* null: runs to the end */
	json_array_end(&j);
	json_object_end(&j);
	json_int(&j, "achievable_bytes", (int64_t)sum->achievable_bytes);
	json_double(&j, "duration_seconds", k->duration_seconds);
	json_double(&j, "steady_seconds", k->steady_seconds);
	json_int(&j, "repeat", k->repeat);
	json_string(&j, "copy_stalls_why", res->copy_stall_why[0] ? res->copy_stall_why : NULL);
	table_print_json(t, &j, "policies");
	json_object_begin(&j, "verdict");
	json_string(&j, "fastest_static_policy",
		    sum->fastest_static >= 0 ? bench_ksm_policy_name((enum bench_ksm_policy)sum->fastest_static) : NULL);
	json_double(&j, "vmhost_time_ratio_to_fastest_static", sum->vmhost_time_ratio);
	json_bool(&j, "vmhost_within_1_2x_of_fastest_static", sum->vmhost_time_ratio <= 1.2);
	json_bool(&j, "vmhost_steady_cpu_at_most_conservative", sum->vmhost_cpu_ok);
	json_double(&j, "vmhost_time_ratio_to_kernel_advisor", sum->vmhost_time_ratio_advisor);
	json_double(&j, "vmhost_steady_cpu_ratio_to_kernel_advisor", sum->vmhost_cpu_ratio_advisor);
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void print_human(const struct ctx *ctx, const struct bench_ksm_result *res, const struct bench_ksm_summary *sum,
			const struct table *t)
{
	const struct bench_ksm_config *k = &res->cfg;
	const double *t95 = sum->seconds_to_95pct, *steady = sum->steady_cpu_percent;
	enum { V = BENCH_KSM_VMHOST, C = BENCH_KSM_CONSERVATIVE, A = BENCH_KSM_ADVISOR };
	char a[32], b[32];
	fmt_bytes(a, sizeof(a), (int64_t)sum->achievable_bytes);
	fmt_bytes(b, sizeof(b), sum->mergeable_bytes);
	struct workload_spec spec = bench_ksm_guest_spec(k, 0);
	printf("scenario %s: %u guests x %llu MiB (%.0f%% shared, %.0f%% zero, %.0f%% volatile); achievable %s "
	       "(identical content alone: %s); %.0f s per policy, steady = last %.0f s%s\n",
	       bench_ksm_scenario_name(k->scenario), k->guests, (unsigned long long)(k->guest_bytes >> 20),
	       spec.shared_fraction * 100, spec.zero_fraction * 100, spec.volatile_fraction * 100, a, b,
	       k->duration_seconds, k->steady_seconds, k->repeat > 1 ? ", medians of the runs" : "");
	if (res->arrival > 0)
		printf("times to 95%% count from %.0f s, when the last guest %s\n", res->arrival,
		       k->scenario == BENCH_KSM_CHURN && isfinite(res->plan[0].stop) ? "left" : "arrived");
	printf("\n");
	table_print_human(t, stdout, ctx->raw_bytes);
	if (res->copy_stall_why[0])
		printf("\ncopy stalls n/a: %s (bench ksm --delayacct turns it on for the run)\n", res->copy_stall_why);
	if (!k->policy_on[V])
		return;
	if (isfinite(sum->vmhost_time_ratio))
		printf("\nvmhost: to 95%% in %.2fx the time of %s (goal <= 1.2x: %s)", sum->vmhost_time_ratio,
		       bench_ksm_policy_name((enum bench_ksm_policy)sum->fastest_static),
		       sum->vmhost_time_ratio <= 1.2 ? "met" : "missed");
	else
		printf("\nvmhost: time to 95%% against the static policies n/a");
	if (k->policy_on[C])
		printf("; steady ksmd CPU %.2f%% vs conservative %.2f%% (%s)", steady[V], steady[C],
		       sum->vmhost_cpu_ok ? "met" : "missed");
	printf("\n");
	if (k->policy_on[A] && res->runs[0][A].available)
		printf("vs kernel-advisor: time to 95%%: %s; steady ksmd CPU %.2f%% vs %.2f%%\n",
		       isfinite(t95[A]) && isfinite(t95[V])
			       ? (snprintf(a, sizeof(a), "%.2fx", t95[V] / t95[A]), a)
			       : (isfinite(t95[V]) ? "the advisor did not reach 95% within the run" : "n/a"),
		       steady[V], steady[A]);
}

/* The results in the form asked for, then the SVG. An exit code. */
static int print_results(struct ctx *ctx, const struct bench_opts *o, const struct bench_ksm_result *res)
{
	struct bench_ksm_summary sum;
	bench_ksm_summarize(res, &sum);
	struct table *t = policy_table(res, &sum);
	if (!t)
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	if (ctx->format == OUT_JSON)
		print_json(res, &sum, t);
	else if (ctx->format == OUT_CSV)
		table_print_csv(t, stdout);
	else
		print_human(ctx, res, &sum, t);
	table_free(t);
	int r;
	if (o->svg && (r = write_svg(o->svg, res)) < 0)
		return fail(ctx, EXIT_FAIL, "writing SVG", "%s: %s", o->svg, strerror(-r));
	return EXIT_OK;
}

int cmd_bench_ksm(struct ctx *ctx, int argc, char **argv)
{
	struct bench_opts o = {0};
	int rc = parse_opts(ctx, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	struct ksm_sampler sm;
	struct ksm_sample s0;
	if ((rc = ksm_experiment_ready(ctx, &sm, &s0)) != EXIT_OK)
		return rc;
	if (!sm.ksmd_pid)
		warn(ctx, "ksmd not found: CPU figures will be n/a");
	int r = ksm_take_control(ctx, stop_handler);
	if (r != EXIT_OK)
		return r;
	/* Before the guests start: the kernel counts a thread only if it starts with accounting on. */
	if (o.delayacct && (r = ksm_guard_set_sysctl("kernel.task_delayacct", "1")) < 0) {
		ksm_guard_end();
		ksm_unlock();
		return fail(ctx, EXIT_FAIL, "--delayacct", "turning kernel.task_delayacct on: %s", strerror(-r));
	}
	struct progress pg = {.ctx = ctx, .k = &o.k, .verbose = getenv("VMHOST_BENCH_VERBOSE") != NULL};
	struct bench_ksm_result *res = NULL;
	r = bench_ksm_run(&ctx->root, &o.k, on_event, &pg, &res);
	int rr = ksm_guard_end();
	ksm_unlock();
	if (stop_requested() || r < 0 || rr < 0) {
		bench_ksm_result_free(res);
		if (stop_requested())
			return fail(ctx, 128 + stop_requested(), "interrupted", "%s; every KSM setting restored",
				    strsignal(stop_requested()));
		return fail(ctx, exit_code_for(r), "bench",
			    "%s (KSM settings restored)", strerror(-(r < 0 ? r : rr)));
	}
	rc = print_results(ctx, &o, res);
	bench_ksm_result_free(res);
	return rc;
}
