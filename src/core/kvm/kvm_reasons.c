#include "core/kvm/kvm_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kvm/kvm_bpf.h"
#include "core/kvm/kvm_host.h"
#include "core/kvm/kvm_trace.h"
#include "core/model/vm_cost.h"

/* eBPF where it loads, the perf filters where it does not: said in one line. */
static void kvm_reasons_counter_choose(struct kvm_reader *r)
{
	char why[256];
	r->bpf_tried = true;
	bool timed = r->flags & KVM_READ_REASON_TIMES;
	if (kvm_bpf_open(&r->root, timed, &r->bpf, why, sizeof(why)) == 0)
		snprintf(r->reasons_counter, sizeof(r->reasons_counter), "eBPF (counted in the kernel%s%s)",
			 timed && why[0] ? "; not timed: " : "", timed ? why : "");
	else
		snprintf(r->reasons_counter, sizeof(r->reasons_counter), "perf tracepoint filters: %s%s", why,
			 timed ? "; exits not timed (eBPF only)" : "");
}

/* The trace's times into the sample: the reason counters that had an exit end, by counter. */
static int sample_times(const struct kvm_reader *r, const struct kvm_trace *t, struct kvm_vm_sample *s)
{
	size_t n = kvm_trace_ncounters(t), k = 0;
	struct kvm_exit_time *all = calloc(n ? n : 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	if (kvm_trace_times(t, all) < 0) {
		free(all);
		return 0; /* not timed */
	}
	for (size_t i = 0; i < n && i < r->nreasons; i++)
		k += all[i].count > 0;
	free(s->times);
	s->ntimes = 0;
	s->times = calloc(k ? k : 1, sizeof(*s->times));
	for (size_t i = 0; s->times && i < n && i < r->nreasons; i++)
		if (all[i].count > 0)
			s->times[s->ntimes++] = (struct kvm_reason_time){.counter = r->reasons_first + i, .t = all[i]};
	free(all);
	return s->times ? 0 : -ENOMEM;
}

/* s's vCPU of that index, made (every counter unknown) when the reads before gave none. */
static struct kvm_vcpu_sample *vcpu_slot(struct kvm_vm_sample *s, int index, size_t ncounters)
{
	for (size_t c = 0; c < s->nvcpu; c++)
		if (s->vcpu[c].index == index)
			return &s->vcpu[c];
	maybe_i64 *values = malloc((ncounters ? ncounters : 1) * sizeof(*values));
	struct kvm_vcpu_sample *v = values ? realloc(s->vcpu, (s->nvcpu + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(values);
		return NULL;
	}
	for (size_t i = 0; i < ncounters; i++)
		values[i] = UNKNOWN;
	s->vcpu = v;
	size_t at = s->nvcpu++;
	while (at > 0 && s->vcpu[at - 1].index > index) { /* kept sorted by index */
		s->vcpu[at] = s->vcpu[at - 1];
		at--;
	}
	s->vcpu[at] = (struct kvm_vcpu_sample){.index = index, .values = values};
	return &s->vcpu[at];
}

/* The vCPU threads of s's process: named ones by their index (QEMU "CPU 3/KVM", ...), else the
 * threads with counted exits, numbered in the order of their ids (*ret_by_order). */
static int vcpu_threads(const struct kvm_reader *r, const struct kvm_trace *t, pid_t pid, pid_t **ret_tids,
			int **ret_index, size_t *ret_n, bool *ret_by_order)
{
	struct vm_cpu cpu = {0};
	pid_t *tids = NULL;
	size_t n = 0;
	int err = 0;
	if (vcpus_read(&r->root, pid, NULL, &cpu) == 0 && cpu.nvcpus) {
		n = cpu.nvcpus;
		tids = malloc(n * sizeof(*tids));
		for (size_t i = 0; tids && i < n; i++)
			tids[i] = cpu.vcpus[i].tid;
		err = tids ? 0 : -ENOMEM;
	} else {
		err = kvm_trace_threads(t, &tids, &n);
	}
	int *index = err == 0 ? malloc((n ? n : 1) * sizeof(*index)) : NULL;
	for (size_t i = 0; index && i < n; i++)
		index[i] = cpu.nvcpus ? cpu.vcpus[i].index : (int)i;
	*ret_by_order = !cpu.nvcpus;
	vm_cpu_free(&cpu);
	if (!index) {
		free(tids);
		return err < 0 ? err : -ENOMEM;
	}
	*ret_tids = tids;
	*ret_index = index;
	*ret_n = n;
	return 0;
}

/* Each vCPU's exit reasons (KVM_READ_VCPUS, counted by eBPF: its keys are by thread). */
static int vcpu_reasons(struct kvm_reader *r, struct kvm_trace *t, struct kvm_vm_sample *s)
{
	pid_t *tids;
	int *index;
	size_t n, nc = kvm_trace_ncounters(t);
	bool by_order;
	int err = vcpu_threads(r, t, s->pid, &tids, &index, &n, &by_order);
	if (err < 0)
		return err;
	/* numbered by order, a vCPU (from debugfs or QMP) past the threads that exited had none */
	for (size_t c = 0; by_order && c < s->nvcpu; c++)
		for (size_t k = 0; k < nc && k < r->nreasons; k++)
			s->vcpu[c].values[r->reasons_first + k] = MAYBE(0);
	maybe_i64 *v = malloc((nc ? nc : 1) * sizeof(*v));
	err = v ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && err == 0; i++) {
		struct kvm_vcpu_sample *c = vcpu_slot(s, index[i], r->ncounters);
		if (!c) {
			err = -ENOMEM;
			break;
		}
		kvm_trace_sample_thread(t, tids[i], v);
		for (size_t k = 0; k < nc && k < r->nreasons; k++)
			c->values[r->reasons_first + k] = v[k];
	}
	free(v);
	free(tids);
	free(index);
	return err;
}

/* Opens e's events (inherited: a followed command's). A VM's process that the root does not list
 * (yet: a --proc-root tree that links it after its VM appeared in debugfs) is tried again later. */
static void open_trace(struct kvm_reader *r, struct kvm_trace_entry *e, bool inherit)
{
	if (r->isa < 0) {
		struct kvm_host h;
		kvm_host_read(&r->root, &h);
		r->isa = h.vendor == KVM_VENDOR_INTEL ? KVM_TRACE_VMX
			 : h.vendor == KVM_VENDOR_AMD ? KVM_TRACE_SVM : KVM_TRACE_ISA_UNKNOWN;
		kvm_host_free(&h);
	}
	if (!r->bpf_tried)
		kvm_reasons_counter_choose(r);
	struct kvm_trace_config c = {.pid = e->pid, .isa = (enum kvm_trace_isa)r->isa, .inherit = inherit, .bpf = r->bpf};
	int rc = kvm_trace_open(&r->root, &c, &e->t);
	e->retry = rc == -ESRCH && !inherit;
	if (rc < 0) {
		e->t = NULL;
		if (rc != -ESRCH)
			kvm_trace_explain(&r->root, rc, r->reasons_why, sizeof(r->reasons_why));
	}
}

/* A new entry for pid, its events opened (open_trace). NULL without memory. */
static struct kvm_trace_entry *open_trace_entry(struct kvm_reader *r, pid_t pid, uint64_t start_ticks, bool inherit)
{
	struct kvm_trace_entry *e = realloc(r->traces, (r->ntraces + 1) * sizeof(*e));
	if (!e)
		return NULL;
	r->traces = e;
	e = &r->traces[r->ntraces++];
	*e = (struct kvm_trace_entry){.pid = pid, .start_ticks = start_ticks, .seen = !inherit, .followed = inherit};
	open_trace(r, e, inherit);
	return e;
}

/* The entry's VM: the same pid and start time, where a start time of 0 is unknown (a debugfs
 * directory met before the root listed its process) and matches any; a followed command's by pid. */
static bool same_vm(const struct kvm_trace_entry *e, const struct kvm_vm_sample *s)
{
	return e->pid == s->pid &&
	       (e->followed || !e->start_ticks || !s->start_ticks || e->start_ticks == s->start_ticks);
}

static struct kvm_trace_entry *trace_entry(struct kvm_reader *r, const struct kvm_vm_sample *s)
{
	for (size_t i = 0; i < r->ntraces; i++) {
		struct kvm_trace_entry *e = &r->traces[i];
		if (!same_vm(e, s))
			continue;
		e->seen = true;
		if (!e->start_ticks)
			e->start_ticks = s->start_ticks;
		if (!e->t && e->retry && io_exists(&r->root, IO_PROC, "%d", (int)e->pid))
			open_trace(r, e, false);
		return e;
	}
	return open_trace_entry(r, s->pid, s->start_ticks, false);
}

int kvm_reader_follow(struct kvm_reader *r, pid_t pid, const char *argv0)
{
	if (!(r->flags & KVM_READ_REASONS))
		return 0;
	struct kvm_trace_entry *e = open_trace_entry(r, pid, 0, true);
	if (!e)
		return -ENOMEM;
	enum vmm_kind vmm = parse_vmm_kind(argv0, strlen(argv0) + 1);
	e->vmm = vmm == VMM_NONE ? VMM_KVM : vmm;
	if (!e->t)
		return -ENODEV;
	int rc = r->bpf ? kvm_bpf_follow(&r->root, r->bpf, pid) : 0; /* the perf events are inherited */
	if (rc < 0) { /* said where the counter is named: the command's own exits are counted */
		size_t len = strlen(r->reasons_counter);
		snprintf(r->reasons_counter + len, sizeof(r->reasons_counter) - len,
			 "; the command's children not followed: %s", strerror(-rc));
	}
	return 0;
}

/* The first open trace fixes the reason counters ("<event>/<reason>", the same for every VM). */
static int reason_counters(struct kvm_reader *r, struct kvm_sample *ret, const struct kvm_trace *t)
{
	size_t n = kvm_trace_ncounters(t);
	char (*buf)[64] = calloc(n ? n : 1, sizeof(*buf));
	const char **names = calloc(n ? n : 1, sizeof(*names));
	int e = buf && names ? 0 : -ENOMEM;
	for (size_t i = 0; e == 0 && i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%s/%s", kvm_trace_event_name(kvm_trace_counter_event(t, i)),
			 kvm_trace_counter_reason(t, i));
		names[i] = buf[i];
	}
	if (e == 0) {
		r->reasons_first = r->ncounters;
		r->nreasons = n;
		e = kvm_grow_counters(r, ret, names, n);
	}
	free(buf);
	free(names);
	return e;
}

