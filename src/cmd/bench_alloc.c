/* vmhost bench alloc: how fast this host populates VM memory, against memory size, against the
 * memory-write bandwidth measured in the same run, and (--qemu) in a real QEMU start. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/stats.h"
#include "core/clock.h"
#include "core/alloc.h"
#include "core/alloc_qemu.h"
#include "core/host.h"
#include "out/json.h"
#include "out/svg.h"
#include "out/table.h"

#define MAX_SIZES 16
#define MAX_THREADS 16
#define MAX_REPEATS 20
#define QEMU_OVERHEAD_BYTES ((uint64_t)512 << 20) /* QEMU's own memory on top of guest RAM */

/* Rows beyond the populate strategies. */
enum { SLOT_MEMSET = ALLOC_NSTRATEGIES, SLOT_QEMU, SLOT_FIRST_TOUCH, NSLOTS };

static const char *slot_name(int slot)
{
	switch (slot) {
	case SLOT_MEMSET: return "memset-reference";
	case SLOT_QEMU: return "qemu-prealloc";
	case SLOT_FIRST_TOUCH: return "first-touch";
	default: return alloc_strategy_name((enum alloc_strategy)slot);
	}
}

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
	uint64_t sizes[MAX_SIZES];
	size_t nsizes;
	unsigned threads[MAX_THREADS];
	size_t nthreads;
	bool strategy[ALLOC_NSTRATEGIES];
	bool strategies_given;
	unsigned repeats;
	bool qemu;
	const char *qemu_binary;
	const char *svg_path;
};

/* Every timing of one (size, slot, threads) cell. */
struct cell {
	double create[MAX_REPEATS], destroy[MAX_REPEATS];
	unsigned runs;
};

struct bench {
	struct ctx *ctx;
	const struct alloc_opts *o;
	struct alloc_env env;
	struct host host;
	bool kvm;
	bool progress;
	char skipped[NSLOTS][256]; /* why a strategy did not run ("" when it did) */
	struct cell cells[MAX_SIZES][NSLOTS][MAX_THREADS];
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

static int parse_opts(struct ctx *ctx, int argc, char **argv, struct alloc_opts *o, bool *help)
{
	static const struct option longopts[] = {
		{"sizes", required_argument, NULL, 's'},
		{"threads", required_argument, NULL, 't'},
		{"strategies", required_argument, NULL, 'S'},
		{"repeat", required_argument, NULL, 'r'},
		{"qemu", no_argument, NULL, 'q'},
		{"qemu-binary", required_argument, NULL, 'Q'},
		{"svg", required_argument, NULL, 'g'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	char *items[64];
	int n;
	args_reset();
	int c;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if ((n = arg_list(optarg, items, MAX_SIZES)) < 0)
				return usage_error(ctx, "--sizes takes up to %d sizes like 256M,1G", MAX_SIZES);
			o->nsizes = 0;
			for (int i = 0; i < n; i++) {
				uint64_t v;
				if (arg_size(items[i], &v) < 0 || v < ((uint64_t)1 << 20))
					return usage_error(ctx, "--sizes: '%s' is not a size of at least 1M", items[i]);
				o->sizes[o->nsizes++] = v;
			}
			break;
		case 't':
			if ((n = arg_list(optarg, items, MAX_THREADS)) < 0)
				return usage_error(ctx, "--threads takes up to %d counts like 1,2,4", MAX_THREADS);
			o->nthreads = 0;
			for (int i = 0; i < n; i++) {
				int v;
				if (arg_pid(items[i], &v) < 0 || v > 256)
					return usage_error(ctx, "--threads: '%s' is not a count from 1 to 256", items[i]);
				o->threads[o->nthreads++] = (unsigned)v;
			}
			break;
		case 'S':
			if ((n = arg_list(optarg, items, 64)) < 0)
				return usage_error(ctx, "--strategies takes a list like touch-4k,madv-populate-write-thp");
			memset(o->strategy, 0, sizeof(o->strategy));
			o->strategies_given = true;
			for (int i = 0; i < n; i++) {
				int s = alloc_strategy_from_name(items[i]);
				if (s < 0)
					return usage_error(ctx, "--strategies: unknown strategy '%s'", items[i]);
				o->strategy[s] = true;
			}
			break;
		case 'r': {
			int v;
			if (arg_pid(optarg, &v) < 0 || v > MAX_REPEATS)
				return usage_error(ctx, "--repeat takes a count from 1 to %d", MAX_REPEATS);
			o->repeats = (unsigned)v;
			break;
		}
		case 'q': o->qemu = true; break;
		case 'Q': o->qemu_binary = optarg; o->qemu = true; break;
		case 'g': o->svg_path = optarg; break;
		case 'h': *help = true; break;
		default: return args_end(ctx, c, argc, argv);
		}
	}
	return args_end(ctx, c, argc, argv);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* Sorted, duplicates dropped. */
static size_t uniq_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!w || v[w - 1] != v[i])
			v[w++] = v[i];
	return w;
}

