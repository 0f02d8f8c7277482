/* libvirt's domain statistics' field names (virConnectGetAllDomainStats, `virsh domstats`). */
#ifndef VMHOST_PARSE_VIRT_STATS_H
#define VMHOST_PARSE_VIRT_STATS_H

#include <stddef.h>

/* A KVM statistic as libvirt passes QEMU's query-stats on: "vcpu.N.NAME.sum" (cumulative),
 * ".cur" (instant) or ".max" (peak) for a vCPU, "vm.NAME.sum" ... for the VM. 0 with the vCPU
 * (-1: the VM's own) and NAME ("exits"); -ENOENT for any other field ("vcpu.0.time",
 * "vcpu.current", "balloon.current"); -ENAMETOOLONG when NAME does not fit cap. */
int parse_virt_kvm_stat(const char *field, int *ret_vcpu, char *ret_name, size_t cap);

#endif
