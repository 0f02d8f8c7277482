/* KVM counter changes between two reads: the rule is in kvm_delta.h. */
#include "core/kvm/kvm_delta.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool kvm_vm_appeared(const struct kvm_vm_sample *before, const struct kvm_vm_sample *now)
{
	return !before || (before->start_ticks && now->start_ticks && before->start_ticks != now->start_ticks);
}

void kvm_delta_free(struct kvm_delta *d)
{
	for (size_t i = 0; d->vms && i < d->nvms; i++) {
		free(d->vms[i].changes);
		free(d->vms[i].times);
		for (size_t c = 0; d->vms[i].vcpus && c < d->vms[i].nvcpus; c++)
			free(d->vms[i].vcpus[c].changes);
		free(d->vms[i].vcpus);
	}
	free(d->vms);
	free(d->sel);
	free(d->total);
	free(d->increase);
	free(d->gone);
	memset(d, 0, sizeof(*d));
}

static bool keep_vm(const struct kvm_delta_filter *f, const struct kvm_vm_sample *vm)
{
	return !f || !f->vm || f->vm(vm, f->data);
}

/* VMs with no source at all are listed (with their reason) but not summed, but for the exit
 * reasons that tracepoints counted for them. */
static bool counted(const struct kvm_delta_vm *v, enum kvm_stat_kind kind, size_t i)
{
	return v->vm->source != KVM_SOURCE_NONE || (kind == KVM_STAT_REASON && v->vm->values[i].known);
}

/* What one change adds to a running count: the delta, or the whole value after a reset. */
static void add_increase(maybe_i64 *sum, const struct kvm_change *c)
{
	if (c->delta.known)
		*sum = MAYBE((sum->known ? sum->v : 0) + c->delta.v);
	else if (c->reset)
		*sum = MAYBE((sum->known ? sum->v : 0) + c->total.v);
}

/* What a VM's change of a counter of this kind is over: exit reasons are every VM's own. */
static double interval(const struct kvm_delta *d, const struct kvm_delta_vm *view, enum kvm_stat_kind kind)
{
	return kind == KVM_STAT_REASON ? d->seconds : view->seconds;
}

/* One vCPU's changes, against the same index in the earlier read (none: it appeared). */
static int add_vcpus(const struct kvm_reader *kr, const struct kvm_sample *a, const struct kvm_vm_sample *before,
		     struct kvm_delta *d, struct kvm_delta_vm *view)
{
	const struct kvm_vm_sample *vm = view->vm;
	if (!vm->nvcpu)
		return 0;
	view->vcpus = calloc(vm->nvcpu, sizeof(*view->vcpus));
	if (!view->vcpus)
		return -ENOMEM;
	for (size_t c = 0; c < vm->nvcpu; c++) {
		const struct kvm_vcpu_sample *now = &vm->vcpu[c], *was = NULL;
		for (size_t k = 0; !view->appeared && before && k < before->nvcpu && !was; k++)
			was = before->vcpu[k].index == now->index ? &before->vcpu[k] : NULL;
		/* New with its VM, or hotplugged; unknown when the earlier read had no vCPUs to compare. */
		bool fresh = view->appeared || (before && before->nvcpu > 0 && !was);
		struct kvm_delta_vcpu *out = &view->vcpus[view->nvcpus++];
		out->index = now->index;
		out->changes = malloc((d->nsel ? d->nsel : 1) * sizeof(*out->changes));
		if (!out->changes)
			return -ENOMEM;
		for (size_t s = 0; s < d->nsel; s++) {
			size_t i = d->sel[s];
			enum kvm_stat_kind kind = kvm_counter_kind(kr, i);
			maybe_i64 prev = was && i < a->ncounters ? was->values[i] : UNKNOWN;
			/* reasons are counted by thread (eBPF): a vCPU thread the earlier read did not list
			 * had none counted yet, if its VM's reasons were counted then */
			if (!was && !fresh && before && i < a->ncounters && kind == KVM_STAT_REASON && before->values[i].known)
				prev = MAYBE(0);
			if (view->held && kind != KVM_STAT_REASON) /* its last change again */
				prev = now->before && i < vm->nbefore ? now->before[i] : UNKNOWN;
			out->changes[s] = kvm_change(kind, prev, now->values[i], interval(d, view, kind), fresh);
		}
	}
	return 0;
}

