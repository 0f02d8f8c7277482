/* One VM's KVM counters through QMP query-stats (core/kvm/qmp_stats.h), laid out like its debugfs
 * directory: VM-level stats as they are, vCPU stats summed over the vCPUs, times in ns, the
 * histograms left out. For the debugfs reader (core/kvm/kvm.h) when a VM's debugfs counters are
 * closed or debugfs is not there.
 *
 *   struct kvm_qmp_vm *q;
 *   kvm_qmp_vm_new(socket_path, &q);
 *   kvm_qmp_vm_read(q, names, n, values, &vcpus)   values[i] for the counter called names[i]
 *   kvm_qmp_vm_reason(q)                            why the last read failed, in one line
 *   kvm_qmp_vm_free(q); */
#ifndef VMHOST_CORE_KVM_QMP_H
#define VMHOST_CORE_KVM_QMP_H

#include <stddef.h>

#include "parse/kvm_debugfs.h"
#include "parse/maybe.h"

#define KVM_QMP_TIMEOUT_MS 500 /* one visit: a busy or stuck monitor costs at most this */

struct kvm_qmp_vm;

int kvm_qmp_vm_new(const char *socket_path, struct kvm_qmp_vm **ret);
void kvm_qmp_vm_free(struct kvm_qmp_vm *q);

/* One visit (connect, ask, close). values[i] is the counter names[i] (unknown when QEMU has no
 * such stat), *ret_vcpus the vCPUs it reported. With ret_per_vcpu, also each vCPU's: a fresh
 * array of *ret_vcpus x n values (VM-level stats unknown) and their indices in *ret_index.
 * 0 or a negative errno (kvm_qmp_vm_reason). */
int kvm_qmp_vm_read(struct kvm_qmp_vm *q, const char *const *names, size_t n, maybe_i64 *values, int *ret_vcpus,
		    maybe_i64 **ret_per_vcpu, int **ret_index);
const char *kvm_qmp_vm_reason(const struct kvm_qmp_vm *q);
/* Its QEMU's version (major*10000 + minor*100 + micro) from the last visit; 0 before one. */
unsigned kvm_qmp_vm_version(const struct kvm_qmp_vm *q);

/* The scalar stats of the schema (known after a successful read): VM-level, then vCPU-level
 * ones not already named. Returns the count; name and kind of stat i through the out arrays. */
size_t kvm_qmp_vm_counters(const struct kvm_qmp_vm *q, size_t cap, const char **ret_names,
			   enum kvm_stat_kind *ret_kinds);

#endif
