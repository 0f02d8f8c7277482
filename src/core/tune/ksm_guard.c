#include "core/tune/ksm_guard.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/fatal_signal.h"
#include "io/file.h"
#include "io/test_hook.h"
#include "parse/parse.h"

/* The guard is process-wide by nature (signal handlers restore from it), so its state is the one
 * place vmhost keeps in a static: fixed-size, preformatted paths and values, no allocation. */
#define GUARD_MAX 32

struct saved {
	char path[256];
	char value[64];
	bool is_advisor, is_run;
};

static struct {
	struct io_root root;
	struct saved saved[GUARD_MAX];
	volatile sig_atomic_t n;
	volatile sig_atomic_t active;
	void (*on_signal)(int);
	struct sigaction old[4];
	int lock_fd;
} guard = {.lock_fd = -1};

static const int guarded_signals[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

int ksm_lock(bool wait)
{
	if (guard.lock_fd >= 0)
		return 0;
	/* A test harness that already holds the lock for its whole run says so. */
	if (io_test_hook("VMHOST_KSM_LOCKED"))
		return 0;
	/* One place only: a second lock elsewhere (the old fallback to /tmp) would let two writers in. */
	int fd = io_lock(KSM_LOCK_PATH, wait ? IO_LOCK_WAIT : 0);
	if (fd < 0)
		return fd;
	guard.lock_fd = fd;
	return 0;
}

void ksm_unlock(void)
{
	if (guard.lock_fd >= 0)
		close(guard.lock_fd);
	guard.lock_fd = -1;
}

int ksm_guard_restore(void)
{
	int first = 0, n = guard.n, r;
	/* The advisor owns pages_to_scan while active: switch it off before restoring numbers. */
	for (int i = 0; i < n; i++)
		if (guard.saved[i].is_advisor && (r = io_write_path(guard.saved[i].path, "none")) < 0 && !first)
			first = r;
	for (int i = n - 1; i >= 0; i--)
		if (!guard.saved[i].is_advisor && !guard.saved[i].is_run &&
		    (r = io_write_path(guard.saved[i].path, guard.saved[i].value)) < 0 && !first)
			first = r;
	for (int i = 0; i < n; i++)
		if (guard.saved[i].is_advisor && (r = io_write_path(guard.saved[i].path, guard.saved[i].value)) < 0 && !first)
			first = r;
	for (int i = 0; i < n; i++)
		if (guard.saved[i].is_run && (r = io_write_path(guard.saved[i].path, guard.saved[i].value)) < 0 && !first)
			first = r;
	return first;
}

static void on_fatal_signal(int sig)
{
	int saved_errno = errno;
	ksm_guard_restore();
	if (guard.on_signal) {
		guard.on_signal(sig);
		errno = saved_errno;
		return;
	}
	fatal_signal_reraise(sig); /* so the exit status tells the signal */
}

int ksm_guard_begin(const struct io_root *root, void (*on_signal)(int sig))
{
	/* A second begin would forget the values saved so far and the handlers it replaced. */
	if (guard.active)
		return -EBUSY;
	guard.root = *root;
	guard.n = 0;
	guard.on_signal = on_signal;
	struct sigaction sa = {.sa_handler = on_fatal_signal};
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 4; i++)
		sigaddset(&sa.sa_mask, guarded_signals[i]);
	for (int i = 0; i < 4; i++)
		if (sigaction(guarded_signals[i], &sa, &guard.old[i]) < 0)
			return -errno;
	guard.active = 1;
	return 0;
}

/* Saves the setting's current value once (the first call wins); its path in path. */
static int remember(const char *file, char *path, size_t cap)
{
	int r = io_path(&guard.root, IO_SYS, path, cap, "kernel/mm/ksm/%s", file);
	if (r < 0)
		return r;
	bool known = false;
	for (int i = 0; i < guard.n && !known; i++)
		known = !strcmp(guard.saved[i].path, path);
	if (!known) {
		if (guard.n == GUARD_MAX)
			return -ENOSPC;
		struct saved s = {.is_advisor = !strcmp(file, "advisor_mode"), .is_run = !strcmp(file, "run")};
		char old[64];
		ssize_t n = io_read(&guard.root, IO_SYS, old, sizeof(old), "kernel/mm/ksm/%s", file);
		if (n < 0)
			return (int)n;
		old[strcspn(old, "\n")] = '\0';
		if (s.is_advisor && parse_sysfs_choice(old, s.value, sizeof(s.value)) < 0)
			return -EINVAL;
		if (!s.is_advisor)
			snprintf(s.value, sizeof(s.value), "%s", old);
		snprintf(s.path, sizeof(s.path), "%s", path);
		/* Block the handlers while the table grows so they never see a half-written entry. */
		sigset_t block, prev;
		sigemptyset(&block);
		for (int i = 0; i < 4; i++)
			sigaddset(&block, guarded_signals[i]);
		sigprocmask(SIG_BLOCK, &block, &prev);
		guard.saved[guard.n] = s;
		guard.n = guard.n + 1;
		sigprocmask(SIG_SETMASK, &prev, NULL);
	}
	return 0;
}

int ksm_guard_save(const char *file)
{
	char path[256];
	return remember(file, path, sizeof(path));
}

int ksm_guard_set(const char *file, const char *value)
{
	char path[256];
	int r = remember(file, path, sizeof(path));
	if (r < 0)
		return r;
	return io_write_path(path, value);
}

int ksm_guard_set_int(const char *file, int64_t value)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", (long long)value);
	return ksm_guard_set(file, buf);
}

int ksm_guard_end(void)
{
	int r = ksm_guard_restore();
	if (guard.active)
		for (int i = 0; i < 4; i++)
			sigaction(guarded_signals[i], &guard.old[i], NULL);
	guard.active = 0;
	guard.n = 0;
	return r;
}
