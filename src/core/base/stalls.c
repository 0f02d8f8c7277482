/* Stall time from the kernel's delay accounting (stalls.h). */
#include "core/base/stalls.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *const stall_kind_names[STALL_NKINDS] = {"wpcopy", "swapin", "reclaim", "thrashing", "compact", "irq"};

/* Each stall kind's delay in taskstats. */
static const enum task_delay delay_of[STALL_NKINDS] = {
	[STALL_WPCOPY] = TASK_DELAY_WPCOPY,       [STALL_SWAPIN] = TASK_DELAY_SWAPIN,
	[STALL_RECLAIM] = TASK_DELAY_RECLAIM,     [STALL_THRASHING] = TASK_DELAY_THRASHING,
	[STALL_COMPACT] = TASK_DELAY_COMPACT,     [STALL_IRQ] = TASK_DELAY_IRQ,
};

struct stalls stalls_unknown(void)
{
	struct stalls s = {.known = false};
	for (int k = 0; k < STALL_NKINDS; k++) {
		s.seconds[k] = NAN;
		s.count[k] = -1;
	}
	return s;
}

double stalls_memory_seconds(const struct stalls *s)
{
	if (!s->known)
		return NAN;
	double sum = 0;
	for (int k = 0; k < STALL_NKINDS; k++)
		if (k != STALL_IRQ && isfinite(s->seconds[k]))
			sum += s->seconds[k];
	return sum;
}

int delayacct_read(const struct io_root *root)
{
	char buf[16];
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "sys/kernel/task_delayacct");
	if (n < 0)
		return (int)n;
	return n > 0 && buf[0] == '1' ? 1 : 0;
}

/* Why a reader could not open, for r->why. */
static void say_why(struct stall_reader *r, int err)
{
	const char *why = err == -EPERM || err == -EACCES ? "reading delay accounting takes CAP_NET_ADMIN (root)"
			  : err == -ENOENT || err == -EPROTONOSUPPORT
				  ? "this kernel has no taskstats (CONFIG_TASKSTATS is off)"
			  : err == -EPROTO ? "this kernel's taskstats version 15 is not read (its fields moved in 16)"
					   : NULL;
	if (why)
		snprintf(r->why, sizeof(r->why), "%s", why);
	else
		snprintf(r->why, sizeof(r->why), "delay accounting could not be read: %s", strerror(-err));
}

int stall_reader_open(const struct io_root *root, int delayacct, struct stall_reader *ret)
{
	*ret = (struct stall_reader){.session = {.fd = -1}};
	if (root->proc && strcmp(root->proc, "/proc")) {
		snprintf(ret->why, sizeof(ret->why), "delay accounting is the running kernel's, not a --proc-root tree's");
		return -EXDEV;
	}
	if (delayacct == 0) {
		snprintf(ret->why, sizeof(ret->why),
			 "delay accounting is off (kernel.task_delayacct = 0): " DELAYACCT_ON_COMMAND " turns it on");
		return -ENODATA;
	}
	int r = taskstats_open(&ret->session);
	struct task_delays probe;
	if (r == 0)
		r = taskstats_get(&ret->session, getpid(), true, &probe); /* the kernel's answer to root alone */
	if (r < 0) {
		taskstats_close(&ret->session);
		say_why(ret, r);
		return r;
	}
	ret->open = true;
	return 0;
}

int stall_read(struct stall_reader *r, pid_t id, bool whole_group, struct stalls *ret)
{
	*ret = stalls_unknown();
	if (!r->open)
		return -EBADF;
	struct task_delays d;
	int e = taskstats_get(&r->session, id, whole_group, &d);
	if (e < 0)
		return e;
	for (int k = 0; k < STALL_NKINDS; k++) {
		enum task_delay t = delay_of[k];
		if (!(d.known >> t & 1))
			continue;
		ret->seconds[k] = (double)d.ns[t] / 1e9;
		ret->count[k] = (int64_t)d.count[t];
	}
	ret->known = true;
	return 0;
}

void stall_reader_close(struct stall_reader *r)
{
	taskstats_close(&r->session);
	r->open = false;
}
