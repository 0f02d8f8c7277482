/* The per-VM table of `vmhost mem` (and of the overview): its columns, one row per VM (human,
 * CSV and JSON from the same cells), and the host block above it. */
#ifndef VMHOST_OUT_VM_TABLE_H
#define VMHOST_OUT_VM_TABLE_H

#include "core/model/host.h"
#include "core/kvm/kvm_host.h"
#include "core/model/vm.h"
#include "out/doc.h"
#include "out/table.h"

enum {
	VMC_PID, VMC_NAME, VMC_VMM, VMC_UUID, VMC_CGROUP, VMC_HELPERS, VMC_GUEST_RAM, VMC_RSS, VMC_RSS_ANON, VMC_RSS_FILE,
	VMC_RSS_SHMEM, VMC_SWAP, VMC_KSM_MERGING, VMC_KSM_ZERO, VMC_KSM_PROFIT, VMC_KSM_SAVED, VMC_PSS, VMC_PSS_METHOD, VMC_PSS_BOUND,
	VMC_HUGETLB, VMC_HUGETLB_PRIVATE, VMC_HUGETLB_SHARED, VMC_MEMORY_COST,
	VMC_OVERHEAD, VMC_OVERHEAD_METHOD, VMC_CPU_PCT, VMC_DELAY_PCT, VMC_CPU, VMC_VCPU_DELAY, VMC_WAIT_PCT_ALIAS,
	VMC_VCPU_WAIT_ALIAS, VMC_VCPUS, VMC_CG_MEM, VMC_CG_LIMIT, VMC_OOM, VMC_CG_HUGETLB,
	VMC_PRESSURE, /* memory, cpu, io: 4 columns each */
	VMC_KSM_MERGEABLE = VMC_PRESSURE + 4 * PRESSURE_NKINDS, VMC_KSM_REASON, VMC_BALLOON, VMC_GUEST_AVAIL, VMC_GUEST_FREE,
	VMC_GUEST_CACHES, VMC_GUEST_WHY,
	/* appended: CSV readers keep their column numbers */
	VMC_KSM_RMAP, VMC_KSM_YIELD, VMC_KSMD_SHARE,
	VMC_IO_READ, VMC_IO_WRITE, VMC_IO_RCHAR, VMC_IO_WCHAR, VMC_IO_READ_RATE, VMC_IO_WRITE_RATE, VMC_IO_CG_READ,
	VMC_IO_CG_WRITE, VMC_IO_WHY, VMC_IFACES, VMC_IFACES_WHY, VMC_THP, VMC_NUMA,
	VMC_DISKS, VMC_DISKS_SOURCE, VMC_DISKS_WHY,
	VMC_HALT_POLL, VMC_BALLOON_MAX,
	VMC_UID, VMC_MONITOR_SOURCE, VMC_MONITOR_TRUSTED, VMC_MONITOR_WHY,
	VMC_STALLS, /* stalls.{wpcopy,swapin,reclaim,thrashing,compact,irq}_seconds, wpcopy_count, stall_percent */
	VMC_STALLS_WHY = VMC_STALLS + STALL_NKINDS + 2, VMC_KSM_NET_SAVED, VMC_KSM_NET_KSMD, VMC_KSM_NET_COPY,
	VMC_RECLAIM, VMC_RECLAIM_BOUND, VMC_RECLAIM_AGE, VMC_RECLAIM_BALLOON, VMC_RECLAIM_FPR, VMC_RECLAIM_CACHES,
	VMC_RECLAIM_FPR_ON, VMC_RECLAIM_POLLING, VMC_RECLAIM_RESIDENT, VMC_RECLAIM_FREE_IN_SWAP, VMC_RECLAIM_WHY,
	VMC_SWAP_PSS, VMC_NCOLS
};

extern const struct col vm_cols[VMC_NCOLS];

/* Shows the huge pages (HUGETLB) and the cost with them (COST) in the human table when a VM of
 * vms has huge pages: without them the cost is PSS, and the table stays as it was. */
void vm_cols_hugetlb(struct col *cols, const struct vm_list *vms);

/* Adds the VM's row (check table_error after filling). */
void vm_table_row(struct table *t, const struct vm *vm, const struct host *host);

/* The host's memory, KVM settings (kvm NULL: not read) and KSM: the overview's lines, mem's
 * "host" (with "kvm") and "ksm" objects. */
void vm_host_block(struct doc *d, const struct host *h, const struct kvm_host *kvm);

/* The vendor module's parameters that decide a guest's speed, in the overview's line and as
 * labels of vmhost_kvm_info (a fixed set: bounded cardinality). */
extern const char *const kvm_key_params[];
extern const size_t kvm_nkey_params;

#endif
