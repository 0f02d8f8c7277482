/* Time per exit reason: how long the exits of one reason took to end, as a sum, a count and a
 * log2 histogram of nanoseconds (bucket i: [2^i, 2^(i+1)) ns; bucket 0 also 0 ns). Which end
 * depends on the event: kvm_exit's at the next kvm_entry of its thread, kvm_userspace_exit's at
 * the thread's next KVM_RUN ioctl (core/kvm/kvm_bpf.h). */
#ifndef VMHOST_CORE_KVM_TIME_H
#define VMHOST_CORE_KVM_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KVM_TIME_BUCKETS 64

struct kvm_exit_time {
	uint64_t ns;
	uint64_t count;
	uint64_t hist[KVM_TIME_BUCKETS];
};

/* One reason counter's time (counter: its index in the reader's counter set). */
struct kvm_reason_time {
	size_t counter;
	struct kvm_exit_time t;
};

static inline void kvm_exit_time_add(struct kvm_exit_time *sum, const struct kvm_exit_time *part)
{
	sum->ns += part->ns;
	sum->count += part->count;
	for (size_t i = 0; i < KVM_TIME_BUCKETS; i++)
		sum->hist[i] += part->hist[i];
}

/* after - before into ret; false (ret untouched) when a part went down: cleared, not a change. */
static inline bool kvm_exit_time_sub(const struct kvm_exit_time *after, const struct kvm_exit_time *before,
				     struct kvm_exit_time *ret)
{
	if (after->ns < before->ns || after->count < before->count)
		return false;
	for (size_t i = 0; i < KVM_TIME_BUCKETS; i++)
		if (after->hist[i] < before->hist[i])
			return false;
	ret->ns = after->ns - before->ns;
	ret->count = after->count - before->count;
	for (size_t i = 0; i < KVM_TIME_BUCKETS; i++)
		ret->hist[i] = after->hist[i] - before->hist[i];
	return true;
}

#endif
