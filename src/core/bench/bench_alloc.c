#include "core/bench/bench_alloc.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bench/alloc_qemu.h"
#include "core/base/stop.h"
#include "core/base/stats.h"
#include "parse/elements.h"

const char *bench_alloc_slot_name(int slot)
{
	switch (slot) {
	case BENCH_ALLOC_MEMSET: return "memset-reference";
	case BENCH_ALLOC_QEMU: return "qemu-prealloc";
	case BENCH_ALLOC_FIRST_TOUCH: return "first-touch";
	default: return alloc_strategy_name((enum alloc_strategy)slot);
	}
}

static int set_err(struct bench_alloc_error *err, int e, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int set_err(struct bench_alloc_error *err, int e, const char *what, const char *fmt, ...)
{
	if (err) {
		*err = (struct bench_alloc_error){.what = what};
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->why, sizeof(err->why), fmt, ap);
		va_end(ap);
	}
	return e;
}

static uint64_t peak_bytes(uint64_t size, bool qemu)
{
	return size + (qemu ? BENCH_ALLOC_QEMU_OVERHEAD_BYTES : 0);
}

size_t bench_alloc_default_sizes(const struct meminfo *mem, bool qemu, uint64_t ret_sizes[BENCH_ALLOC_MAX_SIZES])
{
	int64_t total = mem->mem_total.known ? mem->mem_total.v : 0;
	int64_t avail = mem->mem_available.known ? mem->mem_available.v : -1;
	uint64_t size = (uint64_t)256 << 20;
	size_t n = 0;
	ret_sizes[n++] = size;
	const uint64_t largest = (uint64_t)64 << 30;
	for (size *= 4; size <= (uint64_t)total / 4 && size <= largest && n < BENCH_ALLOC_MAX_SIZES; size *= 4) {
		if (!alloc_size_safe(peak_bytes(size, qemu), avail, total, NULL))
			break;
		ret_sizes[n++] = size;
	}
	return n;
}

size_t bench_alloc_default_threads(long cpus, unsigned ret_threads[BENCH_ALLOC_MAX_THREADS])
{
	if (cpus < 1)
		cpus = 1;
	if (cpus > BENCH_ALLOC_MAX_THREADS)
		cpus = BENCH_ALLOC_MAX_THREADS;
	size_t n = 0;
	for (unsigned t = 1; t < (unsigned)cpus; t *= 2)
		ret_threads[n++] = t;
	ret_threads[n++] = (unsigned)cpus;
	return sort_unique(ret_threads, n, sizeof(*ret_threads), cmp_unsigned);
}

enum alloc_strategy bench_alloc_reference(const struct alloc_env *env)
{
	char why[256];
	static const enum alloc_strategy order[] = {ALLOC_MADV_POPULATE_THP_TAIL, ALLOC_MADV_POPULATE_THP, ALLOC_TOUCH_THP,
						    ALLOC_MADV_POPULATE_4K, ALLOC_TOUCH_4K};
	for (size_t i = 0; i < ELEMENTSOF(order); i++)
		if (!alloc_unsupported(order[i], (uint64_t)1 << 20, env, why, sizeof(why)))
			return order[i];
	return ALLOC_TOUCH_4K;
}

/* The guard: refuses a size before anything of it is allocated, on MemAvailable read now. */
static int check_size(struct bench_alloc *b, uint64_t size, struct bench_alloc_error *err)
{
	int e = host_read(&b->root, &b->host);
	if (e < 0 || !b->host.mem.mem_available.known)
		return set_err(err, e < 0 ? e : -ENODATA, "size guard", "cannot read MemAvailable from %s/meminfo",
			       b->root.proc);
	uint64_t margin;
	int64_t avail = b->host.mem.mem_available.v;
	int64_t total = b->host.mem.mem_total.known ? b->host.mem.mem_total.v : 0;
	if (alloc_size_safe(peak_bytes(size, b->cfg.qemu), avail, total, &margin))
		return 0;
	set_err(err, -ENOMEM, "size refused", "%llu bytes would leave less than the %llu bytes safety margin of MemAvailable",
		(unsigned long long)size, (unsigned long long)margin);
	if (err) {
		err->refused = true;
		err->size_bytes = size;
		err->margin_bytes = margin;
		err->available_bytes = avail;
	}
	return -ENOMEM;
}

