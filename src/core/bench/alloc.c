#include "core/bench/alloc.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/model/ksm.h"
#include "parse/parse.h"
#include "core/model/host.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif

#define THP_BYTES ((size_t)2 << 20) /* chunks and mappings align to this, so THP can cover them */

static const char *const strategy_names[ALLOC_NSTRATEGIES] = {
	[ALLOC_TOUCH_4K] = "touch-4k",
	[ALLOC_TOUCH_THP] = "touch-thp",
	[ALLOC_POPULATE_4K] = "populate-4k",
	[ALLOC_POPULATE_THP] = "populate-thp",
	[ALLOC_MADV_POPULATE_4K] = "madv-populate-write-4k",
	[ALLOC_MADV_POPULATE_THP] = "madv-populate-write-thp",
	[ALLOC_HUGETLBFS] = "hugetlbfs",
	[ALLOC_MADV_POPULATE_THP_TAIL] = "madv-populate-write-thp-tail",
};

const char *alloc_strategy_name(enum alloc_strategy s)
{
	return (unsigned)s < ALLOC_NSTRATEGIES ? strategy_names[s] : "?";
}

int alloc_strategy_from_name(const char *name)
{
	for (int i = 0; i < ALLOC_NSTRATEGIES; i++)
		if (strcmp(name, strategy_names[i]) == 0)
			return i;
	return -EINVAL;
}

static bool is_thp(enum alloc_strategy s)
{
	return s == ALLOC_TOUCH_THP || s == ALLOC_POPULATE_THP || s == ALLOC_MADV_POPULATE_THP ||
	       s == ALLOC_MADV_POPULATE_THP_TAIL;
}

static bool is_4k(enum alloc_strategy s)
{
	return s == ALLOC_TOUCH_4K || s == ALLOC_POPULATE_4K || s == ALLOC_MADV_POPULATE_4K;
}

