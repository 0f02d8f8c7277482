/* vmhost bench alloc: how fast this host populates VM memory, against memory size, against the
 * memory-write bandwidth measured in the same run, and (--qemu) in a real QEMU start. The
 * experiment is core/bench/bench_alloc.c; this file parses the options and prints its cells. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/experiment.h"
#include "cmd/opts.h"
#include "core/bench/alloc_qemu.h"
#include "core/bench/bench_alloc.h"
#include "core/base/stats.h"
#include "out/fmt.h"
#include "out/json.h"
#include "out/svg.h"
#include "out/table.h"

/* The contract's CSV columns first (exactly these in --csv), then JSON-only extras. */
enum { C_SIZE, C_STRATEGY, C_THREADS, C_CREATE, C_DESTROY, C_GIBS, C_EFFICIENCY, C_CSV_COLS = C_EFFICIENCY + 1,
       C_RUNS = C_CSV_COLS, C_CREATE_MIN, C_CREATE_MAX, C_NCOLS };

static const struct col alloc_cols[C_NCOLS] = {
	[C_SIZE] = {"size_bytes", "SIZE", COL_BYTES, 0, 0},
	[C_STRATEGY] = {"strategy", "STRATEGY", COL_STR, 0, 0},
	[C_THREADS] = {"threads", "THREADS", COL_INT, 0, 0},
	[C_CREATE] = {"create_seconds", "CREATE", COL_SECONDS, 0, 0},
	[C_DESTROY] = {"destroy_seconds", "DESTROY", COL_SECONDS, 0, 0},
	[C_GIBS] = {"create_gib_per_s", "GiB/s", COL_FLOAT, 0, 2},
	[C_EFFICIENCY] = {"efficiency", "EFFICIENCY", COL_FLOAT, 0, 2},
	[C_RUNS] = {"runs", "RUNS", COL_INT, COL_JSON_ONLY, 0},
	[C_CREATE_MIN] = {"create_seconds_min", "MIN", COL_SECONDS, COL_JSON_ONLY, 0},
	[C_CREATE_MAX] = {"create_seconds_max", "MAX", COL_SECONDS, COL_JSON_ONLY, 0},
};

struct alloc_opts {
	struct bench_alloc_config run;
	const char *svg_path;
};

static void alloc_help(void)
{
	printf("usage: vmhost bench alloc [--sizes LIST] [--threads LIST] [--strategies LIST] [--repeat N]\n"
	       "                          [--qemu] [--qemu-binary PATH] [--svg FILE] [--json|--csv]\n"
	       "\n"
	       "How fast this host populates VM memory (VM creation), against memory size.\n"
	       "\n"
	       "  --sizes LIST       e.g. 256M,1G,4G (default: 256M x4 up to a quarter of RAM, at most 64G)\n"
	       "  --threads LIST     populating threads, e.g. 1,2,4 (default: 1 and powers of 2 up to the CPUs)\n"
	       "  --strategies LIST  default all of:\n"
	       "      touch-4k, touch-thp          write one byte per 4 KiB page (THP off / MADV_HUGEPAGE)\n"
	       "      populate-4k, populate-thp    the kernel's populate (mmap MAP_POPULATE; THP in madvise\n"
	       "                                   mode: MADV_HUGEPAGE, then mlock+munlock runs it)\n"
	       "      madv-populate-write-4k|-thp  madvise(MADV_POPULATE_WRITE), as QEMU preallocates\n"
	       "      madv-populate-write-thp-tail the same, each huge page faulted at its last 4 KiB first:\n"
	       "                                   the kernel then clears it in ascending order (faster)\n"
	       "      hugetlbfs                    MAP_HUGETLB from the reserved pool (skipped when too small)\n"
	       "  --repeat N         runs per measurement, the median is reported (default 3)\n"
	       "  --qemu             also time real QEMU starts (rows qemu-prealloc): -m SIZE, memory backend\n"
	       "                     prealloc=on,prealloc-threads=THREADS, paused; create = until QMP answers\n"
	       "                     query-status, destroy = from QMP quit until the process is gone.\n"
	       "                     KVM when /dev/kvm opens, TCG otherwise\n"
	       "  --svg FILE         create time against size, log-log, a series per strategy\n"
	       "\n"
	       "Rows: memset-reference is the write bandwidth over already-populated memory with the same\n"
	       "threads in the same run; efficiency = create GiB/s / that. first-touch is the first population\n"
	       "of each size (the warm-up): on a virtual host, memory the hypervisor beneath has not backed yet\n"
	       "is far slower; so each timed run starts with an untimed populate-and-free of the same size.\n"
	       "destroy is munmap (or QEMU's exit). Sizes that would leave MemAvailable below\n"
	       "max(1 GiB, MemTotal/8) are refused before anything is allocated. Details: docs/bench-alloc.md\n");
}

