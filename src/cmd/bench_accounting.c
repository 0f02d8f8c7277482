/* vmhost bench accounting: what each way of getting a VM's memory costs, and how far it is from
 * the exact PSS, on VM-like processes merged by real KSM. The experiment is core/bench/bench_accounting.c;
 * this file parses the options and prints its scenarios. */
#include <errno.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/experiment.h"
#include "cmd/opts.h"
#include "core/bench/bench_accounting.h"
#include "core/model/host.h"
#include "core/tune/ksm_guard.h"
#include "out/fmt.h"
#include "out/json.h"
#include "out/table.h"

enum { A_SCEN, A_METHOD, A_COST, A_RATIO, A_MAXERR, A_MEANERR, A_NCOLS };
static const struct col summary_cols[A_NCOLS] = {
	[A_SCEN] = {"scenario", "SCENARIO", COL_STR, 0, 0},
	[A_METHOD] = {"method", "METHOD", COL_STR, 0, 0},
	[A_COST] = {"cost_seconds_per_vm", "COST/VM", COL_SECONDS, 0, 0},
	[A_RATIO] = {"cost_vs_smaps_rollup", "x CHEAPER", COL_FLOAT, 0, 0},
	[A_MAXERR] = {"max_error_pct_of_rss", "MAX ERR %RSS", COL_FLOAT, 0, 3},
	[A_MEANERR] = {"mean_error_pct_of_rss", "MEAN ERR %RSS", COL_FLOAT, 0, 3},
};

enum { G_SCEN, G_GUEST, G_RSS, G_EXACT, G_EST, G_ERR, G_BOUND, G_BOUNDPCT, G_CAL, G_CALERR, G_CG, G_CGERR, G_NCOLS };
static const struct col guest_cols[G_NCOLS] = {
	[G_SCEN] = {"scenario", "SCENARIO", COL_STR, 0, 0},
	[G_GUEST] = {"guest", "GUEST", COL_STR, 0, 0},
	[G_RSS] = {"rss_bytes", "RSS", COL_BYTES, 0, 0},
	[G_EXACT] = {"pss_exact_bytes", "PSS EXACT", COL_BYTES, 0, 0},
	[G_EST] = {"pss_estimate_bytes", "ESTIMATE", COL_BYTES, 0, 0},
	[G_ERR] = {"estimate_error_pct_of_rss", "ERR %RSS", COL_FLOAT, 0, 3},
	[G_BOUND] = {"estimate_bound_bytes", "BOUND", COL_BYTES, 0, 0},
	[G_BOUNDPCT] = {"estimate_bound_pct_of_rss", "BOUND %RSS", COL_FLOAT, 0, 1},
	[G_CAL] = {"pss_calibrated_bytes", "CALIBRATED", COL_BYTES, 0, 0},
	[G_CALERR] = {"calibrated_error_pct_of_rss", "CAL ERR %RSS", COL_FLOAT, 0, 3},
	[G_CG] = {"cgroup_bytes", "CGROUP", COL_BYTES, 0, 0},
	[G_CGERR] = {"cgroup_error_pct_of_rss", "CG ERR %RSS", COL_FLOAT, 0, 3},
};

static void help(void)
{
	printf("usage: vmhost bench accounting [--guests N] [--guest-size SIZE] [--repeat N] [--quick] [--json]\n"
	       "\n"
	       "Starts VM-like processes (guest RAM on transparent huge pages; pages identical across\n"
	       "guests as after booting one image, some zero, some unique), lets KSM merge them, and\n"
	       "for each way of getting a VM's memory reports the median cost per VM and the error\n"
	       "against the exact PSS (smaps_rollup) in percent of RSS:\n"
	       "  status-rss       /proc/PID/status VmRSS (ignores sharing)\n"
	       "  vmhost-estimate  vmhost's default: status + ksm_stat + the host's KSM counters\n"
	       "  calibrated       the estimate with per-VM weights from earlier exact reads, made one\n"
	       "                   VM per full scan (as record and serve refresh them, a few at a time);\n"
	       "                   its cost includes each VM's share of record's 5 ms of exact reads\n"
	       "                   per sample\n"
	       "  cgroup           Proxmox VE 9's: the VM's memory cgroup charge without page cache\n"
	       "                   (each guest in a cgroup of its own; KSM-blind)\n"
	       "  smaps_rollup     the exact PSS (walks every page-table entry)\n"
	       "Two scenarios: 'symmetric' (every guest the same mix) and 'asymmetric' (guests sharing\n"
	       "80/50/20%%, and one with 60%% zero pages on 4 KiB pages), with each guest's stated bound.\n"
	       "\n"
	       "  --guests N        guests per scenario (default 4; asymmetric uses 4 at most)\n"
	       "  --guest-size SIZE guest RAM each (default 2G; memory never touched before is slow\n"
	       "                    to fault in on a virtual host, so a first run takes longer)\n"
	       "  --repeat N        reads per method and guest (default 20)\n"
	       "  --quick           4 guests of 256 MiB, 10 repeats\n"
	       "Needs root (it drives KSM, restoring every setting when it ends or is interrupted).\n");
}