int bench_alloc_new(const struct io_root *root, const struct bench_alloc_config *cfg, struct bench_alloc **ret,
		    struct bench_alloc_error *err)
{
	if (cfg->nsizes > BENCH_ALLOC_MAX_SIZES || cfg->nthreads > BENCH_ALLOC_MAX_THREADS ||
	    cfg->repeats > BENCH_ALLOC_MAX_REPEATS)
		return set_err(err, -EINVAL, "configuration", "more sizes, thread counts or repeats than the cells hold");
	struct bench_alloc *b = calloc(1, sizeof(*b));
	if (!b)
		return set_err(err, -ENOMEM, "memory", "%s", strerror(ENOMEM));
	b->root = *root;
	b->cfg = *cfg;
	struct bench_alloc_config *c = &b->cfg;
	int e = host_read(root, &b->host);
	if (e < 0 || !b->host.mem.mem_available.known) {
		free(b);
		return set_err(err, e < 0 ? e : -ENODATA, "size guard", "cannot read MemAvailable from %s/meminfo", root->proc);
	}
	if (!c->nthreads)
		c->nthreads = bench_alloc_default_threads(sysconf(_SC_NPROCESSORS_ONLN), c->threads);
	c->nthreads = sort_unique(c->threads, c->nthreads, sizeof(c->threads[0]), cmp_unsigned);
	if (!c->nsizes)
		c->nsizes = bench_alloc_default_sizes(&b->host.mem, c->qemu, c->sizes);
	c->nsizes = sort_unique(c->sizes, c->nsizes, sizeof(c->sizes[0]), cmp_u64);

	/* Every size is checked before the first byte is allocated. */
	for (size_t i = c->nsizes; i-- > 0;)
		if ((e = check_size(b, c->sizes[i], err)) < 0) {
			free(b);
			return e;
		}
	if ((e = alloc_env_probe(root, &b->env)) < 0) {
		free(b);
		return set_err(err, e, "probing memory features", "%s", strerror(-e));
	}
	for (int s = 0; s < ALLOC_NSTRATEGIES; s++)
		if (c->strategy[s])
			alloc_unsupported((enum alloc_strategy)s, c->sizes[c->nsizes - 1], &b->env, b->skipped[s],
					  sizeof(b->skipped[s]));
	if (c->qemu) {
		b->kvm = qemu_kvm_usable();
		qemu_guard_signals();
	}
	*ret = b;
	return 0;
}

void bench_alloc_free(struct bench_alloc *b)
{
	free(b);
}

static void progress(const struct bench_alloc *b, uint64_t size, int slot, unsigned threads, unsigned run)
{
	if (b->cfg.progress)
		b->cfg.progress(b->cfg.progress_cls, &(struct bench_alloc_step){
			.size = size, .slot = slot, .threads = threads, .run = run, .repeats = b->cfg.repeats});
}

static void record(struct bench_alloc_cell *c, double create, double destroy)
{
	if (c->runs < BENCH_ALLOC_MAX_REPEATS) {
		c->create[c->runs] = create;
		c->destroy[c->runs] = destroy;
		c->runs++;
	}
}

/* Populates and frees size bytes, untimed, so the timed run that follows gets memory that is
 * backed and just freed, whatever the run before it left: on a host that is itself a VM, freed
 * memory can go back to the hypervisor and be slow to touch again. */
static int warm(struct bench_alloc *b, uint64_t size, unsigned threads, struct bench_alloc_error *err)
{
	struct alloc_region r;
	int e = alloc_create(bench_alloc_reference(&b->env), size, threads, &b->env, &r);
	if (e < 0)
		return set_err(err, e, "warm-up", "populating %llu bytes: %s", (unsigned long long)size, strerror(-e));
	alloc_destroy(&r);
	return 0;
}

static int time_strategy(struct bench_alloc *b, enum alloc_strategy s, uint64_t size, unsigned threads,
			 struct bench_alloc_cell *c, bool warm_first, struct bench_alloc_error *err)
{
	struct alloc_region r;
	int e;
	if (warm_first && (e = warm(b, size, threads, err)) < 0)
		return e;
	double t0 = clock_monotonic_seconds();
	e = alloc_create(s, size, threads, &b->env, &r);
	double t1 = clock_monotonic_seconds();
	if (e < 0)
		return set_err(err, e, alloc_strategy_name(s), "populating %llu bytes: %s", (unsigned long long)size,
			       strerror(-e));
	/* A run counts only when every page is really there (checked outside the timed span). */
	uint64_t resident = 0;
	e = alloc_resident_bytes(&r, &resident);
	if (e < 0 || resident < r.map_len) {
		alloc_destroy(&r);
		return set_err(err, e < 0 ? e : -EIO, alloc_strategy_name(s),
			       "only %llu of %llu bytes resident after populating%s", (unsigned long long)resident,
			       (unsigned long long)r.map_len, e < 0 ? " (mincore failed)" : "");
	}
	double t2 = clock_monotonic_seconds();
	alloc_destroy(&r);
	double t3 = clock_monotonic_seconds();
	record(c, t1 - t0, t3 - t2);
	return 0;
}

