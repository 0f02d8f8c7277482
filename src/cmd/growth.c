/* vmhost growth: VMs whose memory beyond guest RAM keeps growing, from the recorded history. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "store/store_growth.h"
#include "out/json.h"
#include "out/table.h"

enum {
	C_PID, C_NAME, C_UUID, C_STATE, C_SAMPLES, C_WARMUP, C_OVERHEAD, C_SLOPE, C_GROWTH, C_CONSISTENCY,
	C_NCOLS
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

/* Seconds, zero allowed (arg_seconds wants > 0). */
static int arg_seconds0(const char *s, double *ret)
{
	if (!strcmp(s, "0")) {
		*ret = 0;
		return 0;
	}
	return arg_seconds(s, ret);
}

static int parse_growth_opts(struct ctx *ctx, int argc, char **argv, struct growth_scan_opts *o, bool *help)
{
	static const struct option longopts[] = {
		{"db", required_argument, NULL, 'd'},
		{"window", required_argument, NULL, 'w'},
		{"threshold", required_argument, NULL, 't'},
		{"min-growth", required_argument, NULL, 'g'},
		{"consistency", required_argument, NULL, 'c'},
		{"warmup", required_argument, NULL, 'u'},
		{"min-samples", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	args_reset();
	int c;
	uint64_t size;
	while ((c = getopt_long(argc, argv, "+d:w:t:g:c:u:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->db = optarg; break;
		case 'w':
			if (arg_seconds(optarg, &o->window_seconds) < 0)
				return usage_error(ctx, "--window takes seconds, not '%s'", optarg);
			break;
		case 't':
			if (arg_size(optarg, &size) < 0)
				return usage_error(ctx, "--threshold takes a size per hour (e.g. 10M), not '%s'", optarg);
			o->params.threshold_bytes_per_hour = (double)size;
			break;
		case 'g':
			if (arg_size(optarg, &size) < 0)
				return usage_error(ctx, "--min-growth takes a size (e.g. 32M), not '%s'", optarg);
			o->params.min_growth_bytes = (double)size;
			break;
		case 'c': {
			char *end;
			double v = strtod(optarg, &end);
			if (end == optarg || *end || !(v >= -1 && v <= 1))
				return usage_error(ctx, "--consistency takes a number from -1 to 1, not '%s'", optarg);
			o->params.min_consistency = v;
			break;
		}
		case 'u':
			if (arg_seconds0(optarg, &o->params.warmup_seconds) < 0)
				return usage_error(ctx, "--warmup takes seconds, not '%s'", optarg);
			break;
		case 'n': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 2 || v > 1000000)
				return usage_error(ctx, "--min-samples takes a count of at least 2, not '%s'", optarg);
			o->params.min_samples = (size_t)v;
			break;
		}
		case 'h': *help = true; break;
		default: return usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	return EXIT_OK;
}

static maybe_i64 maybe_round(double v) { return isfinite(v) ? MAYBE((int64_t)llround(v)) : UNKNOWN; }

static void print_json(const struct growth_scan_opts *o, const struct growth_scan *g)
{
	struct json j;
	json_init(&j, stdout, false);
	json_object_begin(&j, NULL);
	json_array_begin(&j, "vms");
	for (size_t i = 0; i < g->n; i++) {
		const struct growth_vm *v = &g->vms[i];
		json_object_begin(&j, NULL);
		json_int(&j, "pid", v->vm.pid);
		json_string(&j, "name", v->vm.name[0] ? v->vm.name : NULL);
		json_string(&j, "uuid", v->vm.uuid[0] ? v->vm.uuid : NULL);
		json_int(&j, "samples", (int64_t)v->result.samples);
		json_maybe(&j, "overhead_growth_bytes_per_hour", maybe_round(v->result.bytes_per_hour));
		json_bool(&j, "flagged", v->result.flagged);
		json_string(&j, "state", growth_state_name(v->result.state));
		json_int(&j, "warmup_samples", (int64_t)v->result.warmup_samples);
		json_maybe(&j, "overhead_bytes", v->last_overhead);
		json_maybe(&j, "growth_bytes", maybe_round(v->result.growth_bytes));
		json_double(&j, "consistency", v->result.consistency);
		json_double(&j, "first_seconds", v->vm.first_seconds);
		json_double(&j, "last_seconds", v->vm.last_seconds);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_double(&j, "window_seconds", o->window_seconds);
	json_double(&j, "window_end_seconds", g->until);
	json_int(&j, "threshold_bytes_per_hour", (int64_t)o->params.threshold_bytes_per_hour);
	json_int(&j, "min_growth_bytes", (int64_t)o->params.min_growth_bytes);
	json_double(&j, "min_consistency", o->params.min_consistency);
	json_double(&j, "warmup_seconds", o->params.warmup_seconds);
	json_object_end(&j);
	json_finish(&j);
}

int cmd_growth(struct ctx *ctx, int argc, char **argv)
{
	struct growth_scan_opts o = growth_scan_defaults();
	bool help = false;
	int rc = parse_growth_opts(ctx, argc, argv, &o, &help);
	if (rc != EXIT_OK)
		return rc;
	if (help) {
		growth_help();
		return EXIT_OK;
	}
	struct growth_scan g;
	const char *what;
	int r = growth_scan_run(&o, &g, &what);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, what, "%s: %s%s", o.db, store_strerror(r),
			    r == -ENOENT ? " (record one with 'vmhost record')" : "");
	if (ctx->format == OUT_JSON) {
		print_json(&o, &g);
		growth_scan_free(&g);
		return EXIT_OK;
	}
	struct table *t = table_new(growth_cols, C_NCOLS);
	if (!t) {
		growth_scan_free(&g);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	}
	size_t flagged = 0;
	for (size_t i = 0; i < g.n; i++) {
		const struct growth_vm *v = &g.vms[i];
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
		flagged += v->result.flagged;
	}
	if (ctx->format == OUT_CSV) {
		table_print_csv(t, stdout);
	} else if (!g.n) {
		printf("no VM samples in the last %gs of %s\n", o.window_seconds, o.db);
	} else {
		table_print_human(t, stdout, ctx->raw_bytes);
		char thr[32], min[32];
		fmt_bytes(thr, sizeof(thr), (int64_t)o.params.threshold_bytes_per_hour);
		fmt_bytes(min, sizeof(min), (int64_t)o.params.min_growth_bytes);
		printf("%zu of %zu VM%s growing (at least %s/hour, %s in the window, sustained >= %.2f;"
		       " window %gs)\n",
		       flagged, g.n, g.n == 1 ? "" : "s", thr, min, o.params.min_consistency, o.window_seconds);
	}
	table_free(t);
	growth_scan_free(&g);
	return EXIT_OK;
}
