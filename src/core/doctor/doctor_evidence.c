#include "core/doctor/doctor.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/stats.h"
#include "core/base/stop.h"
#include "core/kvm/kvm.h"
#include "core/kvm/kvm_delta.h"
#include "core/kvm/kvm_halt.h"
#include "core/model/proc.h"
#include "core/tune/tuner_daemon.h"

static int count_online_cpus(const struct io_root *root)
{
	char buf[4096];
	ssize_t n = io_read(root, IO_SYS, buf, sizeof(buf), "devices/system/cpu/online");
	int c = n > 0 ? parse_cpu_list_count(buf, (size_t)n) : -1;
	return c > 0 ? c : -1;
}

static int count_numa_nodes(const struct io_root *root)
{
	char buf[4096];
	ssize_t n = io_read(root, IO_SYS, buf, sizeof(buf), "devices/system/node/online");
	int c = n > 0 ? parse_cpu_list_count(buf, (size_t)n) : -1;
	return c > 0 ? c : -1;
}

static const struct vm *vm_by_pid(const struct vm_list *l, pid_t pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->vms[i].pid == pid)
			return &l->vms[i];
	return NULL;
}

/* A VM no source could read: kept with the reader's reason. A guest without KVM (TCG: QEMU says
 * so, or none of its fds is a KVM VM) has no KVM counters to read, so it is not one. */
static void note_unreadable(const struct io_root *root, const struct kvm_vm_sample *now, const struct vm *vm,
			    struct doctor_evidence *e)
{
	if (strstr(now->unavailable, "not accel=kvm") || io_proc_fd_links_to(root, now->pid, "anon_inode:kvm-vm") == 0)
		return;
	struct doctor_unreadable *u = &e->unreadable[e->nunreadable++];
	*u = (struct doctor_unreadable){.pid = now->pid};
	snprintf(u->name, sizeof(u->name), "%s", vm ? vm->cfg.name : now->name);
	snprintf(u->why, sizeof(u->why), "%s", now->unavailable[0] ? now->unavailable : "no source gave its counters");
}

/* Counter c of a VM: its change between was and now, or now's total without an earlier read. */
static maybe_i64 counter_of(const struct kvm_reader *kr, int c, const struct kvm_vm_sample *was,
			    const struct kvm_vm_sample *now, double seconds)
{
	if (c < 0)
		return UNKNOWN;
	if (!was)
		return now->values[c];
	return kvm_change(kvm_counter_kind(kr, (size_t)c), was->values[c], now->values[c], seconds,
			  kvm_vm_appeared(was, now))
		.delta;
}

/* The exit reasons' port and MMIO accesses of a VM over the interval: the busiest and the sums. A
 * reason counter the earlier read (of was_n counters) did not have yet was opened during the
 * interval: its whole count is the interval's. */
static void reasons_of(const struct kvm_reader *kr, size_t was_n, const struct kvm_vm_sample *was,
		       const struct kvm_vm_sample *now, size_t now_n, double seconds, struct doctor_exits *x)
{
	x->top_reason_count = x->pio_count = x->mmio_count = UNKNOWN;
	for (size_t c = 0; was && c < now_n; c++) {
		const char *name = kvm_counter_name(kr, c);
		bool pio = !strncmp(name, "kvm_pio/", 8), mmio = !strncmp(name, "kvm_mmio/", 9);
		if (kvm_counter_kind(kr, c) != KVM_STAT_REASON || (!pio && !mmio))
			continue;
		maybe_i64 d = c < was_n ? counter_of(kr, (int)c, was, now, seconds) : now->values[c];
		if (!d.known)
			continue;
		maybe_i64 *sum = pio ? &x->pio_count : &x->mmio_count;
		*sum = MAYBE((sum->known ? sum->v : 0) + d.v);
		if (!x->top_reason_count.known || d.v > x->top_reason_count.v) {
			x->top_reason_count = d;
			snprintf(x->top_reason, sizeof(x->top_reason), "%s", name);
		}
	}
}

