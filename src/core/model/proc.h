/* The per-process /proc files every figure of a VM starts from, read and parsed: stat (CPU ticks,
 * start time, name), the cheap memory counters (status, ksm_stat) and the exact, expensive
 * smaps_rollup. Discovery, measuring, calibration, top's helpers, doctor and the benchmarks read
 * processes through these. */
#ifndef VMHOST_CORE_PROC_H
#define VMHOST_CORE_PROC_H

#include <errno.h>
#include <stdbool.h>
#include <sys/types.h>

#include "core/model/account.h"
#include "io/io.h"
#include "parse/parse.h"

/* A read's error that says the process is gone (its directory, or the process behind it). */
static inline bool proc_gone(int err) { return err == -ENOENT || err == -ESRCH; }

/* /proc/PID/stat, parsed: 0, -EINVAL, or the read's negative errno. */
int proc_read_stat(const struct io_root *root, pid_t pid, struct proc_stat *ret);

/* Reads one process's cheap counters (status, ksm_stat; ksm_merging_pages on kernels without
 * ksm_stat); a ksm_stat it may not read is counted in *denied, its figures unknown. 0, -EINVAL
 * (status unparsable), -ESRCH (gone between the two reads), or status' read's negative errno
 * (proc_gone says whether the process is gone). */
int proc_read_counters(const struct io_root *root, pid_t pid, struct mem_counters *ret, unsigned *denied);

/* Reads /proc/PID/smaps_rollup (the exact, expensive source). -ESRCH when the process is gone. */
int proc_read_smaps_rollup(const struct io_root *root, pid_t pid, struct smaps_rollup *ret);

/* Whether process pid itself holds a listening unix socket bound at path (its fds against the
 * inodes <proc>/PID/net/unix gives that path): 1 or 0, or a negative errno when it cannot be told
 * (another user's fds, the process gone, or -ENOENT: no listening socket lists that path, as for
 * one renamed after it was bound). Asked before connecting to a socket a command line names,
 * so that a socket another process serves is never even connected to on the VM's behalf. */
int proc_listens_on(const struct io_root *root, pid_t pid, const char *path);

#endif
