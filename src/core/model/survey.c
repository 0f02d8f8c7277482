#include "core/model/survey.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/base/stop.h"
#include "core/model/ksm.h"
#include "io/peer/virt.h"
#include "core/model/guest_view.h"
#include "core/model/pss_sample.h"
#include "core/model/vm_memo.h"
#include "core/model/vm_visit.h"

/* The cheap reading: host, discovery, counters. memo: the VMs remembered, or NULL. */
static int reading(const struct io_root *root, const struct survey_opts *o, bool exact,
		   const struct vm_list *before, struct vm_memo *memo, struct host *host, struct vm_list *vms,
		   enum survey_step *step)
{
	int r = host_read(root, host);
	if (r < 0) {
		*step = SURVEY_HOST;
		return r;
	}
	if ((r = vm_discover_known(root, o->pids, o->npids, memo, vms)) < 0) {
		*step = SURVEY_PROCESSES;
		return r;
	}
	vm_memo_taps(memo, vms);
	vm_measure_all(root, host, vms, before, exact ? VM_MEASURE_EXACT : 0);
	return 0;
}

/* CPU, wait, I/O and stall rates of the VMs present at both readings (pid + start time identify
 * them); ksmd_seconds: ksmd's CPU over the interval (NaN unknown), shared out by each VM's share. */
static void rates(const struct vm_list *before, struct vm_list *after, const struct host *host, double seconds,
		  double ksmd_seconds)
{
	for (size_t i = 0; i < after->n; i++) {
		struct vm *vm = &after->vms[i];
		const struct vm *was = vm_list_find(before, vm);
		if (!was)
			continue;
		vm->stalls.ksmd_cpu_seconds = ksmd_seconds * ksmd_vm_cpu_share(&vm->mem, &host->ksm);
		vm_cpu_rates(&was->cpu, &vm->cpu, seconds);
		vm_io_rates(&was->io, &vm->io, seconds);
		vm_stalls_rates(&was->stalls, &vm->stalls, seconds);
	}
}

/* ksmd's CPU so far (pid 0: look for it first); unknown without a ksmd. */
static maybe_i64 ksmd_cpu(const struct io_root *root, pid_t *pid)
{
	int64_t ns;
	if (!*pid && ksmd_find(root, pid) < 0)
		return UNKNOWN;
	return ksmd_cpu_ns(root, *pid, &ns) == 0 ? MAYBE(ns) : UNKNOWN;
}

int survey_take(const struct io_root *root, const struct survey_opts *o, struct host *ret_host,
		struct vm_list *ret_vms, enum survey_step *ret_step)
{
	struct host host;
	struct vm_list vms, before = {0};
	struct vm_memo memo = {0};
	bool use_memo = o->memo_dir && !o->before;
	if (use_memo)
		vm_memo_load(root, o->memo_dir, &memo);
	/* The reading before (top's) is a memo too: its processes known by their stat alone. */
	bool known_before = o->before && vm_memo_of_list(o->before, &memo) == 0;
	if (known_before) {
		memo.due = o->due;
		memo.due_cls = o->due_cls;
	}
	struct vm_memo *known = use_memo || known_before ? &memo : NULL;
	double t0 = 0;
	pid_t ksmd = 0;
	maybe_i64 ksmd_was = UNKNOWN;
	int r;
	if (o->interval_seconds > 0) {
		if ((r = reading(root, o, false, o->before, known, &host, &before, ret_step)) < 0)
			goto out;
		ksmd_was = ksmd_cpu(root, &ksmd);
		t0 = clock_monotonic_seconds();
		if (o->under_way)
			o->under_way(o->under_way_cls);
		sleep_for(o->interval_seconds - (clock_monotonic_seconds() - t0));
	}
	if ((r = reading(root, o, o->exact, o->interval_seconds > 0 ? &before : o->before, known, &host, &vms,
			 ret_step)) < 0) {
		vm_list_free(&before);
		goto out;
	}
	if (o->interval_seconds > 0) {
		maybe_i64 ksmd_now = ksmd_was.known ? ksmd_cpu(root, &ksmd) : UNKNOWN;
		double seconds = clock_monotonic_seconds() - t0;
		double ksmd_seconds = ksmd_now.known && ksmd_now.v >= ksmd_was.v ? (double)(ksmd_now.v - ksmd_was.v) / 1e9 : NAN;
		rates(&before, &vms, &host, seconds, ksmd_seconds);
		vm_list_free(&before);
	}
	if (!o->exact)
		pss_refine(root, &host, &vms, o->pss_budget_seconds, known);
	if (o->guest || o->disks) {
		struct vm_qmp_visit v = {.guest = o->guest, .disks = o->disks, .timeout_ms = SURVEY_GUEST_TIMEOUT_MS,
					 .poll_seconds = o->guest_poll_seconds, .now_wall = clock_wall_seconds(),
					 .no_libvirt = root->proc && strcmp(root->proc, "/proc"), .root = root};
		vm_list_read_qmp(&vms, &host, &v, NULL, o->libvirt_uri);
	}
	if (use_memo)
		vm_memo_save(o->memo_dir, &memo, &vms); /* a memo not written costs the next run some reads */
	*ret_host = host;
	*ret_vms = vms;
	r = 0;
out:
	vm_memo_free(&memo);
	return r;
}
