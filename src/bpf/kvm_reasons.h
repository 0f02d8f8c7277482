/* What the BPF program (kvm_reasons.bpf.c) and vmhost (core/kvm/kvm_bpf.c) share: the events in
 * the order of enum kvm_trace_event, the map keys and values, the fields user space locates. */
#ifndef VMHOST_BPF_KVM_REASONS_H
#define VMHOST_BPF_KVM_REASONS_H

#include <linux/types.h>

#define KVM_BPF_EXIT 0           /* a: exit_reason, b: isa */
#define KVM_BPF_USERSPACE_EXIT 1 /* a: reason, b: errno */
#define KVM_BPF_PIO 2            /* a: rw, b: port */
#define KVM_BPF_MMIO 3           /* a: type */
#define KVM_BPF_NEVENTS 4
/* The events that end a timed exit: their fields' entries switch the timing on (a_size not 0). */
#define KVM_BPF_ENTRY 4          /* kvm_entry: ends a kvm_exit's time (a: vcpu_id, not read) */
#define KVM_BPF_RUN 5            /* syscalls:sys_enter_ioctl, a: cmd; KVM_RUN ends a userspace exit's */
/* sched:sched_process_fork, a: child_pid; its a_size not 0: some process is followed */
#define KVM_BPF_FORK 6
#define KVM_BPF_NFIELDS 7

#define KVM_BPF_MAX_KEYS 16384
#define KVM_BPF_MAX_THREADS 16384 /* vCPU threads with an exit not yet ended */
#define KVM_BPF_MAX_FOLLOWED 4096 /* processes and threads a followed command started */
#define KVM_BPF_KVM_RUN 0xAE80u   /* _IO(KVMIO, 0x80) */
/* log2 buckets of nanoseconds: bucket i counts times in [2^i, 2^(i+1)) ns (bucket 0 also 0 ns). */
#define KVM_BPF_TIME_BUCKETS 64

struct kvm_bpf_key {
	__u32 tgid;
	__u32 tid;
	__u32 event;
	__u32 a;
	__u32 b;
};

/* Offsets in the tracepoint's record; size 0: not read (a_size 0: the event is not counted). */
struct kvm_bpf_fields {
	__u32 a_offset, a_size;
	__u32 b_offset, b_size;
};

/* The time from an exit (key's event kvm_exit or kvm_userspace_exit, reason a, b) to its end. */
struct kvm_bpf_time {
	__u64 ns;
	__u64 count;
	__u64 hist[KVM_BPF_TIME_BUCKETS];
};

/* A thread's exit not yet ended, keyed by (tid, event). ts 0: ended. */
struct kvm_bpf_pending_key {
	__u32 tid;
	__u32 event;
};
struct kvm_bpf_pending {
	__u64 ts;
	__u32 a, b;
};

#endif
