/* KVM exit reasons counted in the kernel by eBPF (src/bpf/kvm_reasons.bpf.c): one program on each
 * of kvm_exit, kvm_userspace_exit, kvm_pio and kvm_mmio adds one to a per-CPU hash keyed by
 * (tgid, thread, event, two fields of the record), for every KVM user on the host at once. Read
 * once per refresh; core/kvm/kvm_trace.c sorts the keys into its counters (the same names as the
 * perf filters give). What it costs the guest: docs/exits.md, bench/kvm_reasons.sh.
 *
 * Timed (kvm_bpf_open's timed): also the time each exit took to end, under the same keys: a
 * kvm_exit's until its thread's next kvm_entry (the host fires both: bare metal, ordinary nested
 * KVM; not PVM), a kvm_userspace_exit's until its thread's next KVM_RUN ioctl (the VMM's handling
 * and any wait for a CPU). The second hooks every ioctl on the host: bench/kvm_reasons.sh.
 *
 *   struct kvm_bpf *b;
 *   if (kvm_bpf_open(root, timed, &b, why, sizeof(why)) < 0) ... perf filters instead, why says why
 *   kvm_bpf_refresh(b);   once per refresh, then kvm_bpf_tally() per VM
 *   kvm_bpf_close(b);
 */
#ifndef VMHOST_CORE_KVM_BPF_H
#define VMHOST_CORE_KVM_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/kvm_reasons.h"
#include "core/kvm/kvm_time.h"
#include "io/io.h"

struct kvm_bpf;

/* Loads and attaches the counter (timed: and the timing). 0, or with a one-line reason in why:
 * -ECANCELED VMHOST_KVM_REASONS=perf asked for the perf filters (a test build), -EOPNOTSUPP built without eBPF,
 * -ELIBACC libbpf1 missing, -EPERM/-EACCES not allowed (CAP_BPF and CAP_PERFMON, lockdown),
 * -ENOENT no tracefs, -ENODEV no KVM tracepoints, -EPROTO a record field not where the program
 * reads it. On 0, why is "" or says why the timing asked for is not there (counting goes on). */
int kvm_bpf_open(const struct io_root *root, bool timed, struct kvm_bpf **ret, char *why, size_t cap);
void kvm_bpf_close(struct kvm_bpf *b); /* NULL: nothing */

/* Reads the whole map (one lookup per key). 0, -ENOMEM or the kernel's error. */
int kvm_bpf_refresh(struct kvm_bpf *b);

/* Which counter an event's (a, b) belongs to: its index below n, or -1 for none. */
typedef long kvm_bpf_classify_fn(const void *ctx, unsigned event, uint32_t a, uint32_t b);

/* Adds tgid's counts as of the last refresh into counts[n]: only the threads in tids when ntids
 * is not 0 (tids sorted). */
void kvm_bpf_tally(const struct kvm_bpf *b, pid_t tgid, const pid_t *tids, size_t ntids,
		   kvm_bpf_classify_fn *classify, const void *ctx, uint64_t *counts, size_t n);

/* Adds tgid's times as of the last refresh into times[n], as kvm_bpf_tally does the counts. */
void kvm_bpf_tally_times(const struct kvm_bpf *b, pid_t tgid, const pid_t *tids, size_t ntids,
			 kvm_bpf_classify_fn *classify, const void *ctx, struct kvm_exit_time *times, size_t n);

/* The threads of tgid with counted exits as of the last refresh, sorted. 0 or -ENOMEM. */
int kvm_bpf_threads(const struct kvm_bpf *b, pid_t tgid, pid_t **ret, size_t *ret_n);

/* Whether exits of event (KVM_BPF_EXIT, KVM_BPF_USERSPACE_EXIT) are timed. b NULL: false. */
bool kvm_bpf_timed(const struct kvm_bpf *b, unsigned event);

/* A counter that reads nothing from the kernel (refresh keeps what was set): the decoding tested
 * on fixtures of the map, for the hosts where kvm_exit and kvm_entry fire. kvm_bpf_replay makes
 * one, empty, of ncpus CPUs, timing the events of bit (1 << KVM_BPF_EXIT or _USERSPACE_EXIT) in
 * timed (0, -EINVAL or -ENOMEM; kvm_bpf_close frees it); kvm_bpf_replay_set replaces its contents
 * with recs, each key's per-CPU values as a refresh reads them from counts or from times. 0,
 * -EINVAL (not a replay) or -ENOMEM. */
struct kvm_bpf_record {
	struct kvm_bpf_key key;
	const uint64_t *counts;            /* [ncpus], or NULL for a time record */
	const struct kvm_exit_time *times; /* [ncpus] */
};

/* Follows a command from before its exec (exits -- CMD): the exits of pid and of every process
 * it and its descendants start from now on are counted (and timed) under pid, as the perf
 * filters' inherited events count them. 0, or a negative errno (the fork tracepoint refused). */
int kvm_bpf_follow(const struct io_root *root, struct kvm_bpf *b, pid_t pid);

/* Removes tgid's keys from the map (its counter closed): they would fill it. */
void kvm_bpf_forget(struct kvm_bpf *b, pid_t tgid);

/* Exits not counted, or not timed, since load because a map was full (KVM_BPF_MAX_KEYS keys). */
uint64_t kvm_bpf_lost(const struct kvm_bpf *b);

/* For tests: records replayed through the counting without the kernel. */

int kvm_bpf_replay(int ncpus, unsigned timed, struct kvm_bpf **ret);
int kvm_bpf_replay_set(struct kvm_bpf *b, const struct kvm_bpf_record *recs, size_t n);

#endif
