/* What changed in KVM's counters between two reads, per VM and host-wide: the one rule for
 * deltas, resets, VMs appearing and vanishing, used by `vmhost exits` and the sampler behind
 * record and serve.
 *
 *   struct kvm_delta d;
 *   kvm_delta_build(kr, &a, &b, NULL, &d);   NULL a: b is the first read (every VM appeared)
 *   d.total[s], d.vms[v].changes[s] for counter d.sel[s]; d.increase[s] for running totals
 *   kvm_delta_free(&d);
 *
 * The rule:
 * - A VM appeared when it was not in the earlier read, or its directory now belongs to another
 *   process (same pid and fd, another start time): its counters started at zero.
 * - A cumulative counter that went down was reset: the VM's change says so and has no delta.
 * - total[s]: unfiltered, the kernel's global file when there are no per-VM directories (and for
 *   gauges); otherwise the sum of the VMs' changes, whose delta is unknown as soon as one VM's
 *   is (a reset, a failed read) and whose reset flag is sticky. The global files drop when a VM
 *   exits, which is not a reset, so they are not used for deltas while VMs are listed.
 * - increase[s]: what a host-wide running count adds (events, or ns for times; unknown for
 *   gauges): each VM's delta, or its whole value after a reset (it restarted from zero), VMs
 *   whose value is unknown left out; the global file's the same way when there are no VMs.
 *   Events of a VM that went away since the earlier read are not counted.
 * - VMs whose counters have no source (kvm_vm_sample.unavailable says why) are listed, not summed;
 *   without global files (QMP only) the host total is the sum over the VMs read.
 * - A paced VM (kvm_reader_pace) changes over the time between its own reads: when it was not
 *   read since the earlier read (held), its change is its last one again (between the read before
 *   and its last), and it adds nothing to increase; its exit reasons change as any VM's. A sum
 *   over VMs whose intervals differ has rates (summed) and no delta. */
#ifndef VMHOST_CORE_KVM_DELTA_H
#define VMHOST_CORE_KVM_DELTA_H

#include <stdbool.h>
#include <stddef.h>

#include "core/kvm/kvm.h"

struct kvm_delta_vcpu {
	int index;
	struct kvm_change *changes; /* [nsel] */
};

struct kvm_delta_vm {
	const struct kvm_vm_sample *vm; /* in the later read */
	bool appeared;                  /* created during the interval */
	bool held;                      /* paced, not read since the earlier read: its last change again */
	double seconds;                 /* what its changes are over: the reads' interval, a paced VM's own */
	double age_seconds;             /* how old its figures are at the later read (0 unless paced) */
	struct kvm_change *changes;     /* [nsel] */
	struct kvm_delta_vcpu *vcpus;   /* [nvcpus] when the reads have them (KVM_READ_VCPUS) */
	size_t nvcpus;
	/* [nsel] the time of the exits that ended in the interval, per kept reason counter (zero
	 * where none did); NULL when the later read timed none of the VM's exits. */
	struct kvm_exit_time *times;
};

/* Which VMs and counters to keep; NULL callbacks keep everything. */
struct kvm_delta_filter {
	bool (*vm)(const struct kvm_vm_sample *vm, void *data);
	bool (*counter)(const char *name, void *data);
	void *data;
};

struct kvm_delta {
	double seconds;            /* between the reads; 0 for a first read */
	size_t nsel;
	size_t *sel;               /* [nsel] the kept counters' indices */
	struct kvm_change *total;  /* [nsel] host-wide (or over the kept VMs when filtered) */
	maybe_i64 *increase;       /* [nsel] see above */
	struct kvm_delta_vm *vms;  /* the kept VMs of the later read, in its order */
	size_t nvms;
	const struct kvm_vm_sample **gone; /* kept VMs of the earlier read that are not in the later */
	size_t ngone;
	unsigned vanished;         /* directories that vanished while being read, in either read */
	unsigned denied;           /* files the later read had no permission for */
	bool filtered;             /* a VM filter was given */
	size_t nlisted;            /* VMs in the later read before filtering */
	const char *reasons_why;   /* the reader's kvm_reader_reasons_why(), while it lives */
	const char *reasons_counter; /* the reader's kvm_reader_reasons_counter(), while it lives */
	const char *pace_why;      /* the reader's kvm_reader_pace_why(), while it lives */
	const char *private_mounts; /* the reader's kvm_reader_private_mounts(), while it lives */
};

/* Builds the change from a (NULL: nothing before) to b. Returns 0 or -ENOMEM (ret zeroed). */
int kvm_delta_build(const struct kvm_reader *kr, const struct kvm_sample *a, const struct kvm_sample *b,
		    const struct kvm_delta_filter *filter, struct kvm_delta *ret);
void kvm_delta_free(struct kvm_delta *d); /* accepts a zeroed struct */

/* Whether now (from the later read) is a VM that was not there as before (NULL: not found). */
bool kvm_vm_appeared(const struct kvm_vm_sample *before, const struct kvm_vm_sample *now);

#endif