static int opt_sizes(struct ctx *ctx, void *opts, const char *arg)
{
	struct bench_alloc_config *run = &((struct alloc_opts *)opts)->run;
	char *items[BENCH_ALLOC_MAX_SIZES];
	int n = arg_list((char *)arg, items, BENCH_ALLOC_MAX_SIZES); /* argv's word, split in place */
	if (n < 0)
		return usage_error(ctx, "--sizes takes up to %d sizes like 256M,1G", BENCH_ALLOC_MAX_SIZES);
	run->nsizes = 0;
	for (int i = 0; i < n; i++) {
		uint64_t v;
		if (arg_size(items[i], &v) < 0 || v < ((uint64_t)1 << 20))
			return usage_error(ctx, "--sizes: '%s' is not a size of at least 1M", items[i]);
		run->sizes[run->nsizes++] = v;
	}
	return EXIT_OK;
}

static int opt_threads(struct ctx *ctx, void *opts, const char *arg)
{
	struct bench_alloc_config *run = &((struct alloc_opts *)opts)->run;
	char *items[BENCH_ALLOC_MAX_THREADS];
	int n = arg_list((char *)arg, items, BENCH_ALLOC_MAX_THREADS);
	if (n < 0)
		return usage_error(ctx, "--threads takes up to %d counts like 1,2,4", BENCH_ALLOC_MAX_THREADS);
	run->nthreads = 0;
	for (int i = 0; i < n; i++) {
		int v;
		if (arg_pid(items[i], &v) < 0 || v > 256)
			return usage_error(ctx, "--threads: '%s' is not a count from 1 to 256", items[i]);
		run->threads[run->nthreads++] = (unsigned)v;
	}
	return EXIT_OK;
}

static int opt_strategies(struct ctx *ctx, void *opts, const char *arg)
{
	struct bench_alloc_config *run = &((struct alloc_opts *)opts)->run;
	char *items[64];
	int n = arg_list((char *)arg, items, 64);
	if (n < 0)
		return usage_error(ctx, "--strategies takes a list like touch-4k,madv-populate-write-thp");
	memset(run->strategy, 0, sizeof(run->strategy));
	for (int i = 0; i < n; i++) {
		int s = alloc_strategy_from_name(items[i]);
		if (s < 0)
			return usage_error(ctx, "--strategies: unknown strategy '%s'", items[i]);
		run->strategy[s] = true;
	}
	return EXIT_OK;
}

static int opt_qemu_binary(struct ctx *ctx, void *opts, const char *arg)
{
	(void)ctx, (void)arg;
	((struct alloc_opts *)opts)->run.qemu = true;
	return EXIT_OK;
}

static const struct opt alloc_opt_table[] = {
	{OPT("sizes", 0, OPT_CALL), .call = opt_sizes},
	{OPT("threads", 0, OPT_CALL), .call = opt_threads},
	{OPT("strategies", 0, OPT_CALL), .call = opt_strategies},
	{OPT("repeat", 0, OPT_COUNT), OPT_AT(struct alloc_opts, run.repeats), .lo = 1, .hi = BENCH_ALLOC_MAX_REPEATS,
	 .error = "--repeat takes a count from 1 to " OPT_TEXT(BENCH_ALLOC_MAX_REPEATS)},
	{OPT("qemu", 0, OPT_FLAG), OPT_AT(struct alloc_opts, run.qemu)},
	{OPT("qemu-binary", 0, OPT_STRING), OPT_AT(struct alloc_opts, run.qemu_binary), .call = opt_qemu_binary},
	{OPT("svg", 0, OPT_STRING), OPT_AT(struct alloc_opts, svg_path)},
	{OPT("help", 'h', OPT_HELP)},
};

