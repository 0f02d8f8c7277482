/* Populating anonymous memory the ways a hypervisor can, timed: what `vmhost bench alloc` measures.
 * Library code: never prints; returns 0 or a negative errno. */
#ifndef VMHOST_CORE_ALLOC_H
#define VMHOST_CORE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/io.h"

enum alloc_strategy {
	ALLOC_TOUCH_4K,          /* write one byte per 4 KiB page, THP off */
	ALLOC_TOUCH_THP,         /* the same on MADV_HUGEPAGE memory */
	ALLOC_POPULATE_4K,       /* mmap(MAP_POPULATE), THP off */
	ALLOC_POPULATE_THP,      /* the kernel's mm_populate on MADV_HUGEPAGE memory */
	ALLOC_MADV_POPULATE_4K,  /* madvise(MADV_POPULATE_WRITE), THP off (QEMU's way) */
	ALLOC_MADV_POPULATE_THP, /* the same on MADV_HUGEPAGE memory (QEMU's default for RAM) */
	ALLOC_HUGETLBFS,         /* MAP_HUGETLB from the reserved pool, populated like QEMU does */
	ALLOC_MADV_POPULATE_THP_TAIL, /* MADV_POPULATE_WRITE on each huge page's last 4 KiB first:
				       * the kernel then clears the huge page in ascending order */
	ALLOC_NSTRATEGIES
};

const char *alloc_strategy_name(enum alloc_strategy s);
/* Returns the strategy for its name, or -EINVAL. */
int alloc_strategy_from_name(const char *name);

/* What this host offers, probed once. */
struct alloc_env {
	char thp_mode[16];          /* "always", "madvise", "never"; "" without THP */
	bool madv_populate_write;   /* the kernel knows MADV_POPULATE_WRITE (5.14+) */
	int64_t page_bytes;         /* base page size */
	int64_t hugepage_bytes;     /* Hugepagesize; 0 when unknown */
	int64_t hugepages_free;     /* HugePages_Free; 0 when unknown */
	bool can_mlock;             /* mlock of large ranges allowed (CAP_IPC_LOCK or a big limit) */
};
int alloc_env_probe(const struct io_root *root, struct alloc_env *ret);

/* NULL when strategy s can populate len bytes here; else a sentence saying why not. */
const char *alloc_unsupported(enum alloc_strategy s, uint64_t len, const struct alloc_env *env, char *why,
			      size_t cap);

struct alloc_region {
	uint8_t *addr;
	size_t len;        /* what the caller asked for */
	size_t map_len;    /* what is mapped (rounded up to the page size of the strategy) */
	void *map_base;    /* the mapping to unmap (addr may sit inside it for alignment) */
	size_t base_len;
};

/* Maps len bytes and populates every page with strategy s over threads threads. On failure
 * nothing stays mapped. */
int alloc_create(enum alloc_strategy s, size_t len, unsigned threads, const struct alloc_env *env,
		 struct alloc_region *ret);
/* munmap; a NULL or empty region is fine. */
int alloc_destroy(struct alloc_region *r);

/* Writes every byte of an already-populated region with threads threads (the reference). */
int alloc_memset(struct alloc_region *r, unsigned threads, int byte);

/* Resident bytes of the region (mincore). */
int alloc_resident_bytes(const struct alloc_region *r, uint64_t *ret);

/* Bandwidth in GiB/s; NaN when the time is not positive. */
double alloc_gib_per_s(uint64_t bytes, double seconds);

/* The size guard: may len more bytes be allocated, leaving MemAvailable above the margin?
 * margin = max(1 GiB, MemTotal / 8). Returns true when safe; ret_margin gets the margin. */
bool alloc_size_safe(uint64_t len, int64_t mem_available, int64_t mem_total, uint64_t *ret_margin);

#endif
