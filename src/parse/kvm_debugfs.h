/* KVM's debugfs files (<debugfs>/kvm): names and values, parsed from buffers. */
#ifndef VMHOST_PARSE_KVM_DEBUGFS_H
#define VMHOST_PARSE_KVM_DEBUGFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What a counter file holds, from its name (the kernel's stats descriptors). */
enum kvm_stat_kind {
	KVM_STAT_EVENTS,  /* cumulative count of events: exits, halt_exits, pf_taken ... */
	KVM_STAT_TIME_NS, /* cumulative time in nanoseconds: halt_wait_ns, halt_poll_*_ns */
	KVM_STAT_GAUGE,   /* an instant or peak value: pages_4k, mmu_unsync, blocking ... */
	KVM_STAT_IGNORED, /* not a counter in debugfs: a histogram's first bucket, tables */
	KVM_STAT_REASON,  /* cumulative events of one tracepoint and reason ("kvm_pio/0x80 out") */
};

const char *kvm_stat_kind_name(enum kvm_stat_kind kind); /* "events", "time_ns", "gauge", "reason" */

/* Classifies a counter file by name: *_hist are histograms (debugfs shows only their
 * first bucket), a known set are gauges, *_ns are times, the rest count events. */
enum kvm_stat_kind kvm_stat_kind(const char *name);

/* One counter file: a single unsigned decimal and a newline ("%llu\n"). Anything else
 * (mmu_rmaps_stat's table, an empty or cut read) is -EINVAL; too big is -ERANGE. */
int parse_kvm_counter(const char *buf, size_t len, uint64_t *ret);

/* A per-VM directory name, "<pid>-<fd>" (the VMM's pid and its KVM VM file descriptor).
 * Returns 0 or -EINVAL. */
int parse_kvm_vm_dir(const char *name, pid_t *ret_pid, int *ret_fd);

/* A per-vCPU directory name inside a VM directory, "vcpu<N>". Returns 0 or -EINVAL. */
int parse_kvm_vcpu_dir(const char *name, int *ret_id);

/* True for a name that may be a counter file: [a-z0-9_], 1..63 characters. */
bool kvm_counter_name_ok(const char *name);

#endif