static void add_row(struct table *t, uint64_t size, int slot, unsigned threads, const struct bench_alloc_cell *c,
		    double ref_gibs)
{
	if (!c->runs)
		return;
	double create = median_of(c->create, c->runs), gibs = alloc_gib_per_s(size, create);
	double lo = INFINITY, hi = -INFINITY;
	for (unsigned i = 0; i < c->runs; i++) {
		lo = fmin(lo, c->create[i]);
		hi = fmax(hi, c->create[i]);
	}
	table_add_row(t);
	table_set_int(t, C_SIZE, (int64_t)size);
	table_set_str(t, C_STRATEGY, bench_alloc_slot_name(slot));
	table_set_int(t, C_THREADS, threads);
	table_set_float(t, C_CREATE, create);
	table_set_float(t, C_DESTROY, median_of(c->destroy, c->runs));
	table_set_float(t, C_GIBS, gibs);
	table_set_float(t, C_EFFICIENCY, slot == BENCH_ALLOC_MEMSET ? 1.0 : gibs / ref_gibs);
	table_set_int(t, C_RUNS, c->runs);
	table_set_float(t, C_CREATE_MIN, lo);
	table_set_float(t, C_CREATE_MAX, hi);
}

static void fill_rows(const struct bench_alloc *b, struct table *t)
{
	const struct bench_alloc_config *o = &b->cfg;
	static const int order[] = {BENCH_ALLOC_MEMSET, ALLOC_TOUCH_4K, ALLOC_TOUCH_THP, ALLOC_POPULATE_4K,
				    ALLOC_POPULATE_THP, ALLOC_MADV_POPULATE_4K, ALLOC_MADV_POPULATE_THP,
				    ALLOC_MADV_POPULATE_THP_TAIL, ALLOC_HUGETLBFS, BENCH_ALLOC_QEMU};
	for (size_t si = 0; si < o->nsizes; si++) {
		/* The warm-up ran once with the most threads: its row leads the size. */
		size_t tmax = o->nthreads - 1;
		add_row(t, o->sizes[si], BENCH_ALLOC_FIRST_TOUCH, o->threads[tmax],
			&b->cells[si][BENCH_ALLOC_FIRST_TOUCH][tmax], bench_alloc_reference_gibs(b, si, tmax));
		for (size_t ti = 0; ti < o->nthreads; ti++)
			for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
				add_row(t, o->sizes[si], order[k], o->threads[ti], &b->cells[si][order[k]][ti],
					bench_alloc_reference_gibs(b, si, ti));
	}
}

static void fmt_bytes_tick(char *buf, size_t cap, double v, double step)
{
	(void)step;
	fmt_bytes(buf, cap, (int64_t)v);
}

static void fmt_seconds_tick(char *buf, size_t cap, double v, double step)
{
	(void)step;
	if (v >= 1)
		snprintf(buf, cap, "%g s", v);
	else if (v >= 1e-3)
		snprintf(buf, cap, "%g ms", v * 1e3);
	else
		snprintf(buf, cap, "%g us", v * 1e6);
}