static int opt_quick(struct ctx *ctx, void *opts, const char *arg)
{
	(void)ctx, (void)arg;
	*(struct bench_accounting_config *)opts =
		(struct bench_accounting_config){.guests = 4, .repeat = 10, .guest_bytes = 256u << 20};
	return EXIT_OK;
}

static const struct opt accounting_opt_table[] = {
	{OPT("guests", 0, OPT_COUNT), OPT_AT(struct bench_accounting_config, guests), .lo = 2,
	 .hi = BENCH_ACCOUNTING_MAX_GUESTS, .error = "--guests takes 2 to " OPT_TEXT(BENCH_ACCOUNTING_MAX_GUESTS)},
	{OPT("guest-size", 0, OPT_SIZE), OPT_AT(struct bench_accounting_config, guest_bytes), .lo = 16u << 20,
	 .error = "--guest-size takes a size of at least 16M, not '%s'"},
	{OPT("repeat", 0, OPT_COUNT), OPT_AT(struct bench_accounting_config, repeat), .lo = 1, .hi = 10000,
	 .error = "--repeat takes 1 to 10000"},
	{OPT("quick", 0, OPT_FLAG), .call = opt_quick},
	{OPT("help", 'h', OPT_HELP)},
};

static void add_summary(struct table *t, const struct bench_accounting_scenario *s, enum bench_accounting_method m)
{
	struct bench_accounting_summary sum;
	bench_accounting_summarize(s, m, &sum);
	table_add_row(t);
	table_set_str(t, A_SCEN, s->name);
	table_set_str(t, A_METHOD, bench_accounting_method_name(m));
	table_set_float(t, A_COST, sum.cost_seconds);
	table_set_float(t, A_RATIO, sum.vs_smaps);
	table_set_float(t, A_MAXERR, sum.max_error_pct);
	table_set_float(t, A_MEANERR, sum.mean_error_pct);
}

static void add_guests(struct table *t, const struct bench_accounting_scenario *s)
{
	for (size_t k = 0; k < s->n; k++) {
		const struct bench_accounting_guest *g = &s->g[k];
		table_add_row(t);
		table_set_str(t, G_SCEN, s->name);
		table_set_str(t, G_GUEST, g->label);
		table_set_maybe(t, G_RSS, g->mem.rss);
		table_set_maybe(t, G_EXACT, g->exact.pss);
		table_set_maybe(t, G_EST, g->estimate);
		table_set_float(t, G_ERR, bench_accounting_error_pct(g->estimate, g));
		table_set_maybe(t, G_BOUND, g->bound);
		table_set_float(t, G_BOUNDPCT, bench_accounting_bound_pct(g));
		table_set_maybe(t, G_CAL, g->calibrated);
		table_set_float(t, G_CALERR, bench_accounting_error_pct(g->calibrated, g));
		table_set_maybe(t, G_CG, g->cgroup_bytes);
		table_set_float(t, G_CGERR, bench_accounting_error_pct(g->cgroup_bytes, g));
	}
}

static void print_json(const struct bench_accounting_result *res, const struct table *sum, const struct table *per)
{
	const struct bench_accounting_config *o = &res->cfg;
	struct json j;
	bench_json_begin(&j, o->guests, o->guest_bytes);
	json_int(&j, "repeat", o->repeat);
	json_object_end(&j);
	json_array_begin(&j, "scenarios");
	for (int i = 0; i < BENCH_ACCOUNTING_NSCENARIOS; i++) {
		const struct bench_accounting_scenario *s = &res->scenarios[i];
		json_object_begin(&j, NULL);
		json_string(&j, "name", s->name);
		json_double(&j, "merge_seconds", s->merge_seconds);
		json_int(&j, "pages_shared", s->pages_shared);
		json_int(&j, "pages_sharing", s->pages_sharing);
		json_double(&j, "smaps_rollup_unmerged_seconds_per_vm", s->smaps_unmerged_seconds);
		json_double(&j, "smaps_rollup_merged_seconds_per_vm", s->read_seconds[BENCH_ACCOUNTING_SMAPS]);
		json_double(&j, "host_ksm_counters_seconds_per_sample", s->read_seconds[BENCH_ACCOUNTING_HOST_KSM]);
		if (s->cgroup_version)
			json_int(&j, "cgroup_version", s->cgroup_version);
		else
			json_null(&j, "cgroup_version");
		json_string(&j, "cgroup_unavailable", s->cgroup_why[0] ? s->cgroup_why : NULL);
		json_object_end(&j);
	}
	json_array_end(&j);
	table_print_json(sum, &j, "methods");
	table_print_json(per, &j, "guests");
	json_object_end(&j);
	json_finish(&j);
}

