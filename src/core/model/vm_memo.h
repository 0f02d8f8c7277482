/* What the one-shot commands (vmhost mem, top, doctor) remember of the VMs from one run to the
 * next, so that a run need not find out again what cannot have changed: each VM's command line
 * and its vCPU threads, under its pid, start time and name (comm), which name one process for the
 * life of a boot and one program in it (exec keeps the pid and start time, not the name). A VMM
 * does not exec and names its threads once, so what the memo says of a process that is still the
 * same one is still true; the thread list and every counter are read each run. Its taps (which can
 * be hot-plugged) are remembered with the VMM's fd count then, and taken only while it holds; its
 * vCPUs with its thread count then, their names read again only once it moved (vm_cost.h). Its
 * cgroup is kept too, but discovery reads it again each run (a VM can be moved between cgroups:
 * live_cgroup_move). The processes that are no VM are remembered
 * too (pid, start time, name, and without debugfs the fd count at which their fds held no KVM
 * VM), so that a look at them is one stat read, not a command line and a walk of their fds.
 * It is a file in vmhost's runtime directory, marked with the boot's id: a memo of another boot,
 * of another format, damaged, or not ours is no memo, and the run reads everything. A second file
 * beside it, kept the same way, remembers what reading each VM's PSS cost (exactly, and by a
 * sample), which pss_refine chooses by: that changes as the VM does, so it is apart, and
 * rewritten only when a cost moved enough to matter (pss_cost_news). */
#ifndef VMHOST_CORE_VM_MEMO_H
#define VMHOST_CORE_VM_MEMO_H

#include "core/model/vm.h"

/* One VM remembered (small: a memo of hundreds is read and searched in a few pages). */
struct vm_memo_vm {
	pid_t pid;
	uint64_t start_ticks;
	char comm[16];       /* the main thread's name then (TASK_COMM_LEN), NUL-padded */
	const char *cmdline; /* in the memo's file */
	size_t cmdline_len;
	struct vm_cpu cpu;   /* vcpus (tid, index) and named; owned until discovery takes it */
	long ifaces_fds;     /* the VMM's fd count when its taps were listed (0: they were not) */
	const char *ifaces;  /* their nifaces names, IFNAMSIZ bytes each, in the memo's file */
	size_t nifaces;
	/* Its cgroup as vm_discover read it (NULL: read it again), in the memo's file or the list's. */
	const char *cgroup, *cgroup_v1_memory; /* cgroup_v1_memory NULL: none */
	int cgroup_version;
	bool vm_scope;
	const struct vm *vm; /* vm_memo_of_list's: the record it was made of; NULL from a file */
};

/* What reading one VM's PSS cost, remembered under its process. */
struct vm_memo_cost {
	pid_t pid;
	uint64_t start_ticks;
	char comm[16];          /* as in struct vm_memo_vm */
	struct pss_cost cost;   /* seconds 0 */
};

struct vm_memo {
	struct vm_memo_vm *vms; /* pid order */
	size_t n;
	struct vm_memo_cost *costs; /* pid order */
	size_t ncosts;
	struct vm_other *others; /* the processes that were no VM, pid order; owned */
	size_t nothers;
	char boot_id[40];   /* "" when unknown: nothing is loaded or saved */
	/* A memo of a reading (vm_memo_of_list) may say which processes to look at now (survey.h: due):
	 * one it knows that is not due is taken as it was, without a read, while /proc lists its pid
	 * (a VM its record whole, vm_copy). NULL: every process is due. */
	bool (*due)(const void *cls, pid_t pid);
	const void *due_cls;
	char *file;         /* the file as read, so that an unchanged memo is not written again */
	size_t len;
	size_t others_at;   /* where the file's other processes begin (its VMs end) */
	char *cost_file;    /* the costs' file as read, likewise */
	size_t cost_len;
};

/* Loads dir's memo; any problem leaves an empty one (a memo only spares reads). */
void vm_memo_load(const struct io_root *root, const char *dir, struct vm_memo *ret);

/* The VM remembered under pid, or NULL. */
struct vm_memo_vm *vm_memo_find(const struct vm_memo *m, pid_t pid);
/* The process remembered as no VM under pid, or NULL. */
const struct vm_other *vm_memo_find_other(const struct vm_memo *m, pid_t pid);

/* A memo of a reading kept in memory (top, and the sampler behind record and serve): the VMs of
 * l, their command lines and cgroups borrowed from l (which must outlive the discovery that uses
 * the memo), their vCPUs copied, and l's other processes. -ENOMEM (an empty memo then). */
int vm_memo_of_list(const struct vm_list *l, struct vm_memo *ret);

/* The taps each VM of vms had at the run before (their names, and the VMM's fd count then) into its
 * io, for measuring to take while the VMM holds as many fds (core/model/vm_io.h): a one-shot run
 * then looks through a VMM's fds only when their count moved. A VM is the one remembered when its
 * pid and start time are. */
void vm_memo_taps(const struct vm_memo *m, struct vm_list *vms);

/* What reading vm's PSS cost, as remembered, when the memo's cost under its pid is this process's
 * (its start time and name) and an exact read was timed; else NULL (m may be NULL). */
const struct pss_cost *vm_memo_pss_cost(const struct vm_memo *m, const struct vm *vm);

/* Remembers the VMs of now (those discovered with vm_discover_known) and its other processes,
 * replacing the file when its VMs changed or more than a few other processes are new to it
 * (processes come and go all the time, vmhost itself among them: a few not remembered cost a
 * command line read each, a write every run more); and what reading each VM's PSS cost
 * (vm->pss_cost where pss_cost_news says it is news, else what was remembered), replacing that
 * file when it changes. 0 or a negative errno (nothing is lost: the next run reads everything). */
int vm_memo_save(const char *dir, const struct vm_memo *m, const struct vm_list *now);

void vm_memo_free(struct vm_memo *m);

#endif
