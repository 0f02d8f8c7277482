#include "core/tuner_daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/ksm_guard.h"

int tuner_instance_lock(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return e;
	}
	return fd;
}

pid_t ksmtuned_find(const struct io_root *root)
{
	pid_t *pids, found = 0;
	size_t n;
	if (io_list_pids(root, &pids, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && !found; i++) {
		char buf[512];
		ssize_t l = io_read(root, IO_PROC, buf, sizeof(buf), "%d/comm", pids[i]);
		if (l > 0 && !strcmp(buf, "ksmtuned\n")) {
			found = pids[i];
			break;
		}
		/* A script run by its interpreter: "/bin/bash /usr/sbin/ksmtuned". */
		l = io_read(root, IO_PROC, buf, sizeof(buf), "%d/cmdline", pids[i]);
		if (l <= 0)
			continue;
		for (const char *arg = buf; arg < buf + l && !found; arg += strlen(arg) + 1) {
			const char *base = strrchr(arg, '/');
			if (!strcmp(base ? base + 1 : arg, "ksmtuned"))
				found = pids[i];
			if (arg != buf)
				break; /* the interpreter's first argument only */
		}
	}
	free(pids);
	return found;
}

static int64_t known_or(maybe_i64 v, int64_t dflt) { return v.known ? v.v : dflt; }

void tuner_input_from(const struct ksm_sample *prev, const struct ksm_sample *now, const struct ksm_rates *rates,
		      struct tuner_input *ret)
{
	const struct ksm_sysfs *k = &now->k;
	*ret = (struct tuner_input){
		.interval_seconds = now->t - prev->t,
		.pages_shared = known_or(k->pages_shared, 0),
		.pages_sharing = known_or(k->pages_sharing, 0),
		.pages_unshared = known_or(k->pages_unshared, 0),
		.pages_volatile = known_or(k->pages_volatile, 0),
		.ksm_zero_pages = known_or(k->ksm_zero_pages, -1),
		.full_scans = known_or(k->full_scans, 0),
		.ksmd_cpu_percent = rates->ksmd_cpu_percent,
		.mem_total_bytes = known_or(now->mem_total, -1),
		.mem_available_bytes = known_or(now->mem_available, -1),
		.run = known_or(prev->k.run, -1),
		.pages_to_scan = known_or(prev->k.pages_to_scan, -1),
		.sleep_millisecs = known_or(prev->k.sleep_millisecs, -1),
	};
}

int tuner_apply(const struct tuner_config *c, const struct tuner_decision *d, const struct ksm_sysfs *now,
		const volatile sig_atomic_t *stop)
{
	sigset_t block, prev;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &prev);
	int r = 0;
	if (stop && *stop) {
		sigprocmask(SIG_SETMASK, &prev, NULL);
		return 0;
	}
	if (now->advisor_mode[0] && strcmp(now->advisor_mode, "none"))
		r = ksm_guard_set("advisor_mode", "none");
	if (!r && c->smart_scan && now->smart_scan.known && now->smart_scan.v != 1)
		r = ksm_guard_set_int("smart_scan", 1);
	if (!r && (!now->pages_to_scan.known || now->pages_to_scan.v != d->pages_to_scan))
		r = ksm_guard_set_int("pages_to_scan", d->pages_to_scan);
	if (!r && (!now->sleep_millisecs.known || now->sleep_millisecs.v != d->sleep_millisecs))
		r = ksm_guard_set_int("sleep_millisecs", d->sleep_millisecs);
	if (!r && (!now->run.known || now->run.v != d->run))
		r = ksm_guard_set_int("run", d->run);
	sigprocmask(SIG_SETMASK, &prev, NULL);
	return r;
}