/* Create time against size, log-log, one series per strategy at the largest thread count. */
static int write_svg(const struct ctx *ctx, const struct bench_alloc *b, const char *path)
{
	const struct bench_alloc_config *o = &b->cfg;
	size_t ti = o->nthreads - 1;
	double xs[BENCH_ALLOC_MAX_SIZES], ys[BENCH_ALLOC_NSLOTS][BENCH_ALLOC_MAX_SIZES], ymin = INFINITY, ymax = 0;
	for (size_t si = 0; si < o->nsizes; si++) {
		xs[si] = (double)o->sizes[si];
		for (int s = 0; s < BENCH_ALLOC_NSLOTS; s++) {
			const struct bench_alloc_cell *c = &b->cells[si][s][ti];
			ys[s][si] = c->runs ? median_of(c->create, c->runs) : NAN;
			if (isfinite(ys[s][si]) && ys[s][si] > 0) {
				ymin = fmin(ymin, ys[s][si]);
				ymax = fmax(ymax, ys[s][si]);
			}
		}
	}
	if (!isfinite(ymin))
		ymin = 1e-3, ymax = 1;
	char title[160];
	snprintf(title, sizeof(title), "VM memory creation time against size (%u thread%s, median of %u runs)",
		 o->threads[ti], o->threads[ti] == 1 ? "" : "s", o->repeats);
	struct svg_file file;
	int r = svg_file_open(path, 1000, 560, &file);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "--svg", "%s: %s", path, strerror(-r));
	struct svg_plot p;
	double xmin = xs[0] / 1.5, xmax = xs[o->nsizes - 1] * 1.5;
	svg_plot_begin(file.svg, &p, &(struct svg_plot_spec){
		.x = {.min = xmin, .max = xmax, .log = true, .label = "guest memory size", .fmt = fmt_bytes_tick,
		      .ticks = xs, .nticks = o->nsizes},
		.y = {.min = ymin, .max = ymax, .log = true, .label = "create time (populate all pages)",
		      .fmt = fmt_seconds_tick},
		.title = title,
		.legend = SVG_LEGEND_RIGHT,
	});
	static const int order[] = {BENCH_ALLOC_MEMSET, BENCH_ALLOC_FIRST_TOUCH, ALLOC_TOUCH_4K, ALLOC_TOUCH_THP,
				    ALLOC_POPULATE_4K, ALLOC_POPULATE_THP, ALLOC_MADV_POPULATE_4K, ALLOC_MADV_POPULATE_THP,
				    ALLOC_MADV_POPULATE_THP_TAIL, ALLOC_HUGETLBFS, BENCH_ALLOC_QEMU};
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		bool any = false;
		for (size_t si = 0; si < o->nsizes; si++)
			any |= isfinite(ys[order[k]][si]);
		if (any)
			svg_plot_series(&p, bench_alloc_slot_name(order[k]), xs, ys[order[k]], o->nsizes,
					SVG_LINES | SVG_POINTS);
	}
	svg_plot_end(&p);
	if ((r = svg_file_close(&file)) < 0)
		return fail(ctx, EXIT_FAIL, "--svg", "%s: %s", path, strerror(-r));
	return EXIT_OK;
}

