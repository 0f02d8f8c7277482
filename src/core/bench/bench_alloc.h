/* The experiment behind `vmhost bench alloc`: every (size, strategy, threads) cell timed over
 * repeats, the runs interleaved, each timed run after an untimed warm-up and counted only when
 * every page is resident, against the memset bandwidth over populated memory in the same run.
 * Library code: never prints; progress goes to a callback, errors to a struct bench_alloc_error.
 *
 *   struct bench_alloc *b;
 *   struct bench_alloc_error err;
 *   if (bench_alloc_new(root, &cfg, &b, &err) < 0 || bench_alloc_run(b, &err) < 0)
 *           report(&err);
 */
#ifndef VMHOST_CORE_BENCH_ALLOC_H
#define VMHOST_CORE_BENCH_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bench/alloc.h"
#include "core/model/host.h"

#define BENCH_ALLOC_MAX_SIZES 16
#define BENCH_ALLOC_MAX_THREADS 16
#define BENCH_ALLOC_MAX_REPEATS 20
#define BENCH_ALLOC_QEMU_OVERHEAD_BYTES ((uint64_t)512 << 20) /* QEMU's own memory on top of guest RAM */

/* Rows beyond the populate strategies (slots 0..ALLOC_NSTRATEGIES-1 are enum alloc_strategy). */
enum { BENCH_ALLOC_MEMSET = ALLOC_NSTRATEGIES, BENCH_ALLOC_QEMU, BENCH_ALLOC_FIRST_TOUCH, BENCH_ALLOC_NSLOTS };
const char *bench_alloc_slot_name(int slot);

/* Where the run is: said before each timed run. */
struct bench_alloc_step {
	uint64_t size;
	int slot;
	unsigned threads, run, repeats;
};

struct bench_alloc_config {
	uint64_t sizes[BENCH_ALLOC_MAX_SIZES]; /* nsizes 0: bench_alloc_default_sizes */
	size_t nsizes;
	unsigned threads[BENCH_ALLOC_MAX_THREADS]; /* nthreads 0: bench_alloc_default_threads */
	size_t nthreads;
	bool strategy[ALLOC_NSTRATEGIES];
	unsigned repeats;                      /* 1 to BENCH_ALLOC_MAX_REPEATS */
	bool qemu;                             /* also time real QEMU starts (core/bench/alloc_qemu.h) */
	const char *qemu_binary;               /* NULL: qemu_default_binary() */
	void (*progress)(void *cls, const struct bench_alloc_step *step); /* NULL: none */
	void *progress_cls;
};

/* Every timing of one (size, slot, threads) cell; destroy is NaN for memset-reference. */
struct bench_alloc_cell {
	double create[BENCH_ALLOC_MAX_REPEATS], destroy[BENCH_ALLOC_MAX_REPEATS];
	unsigned runs;
};

struct bench_alloc {
	struct bench_alloc_config cfg; /* sizes and threads sorted, without repeats, defaults filled in */
	struct io_root root;
	struct alloc_env env;
	struct host host;              /* as the last size check read it */
	bool kvm;                      /* QEMU runs with KVM (else TCG) */
	char skipped[BENCH_ALLOC_NSLOTS][256]; /* why a strategy does not run ("" when it does) */
	struct bench_alloc_cell cells[BENCH_ALLOC_MAX_SIZES][BENCH_ALLOC_NSLOTS][BENCH_ALLOC_MAX_THREADS];
};

/* Why a call failed, in words; a size the guard refused also carries its numbers. */
struct bench_alloc_error {
	const char *what; /* "size guard", "size refused", "warm-up", a strategy's name, "qemu", ... */
	char why[768];
	bool refused;     /* the size guard: size_bytes would leave less than margin_bytes available */
	uint64_t size_bytes, margin_bytes;
	int64_t available_bytes;
};

/* Reads the host, fills in the defaults, checks every size against the guard (largest first),
 * probes the host's memory features and notes the strategies it lacks; with qemu, installs
 * the signal guard. Nothing is allocated for the benchmark yet. 0 or a negative errno. */
int bench_alloc_new(const struct io_root *root, const struct bench_alloc_config *cfg, struct bench_alloc **ret,
		    struct bench_alloc_error *err);
void bench_alloc_free(struct bench_alloc *b);

/* Every size in turn (bench_alloc_run_size). 0 or a negative errno at the first failure. */
int bench_alloc_run(struct bench_alloc *b, struct bench_alloc_error *err);

/* What populates the reference (and warm-up) regions: the fastest strategy this host has. */
enum alloc_strategy bench_alloc_reference(const struct alloc_env *env);
/* The memset-reference bandwidth at size si and thread count ti (NaN without runs). */
double bench_alloc_reference_gibs(const struct bench_alloc *b, size_t si, size_t ti);
/* The populate strategy and thread count with the best efficiency at size si; false when none ran. */
bool bench_alloc_best(const struct bench_alloc *b, size_t si, int *ret_slot, unsigned *ret_threads,
		      double *ret_efficiency);

/* For tests: the defaults bench_alloc_new fills in (sizes, thread counts). */

/* The defaults: 256 MiB x4 up to a quarter of MemTotal, at most 64 GiB, and what the guard
 * allows (always the first, so the guard can refuse it plainly). Returns the count. */
size_t bench_alloc_default_sizes(const struct meminfo *mem, bool qemu, uint64_t ret_sizes[BENCH_ALLOC_MAX_SIZES]);
/* 1 and the powers of 2 below cpus, then cpus (at most BENCH_ALLOC_MAX_THREADS). Returns the count. */
size_t bench_alloc_default_threads(long cpus, unsigned ret_threads[BENCH_ALLOC_MAX_THREADS]);

#endif
