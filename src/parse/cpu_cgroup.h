/* Pure parsers for what a VM costs besides memory: scheduler statistics, vCPU thread names,
 * cgroup controller paths, cgroup memory files and pressure (PSI). Buffer in, struct out. */
#ifndef VMHOST_PARSE_CPU_CGROUP_H
#define VMHOST_PARSE_CPU_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/maybe.h"

/* /proc/PID/task/TID/schedstat: "run_ns wait_ns timeslices". */
struct schedstat {
	uint64_t run_ns;  /* time on a CPU */
	uint64_t delay_ns; /* time runnable but waiting for a CPU (the host-side steal) */
};
int parse_schedstat(const char *buf, size_t len, struct schedstat *ret);

/* /proc/PID/task/TID/sched with schedstats on: the scheduler's wait_sum ("wait_sum : 12.345678",
 * "se.statistics.wait_sum" before 5.16; milliseconds), libvirt's vcpu.N.wait. 0 with it in ns;
 * -ENOENT when the line is not there (schedstats off), -EINVAL when its value is not a number. */
int parse_sched_wait_sum(const char *buf, size_t len, uint64_t *ret_ns);

/* A vCPU thread's name, by VMM: QEMU "CPU 3/KVM" (or /TCG, /HVF, ...), cloud-hypervisor
 * "vcpu3", firecracker "fc_vcpu 3", crosvm "crosvm_vcpu3". Returns true with the vCPU index. */
bool parse_vcpu_thread_name(const char *comm, int *ret_index);

/* /proc/PID/cgroup: the path of the cgroup v1 hierarchy that has `controller` (e.g. "memory")
 * in its controller list. "" when there is none. 0, -EINVAL on garbage, -ENAMETOOLONG. */
int parse_cgroup_controller(const char *buf, size_t len, const char *controller, char *ret, size_t cap);

/* A cgroup path's per-VM scope: copies the path up to and including it into scope and returns
 * true for libvirt (machine.slice/machine-*.scope, or machine/NAME.libvirt-qemu without systemd)
 * and Proxmox (qemu.slice/N.scope) VMs; false for any other path, or when scope's cap cannot hold
 * it. */
bool parse_cgroup_vm_scope(const char *path, char *scope, size_t cap);

/* A cgroup limit: v2 "max" or v1's page-counter maximum mean unlimited (*ret unknown). */
int parse_cgroup_limit(const char *buf, size_t len, maybe_i64 *ret);

/* A PSI file (/proc/pressure/cpu and friends, cgroup v2 memory.pressure and friends): "some avg10=0.12 ... total=US" and the
 * same for "full" (cpu has no "full" line on older kernels: NaN). Seconds from the totals. */
struct pressure {
	double some_avg10, full_avg10;     /* percent of wall time over the last 10 s */
	double some_seconds, full_seconds; /* stalled time so far */
};
int parse_pressure(const char *buf, size_t len, struct pressure *ret);

/* "key value" lines (memory.events, memory.oom_control, cpu.stat): the value of one key. */
int parse_keyed_u64(const char *buf, size_t len, const char *key, maybe_i64 *ret);

#endif
