/* What the BPF program (kvm_reasons.bpf.c) and vmhost (core/kvm/kvm_bpf.c) share: the events in
 * the order of enum kvm_trace_event, the map key and the fields user space locates. */
#ifndef VMHOST_BPF_KVM_REASONS_H
#define VMHOST_BPF_KVM_REASONS_H

#include <linux/types.h>

#define KVM_BPF_EXIT 0           /* a: exit_reason, b: isa */
#define KVM_BPF_USERSPACE_EXIT 1 /* a: reason, b: errno */
#define KVM_BPF_PIO 2            /* a: rw, b: port */
#define KVM_BPF_MMIO 3           /* a: type */
#define KVM_BPF_NEVENTS 4

#define KVM_BPF_MAX_KEYS 16384

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

#endif