/* A followed command that no read lists (its VM came and went between two reads, or debugfs and
 * QMP show none): a VM of its own once its events counted anything, with only those counters. */
static int add_followed(struct kvm_reader *r, struct kvm_sample *ret, const struct kvm_trace_entry *e)
{
	size_t n = kvm_trace_ncounters(e->t);
	maybe_i64 *v_tr = malloc((n ? n : 1) * sizeof(*v_tr));
	if (!v_tr)
		return -ENOMEM;
	kvm_trace_sample(e->t, v_tr);
	int64_t events = 0;
	for (size_t i = 0; i < n; i++)
		events += v_tr[i].known ? v_tr[i].v : 0;
	int err = events > 0 && !r->nreasons ? reason_counters(r, ret, e->t) : 0;
	maybe_i64 *values = events > 0 && !err ? malloc((r->ncounters ? r->ncounters : 1) * sizeof(*values)) : NULL;
	struct kvm_vm_sample *v = values ? realloc(ret->vms, (ret->nvms + 1) * sizeof(*v)) : NULL;
	if (events > 0 && !err && !v)
		err = -ENOMEM;
	if (!v) {
		free(values);
		free(v_tr);
		return err;
	}
	for (size_t c = 0; c < r->ncounters; c++)
		values[c] = c >= r->reasons_first && c - r->reasons_first < n ? v_tr[c - r->reasons_first] : UNKNOWN;
	free(v_tr);
	ret->vms = v;
	struct kvm_vm_sample *s = &ret->vms[ret->nvms++];
	*s = (struct kvm_vm_sample){.pid = e->pid, .kvm_fd = -1, .vcpus = -1, .vmm = e->vmm, .values = values};
	if ((err = sample_times(r, e->t, s)) < 0)
		return err;
	snprintf(s->dir, sizeof(s->dir), "%d-run", (int)e->pid);
	snprintf(s->unavailable, sizeof(s->unavailable),
		 "the command's VM was in no read of debugfs or QMP (it came and went between them): exit reasons only");
	qsort(ret->vms, ret->nvms, sizeof(*ret->vms), kvm_cmp_sample_dir);
	return 0;
}

