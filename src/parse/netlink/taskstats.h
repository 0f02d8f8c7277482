/* The kernel's delay accounting for a task or a thread group, as its taskstats family answers
 * TASKSTATS_CMD_GET (Documentation/accounting/taskstats.rst, delay-accounting.rst): how long and
 * how often the tasks waited for a CPU, block I/O, swap-in, memory reclaim, a thrashing page,
 * compaction, a write-protect copy (a copy-on-write fault: KSM's merged pages among them) and
 * IRQs. Read from the reply's bytes by each field's place in struct taskstats, which grows at its
 * end from version to version, so a reply of any kernel reads here whatever installed header the
 * build had. Pure: bytes in, struct out (fuzz/fuzz_taskstats.c). */
#ifndef VMHOST_PARSE_NETLINK_TASKSTATS_H
#define VMHOST_PARSE_NETLINK_TASKSTATS_H

#include <stddef.h>
#include <stdint.h>

/* The delays taskstats counts, in struct taskstats' order. */
enum task_delay {
	TASK_DELAY_CPU,       /* runnable, waiting for a CPU (from the scheduler's statistics) */
	TASK_DELAY_BLKIO,     /* synchronous block I/O */
	TASK_DELAY_SWAPIN,    /* a page swapped back in */
	TASK_DELAY_RECLAIM,   /* direct memory reclaim (the kernel's "freepages") */
	TASK_DELAY_THRASHING, /* a page of its working set read back in after reclaim (v9) */
	TASK_DELAY_COMPACT,   /* direct memory compaction (v11) */
	TASK_DELAY_WPCOPY,    /* a write-protect copy: the copy of a copy-on-write page (v13) */
	TASK_DELAY_IRQ,       /* IRQ and soft IRQ handling that took its CPU (v14) */
	TASK_DELAY_NKINDS
};

struct task_delays {
	unsigned version;                   /* struct taskstats' */
	uint32_t known;                     /* a bit per enum task_delay this kernel's struct has */
	uint64_t count[TASK_DELAY_NKINDS];  /* how many delays were counted */
	uint64_t ns[TASK_DELAY_NKINDS];     /* their total, in nanoseconds */
};

/* The statistics struct itself (the payload of a TASKSTATS_TYPE_STATS attribute, len bytes):
 * every delay its version and length hold. 0; -EBADMSG when shorter than version 1's fields or
 * of version 0; -EPROTO for version 15, whose "delay max" fields sat between the others (version
 * 16 moved them to the end). *ret is untouched unless 0. */
int parse_taskstats_struct(const uint8_t *stats, size_t len, struct task_delays *ret);

/* A TASKSTATS_CMD_GET reply's attributes (as genl_reply gives them): the statistics nested in
 * its TASKSTATS_TYPE_AGGR_PID or TASKSTATS_TYPE_AGGR_TGID attribute. 0, -EBADMSG for a reply
 * without them or malformed, or parse_taskstats_struct's error. */
int parse_taskstats_reply(const uint8_t *attrs, size_t len, struct task_delays *ret);

#endif
