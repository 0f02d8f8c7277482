/* Where a VM's vCPUs may run: the NUMA nodes of the CPUs each vCPU thread is allowed on (its
 * status' Cpus_allowed_list, against the host's node CPU lists); and with --exact where its memory
 * sits by its processes' numa_maps: bytes per node, and the part on hugetlbfs (which the cgroup's
 * memory.numa_stat, struct vm_cgroup, does not count). Unknown figures stay unknown, with their
 * reason. */
#ifndef VMHOST_CORE_VM_NUMA_H
#define VMHOST_CORE_VM_NUMA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/model/host.h"
#include "core/model/vm_cost.h"
#include "io/io.h"
#include "parse/numa_stat.h"

#define VM_NUMA_WHY_MAX 96

struct vm_numa {
	bool vcpu_nodes_known;
	uint64_t vcpu_nodes;                  /* bit n: some vCPU may run on a CPU of node n */
	char vcpu_nodes_why[VM_NUMA_WHY_MAX]; /* why unknown ("" when known) */
	bool maps_known;                      /* --exact: numa_maps of the VMM and its helpers read */
	struct numa_maps_sum maps;
	char maps_why[VM_NUMA_WHY_MAX];       /* why unknown ("" when known, or not asked) */
};

/* The nodes the VM's vCPUs (cpu, as vcpus_read found them) may run on. On a host of one node
 * that is node 0 without a read. Never fails: unknown with its reason. */
void vm_vcpu_nodes_read(const struct io_root *root, const struct host_numa *host, pid_t pid,
			const struct vm_cpu *cpu, struct vm_numa *ret);

/* numa_maps of pids (the VMM first, then its helpers) summed into ret->maps. Never fails: unknown
 * with its reason (a helper that exits meanwhile is left out). */
void vm_numa_maps_read(const struct io_root *root, const pid_t *pids, size_t npids, struct vm_numa *ret);

#endif
