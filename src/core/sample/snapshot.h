/* One consistent sample of the host: memory, KSM, ksmd CPU, and every VM's figures. The unit
 * that `record` stores and `serve` exposes. */
#ifndef VMHOST_CORE_SNAPSHOT_H
#define VMHOST_CORE_SNAPSHOT_H

#include "core/base/stop.h"
#include "core/model/host.h"
#include "core/model/vm.h"

struct snapshot {
	double wall_seconds;     /* CLOCK_REALTIME when taken, Unix seconds */
	double monotonic_seconds; /* CLOCK_MONOTONIC, for rates */
	double gather_seconds;   /* how long taking it took */
	struct host host;
	pid_t ksmd_pid;          /* 0 when there is no ksmd */
	maybe_i64 ksmd_cpu_ns;   /* ksmd's CPU time so far */
	struct vm_list vms;
};

/* Takes a snapshot; flags as for vm_measure (VM_MEASURE_EXACT). ksmd_pid_hint (0 = look it up)
 * saves a /proc scan on repeated samples; before (NULL: none) is the snapshot before's VMs, which
 * spares reading command lines, cgroups and thread names again, and its other processes, known by
 * their stat alone (vm_memo_of_list). Returns 0 or a negative errno (host
 * unreadable; *ret is then untouched and there is nothing to free). */
int snapshot_take(const struct io_root *root, const pid_t *extra, size_t nextra, unsigned flags,
		  pid_t ksmd_pid_hint, const struct vm_list *before, struct snapshot *ret);
void snapshot_free(struct snapshot *s);

#endif