/* Exits of each VM (debugfs, or QMP): over the interval between a and b, or b's totals (a NULL). */
static int exits_from(const struct io_root *root, const struct kvm_reader *kr, const struct kvm_sample *a,
		      const struct kvm_sample *b, const struct vm_list *vms, struct doctor_evidence *e)
{
	int total_idx = kvm_counter_index(kr, "exits"), idx[DOCTOR_EXIT_NKINDS];
	for (int k = 0; k < DOCTOR_EXIT_NKINDS; k++)
		idx[k] = kvm_counter_index(kr, doctor_exit_counter(k));
	struct kvm_halt_index hx;
	kvm_halt_index(kr, &hx);
	e->exits = calloc(b->nvms ? b->nvms : 1, sizeof(*e->exits));
	e->unreadable = calloc(b->nvms ? b->nvms : 1, sizeof(*e->unreadable));
	if (!e->exits || !e->unreadable)
		return -ENOMEM;
	double seconds = a ? b->monotonic_seconds - a->monotonic_seconds : NAN;
	for (size_t i = 0; i < b->nvms; i++) {
		const struct kvm_vm_sample *now = &b->vms[i];
		const struct kvm_vm_sample *was = a ? kvm_sample_find(a, now->dir) : NULL;
		const struct vm *vm = vm_by_pid(vms, now->pid);
		if (now->source == KVM_SOURCE_NONE && vm)
			note_unreadable(root, now, vm, e);
		if (now->source == KVM_SOURCE_NONE || (a && !was))
			continue;
		struct doctor_exits *x = &e->exits[e->nexits];
		*x = (struct doctor_exits){.pid = now->pid, .over_interval = a != NULL, .seconds = seconds};
		snprintf(x->name, sizeof(x->name), "%s", vm ? vm->cfg.name : now->name);
		for (int k = -1; k < DOCTOR_EXIT_NKINDS; k++)
			*(k < 0 ? &x->exits : &x->kinds[k]) = counter_of(kr, k < 0 ? total_idx : idx[k], was, now, seconds);
		maybe_i64 ok = counter_of(kr, hx.success_ns, was, now, seconds);
		x->halt_poll_fail_ns = counter_of(kr, hx.fail_ns, was, now, seconds);
		x->halt_poll_ns = ok.known && x->halt_poll_fail_ns.known ? MAYBE(ok.v + x->halt_poll_fail_ns.v) : UNKNOWN;
		reasons_of(kr, a ? a->ncounters : 0, was, now, b->ncounters, seconds, x);
		if (x->exits.known)
			e->nexits++;
	}
	return 0;
}

static int cmp_rss_desc(const void *a, const void *b)
{
	const struct vm *x = *(const struct vm *const *)a, *y = *(const struct vm *const *)b;
	int64_t rx = x->mem.rss.known ? x->mem.rss.v : 0, ry = y->mem.rss.known ? y->mem.rss.v : 0;
	return rx < ry ? 1 : rx > ry ? -1 : (x->pid > y->pid) - (x->pid < y->pid);
}

/* The largest VM's read is timed this many times and its median kept: one read stalled by
 * another process for a moment says little about the walk's cost. */
#define SMAPS_LARGEST_READS 3

/* Reads PID's smaps_rollup `reads` times into *sr; *ret_seconds the median read's time. */
static int timed_smaps_read(const struct io_root *root, pid_t pid, size_t reads, struct smaps_rollup *sr,
			    double *ret_seconds)
{
	double t[SMAPS_LARGEST_READS];
	int r = 0;
	for (size_t k = 0; k < reads && r == 0; k++) {
		double t0 = clock_monotonic_seconds();
		r = proc_read_smaps_rollup(root, pid, sr);
		t[k] = clock_monotonic_seconds() - t0;
	}
	if (r == 0)
		*ret_seconds = median(t, reads);
	return r;
}

/* Times smaps_rollup reads, largest VMs first, until the budget is spent (at least the largest
 * VM's, read SMAPS_LARGEST_READS times). A VM without a scope (so without helpers) learns there
 * what its cgroup would have told: its THP, and on a NUMA host its numa_maps. */
static int time_smaps(const struct io_root *root, struct vm_list *vms, double budget, struct doctor_evidence *e)
{
	if (!(budget > 0) || !vms->n)
		return 0;
	struct vm **order = calloc(vms->n, sizeof(*order));
	e->smaps = calloc(vms->n, sizeof(*e->smaps));
	if (!order || !e->smaps) {
		free(order);
		return -ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < vms->n; i++)
		if (vms->vms[i].cfg.vmm != VMM_PROCESS)
			order[n++] = &vms->vms[i];
	qsort(order, n, sizeof(*order), cmp_rss_desc);
	double spent = 0;
	for (size_t i = 0; i < n && spent < budget; i++) {
		struct smaps_rollup sr;
		double dt = 0, t0 = clock_monotonic_seconds();
		int r = timed_smaps_read(root, order[i]->pid, i == 0 ? SMAPS_LARGEST_READS : 1, &sr, &dt);
		spent += clock_monotonic_seconds() - t0;
		if (r < 0)
			continue;
		if (!order[i]->thp_bytes.known && order[i]->nhelpers == 0)
			order[i]->thp_bytes = sr.anon_huge_pages;
		/* Where its memory sits, on a NUMA host, when no scope's numa_stat said (one walk more). */
		if (!order[i]->cg.numa_known && order[i]->nhelpers == 0 && e->host.numa.nnodes > 1) {
			double t1 = clock_monotonic_seconds();
			vm_numa_maps_read(root, &order[i]->pid, 1, &order[i]->numa);
			spent += clock_monotonic_seconds() - t1; /* within the budget, not in the smaps timing */
		}
		struct doctor_smaps *s = &e->smaps[e->nsmaps++];
		*s = (struct doctor_smaps){.pid = order[i]->pid, .rss_bytes = order[i]->mem.rss, .seconds = dt};
		snprintf(s->name, sizeof(s->name), "%s", order[i]->cfg.name);
	}
	free(order);
	return 0;
}