static void print_human(const struct ctx *ctx, const struct bench_accounting_result *res, const struct table *sum,
			const struct table *per)
{
	const struct bench_accounting_config *o = &res->cfg;
	printf("%u guests of %llu MiB per scenario; cost = median per VM over %u reads\n\n", o->guests,
	       (unsigned long long)(o->guest_bytes >> 20), o->repeat);
	table_print_human(sum, stdout, ctx->raw_bytes);
	printf("\n");
	table_print_human(per, stdout, ctx->raw_bytes);
	for (int i = 0; i < BENCH_ACCOUNTING_NSCENARIOS; i++) {
		const struct bench_accounting_scenario *s = &res->scenarios[i];
		double merged = s->read_seconds[BENCH_ACCOUNTING_SMAPS];
		char a[32], b[32];
		fmt_seconds(a, sizeof(a), s->smaps_unmerged_seconds);
		fmt_seconds(b, sizeof(b), merged);
		printf("\n%s: KSM settled in %.0f s (pages_shared %lld, pages_sharing %lld); smaps_rollup per VM "
		       "%s on huge pages before merging, %s after (%.0fx slower)",
		       s->name, s->merge_seconds, (long long)s->pages_shared, (long long)s->pages_sharing, a, b,
		       merged / s->smaps_unmerged_seconds);
		if (!s->cgroup_version)
			printf("\n%s: cgroup not measured: %s", s->name, s->cgroup_why);
	}
	char hk[32];
	fmt_seconds(hk, sizeof(hk), res->scenarios[0].read_seconds[BENCH_ACCOUNTING_HOST_KSM]);
	printf("\n\nThe estimate also reads the host's KSM counters once per sample for all VMs: %s.", hk);
	printf("\nBOUND: the estimate's worst case (docs/accounting.md). CALIBRATED: per-VM weights from\n"
	       "exact reads made one VM per full scan while KSM was merging, applied to later counters.\n");
}

/* The results in the form asked for. An exit code. */
static int print_results(struct ctx *ctx, const struct bench_accounting_result *res)
{
	struct table *sum = table_new(summary_cols, A_NCOLS), *per = table_new(guest_cols, G_NCOLS);
	for (int i = 0; i < BENCH_ACCOUNTING_NSCENARIOS && sum && per; i++) {
		for (int m = 0; m < BENCH_ACCOUNTING_NMETHODS; m++)
			add_summary(sum, &res->scenarios[i], (enum bench_accounting_method)m);
		add_guests(per, &res->scenarios[i]);
	}
	int rc = EXIT_OK;
	if (!sum || !per)
		rc = fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	else if (ctx->format == OUT_JSON)
		print_json(res, sum, per);
	else if (ctx->format == OUT_CSV)
		table_print_csv(sum, stdout);
	else
		print_human(ctx, res, sum, per);
	table_free(sum);
	table_free(per);
	return rc;
}

static void on_step(void *arg, enum bench_accounting_step step, const struct bench_accounting_scenario *s)
{
	const struct bench_accounting_config *o = arg;
	if (step == BENCH_ACCOUNTING_STARTING)
		fprintf(stderr, "bench accounting: %s: starting %zu guests of %llu MiB...\n", s->name, s->n,
			(unsigned long long)(o->guest_bytes >> 20));
	else
		fprintf(stderr, "bench accounting: %s: KSM merging...\n", s->name);
}

int cmd_bench_accounting(struct ctx *ctx, int argc, char **argv)
{
	struct bench_accounting_config o = {.guests = 4, .repeat = 20, .guest_bytes = 2ull << 30};
	static const struct opts_spec spec = OPTS_SPEC(accounting_opt_table, 0, help);
	int rc = opts_parse(ctx, &spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	struct host host;
	if (host_read(&ctx->root, &host) < 0 || !host.ksm.present)
		return fail(ctx, EXIT_FAIL, "KSM", "this kernel has no KSM (%s/kernel/mm/ksm)", ctx->root.sys);
	uint64_t need = (uint64_t)o.guests * o.guest_bytes; /* one scenario at a time */
	if (host.mem.mem_available.known && (double)need > 0.8 * (double)host.mem.mem_available.v)
		return fail(ctx, EXIT_FAIL, "memory", "%u guests of %llu MiB need more than 80%% of MemAvailable",
			    o.guests, (unsigned long long)(o.guest_bytes >> 20));
	if ((rc = ksm_need_root(ctx)) != EXIT_OK) /* before the guard, which would "restore" unchanged settings */
		return rc;
	if ((rc = ksm_take_control(ctx, bench_accounting_on_signal)) != EXIT_OK)
		return rc;
	struct bench_accounting_result *res = NULL;
	struct bench_accounting_error err;
	int r = bench_accounting_run(&ctx->root, &o, on_step, &o, &res, &err);
	if (r < 0)
		rc = fail(ctx, err.need_root ? EXIT_NOPERM : EXIT_FAIL, err.what, "%s", err.why);
	int restored = ksm_guard_end();
	ksm_unlock();
	if (restored < 0)
		warn(ctx, "could not restore every KSM setting: %s", strerror(-restored));
	if (r < 0)
		return rc;
	rc = print_results(ctx, res);
	bench_accounting_result_free(res);
	return rc;
}
