/* KVM exit reasons from tracepoints, per VM process, like kvm_stat's tracepoint mode: one
 * counting perf event per (thread, tracepoint, reason), each reason a tracepoint filter.
 *
 *   struct kvm_trace_config c = {.pid = pid, .isa = KVM_TRACE_VMX};
 *   struct kvm_trace *t;
 *   if ((r = kvm_trace_open(root, &c, &t)) < 0) kvm_trace_explain(root, r, why, sizeof(why));
 *   maybe_i64 v[kvm_trace_ncounters(t)];
 *   kvm_trace_sample(t, v); ... kvm_change(KVM_STAT_EVENTS, before, after, ...)
 *   kvm_trace_close(t);
 *
 * Events are per thread (perf_event_open(pid = tid, cpu = -1)): the VMM's threads are listed
 * at open and again at every sample (new threads get events from then on; the counts of threads
 * that exit are kept). Per thread rather than per CPU with a pid filter because a VMM has a few
 * threads while a host has many CPUs, and an event on a thread costs nothing while other
 * processes run. kvm_pio is counted per port by filters on a fixed table of ports (exact and
 * with bounded labels; anything else is "other in"/"other out"), not by sampling records, which
 * would need a ring buffer drained faster than the guest exits (~130k/s). */
#ifndef VMHOST_CORE_KVM_TRACE_H
#define VMHOST_CORE_KVM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/kvm/kvm_time.h"
#include "io/io.h"
#include "parse/maybe.h"

enum kvm_trace_event {
	KVM_TRACE_EXIT,           /* kvm:kvm_exit by exit_reason (VMX or SVM names) */
	KVM_TRACE_USERSPACE_EXIT, /* kvm:kvm_userspace_exit by reason (KVM_EXIT_* without the prefix) */
	KVM_TRACE_PIO,            /* kvm:kvm_pio by port and direction ("0x80 out") */
	KVM_TRACE_MMIO,           /* kvm:kvm_mmio by type ("write", "read", "unsatisfied-read") */
	KVM_TRACE_NEVENTS
};

enum kvm_trace_isa {
	KVM_TRACE_ISA_UNKNOWN, /* kvm_exit counted as one "all": its reason numbers mean nothing without the vendor */
	KVM_TRACE_VMX,         /* kvm_intel */
	KVM_TRACE_SVM,         /* kvm_amd */
};

struct kvm_trace_config {
	pid_t pid;
	const pid_t *tids;   /* only these threads (e.g. the vCPU threads from QMP); NULL: all */
	size_t ntids;
	bool inherit;        /* events on pid alone, inherited by every thread and child it creates
			      * from now on (a command followed from before its exec); tids ignored */
	enum kvm_trace_isa isa;
	const uint16_t *ports; /* kvm_pio ports counted one by one; NULL: kvm_trace_default_ports */
	size_t nports;
	unsigned events;       /* bit (1 << enum kvm_trace_event) per event; 0: all */
	struct kvm_bpf *bpf;   /* count by this eBPF counter (core/kvm/kvm_bpf.h, refreshed by the
				* caller) rather than by perf filters; NULL: perf */
};

extern const uint16_t kvm_trace_default_ports[];
extern const size_t kvm_trace_ndefault_ports;

struct kvm_trace;
struct kvm_bpf;

/* Finds tracefs under <sys>, reads the events' ids and formats, opens every event on every
 * thread. Errors: -ENOENT tracefs not mounted, -EACCES tracefs not readable, -ENODEV no kvm tracepoints, -EACCES/-EPERM perf
 * events not allowed, -ESRCH no such process, -EMFILE out of file descriptors, -EINVAL a filter
 * the kernel refused, -ENOMEM. */
int kvm_trace_open(const struct io_root *root, const struct kvm_trace_config *c, struct kvm_trace **ret);
void kvm_trace_close(struct kvm_trace *t);

size_t kvm_trace_ncounters(const struct kvm_trace *t);
enum kvm_trace_event kvm_trace_counter_event(const struct kvm_trace *t, size_t i);
const char *kvm_trace_counter_reason(const struct kvm_trace *t, size_t i);
const char *kvm_trace_event_name(enum kvm_trace_event e); /* "kvm_exit", ... */

/* Reads every counter, summed over the threads (cumulative since open). values[ncounters].
 * Returns 0, or -ESRCH when the process is gone (values then hold the last counts). */
int kvm_trace_sample(struct kvm_trace *t, maybe_i64 *values);

/* Counted by eBPF (no perf events, kvm_trace_nthreads 0). */
bool kvm_trace_uses_bpf(const struct kvm_trace *t);

/* eBPF only (-ENODATA with perf filters): the process's threads with counted exits, sorted
 * (0 or -ENOMEM); one thread's counts since the trace opened into values[ncounters]. */
int kvm_trace_threads(const struct kvm_trace *t, pid_t **ret, size_t *ret_n);
int kvm_trace_sample_thread(struct kvm_trace *t, pid_t tid, maybe_i64 *values);

/* With an eBPF counter that times exits (kvm_bpf_open's timed): each counter's time since open
 * (core/kvm/kvm_time.h; zero for counters not timed) into times[ncounters]. 0, or -ENODATA when
 * no exit of this trace is timed (perf filters, or timing not asked for or refused). */
int kvm_trace_times(const struct kvm_trace *t, struct kvm_exit_time *times);

/* One line for an error of kvm_trace_open: what is wrong and what to do. */
void kvm_trace_explain(const struct io_root *root, int err, char *buf, size_t cap);

/* For tests: what a counting holds (tests/helpers/kvmprobe too). */

/* Whether exits of event e are timed. */
bool kvm_trace_timed(const struct kvm_trace *t, enum kvm_trace_event e);
const char *kvm_trace_counter_filter(const struct kvm_trace *t, size_t i); /* "" for none */
size_t kvm_trace_nthreads(const struct kvm_trace *t);  /* threads with events open now */

#endif
