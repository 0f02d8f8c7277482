/* KVM's counters of a libvirt domain, from its statistics (io/peer/virt.h): what QEMU's
 * query-stats gives, as libvirt passes it on. */
#ifndef VMHOST_CORE_KVM_VIRT_H
#define VMHOST_CORE_KVM_VIRT_H

#include <stddef.h>

#include "io/peer/virt.h"
#include "parse/kvm_debugfs.h"
#include "parse/maybe.h"

/* Each counter of names[n]: the VM's own (vm.NAME) or the sum over its vCPUs (vcpu.N.NAME), as
 * debugfs' VM directory sums them; unknown when the domain has neither. */
void kvm_virt_values(const struct virt_domain *d, const char *const *names, size_t n, maybe_i64 *values);

/* Each vCPU's counters (vcpu.N.NAME; the VM's own unknown), for KVM_READ_VCPUS: a fresh array of
 * *ret_vcpus x n values, vCPUs in ascending N, N in a fresh *ret_index. 0 or -ENOMEM (nothing set). */
int kvm_virt_vcpus(const struct virt_domain *d, const char *const *names, size_t n, int *ret_vcpus,
		   maybe_i64 **ret_per, int **ret_index);

/* The counters the domain has, each name once, with its kind (for a reader without debugfs):
 * at most cap into names (64 bytes each) and kinds; returns how many it wrote. */
size_t kvm_virt_counters(const struct virt_domain *d, char (*names)[64], enum kvm_stat_kind *kinds, size_t cap);

#endif
