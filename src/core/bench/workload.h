/* VM-like processes for live tests and benchmarks: "guest RAM" on transparent huge pages whose
 * pages are, as after booting one image, identical across guests, zero, unique to a guest, or
 * volatile (rewritten all the time, like a running guest's hot pages). */
#ifndef VMHOST_CORE_WORKLOAD_H
#define VMHOST_CORE_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/io.h"

struct workload_spec {
	uint64_t guest_bytes;
	double shared_fraction;   /* same content in every guest with the same image_seed */
	double zero_fraction;     /* zero-filled */
	double volatile_fraction; /* rewritten every rewrite_ms: never stable enough to merge */
	/* the rest is unique to this guest */
	uint64_t image_seed;
	unsigned guest_index;
	bool thp;        /* MADV_HUGEPAGE, as QEMU does for guest RAM */
	bool mergeable;  /* MADV_MERGEABLE, as QEMU does unless mem-merge=off */
	unsigned rewrite_ms;            /* period of volatile rewrites (default 200) */
	uint64_t grow_bytes_per_second; /* extra anonymous memory allocated steadily ("overhead") */
	double fill_seconds; /* > 0: RAM marked mergeable first, then filled over this long, as a
				booting guest touches its RAM under QEMU; 0: filled at once, then marked */
	const char *cgroup;  /* a cgroup directory under the sys root (fs/cgroup/memory/NAME) the child
				joins before it maps its RAM, so the RAM is charged there; NULL: none */
	const struct io_root *root; /* where cgroup is (--sys-root); NULL: /proc and /sys */
	double unmap_after_seconds; /* > 0: the upper half of guest RAM is unmapped this long after it
				       is filled (a mapping that goes away under a reader) */
	double cow_period_seconds; /* > 0: this often the shared pages get new content, the same in every
				      guest of the image (a generation of it): what KSM merged of them is
				      copied on write, and merges again (a guest that keeps KSM busy) */
	const char *rewrite_when; /* a file whose appearance makes the guest write new content over its
				     shared and zero pages once (a guest writing over what KSM merged);
				     "rewritten N" (pages) then goes to ready_fd when that is 0-2; NULL: never */
};

/* The unit of content: a workload page (the host's base page on x86). */
#define WORKLOAD_PAGE_BYTES 4096u

/* Which class a page belongs to: deterministic, interleaved so every huge page holds a mix. */
enum page_class { PAGE_SHARED, PAGE_ZERO, PAGE_VOLATILE, PAGE_UNIQUE };
enum page_class workload_page_class(const struct workload_spec *s, uint64_t page_index);

/* Forks a child running the workload; returns once it is filled and ready. */
int workload_spawn(const struct workload_spec *s, pid_t *ret_pid);
/* Stops a spawned child (SIGTERM, then SIGKILL) and reaps it. */
void workload_stop(pid_t pid);

/* For tests: tests/helpers/fakeguest runs a workload as a process of its own. */

/* Runs a workload in the calling process until SIGTERM/SIGINT: maps, fills, writes "ready\n"
 * to ready_fd (when >= 0), then rewrites volatile pages and grows. Returns an exit code. */
int workload_run(const struct workload_spec *s, int ready_fd);

#endif
