/* vmhost growth: VMs whose memory beyond guest RAM keeps growing, from the recorded history. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "store/store_growth.h"
#include "out/table.h"

/* One row per VM for every form: the human table, CSV, and the "vms" array of --json. */
enum {
	C_PID, C_NAME, C_UUID, C_STATE, C_SAMPLES, C_WARMUP, C_OVERHEAD, C_SLOPE, C_GROWTH, C_CONSISTENCY,
	C_FLAGGED, C_FIRST, C_LAST, C_NCOLS
};

static const struct col growth_cols[C_NCOLS] = {
	[C_PID] = {"pid", "PID", COL_INT, 0, 0},
	[C_NAME] = {"name", "NAME", COL_STR, 0, 0},
	[C_UUID] = {"uuid", "UUID", COL_STR, COL_JSON_ONLY, 0},
	[C_STATE] = {"state", "STATE", COL_STR, COL_LEFT, 0},
	[C_SAMPLES] = {"samples", "SAMPLES", COL_INT, 0, 0},
	[C_WARMUP] = {"warmup_samples", "WARM-UP", COL_INT, 0, 0},
	[C_OVERHEAD] = {"overhead_bytes", "OVERHEAD", COL_BYTES, 0, 0},
	[C_SLOPE] = {"overhead_growth_bytes_per_hour", "GROWTH/HOUR", COL_BYTES, 0, 0},
	[C_GROWTH] = {"growth_bytes", "IN WINDOW", COL_BYTES, 0, 0},
	[C_CONSISTENCY] = {"consistency", "SUSTAINED", COL_FLOAT, 0, 2},
	[C_FLAGGED] = {"flagged", "FLAGGED", COL_BOOL, COL_JSON_ONLY, 0}, /* human: STATE says "growing" */
	[C_FIRST] = {"first_seconds", "FIRST", COL_TIME, COL_JSON_ONLY, 0},
	[C_LAST] = {"last_seconds", "LAST", COL_TIME, COL_JSON_ONLY, 0},
};

static void growth_help(void)
{
	printf("usage: vmhost growth [--db FILE] [--window SEC] [--threshold SIZE] [--min-growth SIZE]\n"
	       "                     [--consistency F] [--warmup SEC] [--min-samples N] [--json|--csv]\n"
	       "\n"
	       "For each VM recorded in the window, a robust trend (Theil-Sen: median of pairwise\n"
	       "slopes) of its overhead, the resident memory beyond guest RAM. A VM is flagged\n"
	       "\"growing\" when all of these hold (defaults in brackets):\n"
	       "  --threshold SIZE    slope at least SIZE per hour [10M]\n"
	       "  --min-growth SIZE   the fitted growth over its samples in the window at least SIZE [32M]\n"
	       "  --consistency F     sustained: Kendall's tau of the samples at least F (1 = always\n"
	       "                      rising, 0.5 about one step in the middle, 0 flat noise) [0.6]\n"
	       "Ignored (warm-up): samples taken while guest RAM was not yet fully populated (the\n"
	       "cheap overhead figure is then a lower bound) and in a VM's first --warmup SEC [600].\n"
	       "  --db FILE           database written by 'vmhost record' [./vmhost.db]\n"
	       "  --window SEC        look at the last SEC of the recording [21600, 6 hours]\n"
	       "  --min-samples N     fewer usable samples give no verdict [8]\n"
	       "\n"
	       "Why these defaults: docs/record.md.\n");
}

static const struct opt growth_opt_table[] = {
	{OPT("db", 'd', OPT_STRING), OPT_AT(struct growth_scan_opts, db)},
	{OPT("window", 'w', OPT_SECONDS), OPT_AT(struct growth_scan_opts, window_seconds),
	 .error = "--window takes seconds, not '%s'"},
	{OPT("threshold", 't', OPT_SIZE), OPT_AT(struct growth_scan_opts, params.threshold_bytes_per_hour),
	 .error = "--threshold takes a size per hour (e.g. 10M), not '%s'"},
	{OPT("min-growth", 'g', OPT_SIZE), OPT_AT(struct growth_scan_opts, params.min_growth_bytes),
	 .error = "--min-growth takes a size (e.g. 32M), not '%s'"},
	{OPT("consistency", 'c', OPT_NUMBER), OPT_AT(struct growth_scan_opts, params.min_consistency), .lo = -1, .hi = 1,
	 .error = "--consistency takes a number from -1 to 1, not '%s'"},
	{OPT("warmup", 'u', OPT_SECONDS0), OPT_AT(struct growth_scan_opts, params.warmup_seconds),
	 .error = "--warmup takes seconds, not '%s'"},
	{OPT("min-samples", 'n', OPT_COUNT), OPT_AT(struct growth_scan_opts, params.min_samples), .lo = 2, .hi = 1000000,
	 .error = "--min-samples takes a count of at least 2, not '%s'"},
	{OPT("help", 'h', OPT_HELP)},
};

