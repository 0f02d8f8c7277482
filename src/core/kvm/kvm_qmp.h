/* One VM's KVM counters through QEMU's QMP (query-stats), for the reader (core/kvm/kvm.h) when a
 * VM's debugfs counters are closed or debugfs is not there: laid out like its debugfs directory,
 * VM-level stats as they are, vCPU stats summed over the vCPUs, times in ns, the histograms left
 * out; kinds and units from the stats descriptors. Each read is one short QMP visit (connect, ask,
 * close): the socket is never held between reads. The schema is read on the first visit and kept:
 * value i means the same counter in every sample of a VM.
 *
 *   struct kvm_qmp_vm *q;
 *   kvm_qmp_vm_new(socket_path, vm_pid, KVM_QMP_TIMEOUT_MS, &q);
 *   kvm_qmp_vm_read(q, names, n, values, &vcpus)   values[i] for the counter called names[i]
 *   kvm_qmp_vm_reason(q)                            why the last read failed, in one line
 *   kvm_qmp_vm_free(q); */
#ifndef VMHOST_CORE_KVM_QMP_H
#define VMHOST_CORE_KVM_QMP_H

#include <stddef.h>
#include <sys/types.h>

#include "parse/kvm_debugfs.h"
#include "parse/maybe.h"
#include "parse/qmp_stats.h"

#define KVM_QMP_TIMEOUT_MS 500 /* one visit: a busy or stuck monitor costs at most this */
#define KVM_MONITORS_BUDGET_S 2.0 /* all of one read's visits: the VMs left then are read next time */

struct kvm_qmp_vm;

/* A VM whose monitor listens on socket_path; each visit within timeout_ms, and only when the
 * socket's listener is the VM process pid itself (0: any listener, for tests and tools; io/peer/qmp.h's
 * qmp_open). 0 or -ENOMEM. */
int kvm_qmp_vm_new(const char *socket_path, pid_t pid, int timeout_ms, struct kvm_qmp_vm **ret);
void kvm_qmp_vm_free(struct kvm_qmp_vm *q);

/* One visit. values[i] is the counter names[i] (unknown when QEMU has no such stat), *ret_vcpus
 * the vCPUs it reported. With ret_per_vcpu, also each vCPU's: a fresh array of *ret_vcpus x n
 * values (VM-level stats unknown) and their indices in *ret_index. 0 or a negative errno
 * (kvm_qmp_vm_sample's; kvm_qmp_vm_reason says it). */
int kvm_qmp_vm_read(struct kvm_qmp_vm *q, const char *const *names, size_t n, maybe_i64 *values, int *ret_vcpus,
		    maybe_i64 **ret_per_vcpu, int **ret_index);
/* The last failure in one line ("QMP busy: ...", "QMP error reply: CommandNotFound: ..."). */
const char *kvm_qmp_vm_reason(const struct kvm_qmp_vm *q);
/* Its QEMU's version (major*10000 + minor*100 + micro) from the last visit's greeting; 0 before. */
unsigned kvm_qmp_vm_version(const struct kvm_qmp_vm *q);

/* The scalar stats of the schema (known after a successful read): VM-level, then vCPU-level
 * ones not already named. Returns the count; name and kind of stat i through the out arrays. */
size_t kvm_qmp_vm_counters(const struct kvm_qmp_vm *q, size_t cap, const char **ret_names,
			   enum kvm_stat_kind *ret_kinds);

/* One visit's stats as QEMU gave them: per VM and per vCPU, histograms as arrays. */
struct kvm_qmp_sample {
	double monotonic_seconds;       /* when the VM's stats were read */
	struct qmp_stat_value *vm;      /* [schema n[QMP_STATS_VM]] */
	struct qmp_vcpu_stats *vcpus;   /* sorted by vCPU index */
	size_t nvcpus;
};

/* For tests, tests/helpers/kvmprobe and bench/qmp_stats_refresh: the visit kvm_qmp_vm_read makes,
 * whole. */

/* One visit: query-stats-schemas (first visit only), query-stats for the VM and the vCPUs,
 * query-cpus-fast. Returns 0 or a negative errno: the QMP client's (qmp_strerror), -EOPNOTSUPP
 * (QEMU older than 7.1: no query-stats), -ENODATA (no KVM statistics: TCG, or not a KVM guest),
 * -EINVAL (a reply of the wrong shape). */
int kvm_qmp_vm_sample(struct kvm_qmp_vm *q, struct kvm_qmp_sample *ret);
void kvm_qmp_sample_free(struct kvm_qmp_sample *sample, const struct kvm_qmp_vm *q);
/* Empty until the first successful visit. */
const struct qmp_stats_schema *kvm_qmp_vm_schema(const struct kvm_qmp_vm *q);

#endif
