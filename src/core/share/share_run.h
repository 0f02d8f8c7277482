/* A sharing map as it is kept and drawn: one run of `vmhost share`, its figures in pages per VM
 * and per pair of VMs, names and no hashes (store/ writes and reads it, the report draws it). */
#ifndef VMHOST_CORE_SHARE_RUN_H
#define VMHOST_CORE_SHARE_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/share/share_map.h"
#include "parse/maybe.h"

struct share_run_vm {
	pid_t pid;
	char name[256];            /* "" when unknown */
	int64_t pages;             /* resident pages read */
	int64_t zero_pages, unique_pages, error_bound_pages;
	int64_t sketch_bytes;
	char partial_reason[32];   /* "" when its sketch is complete, else sketch_gap_name */
};

struct share_run {
	double t;                  /* Unix seconds: when the map was taken */
	int64_t sample_n;          /* 1/N of the hash space */
	int64_t page_size;
	int64_t host_pages, zero_pages;
	int64_t mergeable_savings_bytes; /* what KSM would save with every VM merged */
	maybe_i64 ksm_saved_bytes;       /* what was saved then: pages_sharing, and the VMs' empty pages
					    already on the zero page (store column ksm_saved) */
	size_t n;
	struct share_run_vm *vms;
	int64_t *pairs;            /* n x n: [a * n + b] a's pages whose content b also holds; [a * n + a]
				      the pages a duplicates within itself */
};

/* The run of n sketches and their map, taken at t. 0 or -ENOMEM. */
int share_run_of(const struct sketch *s, size_t n, const struct share_map *m, double t, int64_t page_size,
		 maybe_i64 ksm_saved_bytes, struct share_run *ret);
/* An empty run of n VMs (pairs all 0). 0 or -ENOMEM. */
int share_run_alloc(size_t n, struct share_run *ret);
void share_run_free(struct share_run *r);

/* The VMs in an order that keeps those sharing the most side by side (single linkage: the pairs
 * from the most shared down join their clusters end to end, the clusters then by size); ret_order
 * holds n indexes. 0 or -ENOMEM. */
int share_run_order(const struct share_run *r, size_t *ret_order);

#endif
