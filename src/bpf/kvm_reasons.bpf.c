/* KVM exit reasons counted in the kernel: one classic tracepoint program per event adds one to a
 * per-CPU hash keyed by (tgid, thread, event, two fields of the event's record). The fields'
 * offsets come from the events' format files, written by user space into `fields` before the
 * programs are attached (src/core/kvm/kvm_bpf.c), so no BTF is needed. Built by cmake/bpf.cmake
 * (clang -target bpf) and embedded in vmhost. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "bpf/kvm_reasons.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KVM_BPF_NEVENTS);
	__type(key, __u32);
	__type(value, struct kvm_bpf_fields);
} fields SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, KVM_BPF_MAX_KEYS);
	__type(key, struct kvm_bpf_key);
	__type(value, __u64);
} counts SEC(".maps");

/* Keys that did not fit in counts (the map full): user space reports them as lost. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline int count(void *ctx, __u32 event)
{
	struct kvm_bpf_fields *f = bpf_map_lookup_elem(&fields, &event);
	if (!f || !f->a_size)
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	struct kvm_bpf_key k = {.tgid = id >> 32, .tid = (__u32)id, .event = event};
	bpf_probe_read_kernel(&k.a, sizeof(k.a), (char *)ctx + f->a_offset);
	if (f->b_size)
		bpf_probe_read_kernel(&k.b, sizeof(k.b), (char *)ctx + f->b_offset);
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v) {
		*v += 1; /* this CPU's own slot: no other CPU writes it */
		return 0;
	}
	__u64 one = 1;
	if (bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST) == 0)
		return 0;
	v = bpf_map_lookup_elem(&counts, &k); /* another CPU created it meanwhile */
	if (v) {
		*v += 1;
		return 0;
	}
	__u32 zero = 0;
	__u64 *l = bpf_map_lookup_elem(&lost, &zero);
	if (l)
		*l += 1;
	return 0;
}

SEC("tracepoint/kvm/kvm_exit")
int kvm_exit(void *ctx) { return count(ctx, KVM_BPF_EXIT); }

SEC("tracepoint/kvm/kvm_userspace_exit")
int kvm_userspace_exit(void *ctx) { return count(ctx, KVM_BPF_USERSPACE_EXIT); }

SEC("tracepoint/kvm/kvm_pio")
int kvm_pio(void *ctx) { return count(ctx, KVM_BPF_PIO); }

SEC("tracepoint/kvm/kvm_mmio")
int kvm_mmio(void *ctx) { return count(ctx, KVM_BPF_MMIO); }

char LICENSE[] SEC("license") = "GPL";