static void print_json(const struct bench_alloc *b, struct table *t)
{
	struct json j;
	json_init(&j, stdout, false);
	json_object_begin(&j, NULL);
	json_object_begin(&j, "host");
	json_maybe(&j, "mem_total_bytes", b->host.mem.mem_total);
	json_maybe(&j, "mem_available_bytes", b->host.mem.mem_available);
	json_int(&j, "page_size_bytes", b->env.page_bytes);
	json_string(&j, "thp_enabled", b->env.thp_mode[0] ? b->env.thp_mode : NULL);
	json_bool(&j, "madv_populate_write", b->env.madv_populate_write);
	json_int(&j, "hugepage_size_bytes", b->env.hugepage_bytes);
	json_int(&j, "hugepages_free", b->env.hugepages_free);
	json_int(&j, "cpus", sysconf(_SC_NPROCESSORS_ONLN));
	json_object_end(&j);
	if (b->cfg.qemu) {
		json_object_begin(&j, "qemu");
		json_string(&j, "binary", b->cfg.qemu_binary ? b->cfg.qemu_binary : qemu_default_binary());
		json_string(&j, "accel", b->kvm ? "kvm" : "tcg");
		json_object_end(&j);
	} else {
		json_null(&j, "qemu");
	}
	json_int(&j, "repeats", b->cfg.repeats);
	json_string(&j, "reference_populated_by", alloc_strategy_name(bench_alloc_reference(&b->env)));
	table_print_json(t, &j, "rows");
	json_array_begin(&j, "skipped");
	for (int s = 0; s < BENCH_ALLOC_NSLOTS; s++)
		if (b->skipped[s][0]) {
			json_object_begin(&j, NULL);
			json_string(&j, "strategy", bench_alloc_slot_name(s));
			json_string(&j, "reason", b->skipped[s]);
			json_object_end(&j);
		}
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void print_human(const struct ctx *ctx, const struct bench_alloc *b, struct table *t)
{
	const struct bench_alloc_config *o = &b->cfg;
	table_print_human(t, stdout, ctx->raw_bytes);
	for (int s = 0; s < BENCH_ALLOC_NSLOTS; s++)
		if (b->skipped[s][0])
			printf("%s skipped: %s\n", bench_alloc_slot_name(s), b->skipped[s]);
	/* The best populate strategy per size against the reference, the figure operators ask for. */
	for (size_t si = 0; si < o->nsizes; si++) {
		int best_s;
		unsigned best_t;
		double best;
		if (bench_alloc_best(b, si, &best_s, &best_t, &best)) {
			char sz[32];
			fmt_bytes(sz, sizeof(sz), (int64_t)o->sizes[si]);
			printf("best at %s: %s with %u thread%s, %.0f%% of memset-reference\n", sz,
			       bench_alloc_slot_name(best_s), best_t, best_t == 1 ? "" : "s", best * 100);
		}
	}
	printf("medians of %u runs; efficiency = GiB/s / memset-reference GiB/s at the same size and threads;\n"
	       "first-touch = first population of the size in this run (the warm-up)\n", o->repeats);
}

static void print_progress(void *cls, const struct bench_alloc_step *step)
{
	(void)cls;
	char s[32];
	fmt_bytes(s, sizeof(s), (int64_t)step->size);
	fprintf(stderr, "\r\033[K%s %s, %u thread%s, run %u/%u", s, bench_alloc_slot_name(step->slot), step->threads,
		step->threads == 1 ? "" : "s", step->run + 1, step->repeats);
	fflush(stderr);
}

/* The guard's refusal in the user's units; qemu: the size included QEMU's own memory. */
static int bench_fail(const struct ctx *ctx, bool qemu, const struct bench_alloc_error *err)
{
	if (!err->refused)
		return fail(ctx, EXIT_FAIL, err->what, "%s", err->why);
	char s[32], a[32], m[32];
	fmt_bytes(s, sizeof(s), (int64_t)err->size_bytes);
	fmt_bytes(a, sizeof(a), err->available_bytes);
	fmt_bytes(m, sizeof(m), (int64_t)err->margin_bytes);
	return fail(ctx, EXIT_FAIL, err->what,
		    "%s%s would leave less than the %s safety margin of MemAvailable (%s now); choose smaller --sizes",
		    s, qemu ? " plus QEMU's own memory" : "", m, a);
}

int cmd_bench_alloc(struct ctx *ctx, int argc, char **argv)
{
	struct alloc_opts o = {.run.repeats = 3};
	for (int s = 0; s < ALLOC_NSTRATEGIES; s++)
		o.run.strategy[s] = true;
	static const struct opts_spec spec = OPTS_SPEC(alloc_opt_table, 0, alloc_help);
	int rc = opts_parse(ctx, &spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	bool progress = ctx->format == OUT_HUMAN && isatty(STDERR_FILENO);
	if (progress)
		o.run.progress = print_progress;
	struct bench_alloc *b;
	struct bench_alloc_error err;
	if (bench_alloc_new(&ctx->root, &o.run, &b, &err) < 0)
		return bench_fail(ctx, o.run.qemu, &err);
	int e = bench_alloc_run(b, &err);
	if (progress)
		fprintf(stderr, "\r\033[K");
	if (e < 0) {
		bench_alloc_free(b);
		return bench_fail(ctx, o.run.qemu, &err);
	}

	struct table *t = table_new(alloc_cols, ctx->format == OUT_CSV ? C_CSV_COLS : C_NCOLS);
	if (!t) {
		bench_alloc_free(b);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	}
	fill_rows(b, t);
	rc = o.svg_path ? write_svg(ctx, b, o.svg_path) : EXIT_OK;
	if (rc == EXIT_OK) {
		if (ctx->format == OUT_JSON)
			print_json(b, t);
		else if (ctx->format == OUT_CSV)
			table_print_csv(t, stdout);
		else
			print_human(ctx, b, t);
	}
	table_free(t);
	bench_alloc_free(b);
	return rc;
}