static const struct kvm_exit_time *time_of(const struct kvm_vm_sample *vm, size_t counter)
{
	for (size_t i = 0; vm && i < vm->ntimes; i++)
		if (vm->times[i].counter == counter)
			return &vm->times[i].t;
	return NULL;
}

/* The interval's time per kept counter, when the later read timed any of the VM's exits. */
static int add_times(const struct kvm_vm_sample *before, const struct kvm_delta *d, struct kvm_delta_vm *view)
{
	if (!view->vm->times)
		return 0;
	view->times = calloc(d->nsel ? d->nsel : 1, sizeof(*view->times));
	if (!view->times)
		return -ENOMEM;
	static const struct kvm_exit_time none;
	for (size_t s = 0; s < d->nsel; s++) {
		const struct kvm_exit_time *now = time_of(view->vm, d->sel[s]);
		const struct kvm_exit_time *was = view->appeared ? NULL : time_of(before, d->sel[s]);
		if (now)
			kvm_exit_time_sub(now, was ? was : &none, &view->times[s]); /* false: cleared, left zero */
	}
	return 0;
}

/* A paced VM's own interval: since its reading in the earlier read, or, not read since (held),
 * between its last two reads. */
static void pace(const struct kvm_sample *a, const struct kvm_sample *b, const struct kvm_vm_sample *before,
		 struct kvm_delta_vm *view, double reads_seconds)
{
	const struct kvm_vm_sample *vm = view->vm;
	view->seconds = reads_seconds;
	if (!(vm->read_seconds > 0))
		return;
	view->age_seconds = b->monotonic_seconds > vm->read_seconds ? b->monotonic_seconds - vm->read_seconds : 0;
	if (view->appeared || !before)
		return;
	double then = before->read_seconds > 0 ? before->read_seconds : a->monotonic_seconds;
	view->held = then == vm->read_seconds;
	view->seconds = !view->held ? vm->read_seconds - then : vm->before ? vm->read_seconds - vm->before_seconds : 0;
}

static int add_vms(const struct kvm_reader *kr, const struct kvm_sample *a, const struct kvm_sample *b,
		   const struct kvm_delta_filter *f, struct kvm_delta *d)
{
	for (size_t v = 0; v < b->nvms; v++) {
		const struct kvm_vm_sample *vm = &b->vms[v];
		if (!keep_vm(f, vm))
			continue;
		const struct kvm_vm_sample *before = a ? kvm_sample_find(a, vm->dir) : NULL;
		struct kvm_delta_vm *view = &d->vms[d->nvms++];
		view->vm = vm;
		view->appeared = kvm_vm_appeared(before, vm);
		pace(a, b, before, view, d->seconds);
		view->changes = malloc((d->nsel ? d->nsel : 1) * sizeof(*view->changes));
		if (!view->changes)
			return -ENOMEM;
		/* The counter set can grow between reads (found only once a VM appeared): the earlier
		 * read has no value for the new ones. */
		for (size_t s = 0; s < d->nsel; s++) {
			size_t i = d->sel[s];
			enum kvm_stat_kind kind = kvm_counter_kind(kr, i);
			maybe_i64 was = !view->appeared && i < a->ncounters ? before->values[i] : UNKNOWN;
			if (view->held && kind != KVM_STAT_REASON) /* its last change again */
				was = vm->before && i < vm->nbefore ? vm->before[i] : UNKNOWN;
			view->changes[s] = kvm_change(kind, was, vm->values[i], interval(d, view, kind), view->appeared);
		}
		if (add_vcpus(kr, a, before, d, view) < 0 || add_times(before, d, view) < 0)
			return -ENOMEM;
	}
	for (size_t v = 0; a && v < a->nvms; v++)
		if (keep_vm(f, &a->vms[v]) && !kvm_sample_find(b, a->vms[v].dir))
			d->gone[d->ngone++] = &a->vms[v];
	return 0;
}

