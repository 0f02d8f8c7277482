/* The sharing map of a fleet: from the sketches of n VMs (one key, one rate), which content each
 * holds that others hold too, what each would free merged with the others or alone, and the
 * error bound of each figure counted from a sample. `vmhost share`, `share plan` and the stored
 * share runs read it. */
#ifndef VMHOST_CORE_SHARE_MAP_H
#define VMHOST_CORE_SHARE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/share/sketch.h"

/* One kept hash and the sketch it came from. */
struct sketch_tag {
	uint64_t hash;
	size_t vm;
};
/* Every kept hash of n sketches with its sketch's index, sorted by hash then sketch: each
 * content's holders side by side. A fresh array of *ret_total, or NULL (no memory). */
struct sketch_tag *sketch_tag_all(const struct sketch *s, size_t n, size_t *ret_total);

struct share_vm {
	int64_t self_shared_pages; /* duplicates within itself: pages KSM frees in it alone */
	int64_t unique_pages;      /* non-zero pages found nowhere else, nor twice in it */
	int64_t *shared_with;      /* [j]: its pages whose content VM j also holds (0 for itself) */
	int64_t error_bound_pages; /* two standard errors of a figure counted from its sample */
};

struct share_map {
	size_t n;
	struct share_vm *vms;
	int64_t pages;             /* resident pages read */
	int64_t zero_pages;        /* empty pages holding memory: KSM frees each (use_zero_pages) */
	int64_t zero_mapped_pages; /* empty pages already on the zero page (KSM's ksm_zero_pages, a
				      huge page's split, pages only ever read): savings made */
	int64_t mergeable_pages;   /* pages freed with every VM merged and converged: each content
				      kept once, every empty page on the zero page */
};

/* The map of n sketches of one key and rate. zero_pages_free: the kernel maps empty pages to
 * the zero page (use_zero_pages), so each saves a page; else they merge into one KSM page. 0,
 * -EINVAL (sketches of different rates), -ENOMEM. */
int share_map_build(const struct sketch *s, size_t n, bool zero_pages_free, struct share_map *ret);
void share_map_free(struct share_map *m);

#endif
