/* Where a VM's memory sits and where its threads may run: a cgroup's memory.numa_stat (v2: bytes;
 * v1: pages), one line per kind of memory with a figure per node ("anon N0=4096 N1=0", v1
 * "anon=1 N0=1 N1=0"); a process's numa_maps; a task's allowed CPUs. */
#ifndef VMHOST_PARSE_NUMA_STAT_H
#define VMHOST_PARSE_NUMA_STAT_H

#include "parse/parse.h"

#define NUMA_NODES_MAX 64

/* Adds the N<i>= figures of the line of kind into nodes[i] (i < NUMA_NODES_MAX; nodes must hold
 * that many) and sets *ret_n to the highest node seen + 1 when that is more. 0, -ENOENT when no
 * line is of that kind, -EINVAL when its line is malformed (nodes untouched). */
int parse_numa_stat(const char *buf, size_t len, const char *kind, int64_t *nodes, size_t *ret_n);

/* A task's status line "Cpus_allowed_list:\t0-3,8" into bits (as parse_cpu_list). 0, -ENOENT
 * without the line, -EINVAL or -ERANGE as parse_cpu_list. */
int parse_cpus_allowed(const char *buf, size_t len, uint64_t *bits, size_t nbits);

/* /proc/PID/numa_maps summed over its mappings: bytes on each node (a line's N<i>= pages times its
 * kernelpagesize_kB), and the part of them on hugetlbfs (lines marked "huge"). */
struct numa_maps_sum {
	size_t nnodes; /* the highest node seen + 1 */
	int64_t bytes[NUMA_NODES_MAX];
	int64_t hugetlb_bytes[NUMA_NODES_MAX];
};

/* 0 with *ret filled, or -EINVAL (ret untouched): a cut last line, a node figure without its
 * page size, a node past NUMA_NODES_MAX, a figure that is no number or overflows. */
int parse_numa_maps(const char *buf, size_t len, struct numa_maps_sum *ret);

#endif
