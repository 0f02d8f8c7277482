/* ksm sweep's experiment (core/bench/ksm_sweep.h). */
#include "core/bench/ksm_sweep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/stalls.h"
#include "core/base/stats.h"
#include "core/base/stop.h"
#include "core/model/host.h"
#include "core/model/vm.h"
#include "core/tune/ksm_guard.h"

/* run=2 and wait until nothing is merged (or 120 s). */
static int unmerge(struct ksm_sampler *sm) { return ksm_unmerge_wait(sm, 120, 0.1, stop_flag()); }

#define SWEEP_GUESTS_MAX 256

/* The guests' write-protect copy stalls when a setting starts: every VM found then. */
struct guest_copies {
	struct stall_reader *r;
	pid_t pid[SWEEP_GUESTS_MAX];
	double seconds[SWEEP_GUESTS_MAX];
	size_t n;
};

static void copies_start(const struct io_root *root, struct guest_copies *g)
{
	struct vm_list l;
	g->n = 0;
	if (!g->r->open || vm_discover(root, NULL, 0, &l) < 0)
		return;
	for (size_t i = 0; i < l.n && g->n < SWEEP_GUESTS_MAX; i++) {
		struct stalls s;
		if (l.vms[i].cfg.vmm == VMM_PROCESS || stall_read(g->r, l.vms[i].pid, true, &s) < 0)
			continue;
		g->pid[g->n] = l.vms[i].pid;
		g->seconds[g->n++] = s.seconds[STALL_WPCOPY];
	}
	vm_list_free(&l);
}

/* Their copy stalls since copies_start, summed (a guest gone since is left out); NaN unread. */
static double copies_since(const struct guest_copies *g)
{
	if (!g->r->open)
		return NAN;
	double sum = 0;
	for (size_t i = 0; i < g->n; i++) {
		struct stalls s;
		if (stall_read(g->r, g->pid[i], true, &s) == 0 && s.seconds[STALL_WPCOPY] >= g->seconds[i])
			sum += s.seconds[STALL_WPCOPY] - g->seconds[i];
	}
	return sum;
}

/* One setting: set, start, poll full_scans until nscans are done or the timeout; the medians. */
static int measure(struct ksm_sampler *sm, int nscans, double timeout, struct guest_copies *g,
		   struct ksm_sweep_result *res)
{
	int r = ksm_guard_set_int("pages_to_scan", res->pages_to_scan);
	if (!r)
		r = ksm_guard_set_int("sleep_millisecs", res->sleep_millisecs);
	if (r < 0)
		return r;
	struct ksm_sample first, s;
	if (ksm_sample_take(sm, &first) < 0)
		return -ENOENT;
	copies_start(&sm->root, g);
	if ((r = ksm_guard_set_int("run", 1)) < 0)
		return r;
	first.t = clock_monotonic_seconds();
	double times[KSM_SWEEP_MAX_SCANS], last_end = first.t;
	int64_t scans0 = first.k.full_scans.v;
	res->scans = 0;
	s = first;
	while (!stop_requested() && res->scans < nscans) {
		if (clock_monotonic_seconds() - first.t > timeout) {
			res->timed_out = true;
			break;
		}
		sleep_for(0.05);
		if (ksm_sample_take(sm, &s) < 0)
			return -ENOENT;
		int64_t done = s.k.full_scans.v - scans0;
		if (done > res->scans) {
			/* Several scans ending within one poll share its time evenly. */
			double each = (s.t - last_end) / (double)(done - res->scans);
			while (res->scans < done && res->scans < nscans)
				times[res->scans++] = each;
			last_end = s.t;
		}
	}
	if (stop_requested())
		return -EINTR;
	res->copy_stall_seconds = copies_since(g);
	res->copy_stall_percent = s.t > first.t ? 100.0 * res->copy_stall_seconds / (s.t - first.t) : NAN;
	struct ksm_rates rates;
	ksm_rates_compute(&first, &s, host_page_size(), NULL, &rates);
	res->ksmd_cpu_percent = rates.ksmd_cpu_percent;
	res->pages_per_second = rates.pages_scanned_per_second;
	res->saved_bytes = rates.saved_bytes;
	res->general_profit = rates.general_profit;
	res->scan_seconds = res->scan_min = res->scan_max = NAN;
	if (res->scans > 0) {
		sort_doubles(times, (size_t)res->scans);
		res->scan_min = times[0];
		res->scan_max = times[res->scans - 1];
		res->scan_seconds = median(times, (size_t)res->scans);
	}
	return 0;
}

int ksm_sweep_run(struct ksm_sampler *sm, const struct ksm_sample *first, struct ksm_sweep_result *res, int n,
		  int nscans, double timeout, ksm_sweep_progress_fn progress, void *arg, int *ret_done, char *why)
{
	int r = 0, done = 0;
	if (nscans < 1 || nscans > KSM_SWEEP_MAX_SCANS)
		return -EINVAL;
	struct stall_reader stalls;
	stall_reader_open(&sm->root, delayacct_read(&sm->root), &stalls);
	snprintf(why, KSM_SWEEP_WHY_MAX, "%s", stalls.open ? "" : stalls.why);
	struct guest_copies *g = malloc(sizeof(*g));
	if (!g) {
		stall_reader_close(&stalls);
		return -ENOMEM;
	}
	g->r = &stalls;
	if (first->k.advisor_mode[0] && strcmp(first->k.advisor_mode, "none"))
		r = ksm_guard_set("advisor_mode", "none");
	for (int i = 0; i < n && !stop_requested() && r >= 0; i++) {
		if (progress)
			progress(&res[i], arg);
		if ((r = unmerge(sm)) < 0 || (r = measure(sm, nscans, timeout, g, &res[i])) < 0)
			break;
		done++;
	}
	free(g);
	stall_reader_close(&stalls);
	if (stop_requested())
		return -EINTR;
	if (r < 0)
		return r;
	*ret_done = done;
	return 0;
}
