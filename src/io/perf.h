/* Counting perf events on kernel tracepoints (perf_event_open), and where tracefs is. */
#ifndef VMHOST_IO_PERF_H
#define VMHOST_IO_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/io.h"

/* The tracefs directory relative to the sys root ("kernel/tracing", or "kernel/debug/tracing"
 * where only debugfs is mounted), found by its events/ directory. Returns 0, -ENOENT (not
 * mounted), or -EACCES (mounted, not readable by this user). */
int io_tracefs_dir(const struct io_root *root, char *ret, size_t cap);

/* Opens a counting event on tracepoint id for one thread (any CPU), disabled. group_fd -1 makes a
 * group leader whose read returns every member's count (PERF_FORMAT_GROUP). Returns an fd or a
 * negative errno: -EACCES/-EPERM not allowed, -ESRCH no such thread, -EMFILE out of fds. */
int io_perf_tracepoint(unsigned id, pid_t tid, int group_fd);

/* The same on a process and, inherited, on every thread and child it creates from then on
 * (opened before a command's exec, it counts the whole command; the counts of threads that
 * exited stay in it). */
int io_perf_tracepoint_inherit(unsigned id, pid_t pid, int group_fd);

/* An event on tracepoint id for every thread, on CPU 0, for an eBPF program to be attached to (the
 * program runs wherever the tracepoint fires; libbpf's attach by name opens the same once it has
 * read the id under /sys/kernel/tracing). Returns an fd or a negative errno. */
int io_perf_tracepoint_any(unsigned id);

/* Starts a group counting, once every member's filter is set: an event that counted before its
 * filter would count every hit of the tracepoint meanwhile. Returns 0 or a negative errno. */
int io_perf_enable_group(int leader_fd);

/* Sets a tracepoint filter ("exit_reason == 12"). Returns 0 or a negative errno. */
int io_perf_set_filter(int fd, const char *filter);

/* Reads a group leader: up to cap counts, in the order the events were opened. Returns the
 * number of counts or a negative errno. */
ssize_t io_perf_read_group(int leader_fd, uint64_t *counts, size_t cap);

#endif