static void add_totals(const struct kvm_reader *kr, const struct kvm_sample *a, const struct kvm_sample *b,
		       struct kvm_delta *d)
{
	bool vm_dirs = b->nvms || (a && a->nvms);
	for (size_t s = 0; s < d->nsel; s++) {
		size_t i = d->sel[s];
		enum kvm_stat_kind kind = kvm_counter_kind(kr, i);
		maybe_i64 was = a && i < a->ncounters ? a->total[i] : UNKNOWN;
		struct kvm_change global = kvm_change(kind, was, b->total[i], d->seconds, !a);
		struct kvm_change sum = kvm_change_zero();
		d->increase[s] = kind == KVM_STAT_GAUGE ? UNKNOWN : MAYBE(0);
		if (!vm_dirs) {
			if (kind != KVM_STAT_GAUGE)
				add_increase(&d->increase[s], &global);
		} else {
			for (size_t v = 0; v < d->nvms; v++) {
				const struct kvm_delta_vm *view = &d->vms[v];
				if (!counted(view, kind, i))
					continue;
				struct kvm_change part = view->changes[s];
				if (interval(d, view, kind) != d->seconds) /* a delta over another interval */
					part.delta = UNKNOWN;
				kvm_change_add(&sum, &part);
				if (kind != KVM_STAT_GAUGE && !(view->held && kind != KVM_STAT_REASON))
					add_increase(&d->increase[s], &view->changes[s]);
			}
		}
		/* Without readable global files (QMP only), the VMs' sum stands for them. */
		if (!d->filtered && (!vm_dirs || (kind == KVM_STAT_GAUGE && b->total[i].known))) {
			d->total[s] = global;
			continue;
		}
		if (kind == KVM_STAT_GAUGE)
			sum.per_second = NAN;
		if (!d->filtered && b->total[i].known)
			sum.total = b->total[i];
		d->total[s] = sum;
	}
}

int kvm_delta_build(const struct kvm_reader *kr, const struct kvm_sample *a, const struct kvm_sample *b,
		    const struct kvm_delta_filter *filter, struct kvm_delta *ret)
{
	struct kvm_delta *d = ret;
	memset(d, 0, sizeof(*d));
	d->seconds = a ? b->monotonic_seconds - a->monotonic_seconds : 0;
	d->filtered = filter && filter->vm;
	d->vanished = (a ? a->vanished : 0) + b->vanished;
	d->denied = b->denied;
	d->nlisted = b->nvms;
	d->reasons_why = kvm_reader_reasons_why(kr);
	d->reasons_counter = kvm_reader_reasons_counter(kr);
	d->pace_why = kvm_reader_pace_why(kr);
	d->private_mounts = kvm_reader_private_mounts(kr);
	size_t nc = b->ncounters, na = a ? a->nvms : 0;
	d->sel = malloc((nc ? nc : 1) * sizeof(*d->sel));
	d->total = malloc((nc ? nc : 1) * sizeof(*d->total));
	d->increase = malloc((nc ? nc : 1) * sizeof(*d->increase));
	d->vms = calloc(b->nvms ? b->nvms : 1, sizeof(*d->vms));
	d->gone = calloc(na ? na : 1, sizeof(*d->gone));
	if (!d->sel || !d->total || !d->increase || !d->vms || !d->gone)
		goto nomem;
	for (size_t i = 0; i < nc; i++)
		if (!filter || !filter->counter || filter->counter(kvm_counter_name(kr, i), filter->data))
			d->sel[d->nsel++] = i;
	if (add_vms(kr, a, b, filter, d) < 0)
		goto nomem;
	add_totals(kr, a, b, d);
	return 0;
nomem:
	kvm_delta_free(d);
	return -ENOMEM;
}
