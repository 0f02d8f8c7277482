/* The host as a whole: memory and KSM, read once per sample. */
#ifndef VMHOST_CORE_HOST_H
#define VMHOST_CORE_HOST_H

#include "core/model/ksm.h"
#include "parse/parse.h"

struct host {
	struct meminfo mem;
	bool mem_known;
	struct ksm_sysfs ksm;
	int64_t page_size_bytes;
	long clock_ticks_per_second;
	bool schedstats; /* kernel.sched_schedstats is 1: threads' sched files have wait_sum */
};

/* This machine's page size (sysconf, read once): the one source of it. */
int64_t host_page_size(void);

/* Reads meminfo and KSM. Returns 0 or a negative errno when /proc/meminfo is unreadable. */
int host_read(const struct io_root *root, struct host *ret);

#endif