static size_t uniq_unsigned(unsigned *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_unsigned);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!w || v[w - 1] != v[i])
			v[w++] = v[i];
	return w;
}

static uint64_t peak_bytes(const struct alloc_opts *o, uint64_t size)
{
	return size + (o->qemu ? QEMU_OVERHEAD_BYTES : 0);
}

/* Defaults that scale to the machine: 256 MiB x4 up to a quarter of RAM (and what the guard allows). */
static void default_sizes(struct alloc_opts *o, const struct host *h)
{
	int64_t total = h->mem.mem_total.known ? h->mem.mem_total.v : 0;
	int64_t avail = h->mem.mem_available.known ? h->mem.mem_available.v : -1;
	uint64_t size = (uint64_t)256 << 20;
	o->sizes[o->nsizes++] = size; /* always one size, so the guard can refuse it plainly */
	for (size *= 4; size <= (uint64_t)total / 4 && size <= ((uint64_t)64 << 30) && o->nsizes < MAX_SIZES; size *= 4) {
		if (!alloc_size_safe(peak_bytes(o, size), avail, total, NULL))
			break;
		o->sizes[o->nsizes++] = size;
	}
}

static void default_threads(struct alloc_opts *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		cpus = 1;
	if (cpus > MAX_THREADS)
		cpus = MAX_THREADS;
	for (unsigned t = 1; t < (unsigned)cpus; t *= 2)
		o->threads[o->nthreads++] = t;
	o->threads[o->nthreads++] = (unsigned)cpus;
	o->nthreads = uniq_unsigned(o->threads, o->nthreads);
}

/* The guard: refuses a size before anything of it is allocated. */
static int check_size(struct bench *b, uint64_t size)
{
	if (host_read(&b->ctx->root, &b->host) < 0 || !b->host.mem.mem_available.known)
		return fail(b->ctx, EXIT_FAIL, "size guard", "cannot read MemAvailable from %s/meminfo", b->ctx->root.proc);
	uint64_t margin;
	int64_t avail = b->host.mem.mem_available.v;
	int64_t total = b->host.mem.mem_total.known ? b->host.mem.mem_total.v : 0;
	if (alloc_size_safe(peak_bytes(b->o, size), avail, total, &margin))
		return EXIT_OK;
	char s[32], a[32], m[32];
	fmt_bytes(s, sizeof(s), (int64_t)size);
	fmt_bytes(a, sizeof(a), avail);
	fmt_bytes(m, sizeof(m), (int64_t)margin);
	return fail(b->ctx, EXIT_FAIL, "size refused",
		    "%s%s would leave less than the %s safety margin of MemAvailable (%s now); choose smaller --sizes",
		    s, b->o->qemu ? " plus QEMU's own memory" : "", m, a);
}

static void progress(const struct bench *b, uint64_t size, int slot, unsigned threads, unsigned run)
{
	if (!b->progress)
		return;
	char s[32];
	fmt_bytes(s, sizeof(s), (int64_t)size);
	fprintf(stderr, "\r\033[K%s %s, %u thread%s, run %u/%u", s, slot_name(slot), threads, threads == 1 ? "" : "s",
		run + 1, b->o->repeats);
	fflush(stderr);
}

