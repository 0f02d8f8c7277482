/* The host's KSM state: every /sys/kernel/mm/ksm file this kernel has. */
#ifndef VMHOST_CORE_KSM_H
#define VMHOST_CORE_KSM_H

#include <sys/types.h>

#include "io/io.h"
#include "parse/maybe.h"

struct ksm_sysfs {
	bool present; /* /sys/kernel/mm/ksm exists */
	maybe_i64 run, pages_to_scan, sleep_millisecs, pages_shared, pages_sharing, pages_unshared,
		pages_volatile, full_scans, pages_scanned, pages_skipped, max_page_sharing,
		merge_across_nodes, use_zero_pages, ksm_zero_pages, general_profit, smart_scan,
		stable_node_chains, stable_node_dups, stable_node_chains_prune_millisecs,
		advisor_max_cpu, advisor_min_pages_to_scan, advisor_max_pages_to_scan,
		advisor_target_scan_time;
	char advisor_mode[16]; /* the selected word; "" when the kernel has no advisor */
};

/* Integer files, in the order `vmhost ksm` lists them. */
struct ksm_file {
	const char *name;
	size_t offset; /* of a maybe_i64 in struct ksm_sysfs */
};
extern const struct ksm_file ksm_files[];
extern const size_t ksm_nfiles;

/* Reads every KSM file. Returns 0, or -ENOENT when the kernel has no KSM (present = false). */
int ksm_read(const struct io_root *root, struct ksm_sysfs *ret);

/* "running", "stopped", "unmerging" (run = 1, 0, 2), "n/a" when unknown. */
const char *ksm_run_word(maybe_i64 run);

/* KSM is there and running (run = 1). */
bool ksm_is_running(const struct ksm_sysfs *k);
/* KSM is there and known not to run: stopped or unmerging (run = 0, 2). Neither this nor
 * ksm_is_running when run is unknown or the kernel has no KSM. */
bool ksm_is_off(const struct ksm_sysfs *k);

/* Pages KSM saves host-wide: pages_sharing + ksm_zero_pages (0 where the kernel has no such
 * file); unknown without KSM or pages_sharing. */
maybe_i64 ksm_saved_pages(const struct ksm_sysfs *k);
/* The same in bytes: ksm_saved_pages x page size. */
maybe_i64 ksm_saved_bytes(const struct ksm_sysfs *k, int64_t page_size);

/* The pages ksmd tracks host-wide, one rmap item each: shared + sharing + unshared + volatile
 * (the kernel derives volatile from its own count, so the sum is that count). */
maybe_i64 ksm_rmap_items(const struct ksm_sysfs *k);

/* ksmd's pid (a kernel thread named "ksmd"); -ENOENT when there is none. */
int ksmd_find(const struct io_root *root, pid_t *ret);

/* ksmd's CPU time so far in ns: /proc/PID/schedstat (precise), else stat utime+stime ticks. */
int ksmd_cpu_ns(const struct io_root *root, pid_t pid, int64_t *ret);

#endif
