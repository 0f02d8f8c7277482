/* vmhost ksm sweep: options, the KSM lock around the experiment (core/bench/ksm_sweep.h: per
 * pages_to_scan/sleep_millisecs setting, unmerge, start, time full scans, ksmd CPU and savings),
 * and its table and chart; every setting is restored at the end or on a signal. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/experiment.h"
#include "cmd/opts.h"
#include "core/base/stop.h"
#include "core/bench/ksm_sweep.h"
#include "core/tune/ksm_guard.h"
#include "core/model/ksm.h"
#include "out/fmt.h"
#include "out/json.h"
#include "out/svg.h"
#include "out/table.h"

static void ksm_sweep_help(void)
{
	printf("usage: vmhost ksm sweep --settings P/S[,P/S...] [--scans N] [--svg FILE]\n"
	       "                        [--timeout SEC] [--json|--csv] [--bytes]\n"
	       "\n"
	       "The pages_to_scan / sleep_millisecs experiment on this host's mergeable memory. For each\n"
	       "setting P/S (pages_to_scan P, sleep_millisecs S): unmerge everything (run=2), start\n"
	       "(run=1) and time N full scans (the first scan after an unmerge starts from the beginning,\n"
	       "so it counts), with ksmd's CPU over those scans and the bytes saved after them, and what\n"
	       "the guests (every VM found) paid meanwhile: COPY STALLS, the time they waited for copies of\n"
	       "pages KSM merged that they wrote to (delay accounting: n/a while kernel.task_delayacct is 0,\n"
	       "and it counts only guests started after it was turned on).\n"
	       "\n"
	       "  --settings LIST  e.g. 100/20,60/40,100/50,60/60,100/120\n"
	       "  --scans N        full scans per setting (default 2)\n"
	       "  --svg FILE       scan time against ksmd CPU, one labelled point per setting\n"
	       "  --timeout SEC    give up on a setting after this long (default 1800)\n"
	       "\n"
	       "Takes the machine-wide KSM lock (waits for it) and restores every setting it changed\n"
	       "when it ends, fails or is interrupted. Needs root (exit 77 without).\n");
}

enum { S_SETTING, S_PAGES, S_SLEEP, S_SCANS, S_SCAN, S_SCAN_MIN, S_SCAN_MAX, S_CPU, S_RATE, S_SAVED, S_PROFIT,
       S_TIMEOUT, S_COPY, S_COPY_PCT, S_NCOLS };
static const struct col sweep_cols[S_NCOLS] = {
	[S_SETTING] = {"setting", "SETTING", COL_STR, 0, 0},
	[S_PAGES] = {"pages_to_scan", "PAGES", COL_INT, COL_JSON_ONLY, 0},
	[S_SLEEP] = {"sleep_millisecs", "SLEEP MS", COL_INT, COL_JSON_ONLY, 0},
	[S_SCANS] = {"full_scans", "SCANS", COL_INT, 0, 0},
	[S_SCAN] = {"full_scan_seconds", "FULL SCAN", COL_SECONDS, 0, 0},
	[S_SCAN_MIN] = {"full_scan_seconds_min", "MIN", COL_SECONDS, COL_JSON_ONLY, 0},
	[S_SCAN_MAX] = {"full_scan_seconds_max", "MAX", COL_SECONDS, COL_JSON_ONLY, 0},
	[S_CPU] = {"ksmd_cpu_percent", "KSMD CPU %", COL_FLOAT, 0, 2},
	[S_RATE] = {"pages_scanned_per_second", "PAGES/S", COL_FLOAT, 0, 0},
	[S_SAVED] = {"saved_bytes", "SAVED", COL_BYTES, 0, 0},
	[S_PROFIT] = {"general_profit_bytes", "PROFIT", COL_BYTES, 0, 0},
	[S_TIMEOUT] = {"timed_out", "TIMED OUT", COL_STR, COL_JSON_ONLY, 0},
	/* appended: CSV readers keep their column numbers */
	[S_COPY] = {"guest_copy_stall_seconds", "COPY STALLS", COL_FLOAT, 0, 3},
	[S_COPY_PCT] = {"guest_copy_stall_percent", "COPY STALL %", COL_FLOAT, COL_JSON_ONLY, 3},
};

