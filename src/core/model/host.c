#include "core/model/host.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/base/rate.h"
#include "core/base/stalls.h"

int64_t host_page_size(void)
{
	static int64_t page;
	if (!page) {
		long ps = sysconf(_SC_PAGESIZE);
		page = ps > 0 ? ps : 4096;
	}
	return page;
}

static maybe_i64 read_count(const struct io_root *root, const char *pool, const char *file)
{
	char buf[64];
	int64_t v;
	ssize_t n = io_read(root, IO_SYS, buf, sizeof(buf), "kernel/mm/hugepages/%s/%s", pool, file);
	return n > 0 && parse_i64(buf, &v) == 0 && v >= 0 ? MAYBE(v) : UNKNOWN;
}

/* The huge page pools; none reserved (meminfo's Hugetlb 0) reads no more files. */
static void hugepages_read(const struct io_root *root, struct host *h)
{
	if (h->mem.hugetlb.known && h->mem.hugetlb.v == 0) {
		h->hugepages_known = true;
		return;
	}
	char **names;
	size_t n;
	if (io_list_dir(root, IO_SYS, &names, &n, "kernel/mm/hugepages") < 0)
		return;
	for (size_t i = 0; i < n && h->nhugepages < HOST_HUGEPAGE_POOLS; i++) {
		struct hugepage_pool *p = &h->hugepages[h->nhugepages];
		if (parse_hugepages_dir(names[i], &p->page_bytes) < 0)
			continue;
		p->total = read_count(root, names[i], "nr_hugepages");
		p->free = read_count(root, names[i], "free_hugepages");
		h->nhugepages++;
	}
	io_free_names(names, n);
	h->hugepages_known = true;
}

static maybe_i64 pool_bytes(const struct host *h, bool free)
{
	if (!h->hugepages_known)
		return UNKNOWN;
	int64_t sum = 0;
	for (size_t i = 0; i < h->nhugepages; i++) {
		maybe_i64 pages = free ? h->hugepages[i].free : h->hugepages[i].total;
		if (!pages.known)
			return UNKNOWN;
		sum += pages.v * h->hugepages[i].page_bytes;
	}
	return MAYBE(sum);
}

maybe_i64 host_hugetlb_total_bytes(const struct host *h) { return pool_bytes(h, false); }
maybe_i64 host_hugetlb_free_bytes(const struct host *h) { return pool_bytes(h, true); }

/* The online nodes and each one's CPUs; nnodes stays 0 when the tree says nothing usable. */
static void numa_read(const struct io_root *root, struct host_numa *ret)
{
	memset(ret->cpu_node, -1, sizeof(ret->cpu_node));
	char buf[4096];
	uint64_t online = 0;
	ssize_t n = io_read(root, IO_SYS, buf, sizeof(buf), "devices/system/node/online");
	if (n <= 0 || parse_cpu_list(buf, (size_t)n, &online, NUMA_NODES_MAX) < 0)
		return;
	int nnodes = 0;
	for (int node = 0; node < NUMA_NODES_MAX; node++) {
		uint64_t cpus[HOST_CPUS_MAX / 64] = {0};
		if (!(online >> node & 1))
			continue;
		n = io_read(root, IO_SYS, buf, sizeof(buf), "devices/system/node/node%d/cpulist", node);
		if (n < 0)
			return; /* an online node without its CPUs: no map rather than a wrong one */
		/* A node of memory only has an empty list. */
		if (n > 1 && parse_cpu_list(buf, (size_t)n, cpus, HOST_CPUS_MAX) < 0)
			return;
		for (int c = 0; c < HOST_CPUS_MAX; c++)
			if (cpus[c / 64] >> (c % 64) & 1)
				ret->cpu_node[c] = (signed char)node;
		nnodes = node + 1;
	}
	ret->nnodes = nnodes;
}

int host_read(const struct io_root *root, struct host *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->page_size_bytes = host_page_size();
	ret->clock_ticks_per_second = ticks_per_second();
	ksm_read(root, &ret->ksm);
	char buf[8192];
	ret->schedstats = io_read(root, IO_PROC, buf, sizeof(buf), "sys/kernel/sched_schedstats") > 0 && buf[0] == '1';
	ret->delayacct = delayacct_read(root);
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "meminfo");
	if (n < 0)
		return (int)n;
	if (parse_meminfo(buf, (size_t)n, &ret->mem) < 0)
		return -EINVAL;
	ret->mem_known = true;
	hugepages_read(root, ret);
	numa_read(root, &ret->numa);
	return 0;
}
