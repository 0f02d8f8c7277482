/* The accounting formulas, one place each (docs/accounting.md derives them and their bounds). */
#ifndef VMHOST_CORE_ACCOUNT_H
#define VMHOST_CORE_ACCOUNT_H

#include "core/model/ksm.h"
#include "parse/parse.h"
#include "parse/cmdline/vmcmd.h"

/* A process's (or a VM's, helpers included) memory counters, all cheap to read. Bytes. */
struct mem_counters {
	maybe_i64 rss, rss_anon, rss_file, rss_shmem, swap;
	maybe_i64 ksm_rmap_items, ksm_merging_pages, ksm_zero_pages, ksm_profit;
	maybe_i64 ksm_mergeable, ksm_merge_any; /* 1 yes, 0 no (ksm_stat); of the VMM process only */
	maybe_i64 threads;                      /* of the VMM process only (status Threads) */
	maybe_i64 uid;                          /* of the VMM process only: its real uid (status Uid) */
	/* hugetlbfs pages mapped (status HugetlbPages), outside rss. A VM's processes map the same
	 * guest RAM (a vhost-user helper maps the VMM's): the most of any one of them, not a sum. */
	maybe_i64 hugetlb;
};

/* Adds b into a; a field stays known only if known in both (hugetlb: the larger of the two). */
void mem_counters_add(struct mem_counters *a, const struct mem_counters *b);

/* What an exact read (smaps_rollup) taught about one VM, for amortized refreshes: the mean PSS
 * weight of one of its KSM mappings and of its file/shmem pages. */
struct pss_calibration {
	bool valid;
	double ksm_weight;   /* PSS of its KSM-mapped bytes / KSM-mapped bytes, 0..1; NaN when the
				exact read saw no KSM page (the host-wide mean is used then) */
	double share_weight; /* PSS of its file+shmem bytes / RssFile+RssShmem, 0..1 */
};

/* Cheap PSS: RSS with each KSM-mapped page weighted by the host-wide mean weight (or a VM's
 * calibrated weights when cal is valid). Unknown when the inputs are, and when the VM maps KSM
 * pages of no known weight (KSM's sysfs files unreadable or missing): never RSS then. */
maybe_i64 pss_estimate(const struct mem_counters *m, const struct ksm_sysfs *k, int64_t page_size,
		       const struct pss_calibration *cal);

/* What KSM saves this VM: each KSM mapping costs its weight instead of a whole page, and each
 * KSM zero page costs nothing: ksm_mapped x (1 - weight) + ksm_zero_pages x page size. Unknown,
 * not 0, when the VM maps KSM pages of no known weight. */
maybe_i64 ksm_vm_saved(const struct mem_counters *m, const struct ksm_sysfs *k, int64_t page_size,
		       const struct pss_calibration *cal);

/* KSM's yield on a VM: the pages it merged (to other pages or the zero page) per page ksmd
 * tracks for it, (ksm_merging_pages + ksm_zero_pages) / ksm_rmap_items, 0..1. NaN when unknown or
 * when ksmd tracks none of its pages. */
double ksm_vm_yield(const struct mem_counters *m);

/* The VM's share of ksmd's CPU: its rmap items over all of them (ksmd's work per scan grows with
 * the pages it tracks), 0..1. NaN when unknown or when ksmd tracks no page. */
double ksmd_vm_cpu_share(const struct mem_counters *m, const struct ksm_sysfs *k);

/* Worst-case error of pss_estimate without calibration, in bytes: each KSM mapping weighs between
 * 1/max_page_sharing and 1/2, and file/shmem pages between 0 and 1 (they are counted in full). */
maybe_i64 pss_estimate_bound(const struct mem_counters *m, const struct ksm_sysfs *k, int64_t page_size);
/* The same bound around another mean weight w (e.g. the mean of the VMs not sampled). */
maybe_i64 pss_estimate_bound_with(const struct mem_counters *m, const struct ksm_sysfs *k, int64_t page_size,
				  double w);

/* Calibrates from an exact PSS of the same VM read at (nearly) the same time. */
struct pss_calibration pss_calibrate(const struct mem_counters *m, const struct smaps_rollup *exact,
				     int64_t page_size);

/* Why KSM does not merge a VM's guest RAM, from its command line, the kernel's ksm_stat flags
 * and the host's KSM state: "mem-merge-off", "hugetlbfs", "shared-memory", "not-marked",
 * "ksm-stopped", or NULL when nothing stands in the way (docs/accounting.md). */
const char *ksm_unmergeable_reason(const struct vm_config *cfg, const struct mem_counters *m,
				   const struct ksm_sysfs *k);

/* Cheap overhead: resident memory beyond guest RAM, assuming guest RAM is fully populated
 * (resident, swapped, or merged into the zero page). A lower bound while the guest is still
 * touching its RAM; unknown when guest RAM is. */
maybe_i64 overhead_estimate(const struct mem_counters *m, const struct vm_config *cfg, int64_t page_size);

/* Guest RAM (some of it) on hugetlbfs: the command line says so (cfg->ram_hugetlb), or, whatever
 * its form, the process maps huge pages (m->hugetlb > 0). */
bool ram_on_hugetlb(const struct vm_config *cfg, const struct mem_counters *m);

/* ksm_mergeable as shown for a VM: false when the VM's own reason stands in the way
 * (ksm_unmergeable_reason: mem-merge-off, hugetlbfs, shared-memory, not-marked), else the
 * kernel's word (ksm_process_mergeable); the host's ksm-stopped leaves it as the kernel says. */
maybe_i64 ksm_vm_mergeable(const struct vm_config *cfg, const struct mem_counters *m, const struct ksm_sysfs *k);

/* What a VM's huge pages cost the host. shared_mappers > 0: private_bytes whole plus
 * shared_bytes (summed over its processes that map shared huge pages) divided among those
 * mappers. Otherwise (the split unknown: status only) hugetlb_bytes whole. Unknown when the
 * figures it needs are. */
maybe_i64 hugetlb_cost(maybe_i64 hugetlb_bytes, maybe_i64 private_bytes, maybe_i64 shared_bytes, unsigned shared_mappers);

/* What the VM's memory costs the host: PSS plus the cost of its huge pages. Unknown when either
 * is (a VM with no huge pages has a known 0, an old kernel without HugetlbPages an unknown). */
maybe_i64 memory_cost(maybe_i64 pss_bytes, maybe_i64 hugetlb_cost_bytes);

/* For tests: the parts of the estimate. */

/* Mean PSS weight of one KSM mapping host-wide: pages_shared / (pages_shared + pages_sharing).
 * NaN when no page is merged. */
double ksm_mean_weight(const struct ksm_sysfs *k);
/* The kernel's word on whether the process offers memory to KSM: ksm_mergeable or ksm_merge_any
 * (1 yes, 0 no), unknown on kernels without them. */
maybe_i64 ksm_process_mergeable(const struct mem_counters *m);

#endif