int alloc_env_probe(const struct io_root *root, struct alloc_env *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->page_bytes = host_page_size();

	char buf[8192];
	ssize_t n = io_read(root, IO_SYS, buf, sizeof(buf), "kernel/mm/transparent_hugepage/enabled");
	if (n > 0 && parse_sysfs_choice(buf, ret->thp_mode, sizeof(ret->thp_mode)) < 0)
		ret->thp_mode[0] = '\0';

	n = io_read(root, IO_PROC, buf, sizeof(buf), "meminfo");
	struct meminfo mi;
	if (n > 0 && parse_meminfo(buf, (size_t)n, &mi) >= 0) {
		ret->hugepage_bytes = mi.hugepage_size.known ? mi.hugepage_size.v : 0;
		ret->hugepages_free = mi.hugepages_free.known ? mi.hugepages_free.v : 0;
	}

	/* The kernel tells whether it knows MADV_POPULATE_WRITE by accepting it (EINVAL otherwise). */
	void *p = mmap(NULL, (size_t)ret->page_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	ret->madv_populate_write = madvise(p, (size_t)ret->page_bytes, MADV_POPULATE_WRITE) == 0;
	munmap(p, (size_t)ret->page_bytes);

	struct rlimit rl;
	ret->can_mlock = geteuid() == 0 || (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY);
	return 0;
}

const char *alloc_unsupported(enum alloc_strategy s, uint64_t len, const struct alloc_env *env, char *why,
			      size_t cap)
{
	if (is_thp(s)) {
		if (!env->thp_mode[0]) {
			snprintf(why, cap, "this kernel has no transparent huge pages");
			return why;
		}
		if (strcmp(env->thp_mode, "never") == 0) {
			snprintf(why, cap, "transparent huge pages are off (transparent_hugepage/enabled is never)");
			return why;
		}
	}
	if ((s == ALLOC_MADV_POPULATE_4K || s == ALLOC_MADV_POPULATE_THP || s == ALLOC_MADV_POPULATE_THP_TAIL) &&
	    !env->madv_populate_write) {
		snprintf(why, cap, "this kernel has no MADV_POPULATE_WRITE (Linux 5.14+)");
		return why;
	}
	if (s == ALLOC_POPULATE_THP && strcmp(env->thp_mode, "always") != 0 && !env->can_mlock) {
		snprintf(why, cap, "THP is in %s mode, so populating needs mlock of the whole range (root)",
			 env->thp_mode);
		return why;
	}
	if (s == ALLOC_HUGETLBFS) {
		if (env->hugepage_bytes <= 0) {
			snprintf(why, cap, "no hugetlbfs huge page size known");
			return why;
		}
		uint64_t need = (len + (uint64_t)env->hugepage_bytes - 1) / (uint64_t)env->hugepage_bytes;
		if ((uint64_t)env->hugepages_free < need) {
			snprintf(why, cap,
				 "needs %llu free huge pages of %lld KiB, the pool has %lld (reserve them in "
				 "/proc/sys/vm/nr_hugepages)",
				 (unsigned long long)need, (long long)env->hugepage_bytes / 1024,
				 (long long)env->hugepages_free);
			return why;
		}
	}
	return NULL;
}

/* ---- work split over threads ---- */

enum alloc_op { OP_TOUCH, OP_MAP_POPULATE, OP_MADV_POPULATE, OP_MADV_POPULATE_TAIL, OP_MLOCK, OP_MEMSET };

struct chunk {
	enum alloc_op op;
	uint8_t *addr;
	size_t len;
	size_t stride; /* OP_TOUCH: bytes between touches */
	int byte;      /* OP_MEMSET */
	int err;       /* 0 or a positive errno */
};

static void *run_chunk(void *arg)
{
	struct chunk *c = arg;
	if (!c->len)
		return NULL;
	switch (c->op) {
	case OP_TOUCH:
		for (size_t off = 0; off < c->len; off += c->stride)
			((volatile uint8_t *)c->addr)[off] = 1;
		break;
	case OP_MAP_POPULATE:
		if (mmap(c->addr, c->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE,
			 -1, 0) == MAP_FAILED)
			c->err = errno;
		break;
	case OP_MADV_POPULATE:
		if (madvise(c->addr, c->len, MADV_POPULATE_WRITE) < 0)
			c->err = errno;
		break;
	case OP_MADV_POPULATE_TAIL:
		/* A huge page is cleared so that the faulting 4 KiB comes last (cache-hot for the
		 * faulting thread); faulting at its last 4 KiB makes that an ascending sweep, which
		 * the CPU writes about twice as fast as the descending one a fault at its start
		 * gets. The whole-range call afterwards fills any 4 KiB fallback. */
		for (size_t off = THP_BYTES; off <= c->len; off += THP_BYTES)
			if (madvise(c->addr + off - c->stride, c->stride, MADV_POPULATE_WRITE) < 0) {
				c->err = errno;
				return NULL;
			}
		if (madvise(c->addr, c->len, MADV_POPULATE_WRITE) < 0)
			c->err = errno;
		break;
	case OP_MLOCK:
		/* mlock runs the same mm_populate as MAP_POPULATE, on a range already marked for THP. */
		/* Raw syscalls: sanitizer runtimes turn the libc wrappers into no-ops. */
		if (syscall(SYS_mlock, c->addr, c->len) < 0 || syscall(SYS_munlock, c->addr, c->len) < 0)
			c->err = errno;
		break;
	case OP_MEMSET:
		memset(c->addr, c->byte, c->len);
		break;
	}
	return NULL;
}

/* Splits [addr, addr+len) into threads chunks aligned to align and runs op on each in parallel. */
static int run_parallel(enum alloc_op op, uint8_t *addr, size_t len, unsigned threads, size_t align, size_t stride,
			int byte)
{
	if (threads < 1)
		threads = 1;
	struct chunk *chunks = calloc(threads, sizeof(*chunks));
	pthread_t *tids = calloc(threads, sizeof(*tids));
	if (!chunks || !tids) {
		free(chunks);
		free(tids);
		return -ENOMEM;
	}
	size_t per = (len / threads + align - 1) / align * align;
	size_t off = 0;
	for (unsigned i = 0; i < threads; i++) {
		size_t n = off >= len ? 0 : (len - off < per || i == threads - 1 ? len - off : per);
		chunks[i] = (struct chunk){.op = op, .addr = addr + off, .len = n, .stride = stride, .byte = byte};
		off += n;
	}
	unsigned started = 0;
	int r = 0;
	/* Chunk 0 runs on this thread: a single-threaded run creates no thread at all. */
	for (unsigned i = 1; i < threads; i++) {
		int e = pthread_create(&tids[i], NULL, run_chunk, &chunks[i]);
		if (e) {
			r = -e;
			break;
		}
		started = i;
	}
	if (r == 0)
		run_chunk(&chunks[0]);
	for (unsigned i = 1; i <= started; i++)
		pthread_join(tids[i], NULL);
	for (unsigned i = 0; i < threads && r == 0; i++)
		if (chunks[i].err)
			r = -chunks[i].err;
	free(chunks);
	free(tids);
	return r;
}

/* ---- regions ---- */

/* An anonymous mapping of len bytes rounded up to the page size, its start aligned to 2 MiB. */
static int map_aligned(size_t len, size_t page, struct alloc_region *ret)
{
	size_t map_len = (len + page - 1) / page * page;
	size_t base_len = map_len + THP_BYTES;
	uint8_t *base = mmap(NULL, base_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	uint8_t *addr = (uint8_t *)(((uintptr_t)base + THP_BYTES - 1) & ~(uintptr_t)(THP_BYTES - 1));
	/* Trim the slack so the region is exactly one mapping. */
	if (addr > base)
		munmap(base, (size_t)(addr - base));
	size_t tail = (size_t)(base + base_len - (addr + map_len));
	if (tail)
		munmap(addr + map_len, tail);
	*ret = (struct alloc_region){.addr = addr, .len = len, .map_len = map_len, .map_base = addr,
				     .base_len = map_len};
	return 0;
}

static int populate(enum alloc_strategy s, struct alloc_region *r, unsigned threads, const struct alloc_env *env)
{
	size_t page = (size_t)env->page_bytes;
	switch (s) {
	case ALLOC_TOUCH_4K:
	case ALLOC_TOUCH_THP:
		return run_parallel(OP_TOUCH, r->addr, r->map_len, threads, THP_BYTES, page, 0);
	case ALLOC_POPULATE_4K:
		return run_parallel(OP_MAP_POPULATE, r->addr, r->map_len, threads, THP_BYTES, page, 0);
	case ALLOC_POPULATE_THP:
		/* MAP_POPULATE runs inside mmap, before MADV_HUGEPAGE can mark the range: it yields
		 * huge pages only when THP is "always"; otherwise the marked range goes through the
		 * same populate path via mlock. */
		if (strcmp(env->thp_mode, "always") == 0)
			return run_parallel(OP_MAP_POPULATE, r->addr, r->map_len, threads, THP_BYTES, page, 0);
		return run_parallel(OP_MLOCK, r->addr, r->map_len, threads, THP_BYTES, page, 0);
	case ALLOC_MADV_POPULATE_4K:
	case ALLOC_MADV_POPULATE_THP:
		return run_parallel(OP_MADV_POPULATE, r->addr, r->map_len, threads, THP_BYTES, page, 0);
	case ALLOC_MADV_POPULATE_THP_TAIL:
		return run_parallel(OP_MADV_POPULATE_TAIL, r->addr, r->map_len, threads, THP_BYTES, page, 0);
	case ALLOC_HUGETLBFS: {
		size_t huge = (size_t)env->hugepage_bytes;
		if (env->madv_populate_write)
			return run_parallel(OP_MADV_POPULATE, r->addr, r->map_len, threads, huge, huge, 0);
		return run_parallel(OP_TOUCH, r->addr, r->map_len, threads, huge, huge, 0);
	}
	case ALLOC_NSTRATEGIES:
		break;
	}
	return -EINVAL;
}

int alloc_create(enum alloc_strategy s, size_t len, unsigned threads, const struct alloc_env *env,
		 struct alloc_region *ret)
{
	char why[256];
	if ((unsigned)s >= ALLOC_NSTRATEGIES || len == 0)
		return -EINVAL;
	if (alloc_unsupported(s, len, env, why, sizeof(why)))
		return -EOPNOTSUPP;
	struct alloc_region r;
	int e;
	if (s == ALLOC_HUGETLBFS) {
		size_t huge = (size_t)env->hugepage_bytes;
		size_t map_len = (len + huge - 1) / huge * huge;
		void *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		r = (struct alloc_region){.addr = p, .len = len, .map_len = map_len, .map_base = p, .base_len = map_len};
	} else {
		e = map_aligned(len, (size_t)env->page_bytes, &r);
		if (e < 0)
			return e;
	}
	/* 4 KiB strategies switch THP off for the process while they populate: MAP_POPULATE
	 * replaces the mapping, so a per-range MADV_NOHUGEPAGE would not survive. */
	bool thp_off = is_4k(s) && env->thp_mode[0] && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0;
	if (is_4k(s))
		madvise(r.addr, r.map_len, MADV_NOHUGEPAGE);
	if (is_thp(s) && madvise(r.addr, r.map_len, MADV_HUGEPAGE) < 0) {
		e = -errno;
		goto fail;
	}
	e = populate(s, &r, threads, env);
	if (e < 0)
		goto fail;
	if (is_4k(s))
		madvise(r.addr, r.map_len, MADV_NOHUGEPAGE); /* khugepaged must not collapse it later */
	if (thp_off)
		prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	*ret = r;
	return 0;
fail:
	if (thp_off)
		prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	alloc_destroy(&r);
	return e;
}

int alloc_destroy(struct alloc_region *r)
{
	if (!r || !r->map_base)
		return 0;
	int e = munmap(r->map_base, r->base_len) < 0 ? -errno : 0;
	*r = (struct alloc_region){0};
	return e;
}

int alloc_memset(struct alloc_region *r, unsigned threads, int byte)
{
	if (!r || !r->addr)
		return -EINVAL;
	return run_parallel(OP_MEMSET, r->addr, r->map_len, threads, THP_BYTES, 0, byte);
}

int alloc_resident_bytes(const struct alloc_region *r, uint64_t *ret)
{
	size_t page = (size_t)host_page_size();
	size_t pages = (r->map_len + page - 1) / page;
	unsigned char *vec = malloc(pages ? pages : 1);
	if (!vec)
		return -ENOMEM;
	if (mincore(r->addr, r->map_len, vec) < 0) {
		int e = -errno;
		free(vec);
		return e;
	}
	uint64_t resident = 0;
	for (size_t i = 0; i < pages; i++)
		if (vec[i] & 1)
			resident += page;
	free(vec);
	*ret = resident;
	return 0;
}

double alloc_gib_per_s(uint64_t bytes, double seconds)
{
	if (!(seconds > 0))
		return NAN;
	return (double)bytes / (1024.0 * 1024 * 1024) / seconds;
}

bool alloc_size_safe(uint64_t len, int64_t mem_available, int64_t mem_total, uint64_t *ret_margin)
{
	uint64_t margin = (uint64_t)1 << 30;
	if (mem_total > 0 && (uint64_t)mem_total / 8 > margin)
		margin = (uint64_t)mem_total / 8;
	if (ret_margin)
		*ret_margin = margin;
	if (mem_available < 0)
		return false;
	return (uint64_t)mem_available >= margin && len <= (uint64_t)mem_available - margin;
}
