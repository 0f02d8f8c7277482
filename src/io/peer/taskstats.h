/* The kernel's taskstats family over generic netlink: a process's (thread group's) or a thread's
 * delay accounting, one request and one reply each (parse/netlink/ builds and reads the bytes).
 * A session is a socket and the family's id; keep one per thread that asks: its replies are
 * matched to its requests by sequence number, not shared. Root's: the kernel answers GET only
 * to CAP_NET_ADMIN in the first user namespace. */
#ifndef VMHOST_IO_PEER_TASKSTATS_H
#define VMHOST_IO_PEER_TASKSTATS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "parse/netlink/taskstats.h"

struct taskstats_session {
	int fd;          /* -1 when closed */
	uint16_t family; /* TASKSTATS' id */
	uint32_t seq;
};

/* Opens the socket and asks the controller for TASKSTATS' id. 0; -ENOENT when the kernel has no
 * such family (no CONFIG_TASKSTATS); the socket's or the controller's negative errno. On failure
 * ret->fd is -1 and there is nothing to close. */
int taskstats_open(struct taskstats_session *ret);

/* The delays of thread group tgid (whole_group: every thread, those that exited included) or of
 * the single thread with that id. 0; -ESRCH when there is no such task; -EPERM without
 * CAP_NET_ADMIN; -ETIMEDOUT when no reply came within a second; parse_taskstats_reply's errors. */
int taskstats_get(struct taskstats_session *s, pid_t id, bool whole_group, struct task_delays *ret);

/* Closes the socket (a closed session too). */
void taskstats_close(struct taskstats_session *s);

#endif
