/* Content sketches of guest RAM: every 4 KiB page hashed with a keyed 64-bit hash, the pages whose
 * hash falls in the lowest 1/N of the hash space kept (content-consistent sampling: a page's
 * content alone decides, so any two sketches of one key compare), as the top 40 bits of the hash
 * (sketch_value: what files code in ~24 bits each), zero pages counted apart.
 * A sketch holds hashes only, never content; it is read under a CPU budget, and one the read
 * could not finish is marked partial with why, never passed off as complete. */
#ifndef VMHOST_CORE_SKETCH_H
#define VMHOST_CORE_SKETCH_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/base/siphash.h"
#include "core/model/vm.h"
#include "io/io.h"
#include "parse/sketch_file.h"

#define SKETCH_PAGE_BYTES 4096
/* share's and serve's rate: the densest power of two whose coded sketch stays within ~32 KiB per
 * GiB (~25 KiB at 1/32 for a 512 MiB guest; docs/share.md "Size"). */
#define SKETCH_DEFAULT_SAMPLE 32

/* Why a sketch is partial. */
enum sketch_gap {
	SKETCH_COMPLETE,
	SKETCH_VM_EXITED,     /* the process ended mid-read */
	SKETCH_MAPPING_GONE,  /* a RAM mapping shrank or went away mid-read */
	SKETCH_NO_PERMISSION, /* neither root nor CAP_SYS_PTRACE over it */
	SKETCH_RAM_UNKNOWN,   /* its guest RAM mappings could not be told apart */
	SKETCH_STOPPED,       /* the user stopped the run */
};
const char *sketch_gap_name(enum sketch_gap g); /* NULL for SKETCH_COMPLETE */

struct sketch {
	pid_t pid;
	char name[256];
	char uuid[64];       /* "" unknown */
	uint64_t sample_n;   /* 1/N of the hash space kept */
	int64_t ram_pages;   /* pages in its guest RAM mappings */
	int64_t pages;       /* resident pages read (the others hold nothing to share) */
	int64_t zero_pages;  /* of those, all zero and holding memory of their own */
	int64_t zero_mapped_pages; /* of those, the kernel's zero page: already free, never KSM's */
	int64_t ksm_zero_pages;    /* what KSM had mapped to the zero page when the read began
				      (ksm_stat): empty pages it already saved, among zero_mapped_pages */
	uint64_t *hashes;    /* the kept values (sketch_value) of its non-zero pages, sorted, repeats kept */
	size_t nhashes, cap;
	enum sketch_gap gap;
	double cpu_seconds, wall_seconds;
};

/* Keeps the reader within cpu_percent of one CPU (0: no limit) on the calling thread. */
struct sketch_budget {
	double cpu_percent;
	double start_wall, start_cpu;
};
void sketch_budget_start(struct sketch_budget *b, double cpu_percent);

/* Called now and then while a sketch is read (every 64 MiB), for progress on a terminal. */
typedef void (*sketch_progress)(void *arg, const struct sketch *s);

struct sketch_opts {
	struct siphash_key key;
	uint64_t sample_n;
	struct sketch_budget *budget;
	sketch_progress progress;
	void *progress_arg;
	volatile sig_atomic_t *stop; /* non-zero: stop reading (the sketch is then partial) */
	const atomic_bool *cancel;   /* the same, set from another thread (serve stopping) */
};

/* The page's place in the sample: true when its whole hash is in the lowest 1/n of the space. */
static inline bool sketch_keeps(uint64_t hash, uint64_t n) { return n <= 1 || hash < UINT64_MAX / n; }

/* Reads the VM's guest RAM into *ret. 0 with ret->gap telling whether it is whole (a partial
 * sketch is still returned), or -ENOMEM. */
int sketch_take(const struct io_root *root, const struct vm *vm, const struct sketch_opts *o, struct sketch *ret);
void sketch_free(struct sketch *s);
/* The sketch's size as a file codes its values (parse/sketch_file.h); s finished (sorted). */
static inline size_t sketch_bytes(const struct sketch *s)
{
	return (size_t)sketch_coded_bytes(s->hashes, s->nhashes, s->sample_n);
}

/* For tests: a sketch made from pages in memory. */

/* Adds one page's content into the sketch (sketch_take's step; tests feed pages directly). */
int sketch_add_page(struct sketch *s, const struct siphash_key *key, const void *page);
/* Sorts the kept hashes; sketch_take does it before returning. */
void sketch_finish(struct sketch *s);

#endif
