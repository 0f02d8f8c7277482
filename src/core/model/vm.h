/* Virtual machines on this host: the record of each (struct vm), found by vm_discover.c (every VMM
 * process in /proc, the pids asked for, and the helpers sharing a VM's scope) and measured by
 * vm_measure.c (its memory counters, CPU and vCPUs, cgroup, disks and network, and from them its
 * PSS and overhead). The visits to a VM's monitor are core/model/vm_visit.h's. */
#ifndef VMHOST_CORE_VM_H
#define VMHOST_CORE_VM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The types of the record's parts, so that a reader of struct vm has every field's. */
#include "core/model/account.h"
#include "core/model/guest_view.h"
#include "core/model/pss_sample.h"
#include "core/model/vm_cost.h"
#include "core/model/vm_disks.h"
#include "core/model/vm_io.h"
#include "core/model/vm_numa.h"
#include "io/io.h"
#include "parse/cmdline/vmcmd.h"

struct host;
struct vm_memo;

#define VM_MAX_HELPERS 16
#define VM_CGROUP_MAX 512 /* a longer cgroup path is unknown */
#define VM_CMDLINE_MAX (4u << 20) /* a command line is read this far, and cut beyond */

enum measure_method { METHOD_NONE, METHOD_ESTIMATE, METHOD_SAMPLED, METHOD_EXACT };

/* Who speaks for the VM on its monitor, and whether vmhost believes it: a QMP socket named on the
 * command line is spoken to only when the VM process itself listens on it, and a libvirt domain's
 * figures are the VM's only when libvirt says the domain is this process. */
enum vm_monitor_source { VM_MONITOR_NONE, VM_MONITOR_QMP, VM_MONITOR_LIBVIRT };
struct vm_monitor {
	enum vm_monitor_source source;
	int trusted;   /* 1 yes, 0 no, -1 not checked (no visit was asked) */
	char why[160]; /* why not trusted, or why not checked; "" when trusted */
};
const char *vm_monitor_source_name(enum vm_monitor_source s); /* "qmp", "libvirt"; NULL for none */

struct vm {
	pid_t pid;
	uint64_t start_ticks; /* with pid, identifies the VM across samples */
	struct vm_config cfg; /* vmm, name, uuid, guest RAM */
	/* Owned, and on the heap: a path may take VM_CGROUP_MAX bytes, and the records of hundreds of
	 * VMs are written whole in a survey (each page a fault: vm_discover). */
	char *cgroup;         /* the VM's scope (libvirt or Proxmox), else its cgroup path; NULL unknown */
	bool vm_scope;        /* cgroup is a per-VM scope that helpers may share */
	int cgroup_version;   /* of the scope: 2, or 1 when it is the v1 memory controller's */
	char *cgroup_v1_memory; /* the VM's scope in the v1 memory controller; NULL when none */
	uint64_t cpu_ticks;   /* utime + stime of the VMM, all its threads, when discovered */
	bool stat_known;      /* its stat file parsed: cpu_ticks and start_ticks are real */
	/* Taken whole from the reading before, nothing read (a survey's due said it was not due: top's
	 * slices, survey.h): every figure is as that reading had it, read at read_at. */
	bool carried;
	double read_at;       /* CLOCK_MONOTONIC when vm_measure read its counters; 0 unknown */
	char comm[64];        /* the main thread's name, from stat; "" unknown */
	pid_t helpers[VM_MAX_HELPERS];
	size_t nhelpers;
	char *cmdline;        /* as read (NUL-separated), owned; kept only for a memo (vm_memo.h) */
	struct vm_monitor monitor; /* set by discovery from the command line, checked by a visit */
	size_t cmdline_len;

	/* Filled by vm_measure(). */
	struct mem_counters mem; /* the VMM process plus its helpers */
	maybe_i64 pss_bytes, overhead_bytes, ksm_saved_bytes;
	maybe_i64 pss_bound_bytes; /* worst-case error of pss_bytes (0 when exact) */
	enum measure_method pss_method, overhead_method;
	struct pss_cost pss_cost;  /* what its exact read and its sample cost, when timed (pss_refine) */
	/* --exact: huge pages from smaps_rollup, summed over the VMM and its helpers (unknown without
	 * it), and how many of them map shared ones; mem.hugetlb has status' figure always. */
	maybe_i64 hugetlb_private_bytes, hugetlb_shared_bytes;
	unsigned hugetlb_shared_mappers;
	/* Anonymous memory on THP: the scope's memory.stat (cg.thp_bytes), or with --exact the VMM's and
	 * its helpers' smaps_rollup AnonHugePages; unknown without either. */
	maybe_i64 thp_bytes;
	maybe_i64 swap_pss_bytes; /* --exact: the VMM's and its helpers' SwapPss; unknown without it */
	/* Host CPU KVM spent polling its halted vCPUs, since it started (core/kvm/kvm_halt.h): set by
	 * the command that read KVM's counters (mem --json); unknown otherwise. */
	maybe_i64 halt_poll_ns;
	unsigned denied_files;     /* files of the VM we had no permission to read (figures n/a) */
	struct vm_cpu cpu;         /* VMM + helpers, and each vCPU thread */
	struct vm_cgroup cg;       /* the scope's memory, limit, OOM kills, pressure */
	struct vm_io io;           /* disk and network counters of the VMM, its helpers and its taps */
	struct vm_numa numa;       /* the nodes its vCPUs may run on */
	struct vm_stalls stalls;   /* what memory pressure and KSM cost its guest (delay accounting) */
	struct guest_view *guest;  /* read by a visit (vm_visit.h), owned; NULL: not read (the record stays small) */
	struct vm_disks *disks;    /* read by a visit (vm_visit.h), owned; NULL: not asked */
};