/* Scan time against ksmd CPU: one point per setting, labelled with the setting and its savings. */
static int write_svg(const struct ksm_sweep_result *res, int n, const char *path)
{
	double cpu[KSM_SWEEP_MAX_SETTINGS], scan[KSM_SWEEP_MAX_SETTINGS], xmax = 0, ymax = 0;
	char labels[KSM_SWEEP_MAX_SETTINGS][64];
	const char *label_of[KSM_SWEEP_MAX_SETTINGS];
	for (int i = 0; i < n; i++) {
		char saved[32] = "n/a";
		if (res[i].saved_bytes.known)
			fmt_bytes(saved, sizeof(saved), res[i].saved_bytes.v);
		snprintf(labels[i], sizeof(labels[i]), "%lld/%lld saves %s", (long long)res[i].pages_to_scan,
			 (long long)res[i].sleep_millisecs, saved);
		label_of[i] = labels[i];
		cpu[i] = res[i].ksmd_cpu_percent;
		scan[i] = res[i].scan_seconds;
		if (isfinite(cpu[i]) && isfinite(scan[i])) {
			xmax = fmax(xmax, cpu[i]);
			ymax = fmax(ymax, scan[i]);
		}
	}
	struct svg_file file;
	int r = svg_file_open(path, 760, 480, &file);
	if (r < 0)
		return r;
	struct svg_plot p;
	/* The plot area leaves room right of the last point for its label. */
	svg_plot_begin(file.svg, &p, &(struct svg_plot_spec){
		.left = 90, .top = 50, .width = 500, .height = 370,
		.x = {.min = 0, .max = xmax > 0 ? xmax * 1.1 : 1, .label = "ksmd CPU (% of one CPU)"},
		.y = {.min = 0, .max = ymax > 0 ? ymax * 1.1 : 1, .label = "full scan (s)"},
		.title = "KSM full scan time against ksmd CPU",
		.legend = SVG_LEGEND_NONE,
	});
	svg_plot_add(&p, &(struct svg_series){.name = "pages_to_scan/sleep_millisecs", .x = cpu, .y = scan,
					      .n = (size_t)n, .style = SVG_POINTS, .labels = label_of});
	svg_plot_end(&p);
	return svg_file_close(&file);
}

struct sweep_opts {
	const char *settings; /* P/S[,P/S...] */
	const char *svg;
	int nscans;
	double timeout;
};

static const struct opt sweep_opt_table[] = {
	{OPT("settings", 's', OPT_STRING), OPT_AT(struct sweep_opts, settings)},
	{OPT("scans", 'n', OPT_COUNT), OPT_AT(struct sweep_opts, nscans), .lo = 1, .hi = KSM_SWEEP_MAX_SCANS,
	 .error = "--scans takes 1 to " OPT_TEXT(KSM_SWEEP_MAX_SCANS) ", not '%s'"},
	{OPT("svg", 'g', OPT_STRING), OPT_AT(struct sweep_opts, svg)},
	{OPT("timeout", 't', OPT_SECONDS), OPT_AT(struct sweep_opts, timeout), .error = "--timeout takes seconds, not '%s'"},
	{OPT("help", 'h', OPT_HELP)},
};

/* --settings into res and its count: EXIT_OK, or the exit code of a usage error. */
static int parse_settings(struct ctx *ctx, const char *settings, struct ksm_sweep_result *res, int *ret_n)
{
	if (!settings)
		return usage_error(ctx, "--settings P/S[,P/S...] is required (e.g. 100/20,100/120)");
	char *items[KSM_SWEEP_MAX_SETTINGS];
	int n = arg_list((char *)settings, items, KSM_SWEEP_MAX_SETTINGS); /* argv's own words, split in place */
	if (n < 0)
		return usage_error(ctx, "--settings takes at most %d comma-separated P/S items", KSM_SWEEP_MAX_SETTINGS);
	memset(res, 0, sizeof(*res) * KSM_SWEEP_MAX_SETTINGS);
	for (int i = 0; i < n; i++) {
		char *end;
		long p = strtol(items[i], &end, 10), s = -1;
		if (end != items[i] && *end == '/') {
			char *s0 = end + 1;
			s = strtol(s0, &end, 10);
			if (end == s0 || *end)
				s = -1;
		}
		if (p < 1 || p > 1000000 || s < 1 || s > 600000)
			return usage_error(ctx, "--settings item '%s' is not P/S (pages_to_scan/sleep_millisecs, e.g. 100/20)",
					   items[i]);
		res[i].pages_to_scan = p;
		res[i].sleep_millisecs = s;
	}
	*ret_n = n;
	return EXIT_OK;
}

static void progress(const struct ksm_sweep_result *setting, void *arg)
{
	const struct sweep_opts *o = arg;
	fprintf(stderr, "vmhost: ksm sweep: %lld/%lld: unmerging, then %d full scan%s\n", (long long)setting->pages_to_scan,
		(long long)setting->sleep_millisecs, o->nscans, o->nscans == 1 ? "" : "s");
}

