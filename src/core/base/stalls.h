/* What the host's memory pressure and KSM cost a process: the time its threads stalled on
 * write-protect copies (a write to a page KSM merged, or any other copy-on-write page), swap-in,
 * direct reclaim, thrashing, compaction and IRQs, from the kernel's delay accounting (taskstats
 * over netlink, io/peer/taskstats.h). Counted only while kernel.task_delayacct is 1, which vmhost
 * never turns on by itself; where it cannot be read, a reader says why and the one command that
 * turns it on. Used per VM (core/model/vm_cost.h) and for the guests of bench ksm and ksm sweep.
 *
 *   struct stall_reader r;
 *   if (stall_reader_open(root, host->delayacct, &r) == 0)   (else r.why says why)
 *           stall_read(&r, pid, true, &stalls);
 *   stall_reader_close(&r);
 */
#ifndef VMHOST_CORE_BASE_STALLS_H
#define VMHOST_CORE_BASE_STALLS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/io.h"
#include "io/peer/taskstats.h"

/* The kinds of stall, in the contract's order (vmhost_vm_stall_seconds_total's kind label). */
enum stall_kind { STALL_WPCOPY, STALL_SWAPIN, STALL_RECLAIM, STALL_THRASHING, STALL_COMPACT, STALL_IRQ, STALL_NKINDS };
/* "wpcopy", "swapin", "reclaim", "thrashing", "compact", "irq". */
extern const char *const stall_kind_names[STALL_NKINDS];

/* The one command that turns delay accounting on, as messages give it. */
#define DELAYACCT_ON_COMMAND "sysctl -w kernel.task_delayacct=1"

struct stalls {
	bool known;                    /* read: the figures below are the kernel's */
	double seconds[STALL_NKINDS];  /* since each thread started or accounting was turned on; NaN for a
	                                * kind this kernel does not count (IRQ before 6.8) */
	int64_t count[STALL_NKINDS];   /* how many stalls; -1 where seconds is NaN */
};

/* Unknown: not read, every figure NaN. */
struct stalls stalls_unknown(void);

/* The stalls memory pressure and KSM cause (all kinds but IRQ), summed; NaN when not read. A
 * kind the kernel does not count adds nothing. */
double stalls_memory_seconds(const struct stalls *s);

/* kernel.task_delayacct under root's proc: 1 on, 0 off, -ENOENT where the kernel has no such
 * switch (before 5.14, where accounting is on unless booted with nodelayacct), another negative
 * errno when it cannot be read. */
int delayacct_read(const struct io_root *root);

struct stall_reader {
	struct taskstats_session session;
	bool open;
	char why[200]; /* when not open: why, with what to do about it */
};

/* Opens a reader for root, where delayacct is delayacct_read's answer: only the host's own /proc
 * (delay accounting is the running kernel's, not a fixture tree's), only with accounting on
 * (or no switch), and only where the kernel answers this process (taskstats, CAP_NET_ADMIN, a
 * layout it reads). 0, or a negative errno with ret->why saying why in a line; ret is closed
 * then and nothing needs freeing, but closing it is fine. */
int stall_reader_open(const struct io_root *root, int delayacct, struct stall_reader *ret);

/* The stalls of thread group id (whole_group: every thread, exited ones included) or of the one
 * thread id. 0 (ret->known), or a negative errno (-ESRCH: gone) with *ret unknown. */
int stall_read(struct stall_reader *r, pid_t id, bool whole_group, struct stalls *ret);

/* Closes the reader's session (a reader that did not open too). */
void stall_reader_close(struct stall_reader *r);

#endif
