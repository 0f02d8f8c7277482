/* The experiment behind `vmhost bench accounting`: VM-like processes (core/bench/workload.h) merged by
 * real KSM, two scenarios of guests, and for each way of getting a VM's memory its median cost per
 * VM and its error against the exact PSS (smaps_rollup). Library code: never prints; progress goes
 * to a callback, errors to a struct bench_accounting_error.
 *
 *   struct bench_accounting_result *res;
 *   struct bench_accounting_error err;
 *   if (bench_accounting_run(root, &cfg, on_step, arg, &res, &err) < 0)
 *           report(&err);
 */
#ifndef VMHOST_CORE_BENCH_ACCOUNTING_H
#define VMHOST_CORE_BENCH_ACCOUNTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/model/account.h"
#include "core/bench/workload.h"
#include "io/io.h"
#include "parse/parse.h"

#define BENCH_ACCOUNTING_MAX_GUESTS 16
#define BENCH_ACCOUNTING_ASYMMETRIC_GUESTS 4 /* the asymmetric scenario's mix has four guests */
#define BENCH_ACCOUNTING_SETTLE_SECONDS 600  /* how long KSM may take to settle */

struct bench_accounting_config {
	unsigned guests; /* 2 to BENCH_ACCOUNTING_MAX_GUESTS per scenario */
	unsigned repeat; /* reads per method and guest */
	uint64_t guest_bytes;
};

/* The ways of getting a VM's memory, in the order they are reported. */
enum bench_accounting_method {
	BENCH_ACCOUNTING_STATUS,     /* /proc/PID/status VmRSS */
	BENCH_ACCOUNTING_ESTIMATE,   /* status + ksm_stat + the host's KSM counters */
	BENCH_ACCOUNTING_CALIBRATED, /* the estimate with per-VM weights from earlier exact reads */
	BENCH_ACCOUNTING_CGROUP,     /* Proxmox VE 9's: the VM's cgroup charge without page cache */
	BENCH_ACCOUNTING_SMAPS,      /* smaps_rollup: the exact PSS */
	BENCH_ACCOUNTING_NMETHODS
};
/* What is timed beyond the methods: the host's KSM counters, read once per sample for all VMs. */
enum { BENCH_ACCOUNTING_HOST_KSM = BENCH_ACCOUNTING_NMETHODS, BENCH_ACCOUNTING_NREADS };
/* "status-rss", "vmhost-estimate", "calibrated", "cgroup", "smaps_rollup". */
const char *bench_accounting_method_name(enum bench_accounting_method m);

enum bench_accounting_kind { BENCH_ACCOUNTING_SYMMETRIC, BENCH_ACCOUNTING_ASYMMETRIC, BENCH_ACCOUNTING_NSCENARIOS };

struct bench_accounting_guest {
	struct workload_spec spec;
	const char *label;
	pid_t pid;
	struct pss_calibration cal; /* from one exact read while KSM was still merging */
	struct mem_counters mem;
	struct smaps_rollup exact;
	maybe_i64 estimate, bound, calibrated;
	char cgroup[160];           /* its memory cgroup under <sys> (fs/cgroup/memory/vmhost-bench-...); "" none */
	const char *cgroup_scope;   /* the same as a scope path ("/vmhost-bench-...") */
	maybe_i64 cgroup_bytes;     /* cgroup_memory_without_cache of it */
};

struct bench_accounting_scenario {
	const char *name; /* "symmetric", "asymmetric" */
	size_t n;
	struct bench_accounting_guest g[BENCH_ACCOUNTING_MAX_GUESTS];
	double merge_seconds;
	int64_t pages_shared, pages_sharing;
	/* median seconds per VM of each read once merged (the host's KSM counters: per sample) */
	double read_seconds[BENCH_ACCOUNTING_NREADS];
	double smaps_unmerged_seconds; /* smaps_rollup per VM before merging, on huge pages */
	int cgroup_version;            /* the guests' memory cgroups: 1 (v1 controller), 2, 0 none */
	char cgroup_why[128];          /* why there are none */
};

/* |v - exact PSS| in percent of the guest's RSS; NaN when any of them is unknown or RSS is 0. */
double bench_accounting_error_pct(maybe_i64 v, const struct bench_accounting_guest *g);
/* The estimate's stated bound in percent of RSS; NaN when unknown. */
double bench_accounting_bound_pct(const struct bench_accounting_guest *g);

/* One method in one scenario, over its guests. */
struct bench_accounting_summary {
	double cost_seconds;        /* bench_accounting_cost */
	double vs_smaps;            /* smaps_rollup's cost over this one: how many times cheaper */
	double max_error_pct;       /* over the guests whose error is known; NaN when none is */
	double mean_error_pct;
};
void bench_accounting_summarize(const struct bench_accounting_scenario *s, enum bench_accounting_method m,
				struct bench_accounting_summary *ret);

/* Why a call failed, in words. */
struct bench_accounting_error {
	const char *what; /* "KSM", "starting guests", "memory" */
	char why[128];
	bool need_root;   /* a KSM setting could not be written */
};

/* What the experiment is doing: said before it starts a scenario's guests and before it lets KSM
 * merge them. */
enum bench_accounting_step { BENCH_ACCOUNTING_STARTING, BENCH_ACCOUNTING_MERGING };
typedef void (*bench_accounting_step_fn)(void *arg, enum bench_accounting_step step,
					 const struct bench_accounting_scenario *s);

struct bench_accounting_result {
	struct bench_accounting_config cfg;
	struct bench_accounting_scenario scenarios[BENCH_ACCOUNTING_NSCENARIOS];
};
/* KSM set up for the experiment (advisor off, no zero-page merging, no smart scan), then every
 * scenario in turn. The caller holds the KSM lock and has begun the KSM guard (it restores the
 * settings afterwards). 0 and the result, or a negative errno at the first failure. */
int bench_accounting_run(const struct io_root *root, const struct bench_accounting_config *cfg,
			 bench_accounting_step_fn on_step, void *arg, struct bench_accounting_result **ret,
			 struct bench_accounting_error *err);
/* NULL does nothing. */
void bench_accounting_result_free(struct bench_accounting_result *r);

/* For the KSM guard's on_signal: stops the running scenario's guests, removes their cgroups, then
 * ends the process by the signal. Async-signal-safe. */
void bench_accounting_on_signal(int sig);

/* For tests: the parts of a scenario and of its summary. */

/* The guests of a scenario, none started. Symmetric: cfg->guests of one image (70% identical
 * across guests, 10% zero); asymmetric: up to four sharing 80/50/20%, and one with 60% zero pages
 * on 4 KiB pages. */
void bench_accounting_scenario_init(struct bench_accounting_scenario *s, enum bench_accounting_kind kind,
				    const struct bench_accounting_config *cfg);
/* The median seconds per VM of one read (a method or BENCH_ACCOUNTING_HOST_KSM) over every guest
 * and repeat; NaN without reads or memory. */
double bench_accounting_time(const struct io_root *root, const struct bench_accounting_scenario *s, int read,
			     unsigned repeat);
/* The guest's figure by a method: RSS, the estimate, the calibrated estimate, the exact PSS. */
maybe_i64 bench_accounting_value(const struct bench_accounting_guest *g, enum bench_accounting_method m);
/* The cost per VM and sample of a method; the calibrated one also pays its share of the exact
 * reads that keep the weights fresh. */
double bench_accounting_cost(const struct bench_accounting_scenario *s, enum bench_accounting_method m);

#endif
