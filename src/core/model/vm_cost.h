/* What a VM costs besides memory: CPU time of the VMM and of each vCPU thread (and the time each
 * vCPU waited for a host CPU: the host-side steal), and its cgroup's memory, limit, OOM kills and
 * pressure. Read from /proc and the VM's own cgroup scope; unknown figures stay NaN / unknown. */
#ifndef VMHOST_CORE_VM_COST_H
#define VMHOST_CORE_VM_COST_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/base/stalls.h"
#include "io/io.h"
#include "parse/cpu_cgroup.h"
#include "parse/numa_stat.h"
#include "parse/parse.h"

struct vcpu {
	int index;           /* the VMM's vCPU number (QEMU "CPU 3/KVM" is 3) */
	pid_t tid;
	double cpu_seconds;  /* on a host CPU (schedstat); NaN unknown */
	double delay_seconds; /* runnable but waiting for a host CPU; NaN unknown */
	double sched_wait_seconds; /* the scheduler's wait_sum (schedstats on; libvirt's vcpu.N.wait); NaN without */
	double cpu_percent, delay_percent; /* over an interval (100 = all of it); NaN without one */
	double stall_seconds; /* stalled on memory (stalls_memory_seconds, delay accounting); NaN unknown */
};

/* A vCPU found but not yet read: every figure unknown. */
static inline struct vcpu vcpu_unread(int index, pid_t tid)
{
	return (struct vcpu){.index = index, .tid = tid, .cpu_seconds = NAN, .delay_seconds = NAN, .sched_wait_seconds = NAN,
			     .cpu_percent = NAN, .delay_percent = NAN, .stall_seconds = NAN};
}

struct vm_cpu {
	double cpu_seconds;       /* every thread of the VMM and its helpers, exited ones included */
	double vcpu_delay_seconds; /* summed over vCPUs; NaN when no vCPU thread was found */
	struct vcpu *vcpus;       /* sorted by index; owned */
	size_t nvcpus;
	bool vcpus_known;         /* the thread list was read (a VM with none found has 0) */
	pid_t *named;             /* the other threads the VMM has named (a name unlike its main
	                           * thread's): not vCPUs, and not read again with this as before */
	size_t nnamed;
	long threads;             /* the VMM's thread count when its vCPUs were last named; 0 unknown */
	double cpu_percent, vcpu_delay_percent; /* over an interval, 100 = one CPU; NaN without one */
};

enum { PRESSURE_MEMORY, PRESSURE_CPU, PRESSURE_IO, PRESSURE_NKINDS };
extern const char *const pressure_kind_names[PRESSURE_NKINDS]; /* "memory", "cpu", "io" */

struct vm_cgroup {
	int version;             /* whose memory figures: 2, 1 (the v1 memory controller), 0 none */
	maybe_i64 memory_bytes;  /* v2 memory.current, v1 memory.usage_in_bytes */
	maybe_i64 limit_bytes;   /* memory.max / memory.limit_in_bytes; unknown when unlimited */
	maybe_i64 swap_bytes;    /* v2 memory.swap.current */
	maybe_i64 oom_kills;     /* v2 memory.events oom_kill, v1 memory.oom_control oom_kill */
	maybe_i64 hugetlb_bytes; /* v2 hugetlb controller: hugetlb.2MB.current + hugetlb.1GB.current */
	maybe_i64 thp_bytes;     /* anonymous memory on transparent huge pages: v2 anon_thp, v1 rss_huge */
	/* Anonymous and shared memory per NUMA node (memory.numa_stat; v1's pages in bytes). */
	bool numa_known;
	size_t numa_nodes;
	int64_t numa_bytes[NUMA_NODES_MAX];
	bool have_pressure[PRESSURE_NKINDS];
	struct pressure pressure[PRESSURE_NKINDS]; /* v2 only */
};

void vm_cpu_free(struct vm_cpu *c);

/* What memory pressure and KSM cost the VM's guest (core/base/stalls.h): the VMM's threads'
 * stalls, each vCPU's apart (struct vcpu's stall_seconds), over an interval as a percent, and
 * KSM's net worth: what it saves the VM against what ksmd spends on it and the copies the guest
 * waits for when it writes to a merged page. */
struct vm_stalls {
	struct stalls all;       /* every thread of the VMM, exited ones included; unknown: why says */
	char why[200];           /* why all is unknown ("" when known) */
	double stall_percent;    /* memory stall seconds of all threads over the interval, percent of it
	                          * (100 = one thread stalled throughout); NaN without an interval */
	double copy_stall_seconds; /* write-protect copy stalls over the interval; NaN without one */
	double ksmd_cpu_seconds; /* ksmd's CPU over the interval x the VM's share of it; NaN without */
};