static maybe_i64 maybe_round(double v) { return isfinite(v) ? MAYBE((int64_t)llround(v)) : UNKNOWN; }

static void growth_row(struct table *t, const struct growth_vm *v)
{
	table_add_row(t);
	table_set_int(t, C_PID, v->vm.pid);
	table_set_str(t, C_NAME, v->vm.name[0] ? v->vm.name : NULL);
	table_set_str(t, C_UUID, v->vm.uuid[0] ? v->vm.uuid : NULL);
	table_set_str(t, C_STATE, growth_state_name(v->result.state));
	table_set_int(t, C_SAMPLES, (int64_t)v->result.samples);
	table_set_int(t, C_WARMUP, (int64_t)v->result.warmup_samples);
	table_set_maybe(t, C_OVERHEAD, v->last_overhead);
	table_set_maybe(t, C_SLOPE, maybe_round(v->result.bytes_per_hour));
	table_set_maybe(t, C_GROWTH, maybe_round(v->result.growth_bytes));
	table_set_float(t, C_CONSISTENCY, v->result.consistency);
	table_set_bool(t, C_FLAGGED, v->result.flagged);
	table_set_float(t, C_FIRST, v->vm.first_seconds);
	table_set_float(t, C_LAST, v->vm.last_seconds);
}

/* The document around the rows: the verdicts' thresholds in JSON, the summary line for people.
 * CSV is the rows alone. */
static int print_growth(const struct ctx *ctx, const struct table *t, const struct growth_scan_opts *o,
			const struct growth_scan *g)
{
	if (ctx->format == OUT_CSV) {
		table_print_csv(t, stdout);
		return fflush(stdout) ? -errno : 0;
	}
	size_t flagged = 0;
	for (size_t i = 0; i < g->n; i++)
		flagged += g->vms[i].result.flagged;
	bool line = g->n > 0; /* the summary line under the table */
	struct doc d;
	ctx_doc(ctx, &d);
	doc_begin(&d, NULL);
	if (doc_json(&d))
		table_print_json(t, doc_json(&d), "vms");
	else if (g->n)
		table_print_human(t, stdout, ctx->raw_bytes);
	else
		doc_text(&d, "no VM samples in the last %gs of %s\n", o->window_seconds, o->db);
	doc_int(&d, NULL, line ? "%s of " : NULL, MAYBE((int64_t)flagged));
	doc_int(&d, NULL, line ? (g->n == 1 ? "%s VM growing" : "%s VMs growing") : NULL, MAYBE((int64_t)g->n));
	doc_bytes(&d, "threshold_bytes_per_hour", line ? " (at least %s/hour" : NULL,
		  MAYBE((int64_t)o->params.threshold_bytes_per_hour));
	doc_bytes(&d, "min_growth_bytes", line ? ", %s in the window" : NULL, MAYBE((int64_t)o->params.min_growth_bytes));
	doc_float(&d, "min_consistency", line ? ", sustained >= %s" : NULL, o->params.min_consistency, 2);
	doc_float(&d, "window_seconds", line ? "; window %ss)\n" : NULL, o->window_seconds,
		  o->window_seconds == floor(o->window_seconds) ? 0 : 3);
	doc_float(&d, "warmup_seconds", NULL, o->params.warmup_seconds, 0);
	doc_time(&d, "window_end_seconds", NULL, g->until);
	doc_end(&d);
	return doc_finish(&d);
}

int cmd_growth(struct ctx *ctx, int argc, char **argv)
{
	struct growth_scan_opts o = growth_scan_defaults();
	static const struct opts_spec spec = OPTS_SPEC(growth_opt_table, 0, growth_help);
	int rc = opts_parse(ctx, &spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	struct growth_scan g;
	const char *what;
	int r = growth_scan_run(&o, &g, &what);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, what, "%s: %s%s", o.db, store_strerror(r),
			    r == -ENOENT ? " (record one with 'vmhost record')" : "");
	struct table *t = table_new(growth_cols, C_NCOLS);
	for (size_t i = 0; t && i < g.n; i++)
		growth_row(t, &g.vms[i]);
	if (!t || table_error(t) < 0) {
		table_free(t);
		growth_scan_free(&g);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	}
	r = print_growth(ctx, t, &o, &g);
	table_free(t);
	growth_scan_free(&g);
	return r < 0 ? fail(ctx, EXIT_FAIL, "output", "%s", strerror(-r)) : EXIT_OK;
}
