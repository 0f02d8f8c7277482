/* KVM exit reasons counted in the kernel: one classic tracepoint program per event adds one to a
 * per-CPU hash keyed by (tgid, thread, event, two fields of the event's record). The fields'
 * offsets come from the events' format files, written by user space into `fields` before the
 * programs are attached (src/core/kvm/kvm_bpf.c), so no BTF is needed. Built by cmake/bpf.cmake
 * (clang -target bpf) and embedded in vmhost.
 *
 * Timed (when user space attaches kvm_entry and kvm_run_ioctl and fills their fields): an exit
 * stamps its thread; kvm_entry ends a kvm_exit (the time KVM handled it, in the kernel and maybe
 * in the VMM), the thread's next KVM_RUN ioctl ends a kvm_userspace_exit (the time in the VMM:
 * the return to user space, the VMM's handling, any wait for a CPU, until it asks to run again).
 * The times go to `times` under the exit's own key: sum, count, log2 histogram.
 *
 * Followed (exits -- CMD): the command's tgid is in `followed`, and every process or thread it
 * and its descendants fork is added there on sched_process_fork, naming the command: their
 * exits are keyed by the command's tgid, as perf's inherited events counted them. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "bpf/kvm_reasons.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KVM_BPF_NFIELDS);
	__type(key, __u32);
	__type(value, struct kvm_bpf_fields);
} fields SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, KVM_BPF_MAX_KEYS);
	__type(key, struct kvm_bpf_key);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, KVM_BPF_MAX_KEYS);
	__type(key, struct kvm_bpf_key);
	__type(value, struct kvm_bpf_time);
} times SEC(".maps");

/* Least recently used goes first: a thread that exited leaves its stamp behind. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KVM_BPF_MAX_THREADS);
	__type(key, struct kvm_bpf_pending_key);
	__type(value, struct kvm_bpf_pending);
} pending SEC(".maps");

/* tgid (or the tid of a thread a followed process made) -> the followed command's tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KVM_BPF_MAX_FOLLOWED);
	__type(key, __u32);
	__type(value, __u32);
} followed SEC(".maps");

/* Never written: the zeroes a new key of times starts from (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kvm_bpf_time);
} time_zero SEC(".maps");

/* Exits that did not fit in counts or times (the map full): user space reports them as lost. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Event e's fields when user space filled them (its counting or timing is on), else NULL. */
static __always_inline struct kvm_bpf_fields *fields_on(__u32 e)
{
	struct kvm_bpf_fields *f = bpf_map_lookup_elem(&fields, &e);
	return f && f->a_size ? f : NULL;
}

/* Whom a process's exits count for: the followed command that started it, else itself. The
 * array lookup first: nothing else is paid while no command is followed. */
static __always_inline __u32 owner(__u32 tgid)
{
	if (!fields_on(KVM_BPF_FORK))
		return tgid;
	__u32 *root = bpf_map_lookup_elem(&followed, &tgid);
	return root ? *root : tgid;
}

static __always_inline void lose(void)
{
	__u32 zero = 0;
	__u64 *l = bpf_map_lookup_elem(&lost, &zero);
	if (l)
		*l += 1;
}

static __always_inline __u32 log2_ns(__u64 v)
{
	__u32 r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

/* Whether exits of event are timed: the entry that ends them has its fields filled. */
static __always_inline int timed(__u32 ender)
{
	return fields_on(ender) != NULL;
}

static __always_inline void stamp(const struct kvm_bpf_key *k)
{
	struct kvm_bpf_pending_key pk = {.tid = k->tid, .event = k->event};
	struct kvm_bpf_pending *old = bpf_map_lookup_elem(&pending, &pk);
	if (old) { /* the thread's own entry, written in place: an LRU update allocates a node */
		old->a = k->a;
		old->b = k->b;
		old->ts = bpf_ktime_get_ns();
		return;
	}
	struct kvm_bpf_pending p = {.ts = bpf_ktime_get_ns(), .a = k->a, .b = k->b};
	bpf_map_update_elem(&pending, &pk, &p, BPF_ANY);
}

/* The thread's pending exit of event ends now: its time goes under the exit's key. */
static __always_inline int end_exit(__u32 event)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct kvm_bpf_pending_key pk = {.tid = (__u32)id, .event = event};
	struct kvm_bpf_pending *p = bpf_map_lookup_elem(&pending, &pk);
	if (!p || !p->ts)
		return 0;
	__u64 ns = bpf_ktime_get_ns() - p->ts;
	struct kvm_bpf_key k = {.tgid = owner(id >> 32), .tid = (__u32)id, .event = event, .a = p->a, .b = p->b};
	p->ts = 0; /* ended: cheaper than a delete */
	struct kvm_bpf_time *t = bpf_map_lookup_elem(&times, &k);
	if (!t) {
		__u32 zero = 0;
		struct kvm_bpf_time *z = bpf_map_lookup_elem(&time_zero, &zero);
		if (z)
			bpf_map_update_elem(&times, &k, z, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&times, &k);
	}
	if (!t) {
		lose();
		return 0;
	}
	t->ns += ns;
	t->count += 1;
	t->hist[log2_ns(ns) & (KVM_BPF_TIME_BUCKETS - 1)] += 1;
	return 0;
}

static __always_inline int count(void *ctx, __u32 event)
{
	struct kvm_bpf_fields *f = fields_on(event);
	if (!f)
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	struct kvm_bpf_key k = {.tgid = owner(id >> 32), .tid = (__u32)id, .event = event};
	bpf_probe_read_kernel(&k.a, sizeof(k.a), (char *)ctx + f->a_offset);
	if (f->b_size)
		bpf_probe_read_kernel(&k.b, sizeof(k.b), (char *)ctx + f->b_offset);
	if ((event == KVM_BPF_EXIT && timed(KVM_BPF_ENTRY)) || (event == KVM_BPF_USERSPACE_EXIT && timed(KVM_BPF_RUN)))
		stamp(&k);
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
	lose();
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

SEC("tracepoint/kvm/kvm_entry")
int kvm_entry(void *ctx)
{
	(void)ctx;
	return end_exit(KVM_BPF_EXIT);
}

/* Every ioctl on the host comes here while timing is on: KVM_RUN is told by cmd at once. */
SEC("tracepoint/syscalls/sys_enter_ioctl")
int kvm_run_ioctl(void *ctx)
{
	struct kvm_bpf_fields *f = fields_on(KVM_BPF_RUN);
	if (!f)
		return 0;
	__u32 cmd = 0;
	bpf_probe_read_kernel(&cmd, sizeof(cmd), (char *)ctx + f->a_offset);
	return cmd == KVM_BPF_KVM_RUN ? end_exit(KVM_BPF_USERSPACE_EXIT) : 0;
}

/* Runs in the forking task: a child of a followed process is followed, for the same command. */
SEC("tracepoint/sched/sched_process_fork")
int followed_fork(void *ctx)
{
	struct kvm_bpf_fields *f = fields_on(KVM_BPF_FORK);
	if (!f)
		return 0;
	__u32 parent = bpf_get_current_pid_tgid() >> 32;
	__u32 *root = bpf_map_lookup_elem(&followed, &parent);
	if (!root)
		return 0;
	__u32 child = 0, command = *root;
	bpf_probe_read_kernel(&child, sizeof(child), (char *)ctx + f->a_offset);
	bpf_map_update_elem(&followed, &child, &command, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