static void record(struct cell *c, double create, double destroy)
{
	if (c->runs < MAX_REPEATS) {
		c->create[c->runs] = create;
		c->destroy[c->runs] = destroy;
		c->runs++;
	}
}

/* The reference region: populated untimed by the best strategy this host has. */
static enum alloc_strategy reference_strategy(const struct alloc_env *env)
{
	char why[256];
	static const enum alloc_strategy order[] = {ALLOC_MADV_POPULATE_THP_TAIL, ALLOC_MADV_POPULATE_THP, ALLOC_TOUCH_THP,
						    ALLOC_MADV_POPULATE_4K, ALLOC_TOUCH_4K};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (!alloc_unsupported(order[i], (uint64_t)1 << 20, env, why, sizeof(why)))
			return order[i];
	return ALLOC_TOUCH_4K;
}

/* Populates and frees size bytes, untimed, so the timed run that follows gets memory that is
 * backed and just freed, whatever the run before it left: on a host that is itself a VM, freed
 * memory can go back to the hypervisor and be slow to touch again. */
static int warm(struct bench *b, uint64_t size, unsigned threads)
{
	struct alloc_region r;
	int e = alloc_create(reference_strategy(&b->env), size, threads, &b->env, &r);
	if (e < 0)
		return fail(b->ctx, EXIT_FAIL, "warm-up", "populating %llu bytes: %s", (unsigned long long)size,
			    strerror(-e));
	alloc_destroy(&r);
	return EXIT_OK;
}

static int time_strategy(struct bench *b, enum alloc_strategy s, uint64_t size, unsigned threads, struct cell *c,
			 bool warm_first)
{
	struct alloc_region r;
	if (warm_first) {
		int rc = warm(b, size, threads);
		if (rc != EXIT_OK)
			return rc;
	}
	double t0 = clock_monotonic_seconds();
	int e = alloc_create(s, size, threads, &b->env, &r);
	double t1 = clock_monotonic_seconds();
	if (e < 0)
		return fail(b->ctx, EXIT_FAIL, alloc_strategy_name(s), "populating %llu bytes: %s",
			    (unsigned long long)size, strerror(-e));
	/* A run counts only when every page is really there (checked outside the timed span). */
	uint64_t resident = 0;
	e = alloc_resident_bytes(&r, &resident);
	if (e < 0 || resident < r.map_len) {
		alloc_destroy(&r);
		return fail(b->ctx, EXIT_FAIL, alloc_strategy_name(s), "only %llu of %llu bytes resident after populating%s",
			    (unsigned long long)resident, (unsigned long long)r.map_len, e < 0 ? " (mincore failed)" : "");
	}
	double t2 = clock_monotonic_seconds();
	alloc_destroy(&r);
	double t3 = clock_monotonic_seconds();
	record(c, t1 - t0, t3 - t2);
	return EXIT_OK;
}

static int time_memset(struct bench *b, uint64_t size, unsigned threads, unsigned run, struct cell *c)
{
	struct alloc_region r;
	int e = alloc_create(reference_strategy(&b->env), size, threads, &b->env, &r);
	if (e < 0)
		return fail(b->ctx, EXIT_FAIL, "memset-reference", "populating %llu bytes: %s", (unsigned long long)size,
			    strerror(-e));
	double t0 = clock_monotonic_seconds();
	e = alloc_memset(&r, threads, (int)(run % 250) + 1);
	double t1 = clock_monotonic_seconds();
	alloc_destroy(&r);
	if (e < 0)
		return fail(b->ctx, EXIT_FAIL, "memset-reference", "%s", strerror(-e));
	record(c, t1 - t0, NAN);
	return EXIT_OK;
}

static int time_qemu(struct bench *b, uint64_t size, unsigned threads, struct cell *c)
{
	double gib = (double)size / (1024.0 * 1024 * 1024);
	struct qemu_opts q = {.binary = b->o->qemu_binary, .ram_bytes = size, .prealloc_threads = threads,
			      .kvm = b->kvm, .timeout_seconds = 60 + 20 * gib};
	struct qemu_vm vm;
	char err[512];
	double create, destroy;
	int rc = warm(b, size, threads);
	if (rc != EXIT_OK)
		return rc;
	int e = qemu_start(&q, &vm, &create, err, sizeof(err));
	if (e < 0)
		return fail(b->ctx, EXIT_FAIL, "qemu", "%s", err);
	e = qemu_stop(&vm, 30 + 5 * gib, &destroy, err, sizeof(err));
	if (e < 0)
		return fail(b->ctx, EXIT_FAIL, "qemu", "%s", err);
	record(c, create, destroy);
	return EXIT_OK;
}

