#include "core/model/vm_numa.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The nodes of the CPUs a thread is allowed on, into *nodes. 0, -ESRCH when the thread is gone,
 * or another negative errno with why set. */
static int thread_nodes(const struct io_root *root, const struct host_numa *host, pid_t pid, const struct vcpu *v,
			uint64_t *nodes, char *why, size_t cap)
{
	char buf[4096];
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/task/%d/status", (int)pid, (int)v->tid);
	if (n == -ENOENT || n == -ESRCH)
		return -ESRCH;
	uint64_t cpus[HOST_CPUS_MAX / 64] = {0};
	int r = n < 0 ? (int)n : parse_cpus_allowed(buf, (size_t)n, cpus, HOST_CPUS_MAX);
	if (r < 0) {
		snprintf(why, cap, "vCPU %d's status (task %d): %s", v->index, (int)v->tid,
			 n < 0 ? strerror(-r) : r == -ENOENT ? "no Cpus_allowed_list" : "unreadable Cpus_allowed_list");
		return r;
	}
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
	uint64_t nodes = host->nnodes == 1 ? 1 : 0; /* one node: every CPU is node 0's, nothing to read */
	size_t read = 0;
	for (size_t i = 0; host->nnodes > 1 && i < cpu->nvcpus; i++) {
		/* A vCPU thread gone since it was listed (unplugged, or the VM stopping) is left out. */
		int r = thread_nodes(root, host, pid, &cpu->vcpus[i], &nodes, ret->vcpu_nodes_why,
				     sizeof(ret->vcpu_nodes_why));
		if (r < 0 && r != -ESRCH)
			return;
		read += r == 0;
	}
	if (!nodes) {
		snprintf(ret->vcpu_nodes_why, sizeof(ret->vcpu_nodes_why), "%s",
			 read ? "its vCPUs' CPUs are in no node's cpulist" : "its vCPU threads are gone");
		return;
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