/* Not read, with why (NULL: ""). */
struct vm_stalls vm_stalls_unknown(const char *why);

/* The stalls of VMM pid and of each of cpu's vCPU threads (cpu's vCPUs get their stall_seconds:
 * 0 when the process never stalled, asked one thread at a time only once its memory stalls reach
 * VM_STALLS_SPLIT_MIN_SECONDS, unknown below: a VMM's start-up copies are not worth a request per
 * vCPU); r NULL or not open: unknown with r's reason. before (NULL: none) is the VM's reading
 * before: when its threads' memory stalls have not grown since, the vCPUs' cannot have either,
 * and are taken from it instead of asked. -ESRCH when the VMM is gone, else 0. */
#define VM_STALLS_SPLIT_MIN_SECONDS 0.001
int vm_stalls_read(struct stall_reader *r, pid_t pid, const struct vm_stalls *before_stalls,
		   const struct vm_cpu *before_cpu, struct vm_cpu *cpu, struct vm_stalls *ret);

/* stall_percent and copy_stall_seconds between two readings of the same VM, seconds apart. */
void vm_stalls_rates(const struct vm_stalls *before, struct vm_stalls *after, double seconds);


/* What the caller knows of a process that spares vcpus_read some reads (each may be unknown). */
struct vcpus_known {
	/* The same process's reading before: a VMM names its threads once, as they start, so a
	 * thread that was a vCPU there is the same vCPU without its name read again (its schedstat
	 * still says whether it lives), and one it had named otherwise is still no vCPU. A thread
	 * that still carries the main thread's name is read every time: it may be a vCPU not named
	 * yet. (A thread id is not reused until the kernel's pids wrap around, which takes far longer
	 * than a refresh.) When it had found as many vCPUs as max_vcpus, those are the only ones
	 * there can be: only their schedstat is read, not the thread list, unless one is gone.
	 * NULL: none. */
	const struct vm_cpu *before;
	/* The main thread's name (the comm of /proc/PID/stat, which discovery reads); NULL or "":
	 * read here. */
	const char *main_name;
	/* The most vCPUs the process can have (QEMU -smp maxcpus), 0 unknown: once that many vCPU
	 * threads are found, the threads after them (QEMU's I/O workers, started later) are not
	 * read. */
	unsigned max_vcpus;
	/* The kernel keeps schedstats (kernel.sched_schedstats = 1): each vCPU's sched file is read
	 * too, for its wait_sum. */
	bool sched_wait;
	/* The process's thread count now (status Threads), 0 unknown. While it is before's, a vCPU
	 * remembered by id is taken for the same vCPU without its name read again: another thread
	 * could only have its id after it exited and the kernel's pids wrapped around, and the count
	 * would have had to come back to the same. */
	long threads;
};

/* Finds the vCPU threads of pid and reads their scheduler statistics; known may be NULL. *ret
 * is replaced (its old vCPUs freed) only on success. 0, -ESRCH when there is no thread list
 * (gone), -ENOMEM. */
int vcpus_read(const struct io_root *root, pid_t pid, const struct vcpus_known *known, struct vm_cpu *ret);

/* Percentages over seconds between two readings of the same VM (vCPUs matched by thread id). */
void vm_cpu_rates(const struct vm_cpu *before, struct vm_cpu *after, double seconds);

/* What Proxmox VE 9 shows as a VM's host memory: its scope's charge without page cache (v2
 * memory.current - memory.stat file; v1 memory.usage_in_bytes - memory.stat cache). KSM-blind:
 * a merged page stays charged to one cgroup. Unknown when a file is missing. */
maybe_i64 cgroup_memory_without_cache(const struct io_root *root, int version, const char *scope);

/* The huge pages charged to a v2 scope by the hugetlb controller (x86's two sizes, 2MB and 1GB);
 * unknown when the controller is not enabled there. */
maybe_i64 cgroup_hugetlb_bytes(const struct io_root *root, const char *v2_scope);

/* The cgroup files of a VM's scope (paths as in /proc/PID/cgroup): the unified tree's scope (v2:
 * memory and pressure), and the v1 memory controller's (hybrid hosts: memory when v2 has none).
 * Either may be NULL. A scope that vanished or a missing file leaves its figures unknown. */
/* page_size: v1's numa_stat counts pages. */
void vm_cgroup_read(const struct io_root *root, const char *v2_scope, const char *v1_memory_scope, int64_t page_size,
		    struct vm_cgroup *ret);

#endif