static int run_size(struct bench *b, size_t si)
{
	const struct alloc_opts *o = b->o;
	uint64_t size = o->sizes[si];
	int rc = check_size(b, size);
	if (rc != EXIT_OK)
		return rc;
	size_t tmax = o->nthreads - 1;
	/* The warm-up: the first population of this size, reported on its own. */
	progress(b, size, SLOT_FIRST_TOUCH, o->threads[tmax], 0);
	rc = time_strategy(b, reference_strategy(&b->env), size, o->threads[tmax], &b->cells[si][SLOT_FIRST_TOUCH][tmax],
			   false);
	/* Runs interleave strategies so slow drift on a shared host spreads over all of them;
	 * nothing sleeps between runs, as freed memory may go back to a hypervisor beneath. */
	for (unsigned run = 0; run < o->repeats && rc == EXIT_OK; run++)
		for (size_t ti = 0; ti < o->nthreads && rc == EXIT_OK; ti++) {
			unsigned t = o->threads[ti];
			progress(b, size, SLOT_MEMSET, t, run);
			rc = time_memset(b, size, t, run, &b->cells[si][SLOT_MEMSET][ti]);
			for (int s = 0; s < ALLOC_NSTRATEGIES && rc == EXIT_OK; s++) {
				if (!o->strategy[s] || b->skipped[s][0])
					continue;
				progress(b, size, s, t, run);
				rc = time_strategy(b, (enum alloc_strategy)s, size, t, &b->cells[si][s][ti], true);
			}
			if (o->qemu && rc == EXIT_OK) {
				progress(b, size, SLOT_QEMU, t, run);
				rc = time_qemu(b, size, t, &b->cells[si][SLOT_QEMU][ti]);
			}
		}
	return rc;
}

static double reference_gibs(const struct bench *b, size_t si, size_t ti)
{
	const struct cell *ref = &b->cells[si][SLOT_MEMSET][ti];
	return alloc_gib_per_s(b->o->sizes[si], median_of(ref->create, ref->runs));
}

static void add_row(struct table *t, uint64_t size, int slot, unsigned threads, const struct cell *c, double ref_gibs)
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
	table_set_str(t, C_STRATEGY, slot_name(slot));
	table_set_int(t, C_THREADS, threads);
	table_set_float(t, C_CREATE, create);
	table_set_float(t, C_DESTROY, median_of(c->destroy, c->runs));
	table_set_float(t, C_GIBS, gibs);
	table_set_float(t, C_EFFICIENCY, slot == SLOT_MEMSET ? 1.0 : gibs / ref_gibs);
	table_set_int(t, C_RUNS, c->runs);
	table_set_float(t, C_CREATE_MIN, lo);
	table_set_float(t, C_CREATE_MAX, hi);
}