/* A process discovery found to be no VM (vm_discover_known with a memo): known by pid, start time
 * and name, the next discovery takes it for the same process by its stat alone. */
struct vm_other {
	pid_t pid;
	uint64_t start_ticks;
	char comm[16];
	long fds; /* its fd count when they held no KVM VM; 0: not counted (debugfs said, an older kernel); -1: none to look at (a kernel thread) */
};

struct vm_list {
	struct vm *vms;
	size_t n;
	unsigned skipped; /* processes that vanished or could not be read */
	unsigned denied;  /* processes with files we had no permission to read */
	struct vm_other *others; /* pid order; owned */
	size_t nothers;
};

/* What the VM's memory costs the host (memory_cost_bytes): its PSS plus its huge pages, shared
 * ones divided among the VM's processes that map them when --exact told them apart. */
maybe_i64 vm_memory_cost(const struct vm *vm);
/* "estimate", "sampled", "exact"; NULL for METHOD_NONE. */
const char *measure_method_name(enum measure_method m);

/* Frees what one VM's record owns (its vCPUs, guest view, disks, command line, cgroup paths). */
void vm_free(struct vm *vm);
void vm_list_free(struct vm_list *l);
/* A VM's record copied, with copies of what it owns but its guest view and disks (NULL in the
 * copy). 0, or -ENOMEM with nothing to free. */
int vm_copy(const struct vm *from, struct vm *ret);

/* The VM of l (NULL: none) that is vm in another reading: the same pid and start time. By pid
 * order, as discovery lists them, and one by one when the list is in another order. */
const struct vm *vm_list_find(const struct vm_list *l, const struct vm *vm);

/* ---- vm_discover.c ---- */

/* Finds every VMM process, plus the given pids (as plain processes when they are not VMs),
 * and the helpers sharing a VM's scope. */
int vm_discover(const struct io_root *root, const pid_t *extra, size_t nextra, struct vm_list *ret);
/* The same with a memo of the VMs seen before (vm_memo.h; NULL: none): a process with a
 * remembered VM's pid, start time and name is taken for that VM without its command line read, and
 * takes the memo's vCPU threads as its reading before (vm_measure); every VM found keeps its
 * command line (vm->cmdline) to be remembered in turn. */
int vm_discover_known(const struct io_root *root, const pid_t *extra, size_t nextra, struct vm_memo *memo,
		      struct vm_list *ret);

/* ---- vm_measure.c ---- */

enum { VM_MEASURE_EXACT = 1 << 0 };

/* Measures every VM (vm_measure), dropping (and counting as skipped) those that vanished; before
 * (NULL: none) is the reading before, where the same VMs (pid and start time) are found. */
int vm_measure_all(const struct io_root *root, const struct host *host, struct vm_list *l,
		   const struct vm_list *before, unsigned flags);

/* The VM's PSS read exactly, from smaps_rollup of the VMM and its helpers (with their huge pages:
 * thp_bytes and the hugetlb split), as --exact reads it and as pss_refine does where that costs
 * less than a sample: pss_method "exact", and the read's CPU time in vm->pss_cost (exact_seconds,
 * exact_at, exact_merging, seconds). ret_cal (NULL: not wanted): the VM's own KSM weights when
 * it has no helpers, else invalid. 0; -ESRCH when the VMM vanished; another negative errno when
 * its smaps_rollup could not be read (the VM's figures left as they were; files we may not read
 * are counted in *denied). */
int vm_measure_pss_exact(const struct io_root *root, const struct host *host, struct vm *vm, unsigned *denied,
			 struct pss_calibration *ret_cal);

/* For tests: one VM's measuring, as vm_measure_all does it for each. */

/* Reads one VM's counters and derives PSS and overhead; before (NULL: none) is the same VM's
 * reading before, which spares reading again what cannot have changed (vcpus_read). Returns 0
 * (files it may not read are counted in vm->denied_files, their figures unknown), -ESRCH when
 * the VMM process vanished, or another negative errno. */
int vm_measure(const struct io_root *root, const struct host *host, struct vm *vm, const struct vm *before,
	       unsigned flags);

#endif
