/* KVM exit reasons counted in the kernel by eBPF (src/bpf/kvm_reasons.bpf.c): one program on each
 * of kvm_exit, kvm_userspace_exit, kvm_pio and kvm_mmio adds one to a per-CPU hash keyed by
 * (tgid, thread, event, two fields of the record), for every KVM user on the host at once. Read
 * once per refresh; core/kvm/kvm_trace.c sorts the keys into its counters (the same names as the
 * perf filters give). What it costs the guest: docs/exits.md, bench/kvm_reasons.sh.
 *
 *   struct kvm_bpf *b;
 *   if (kvm_bpf_open(root, &b, why, sizeof(why)) < 0) ... perf filters instead, why says why
 *   kvm_bpf_refresh(b);   once per refresh, then kvm_bpf_tally() per VM
 *   kvm_bpf_close(b);
 */
#ifndef VMHOST_CORE_KVM_BPF_H
#define VMHOST_CORE_KVM_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/io.h"

struct kvm_bpf;

/* Loads and attaches the counter. 0, or with a one-line reason in why: -ECANCELED
 * VMHOST_KVM_REASONS=perf asked for the perf filters, -EOPNOTSUPP built without eBPF, -ELIBACC
 * libbpf1 missing, -EPERM/-EACCES not allowed (CAP_BPF and CAP_PERFMON, lockdown), -ENOENT no
 * tracefs, -ENODEV no KVM tracepoints, -EPROTO a record field not where the program reads it. */
int kvm_bpf_open(const struct io_root *root, struct kvm_bpf **ret, char *why, size_t cap);
void kvm_bpf_close(struct kvm_bpf *b); /* NULL: nothing */

/* Reads the whole map (one lookup per key). 0, -ENOMEM or the kernel's error. */
int kvm_bpf_refresh(struct kvm_bpf *b);

/* Which counter an event's (a, b) belongs to: its index below n, or -1 for none. */
typedef long kvm_bpf_classify_fn(const void *ctx, unsigned event, uint32_t a, uint32_t b);

/* Adds tgid's counts as of the last refresh into counts[n]: only the threads in tids when ntids
 * is not 0 (tids sorted). */
void kvm_bpf_tally(const struct kvm_bpf *b, pid_t tgid, const pid_t *tids, size_t ntids,
		   kvm_bpf_classify_fn *classify, const void *ctx, uint64_t *counts, size_t n);

/* Removes tgid's keys from the map (its counter closed): they would fill it. */
void kvm_bpf_forget(struct kvm_bpf *b, pid_t tgid);

/* Exits not counted since load because the map was full (KVM_BPF_MAX_KEYS keys). */
uint64_t kvm_bpf_lost(const struct kvm_bpf *b);

#endif