static void fill_rows(const struct bench *b, struct table *t)
{
	const struct alloc_opts *o = b->o;
	static const int order[] = {SLOT_MEMSET, ALLOC_TOUCH_4K, ALLOC_TOUCH_THP, ALLOC_POPULATE_4K,
				    ALLOC_POPULATE_THP, ALLOC_MADV_POPULATE_4K, ALLOC_MADV_POPULATE_THP,
				    ALLOC_MADV_POPULATE_THP_TAIL, ALLOC_HUGETLBFS, SLOT_QEMU};
	for (size_t si = 0; si < o->nsizes; si++) {
		/* The warm-up ran once with the most threads: its row leads the size. */
		size_t tmax = o->nthreads - 1;
		add_row(t, o->sizes[si], SLOT_FIRST_TOUCH, o->threads[tmax], &b->cells[si][SLOT_FIRST_TOUCH][tmax],
			reference_gibs(b, si, tmax));
		for (size_t ti = 0; ti < o->nthreads; ti++)
			for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
				add_row(t, o->sizes[si], order[k], o->threads[ti], &b->cells[si][order[k]][ti],
					reference_gibs(b, si, ti));
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
static int write_svg(const struct bench *b)
{
	const struct alloc_opts *o = b->o;
	FILE *f = fopen(o->svg_path, "we");
	if (!f)
		return fail(b->ctx, EXIT_FAIL, "--svg", "%s: %s", o->svg_path, strerror(errno));
	size_t ti = o->nthreads - 1;
	double xs[MAX_SIZES], ys[NSLOTS][MAX_SIZES], ymin = INFINITY, ymax = 0;
	for (size_t si = 0; si < o->nsizes; si++) {
		xs[si] = (double)o->sizes[si];
		for (int s = 0; s < NSLOTS; s++) {
			const struct cell *c = &b->cells[si][s][ti];
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
	struct svg *s = svg_begin(f, 1000, 560);
	if (!s) {
		fclose(f);
		return fail(b->ctx, EXIT_FAIL, "--svg", "%s", strerror(ENOMEM));
	}
	struct svg_plot p;
	double xmin = xs[0] / 1.5, xmax = xs[o->nsizes - 1] * 1.5;
	svg_plot_begin(s, &p, &(struct svg_plot_spec){
		.x = {.min = xmin, .max = xmax, .log = true, .label = "guest memory size", .fmt = fmt_bytes_tick,
		      .ticks = xs, .nticks = o->nsizes},
		.y = {.min = ymin, .max = ymax, .log = true, .label = "create time (populate all pages)",
		      .fmt = fmt_seconds_tick},
		.title = title,
		.legend = SVG_LEGEND_RIGHT,
	});
	static const int order[] = {SLOT_MEMSET, SLOT_FIRST_TOUCH, ALLOC_TOUCH_4K, ALLOC_TOUCH_THP, ALLOC_POPULATE_4K,
				    ALLOC_POPULATE_THP, ALLOC_MADV_POPULATE_4K, ALLOC_MADV_POPULATE_THP,
				    ALLOC_MADV_POPULATE_THP_TAIL, ALLOC_HUGETLBFS, SLOT_QEMU};
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		bool any = false;
		for (size_t si = 0; si < o->nsizes; si++)
			any |= isfinite(ys[order[k]][si]);
		if (any)
			svg_plot_series(&p, slot_name(order[k]), xs, ys[order[k]], o->nsizes, SVG_LINES | SVG_POINTS);
	}
	svg_plot_end(&p);
	int r = svg_end(s);
	if (fclose(f) != 0 || r < 0)
		return fail(b->ctx, EXIT_FAIL, "--svg", "%s: write error", o->svg_path);
	return EXIT_OK;
}

static void print_json(const struct bench *b, struct table *t)
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
	if (b->o->qemu) {
		json_object_begin(&j, "qemu");
		json_string(&j, "binary", b->o->qemu_binary ? b->o->qemu_binary : qemu_default_binary());
		json_string(&j, "accel", b->kvm ? "kvm" : "tcg");
		json_object_end(&j);
	} else {
		json_null(&j, "qemu");
	}
	json_int(&j, "repeats", b->o->repeats);
	json_string(&j, "reference_populated_by", alloc_strategy_name(reference_strategy(&b->env)));
	table_print_json(t, &j, "rows");
	json_array_begin(&j, "skipped");
	for (int s = 0; s < NSLOTS; s++)
		if (b->skipped[s][0]) {
			json_object_begin(&j, NULL);
			json_string(&j, "strategy", slot_name(s));
			json_string(&j, "reason", b->skipped[s]);
			json_object_end(&j);
		}
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void print_human(const struct bench *b, struct table *t)
{
	const struct alloc_opts *o = b->o;
	table_print_human(t, stdout, b->ctx->raw_bytes);
	for (int s = 0; s < NSLOTS; s++)
		if (b->skipped[s][0])
			printf("%s skipped: %s\n", slot_name(s), b->skipped[s]);
	/* The best populate strategy per size against the reference, the figure operators ask for. */
	for (size_t si = 0; si < o->nsizes; si++) {
		double best = 0;
		int best_s = -1;
		unsigned best_t = 0;
		for (size_t ti = 0; ti < o->nthreads; ti++) {
			double ref_gibs = reference_gibs(b, si, ti);
			for (int s = 0; s < ALLOC_NSTRATEGIES; s++) {
				const struct cell *c = &b->cells[si][s][ti];
				double eff = c->runs ? alloc_gib_per_s(o->sizes[si], median_of(c->create, c->runs)) / ref_gibs : NAN;
				if (isfinite(eff) && eff > best) {
					best = eff;
					best_s = s;
					best_t = o->threads[ti];
				}
			}
		}
		if (best_s >= 0) {
			char sz[32];
			fmt_bytes(sz, sizeof(sz), (int64_t)o->sizes[si]);
			printf("best at %s: %s with %u thread%s, %.0f%% of memset-reference\n", sz, slot_name(best_s),
			       best_t, best_t == 1 ? "" : "s", best * 100);
		}
	}
	printf("medians of %u runs; efficiency = GiB/s / memset-reference GiB/s at the same size and threads;\n"
	       "first-touch = first population of the size in this run (the warm-up)\n", o->repeats);
}

int cmd_bench_alloc(struct ctx *ctx, int argc, char **argv)
{
	struct alloc_opts o = {.repeats = 3};
	for (int s = 0; s < ALLOC_NSTRATEGIES; s++)
		o.strategy[s] = true;
	bool help = false;
	int rc = parse_opts(ctx, argc, argv, &o, &help);
	if (rc != EXIT_OK)
		return rc;
	if (help) {
		alloc_help();
		return EXIT_OK;
	}
	struct bench *b = calloc(1, sizeof(*b));
	if (!b)
		return fail(ctx, EXIT_FAIL, "memory", "%s", strerror(ENOMEM));
	b->ctx = ctx;
	b->o = &o;
	if (host_read(&ctx->root, &b->host) < 0 || !b->host.mem.mem_available.known) {
		free(b);
		return fail(ctx, EXIT_FAIL, "size guard", "cannot read MemAvailable from %s/meminfo", ctx->root.proc);
	}
	if (!o.nthreads)
		default_threads(&o);
	o.nthreads = uniq_unsigned(o.threads, o.nthreads);
	if (!o.nsizes)
		default_sizes(&o, &b->host);
	o.nsizes = uniq_u64(o.sizes, o.nsizes);

	/* Every size is checked before the first byte is allocated. */
	for (size_t i = o.nsizes; i-- > 0;)
		if ((rc = check_size(b, o.sizes[i])) != EXIT_OK) {
			free(b);
			return rc;
		}
	int e = alloc_env_probe(&ctx->root, &b->env);
	if (e < 0) {
		free(b);
		return fail(ctx, EXIT_FAIL, "probing memory features", "%s", strerror(-e));
	}
	for (int s = 0; s < ALLOC_NSTRATEGIES; s++)
		if (o.strategy[s])
			alloc_unsupported((enum alloc_strategy)s, o.sizes[o.nsizes - 1], &b->env, b->skipped[s],
					  sizeof(b->skipped[s]));
	if (o.qemu) {
		b->kvm = qemu_kvm_usable();
		qemu_guard_signals();
	}
	b->progress = ctx->format == OUT_HUMAN && isatty(STDERR_FILENO);

	for (size_t si = 0; si < o.nsizes && rc == EXIT_OK; si++)
		rc = run_size(b, si);
	if (b->progress)
		fprintf(stderr, "\r\033[K");
	if (rc != EXIT_OK) {
		free(b);
		return rc;
	}

	struct table *t = table_new(alloc_cols, ctx->format == OUT_CSV ? C_CSV_COLS : C_NCOLS);
	if (!t) {
		free(b);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	}
	fill_rows(b, t);
	if (o.svg_path)
		rc = write_svg(b);
	if (rc == EXIT_OK) {
		if (ctx->format == OUT_JSON)
			print_json(b, t);
		else if (ctx->format == OUT_CSV)
			table_print_csv(t, stdout);
		else
			print_human(b, t);
	}
	table_free(t);
	free(b);
	return rc;
}
