/* The host as a whole: memory and KSM, read once per sample. */
#ifndef VMHOST_CORE_HOST_H
#define VMHOST_CORE_HOST_H

#include "core/model/ksm.h"
#include "parse/numa_stat.h"
#include "parse/parse.h"

/* The NUMA nodes and their CPUs (/sys/devices/system/node/online, nodeN/cpulist). */
#define HOST_CPUS_MAX 1024
struct host_numa {
	int nnodes;                           /* the highest online node + 1; 0 unknown */
	signed char cpu_node[HOST_CPUS_MAX];  /* each CPU's node; -1 none or unknown */
};

/* One size of huge pages reserved (/sys/kernel/mm/hugepages/hugepages-NkB). */
struct hugepage_pool {
	int64_t page_bytes;
	maybe_i64 total, free; /* pages: nr_hugepages, free_hugepages */
};
#define HOST_HUGEPAGE_POOLS 4

struct host {
	struct meminfo mem;
	bool mem_known;
	/* Every size's pool; read only when meminfo's Hugetlb is not a known 0. hugepages_known:
	 * the pools were read (none reserved is a known empty list). */
	struct hugepage_pool hugepages[HOST_HUGEPAGE_POOLS];
	size_t nhugepages;
	bool hugepages_known;
	struct ksm_sysfs ksm;
	int64_t page_size_bytes;
	long clock_ticks_per_second;
	bool schedstats; /* kernel.sched_schedstats is 1: threads' sched files have wait_sum */
	int delayacct;   /* kernel.task_delayacct: 1 on, 0 off, a negative errno unknown (core/base/stalls.h) */
	struct host_numa numa;
};

/* This machine's page size (sysconf, read once): the one source of it. */
int64_t host_page_size(void);

/* Bytes of huge pages reserved and free over every pool; unknown when the pools are. */
maybe_i64 host_hugetlb_total_bytes(const struct host *h);
maybe_i64 host_hugetlb_free_bytes(const struct host *h);

/* Reads meminfo and KSM. Returns 0 or a negative errno when /proc/meminfo is unreadable. */
int host_read(const struct io_root *root, struct host *ret);

#endif