/* Under the KSM lock and guard: the experiment, then every setting restored. EXIT_OK with the
 * count of settings measured, or the exit code after a printed error. */
static int sweep(struct ctx *ctx, const struct sweep_opts *o, struct ksm_sweep_result *res, int n, int *ret_done,
		 char *why)
{
	struct ksm_sampler sm;
	struct ksm_sample s0;
	int r = ksm_experiment_ready(ctx, &sm, &s0);
	if (r != EXIT_OK)
		return r;
	r = ksm_take_control(ctx, stop_handler);
	if (r != EXIT_OK)
		return r;
	r = ksm_sweep_run(&sm, &s0, res, n, o->nscans, o->timeout, ctx->format == OUT_HUMAN ? progress : NULL, (void *)o,
			  ret_done, why);
	int rr = ksm_guard_end();
	ksm_unlock();
	if (stop_requested())
		return fail(ctx, 128 + stop_requested(), "interrupted", "%s; every KSM setting restored", strsignal(stop_requested()));
	if (r < 0)
		return fail(ctx, exit_code_for(r), "sweep", "%s (settings restored)", strerror(-r));
	if (rr < 0)
		return fail(ctx, EXIT_FAIL, "restoring KSM settings", "%s", strerror(-rr));
	return EXIT_OK;
}

static int print_sweep(struct ctx *ctx, const struct ksm_sweep_result *res, int done, int nscans, const char *why)
{
	struct table *t = table_new(sweep_cols, S_NCOLS);
	if (!t)
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	for (int i = 0; i < done; i++) {
		char name[48];
		snprintf(name, sizeof(name), "%lld/%lld", (long long)res[i].pages_to_scan, (long long)res[i].sleep_millisecs);
		table_add_row(t);
		table_set_str(t, S_SETTING, name);
		table_set_int(t, S_PAGES, res[i].pages_to_scan);
		table_set_int(t, S_SLEEP, res[i].sleep_millisecs);
		table_set_int(t, S_SCANS, res[i].scans);
		table_set_float(t, S_SCAN, res[i].scan_seconds);
		table_set_float(t, S_SCAN_MIN, res[i].scan_min);
		table_set_float(t, S_SCAN_MAX, res[i].scan_max);
		table_set_float(t, S_CPU, res[i].ksmd_cpu_percent);
		table_set_float(t, S_RATE, res[i].pages_per_second);
		table_set_maybe(t, S_SAVED, res[i].saved_bytes);
		table_set_maybe(t, S_PROFIT, res[i].general_profit);
		table_set_str(t, S_TIMEOUT, res[i].timed_out ? "yes" : "no");
		table_set_float(t, S_COPY, res[i].copy_stall_seconds);
		table_set_float(t, S_COPY_PCT, res[i].copy_stall_percent);
	}
	if (table_error(t) < 0) {
		table_free(t);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	}
	if (ctx->format == OUT_JSON) {
		struct json j;
		json_init(&j, stdout, false);
		json_object_begin(&j, NULL);
		json_int(&j, "scans_per_setting", nscans);
		json_string(&j, "copy_stalls_why", why[0] ? why : NULL);
		table_print_json(t, &j, "settings");
		json_object_end(&j);
		json_finish(&j);
	} else if (ctx->format == OUT_CSV)
		table_print_csv(t, stdout);
	else {
		table_print_human(t, stdout, ctx->raw_bytes);
		if (why[0])
			printf("\ncopy stalls n/a: %s\n", why);
	}
	table_free(t);
	return EXIT_OK;
}

int cmd_ksm_sweep(struct ctx *ctx, int argc, char **argv)
{
	struct sweep_opts o = {.nscans = 2, .timeout = 1800};
	static const struct opts_spec spec = OPTS_SPEC(sweep_opt_table, 0, ksm_sweep_help);
	int rc = opts_parse(ctx, &spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	struct ksm_sweep_result res[KSM_SWEEP_MAX_SETTINGS];
	char why[KSM_SWEEP_WHY_MAX] = "";
	int n = 0, done = 0;
	if ((rc = parse_settings(ctx, o.settings, res, &n)) != EXIT_OK)
		return rc;
	if ((rc = sweep(ctx, &o, res, n, &done, why)) != EXIT_OK)
		return rc;
	if ((rc = print_sweep(ctx, res, done, o.nscans, why)) != EXIT_OK)
		return rc;
	int r;
	if (o.svg && (r = write_svg(res, done, o.svg)) < 0)
		return fail(ctx, EXIT_FAIL, "writing SVG", "%s: %s", o.svg, strerror(-r));
	return EXIT_OK;
}
