/* ksm sweep's experiment: for each pages_to_scan/sleep_millisecs setting, unmerge everything
 * (run=2), start (run=1) and time N full scans (the first scan after an unmerge starts from the
 * beginning, so it counts), with ksmd's CPU over those scans, the bytes saved after them, and what
 * the host's guests paid meanwhile: their write-protect copy stalls (writes to pages KSM merged,
 * from delay accounting). It changes KSM's settings through the guard (core/tune/ksm_guard.h) and
 * never prints. */
#ifndef VMHOST_CORE_BENCH_KSM_SWEEP_H
#define VMHOST_CORE_BENCH_KSM_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/model/ksm.h"
#include "parse/maybe.h"

#define KSM_SWEEP_MAX_SETTINGS 32
#define KSM_SWEEP_MAX_SCANS 256

struct ksm_sweep_result {
	int64_t pages_to_scan, sleep_millisecs; /* the setting, given */
	int scans;                /* full scans measured */
	double scan_seconds;      /* median; NaN when none */
	double scan_min, scan_max;
	double ksmd_cpu_percent;
	double pages_per_second;
	maybe_i64 saved_bytes, general_profit;
	bool timed_out;           /* fewer than the scans asked for within the timeout */
	double copy_stall_seconds; /* the guests' copy stalls over those scans, summed; NaN unread */
	double copy_stall_percent; /* the same per second of them, percent of one thread */
};

/* Called before each setting is measured (the command says which on stderr). */
typedef void (*ksm_sweep_progress_fn)(const struct ksm_sweep_result *setting, void *arg);

/* Measures each setting of res[0..n) in turn, after an unmerge: nscans (1 to KSM_SWEEP_MAX_SCANS)
 * full scans, at most timeout seconds each setting; first is sm's sample before any change
 * (advisor_mode is set to none when the advisor is on: it owns pages_to_scan). The guests are the
 * VMs found on sm's root as each setting starts; where delay accounting cannot be read, why
 * (KSM_SWEEP_WHY_MAX bytes) says so and the copy stalls are NaN, else it is "". The caller holds
 * the KSM lock, has begun the KSM guard and restores the settings after. 0 with the count of
 * settings measured in *ret_done; -EINTR when a stop was requested; another negative errno. */
#define KSM_SWEEP_WHY_MAX 200
int ksm_sweep_run(struct ksm_sampler *sm, const struct ksm_sample *first, struct ksm_sweep_result *res, int n,
		  int nscans, double timeout, ksm_sweep_progress_fn progress, void *arg, int *ret_done, char *why);

#endif
