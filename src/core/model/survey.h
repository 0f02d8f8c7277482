/* One look at the host and every VM, as `vmhost mem`, `top` and `doctor` take it: host memory and
 * KSM, discovery, the cheap counters, sampled PSS within a budget, optionally the guests' own view
 * and, over an interval, CPU and vCPU-wait rates. */
#ifndef VMHOST_CORE_SURVEY_H
#define VMHOST_CORE_SURVEY_H

#include "core/model/host.h"
#include "core/model/vm.h"

/* One QMP visit per VM for the guest's view and disks: a busy or stuck monitor costs at most this. */
#define SURVEY_GUEST_TIMEOUT_MS 300

struct survey_opts {
	const pid_t *pids; /* --pid processes */
	size_t npids;
	bool exact;                /* the exact, expensive sources (smaps_rollup, pagemap) */
	double pss_budget_seconds; /* sampling the PSS of the VMs whose estimate may be off most */
	bool guest;                /* ask each QEMU for its balloon and the guest's stats */
	int guest_poll_seconds;    /* and first set the balloon's stats polling interval */
	bool disks;                /* each QEMU's disks: QMP query-blockstats, or libvirt's block stats */
	const char *libvirt_uri;   /* for the domains whose monitor libvirt holds (NULL: qemu:///system) */
	double interval_seconds;   /* > 0: two readings this far apart, for the rates */
	const struct vm_list *before; /* NULL, or the reading before (top's): what cannot have changed
	                               * since is not read again (vm_measure) */
	/* With before: NULL, or which processes to look at now. One before knows that is not due is
	 * taken as it was, without a read, while /proc lists its pid; a VM's record whole, with
	 * carried set (top's live view: the VMs it shows and a slice of the rest, core/sample/top.h). */
	bool (*due)(const void *cls, pid_t pid);
	const void *due_cls;
	const char *memo_dir; /* NULL, or where the VMs of the last run are remembered (vm_memo.h):
	                       * used in place of before when there is none, and updated */
	void (*under_way)(void *cls); /* NULL, or called once the first of the two readings is taken */
	void *under_way_cls;
};

enum survey_step { SURVEY_HOST, SURVEY_PROCESSES };

/* Fills *ret_host and *ret_vms (free with vm_list_free). Returns 0 or a negative errno with
 * *ret_step saying what failed (the host's meminfo, or listing processes); nothing to free then. */
int survey_take(const struct io_root *root, const struct survey_opts *o, struct host *ret_host,
		struct vm_list *ret_vms, enum survey_step *ret_step);

#endif
