/* PSS by sampling: a bounded number of pages of the process, picked at random, each weighed as
 * PSS weighs it (1 / the number of processes mapping it, from /proc/PID/pagemap and
 * /proc/kpagecount; /proc/kpageflags tells a KSM page mapped once from a private one). The
 * sample teaches the VM's own weights of its KSM pages and of its file and shmem pages (a struct
 * pss_calibration), and pss_estimate() applies them to the exact page counts: cheap like the
 * estimate, accurate like smaps_rollup, whatever the VM's size (docs/accounting.md, "Sampled
 * PSS"). Needs root (pagemap gives page frame numbers only to CAP_SYS_ADMIN, kpagecount and
 * kpageflags are root's). */
#ifndef VMHOST_CORE_PSS_SAMPLE_H
#define VMHOST_CORE_PSS_SAMPLE_H

#include <stddef.h>
#include <sys/types.h>

#include "core/model/account.h"
#include "io/io.h"

struct vm_list;
struct host;

struct pss_sample {
	size_t ksm_pages, share_pages;       /* sampled pages of each kind */
	size_t ksm_clusters, share_clusters; /* reads that found pages of it */
	double ksm_weight, share_weight;     /* mean PSS weight; NaN when none was sampled */
	double ksm_se, share_se;             /* standard errors of the means (over clusters) */
	size_t reads;                    /* preads spent */
	double seconds;                  /* time spent */
};

/* One-shot refinement: samples the VMs whose stated error bound is largest first, within
 * budget_seconds in all, and replaces their estimate (pss_method "sampled"); the VMs left
 * estimated then share the KSM weight the sampled ones did not take (the host's KSM pages minus
 * theirs). Returns how many VMs were sampled. */
int pss_refine(const struct io_root *root, const struct host *host, struct vm_list *vms, double budget_seconds);

/* For tests: the formula pss_refine states each sampled VM's error with. */

/* The error bound of the sampled PSS: per kind, its bytes times three standard errors of its mean
 * weight plus the "rule of three" for pages never seen (the estimate's own bound for a kind
 * sampled too thinly). */
maybe_i64 pss_sample_bound(const struct mem_counters *m, const struct pss_sample *s, const struct ksm_sysfs *k,
			   int64_t page_size);

#endif
