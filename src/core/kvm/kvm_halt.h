/* Halt polling: the host CPU KVM spends spinning on a halted vCPU, waiting for a wake-up before
 * it puts the vCPU's thread to sleep (the kvm module's halt_poll_ns and its grow/shrink), from
 * the counters every source names alike: debugfs' files, QMP query-stats' vcpu provider and
 * libvirt's vcpu.N.NAME.sum all say halt_poll_success_ns, halt_poll_fail_ns, halt_wait_ns,
 * halt_attempted_poll and halt_successful_poll.
 *
 *   struct kvm_halt_index ix;  kvm_halt_index(kr, &ix);
 *   kvm_halt_poll_ns(&ix, vm->values)                       the polling time at a read
 *   kvm_halt_change(&ix, d.sel, d.nsel, changes, &hp)       over an interval (core/kvm/kvm_delta.h)
 */
#ifndef VMHOST_CORE_KVM_HALT_H
#define VMHOST_CORE_KVM_HALT_H

#include <stddef.h>

#include "core/kvm/kvm.h"

/* The counters' indices in a reader's set (or a sample's: the same), -1 where it has none. */
struct kvm_halt_index {
	int success_ns, fail_ns, wait_ns, attempted, successful;
};
void kvm_halt_index(const struct kvm_reader *kr, struct kvm_halt_index *ret);
/* The same from a sample's own counter names (serve's HTTP side has no reader). */
void kvm_halt_index_of_sample(const struct kvm_sample *s, struct kvm_halt_index *ret);

/* Time spent polling (successful and failed polls) in a set of values: unknown unless both are. */
maybe_i64 kvm_halt_poll_ns(const struct kvm_halt_index *ix, const maybe_i64 *values);

/* Halt polling over an interval, in seconds of one host CPU per second of wall time (NaN unknown:
 * a counter missing from the source, or unknown at either read). */
struct kvm_halt {
	double poll_per_second;    /* success + fail */
	double success_per_second; /* polls that caught the wake-up */
	double fail_per_second;    /* polls that gave up and slept anyway: CPU spent for nothing */
	double wait_per_second;    /* halted and asleep (halt_wait_ns) */
	maybe_i64 poll_ns;         /* polling time at the later read (a total) */
	maybe_i64 polls, successful_polls; /* over the interval */
};

/* From the changes of the counters sel[0..nsel) (a kvm_delta's, for the VM or one vCPU). */
void kvm_halt_change(const struct kvm_halt_index *ix, const size_t *sel, size_t nsel,
		     const struct kvm_change *changes, struct kvm_halt *ret);

#endif
