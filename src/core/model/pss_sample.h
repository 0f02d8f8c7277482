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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/model/account.h"
#include "io/io.h"

struct vm_list;
struct host;
struct vm;
struct vm_memo;

struct pss_sample {
	size_t ksm_pages, share_pages;       /* sampled pages of each kind */
	size_t ksm_clusters, share_clusters; /* reads that found pages of it */
	double ksm_weight, share_weight;     /* mean PSS weight; NaN when none was sampled */
	double ksm_se, share_se;             /* standard errors of the means (over clusters) */
	size_t reads;                    /* preads spent */
	double seconds, cpu_seconds;     /* time spent, and CPU time */
	bool complete;                   /* every kind known well enough (else stopped by its time or reads) */
};

/* What reading one VM's PSS costs, in CPU seconds of the reading thread (a loaded machine's waits
 * do not count), remembered from one run to the next (vm_memo.h) so that pss_refine reads a VM
 * exactly when that costs no more than sampling it. Zero: not known. */
struct pss_cost {
	double exact_seconds;  /* its last exact read (smaps_rollup of its processes) */
	double exact_at;       /* when it was last timed afresh (PSS_EXACT_TIMED), CLOCK_MONOTONIC seconds (this boot's) */
	int64_t exact_merging; /* its ksm_merging_pages then: merging splits huge pages, which the read then walks page by page */
	double sample_seconds; /* its last sample; one stopped at its cap is remembered as at least the cap */
	double seconds;        /* what this run spent on its PSS, either way (not remembered) */
};

/* One-shot refinement of the VMs whose stated error bound exceeds 2% of RSS, largest first, within
 * budget_seconds in all: each is read exactly (pss_method "exact") or sampled ("sampled"),
 * whichever costs less by what memo remembers of it (pss_choose; memo may be NULL: every VM
 * is new); the VMs left estimated then share the KSM weight the refined ones did not take (the
 * host's KSM pages minus theirs). Only where frames can be weighed (root: kpagecount and
 * kpageflags readable); no VM is refined otherwise. Returns how many VMs were refined. */
int pss_refine(const struct io_root *root, const struct host *host, struct vm_list *vms, double budget_seconds,
	       const struct vm_memo *memo);

/* Whether this run's cost record now tells what the remembered one (was; NULL: none) does not, so
 * that the memo is rewritten only then: a cost first timed or forgotten, a cost that moved by more
 * than half of the smaller (jitter of the CPU time of a small read is less), an exact read timed again five minutes or more later, or KSM mappings that moved
 * by more than an eighth. Nothing timed in this run (now's exact_seconds 0) is no news. */
bool pss_cost_news(const struct pss_cost *was, const struct pss_cost *now);

/* For tests and benchmarks: the rule and the formula pss_refine uses, and pss_refine sampling every
 * VM it refines, whatever an exact read would cost (what the sampler alone costs, and how close
 * it comes). */

int pss_refine_sampled(const struct io_root *root, const struct host *host, struct vm_list *vms, double budget_seconds);

/* How to read a VM's PSS now (pss_choose). */
enum pss_choice {
	PSS_SAMPLE,      /* a sample, capped at half the exact read's CPU time */
	PSS_EXACT,       /* exactly: a sample costs more, or could not cost less */
	PSS_EXACT_TIMED, /* exactly, to learn what that costs now: never timed, or no longer fresh */
};

/* How to read a VM's PSS now, given what its cost record c says, its ksm_merging_pages now, the
 * time now (CLOCK_MONOTONIC seconds) and the least a sample can cost here (CPU seconds). Timed
 * exactly when its exact cost is not known or no longer fresh (ten minutes since it was timed so,
 * or its KSM mappings moved by more than an eighth since): the sample's cost is then forgotten in
 * c, to be learned again. Else exactly when a sample of it cost half its exact read or more, or
 * when half its exact read is less than any sample costs; else a sample, of at most
 * *ret_sample_cap CPU seconds (half the exact read), so that a sample never costs more than the
 * exact read it replaces. */
enum pss_choice pss_choose(struct pss_cost *c, int64_t merging_now, double now, double sample_floor,
			   double *ret_sample_cap);

/* The error bound of the sampled PSS: per kind, its bytes times three standard errors of its mean
 * weight plus the "rule of three" for pages never seen (the estimate's own bound for a kind
 * sampled too thinly). */
maybe_i64 pss_sample_bound(const struct mem_counters *m, const struct pss_sample *s, const struct ksm_sysfs *k,
			   int64_t page_size);

#endif