int doctor_gather(const struct io_root *root, const struct doctor_opts *o, struct doctor_evidence *ret,
		  enum survey_step *ret_step)
{
	struct doctor_evidence e = {.interval_seconds = o->interval_seconds, .smaps_slow_seconds = o->smaps_slow_seconds,
				     .host_cpus = -1, .numa_nodes = -1};
	bool interval = o->interval_seconds > 0;
	struct ksm_sampler ks;
	ksm_sampler_init(&ks, root);
	bool ksm = ksm_sample_take(&ks, &e.ksm_before) == 0;

	/* debugfs, else QEMU's query-stats (one short QMP visit per VM with a socket and read). */
	struct kvm_reader *kr = NULL;
	enum kvm_avail why;
	struct kvm_sample ka = {0}, kb = {0};
	bool have_ka = false;
	if (kvm_reader_open_with(root, KVM_READ_QMP | (o->reasons && interval ? KVM_READ_REASONS : 0), &kr, &why) < 0) {
		kr = NULL;
		snprintf(e.kvm_counters_why, sizeof(e.kvm_counters_why), "%s", kvm_avail_hint(why));
	} else {
		kvm_reader_libvirt(kr, o->libvirt_uri, 750);
		have_ka = interval && kvm_reader_sample(kr, &ka) == 0;
	}

	/* The balloon findings need the guest's view: QEMU's monitor, or libvirt's balloon statistics
	 * where libvirt holds it (survey's one visit, as mem --guest's). */
	struct survey_opts so = {.interval_seconds = o->interval_seconds, .memo_dir = o->memo_dir, .guest = true,
				 .libvirt_uri = o->libvirt_uri, .under_way = o->under_way, .under_way_cls = o->under_way_cls};
	int r = survey_take(root, &so, &e.host, &e.vms, ret_step);
	if (r < 0) {
		if (have_ka)
			kvm_sample_free(&ka);
		kvm_reader_close(kr);
		return r;
	}
	if (ksm && interval && ksm_sample_take(&ks, &e.ksm_after) == 0) {
		ksm_rates_compute(&e.ksm_before, &e.ksm_after, e.host.page_size_bytes, NULL, &e.ksm_rates);
		e.ksm_rates_known = true;
	} else if (ksm) {
		e.ksm_after = e.ksm_before;
	}
	if (kr && kvm_reader_sample_vms(kr, &e.vms, &kb) == 0) {
		if (o->reasons)
			snprintf(e.reasons_why, sizeof(e.reasons_why), "%s",
				 !interval ? "--reasons needs an interval" : kvm_reader_reasons_why(kr));
		if ((!interval || have_ka) && exits_from(root, kr, have_ka ? &ka : NULL, &kb, &e.vms, &e) < 0)
			r = -ENOMEM;
		kvm_sample_free(&kb);
	}
	if (have_ka)
		kvm_sample_free(&ka);
	kvm_reader_close(kr);

	if (kvm_host_read(root, &e.kvm) < 0)
		r = -ENOMEM;
	char buf[256];
	ssize_t n = io_read(root, IO_SYS, buf, sizeof(buf), "kernel/mm/transparent_hugepage/enabled");
	if (n <= 0 || parse_sysfs_choice(buf, e.thp_mode, sizeof(e.thp_mode)) < 0)
		e.thp_mode[0] = '\0';
	e.host_cpus = count_online_cpus(root);
	e.numa_nodes = count_numa_nodes(root);
	if (ksm_tuners_find(root, &e.ksmtuned_pid, &e.vmhost_tune_pid) < 0)
		e.ksmtuned_pid = e.vmhost_tune_pid = 0;
	if (r == 0)
		r = time_smaps(root, &e.vms, o->smaps_budget_seconds, &e);
	if (r < 0) {
		doctor_evidence_free(&e);
		*ret_step = SURVEY_PROCESSES;
		return r;
	}
	*ret = e;
	return 0;
}

void doctor_evidence_free(struct doctor_evidence *e)
{
	vm_list_free(&e->vms);
	kvm_host_free(&e->kvm);
	free(e->exits);
	free(e->unreadable);
	free(e->smaps);
	free(e->growth);
	e->exits = NULL;
	e->unreadable = NULL;
	e->nunreadable = 0;
	e->smaps = NULL;
	e->growth = NULL;
	e->nexits = e->nsmaps = e->ngrowth = 0;
}

