#include "core/model/vm_numa.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vm_numa_unknown(struct vm_numa *ret) { memset(ret, 0, sizeof(*ret)); }

/* The nodes of the CPUs a thread is allowed on, into *nodes. 0 or a negative errno. */
static int thread_nodes(const struct io_root *root, const struct host_numa *host, pid_t pid, pid_t tid,
			uint64_t *nodes)
{
	char buf[4096];
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/task/%d/status", (int)pid, (int)tid);
	if (n < 0)
		return (int)n;
	uint64_t cpus[HOST_CPUS_MAX / 64] = {0};
	int r = parse_cpus_allowed(buf, (size_t)n, cpus, HOST_CPUS_MAX);
	if (r < 0)
		return r;
	for (int c = 0; c < HOST_CPUS_MAX; c++)
		if ((cpus[c / 64] >> (c % 64) & 1) && host->cpu_node[c] >= 0)
			*nodes |= UINT64_C(1) << host->cpu_node[c];
	return 0;
}

void vm_vcpu_nodes_read(const struct io_root *root, const struct host_numa *host, pid_t pid,
			const struct vm_cpu *cpu, struct vm_numa *ret)
{
	ret->vcpu_nodes_known = false;
	ret->vcpu_nodes = 0;
	const char *why = host->nnodes <= 0 ? "no NUMA topology (/sys/devices/system/node)"
			  : !cpu->vcpus_known ? "vCPU threads not read"
			  : !cpu->nvcpus      ? "no vCPU threads found"
					      : NULL;
	if (why) {
		snprintf(ret->vcpu_nodes_why, sizeof(ret->vcpu_nodes_why), "%s", why);
		return;
	}
	uint64_t nodes = 0;
	if (host->nnodes == 1)
		nodes = 1; /* every CPU is node 0's */
	for (size_t i = 0; host->nnodes > 1 && i < cpu->nvcpus; i++) {
		int r = thread_nodes(root, host, pid, cpu->vcpus[i].tid, &nodes);
		if (r < 0) {
			snprintf(ret->vcpu_nodes_why, sizeof(ret->vcpu_nodes_why), "vCPU %d's status (task %d): %s",
				 cpu->vcpus[i].index, (int)cpu->vcpus[i].tid,
				 r == -ENOENT ? "no Cpus_allowed_list" : strerror(-r));
			return;
		}
	}
	ret->vcpu_nodes = nodes;
	ret->vcpu_nodes_known = true;
	ret->vcpu_nodes_why[0] = '\0';
}

void vm_numa_maps_read(const struct io_root *root, const pid_t *pids, size_t npids, struct vm_numa *ret)
{
	struct numa_maps_sum sum = {0};
	ret->maps_known = false;
	for (size_t i = 0; i < npids; i++) {
		char *buf;
		size_t len;
		struct numa_maps_sum one;
		int r = io_read_alloc(root, IO_PROC, &buf, &len, "%d/numa_maps", (int)pids[i]);
		if (r == 0) {
			r = parse_numa_maps(buf, len, &one);
			free(buf);
		}
		if (r < 0 && i > 0)
			continue; /* a helper that exits is no longer counted */
		if (r < 0) {
			snprintf(ret->maps_why, sizeof(ret->maps_why), "numa_maps: %s",
				 r == -EINVAL ? "malformed or cut" : strerror(-r));
			return;
		}
		for (size_t k = 0; k < one.nnodes; k++) {
			sum.bytes[k] += one.bytes[k];
			sum.hugetlb_bytes[k] += one.hugetlb_bytes[k];
		}
		sum.nnodes = one.nnodes > sum.nnodes ? one.nnodes : sum.nnodes;
	}
	ret->maps = sum;
	ret->maps_known = true;
	ret->maps_why[0] = '\0';
}