static int time_memset(struct bench_alloc *b, uint64_t size, unsigned threads, unsigned run,
		       struct bench_alloc_cell *c, struct bench_alloc_error *err)
{
	struct alloc_region r;
	int e = alloc_create(bench_alloc_reference(&b->env), size, threads, &b->env, &r);
	if (e < 0)
		return set_err(err, e, "memset-reference", "populating %llu bytes: %s", (unsigned long long)size,
			       strerror(-e));
	double t0 = clock_monotonic_seconds();
	e = alloc_memset(&r, threads, (int)(run % 250) + 1);
	double t1 = clock_monotonic_seconds();
	alloc_destroy(&r);
	if (e < 0)
		return set_err(err, e, "memset-reference", "%s", strerror(-e));
	record(c, t1 - t0, NAN);
	return 0;
}

static int time_qemu(struct bench_alloc *b, uint64_t size, unsigned threads, struct bench_alloc_cell *c,
		     struct bench_alloc_error *err)
{
	double gib = (double)size / (1024.0 * 1024 * 1024);
	struct qemu_opts q = {.binary = b->cfg.qemu_binary, .ram_bytes = size, .prealloc_threads = threads,
			      .kvm = b->kvm, .timeout_seconds = 60 + 20 * gib};
	struct qemu_vm vm;
	char why[512];
	double create, destroy;
	int e = warm(b, size, threads, err);
	if (e < 0)
		return e;
	if ((e = qemu_start(&q, &vm, &create, why, sizeof(why))) < 0 ||
	    (e = qemu_stop(&vm, 30 + 5 * gib, &destroy, why, sizeof(why))) < 0)
		return set_err(err, e, "qemu", "%s", why);
	record(c, create, destroy);
	return 0;
}

/* One size: the guard again, the first touch, then repeats of every thread count and slot. */
static int bench_alloc_run_size(struct bench_alloc *b, size_t si, struct bench_alloc_error *err)
{
	const struct bench_alloc_config *o = &b->cfg;
	uint64_t size = o->sizes[si];
	int e = check_size(b, size, err);
	if (e < 0)
		return e;
	size_t tmax = o->nthreads - 1;
	/* The warm-up: the first population of this size, reported on its own. */
	progress(b, size, BENCH_ALLOC_FIRST_TOUCH, o->threads[tmax], 0);
	e = time_strategy(b, bench_alloc_reference(&b->env), size, o->threads[tmax],
			  &b->cells[si][BENCH_ALLOC_FIRST_TOUCH][tmax], false, err);
	/* Runs interleave strategies so slow drift on a shared host spreads over all of them;
	 * nothing sleeps between runs, as freed memory may go back to a hypervisor beneath. */
	for (unsigned run = 0; run < o->repeats && e == 0; run++)
		for (size_t ti = 0; ti < o->nthreads && e == 0; ti++) {
			unsigned t = o->threads[ti];
			progress(b, size, BENCH_ALLOC_MEMSET, t, run);
			e = time_memset(b, size, t, run, &b->cells[si][BENCH_ALLOC_MEMSET][ti], err);
			for (int s = 0; s < ALLOC_NSTRATEGIES && e == 0; s++) {
				if (!o->strategy[s] || b->skipped[s][0])
					continue;
				progress(b, size, s, t, run);
				e = time_strategy(b, (enum alloc_strategy)s, size, t, &b->cells[si][s][ti], true, err);
			}
			if (o->qemu && e == 0) {
				progress(b, size, BENCH_ALLOC_QEMU, t, run);
				e = time_qemu(b, size, t, &b->cells[si][BENCH_ALLOC_QEMU][ti], err);
			}
		}
	return e;
}

int bench_alloc_run(struct bench_alloc *b, struct bench_alloc_error *err)
{
	int e = 0;
	for (size_t si = 0; si < b->cfg.nsizes && e == 0; si++)
		e = bench_alloc_run_size(b, si, err);
	return e;
}

double bench_alloc_reference_gibs(const struct bench_alloc *b, size_t si, size_t ti)
{
	const struct bench_alloc_cell *ref = &b->cells[si][BENCH_ALLOC_MEMSET][ti];
	return alloc_gib_per_s(b->cfg.sizes[si], median_of(ref->create, ref->runs));
}

bool bench_alloc_best(const struct bench_alloc *b, size_t si, int *ret_slot, unsigned *ret_threads,
		      double *ret_efficiency)
{
	double best = 0;
	int best_s = -1;
	unsigned best_t = 0;
	for (size_t ti = 0; ti < b->cfg.nthreads; ti++) {
		double ref_gibs = bench_alloc_reference_gibs(b, si, ti);
		for (int s = 0; s < ALLOC_NSTRATEGIES; s++) {
			const struct bench_alloc_cell *c = &b->cells[si][s][ti];
			double eff = c->runs ? alloc_gib_per_s(b->cfg.sizes[si], median_of(c->create, c->runs)) / ref_gibs : NAN;
			if (isfinite(eff) && eff > best) {
				best = eff;
				best_s = s;
				best_t = b->cfg.threads[ti];
			}
		}
	}
	if (best_s < 0)
		return false;
	*ret_slot = best_s;
	*ret_threads = best_t;
	*ret_efficiency = best;
	return true;
}