int kvm_reasons_pass(struct kvm_reader *r, struct kvm_sample *ret)
{
	int err = r->bpf ? kvm_bpf_refresh(r->bpf) : 0; /* one read of the map for every VM */
	uint64_t lost = r->bpf ? kvm_bpf_lost(r->bpf) : 0;
	if (lost) /* the counts are short: said where the counter is named */
		snprintf(r->reasons_counter, sizeof(r->reasons_counter),
			 "eBPF (counted in the kernel; %llu exits not counted or not timed: its maps are full)", (unsigned long long)lost);
	for (size_t v = 0; v < ret->nvms && !err; v++) {
		struct kvm_vm_sample *s = &ret->vms[v];
		struct kvm_trace_entry *e = trace_entry(r, s);
		if (!e) {
			err = -ENOMEM;
			break;
		}
		if (!e->t)
			continue;
		if (!r->nreasons && (err = reason_counters(r, ret, e->t)) < 0)
			break;
		size_t n = kvm_trace_ncounters(e->t);
		maybe_i64 *v_tr = malloc((n ? n : 1) * sizeof(*v_tr));
		if (!v_tr) {
			err = -ENOMEM;
			break;
		}
		kvm_trace_sample(e->t, v_tr); /* a process that just exited keeps its last counts */
		for (size_t i = 0; i < n && i < r->nreasons; i++)
			s->values[r->reasons_first + i] = v_tr[i];
		free(v_tr);
		if ((err = sample_times(r, e->t, s)) < 0)
			break;
		if ((r->flags & KVM_READ_VCPUS) && kvm_trace_uses_bpf(e->t) && (err = vcpu_reasons(r, e->t, s)) < 0)
			break;
	}
	for (size_t i = 0; i < r->ntraces && !err; i++)
		if (r->traces[i].followed && !r->traces[i].seen && r->traces[i].t)
			err = add_followed(r, ret, &r->traces[i]);
	size_t w = 0;
	for (size_t i = 0; i < r->ntraces; i++) {
		if (!r->traces[i].seen && !r->traces[i].followed) {
			kvm_trace_close(r->traces[i].t);
			continue;
		}
		r->traces[i].seen = false;
		r->traces[w++] = r->traces[i];
	}
	r->ntraces = w;
	if (r->nreasons)
		r->reasons_why[0] = '\0';
	return err;
}

bool kvm_reader_reasons_timed(const struct kvm_reader *r, const char *event)
{
	for (unsigned e = 0; e < KVM_TRACE_NEVENTS; e++)
		if (!strcmp(kvm_trace_event_name((enum kvm_trace_event)e), event))
			return kvm_bpf_timed(r->bpf, e);
	return false;
}
