#include "core/tune/ksm_guard.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/fatal_signal.h"
#include "core/base/stop.h"
#include "io/file.h"
#include "io/state.h"
#include "io/test_hook.h"
#include "parse/elements.h"
#include "parse/parse.h"

/* The guard is process-wide by nature (signal handlers restore from it), so its state is the one
 * place vmhost keeps in a static: fixed-size, preformatted paths and values, no allocation. */
#define GUARD_MAX KSM_SAVED_MAX

struct saved {
	char path[256];
	char value[64];
	bool is_advisor, is_run;
};

/* A stop restores, then calls the caller's on_signal or ends the process by it; a crash restores
 * and always ends it (its code cannot go on). */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
#define N_STOP (STOP_NSIGNALS + 1)
#define N_CRASH ELEMENTSOF(crash_signals)

/* The stops the guard restores on: the stop set (core/base/stop.h) and SIGPIPE, a log pipe's
 * reader gone (`vmhost ksm tune | head`). */
static int stop_signal(size_t i) { return i < STOP_NSIGNALS ? stop_signals[i] : SIGPIPE; }

static struct {
	struct io_root root;
	struct saved saved[GUARD_MAX];
	struct ksm_saved doc; /* the same settings, as the saved-settings file tells them */
	char file_dir[4096];  /* where that file is kept; "" when it is not (another root's KSM) */
	char file_path[4200]; /* file_dir/ksm.saved, for the handlers */
	volatile sig_atomic_t n;
	volatile sig_atomic_t active;
	volatile sig_atomic_t file_current; /* the file holds every setting saved so far */
	void (*on_signal)(int);
	struct sigaction old[N_STOP + N_CRASH];
	int lock_fd;
} guard = {.lock_fd = -1};

/* The crash handlers' own stack: a stack overflow leaves none to run on. */
static char alt_stack[1 << 16];

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

/* Keeps the first error of a restore; a setting that is gone counts only when missing matters. */
static void note(int r, int *first, bool missing_ok)
{
	if (r < 0 && !*first && !(missing_ok && r == -ENOENT))
		*first = r;
}

/* Writes a table's values back: the advisor off first (it owns pages_to_scan while active), the
 * numbers in reverse order, the advisor's own value, run last. Async-signal-safe. */
static int restore_table(const struct saved *t, int n, bool missing_ok)
{
	int first = 0;
	for (int i = 0; i < n; i++)
		if (t[i].is_advisor)
			note(io_write_path(t[i].path, "none"), &first, missing_ok);
	for (int i = n - 1; i >= 0; i--)
		if (!t[i].is_advisor && !t[i].is_run)
			note(io_write_path(t[i].path, t[i].value), &first, missing_ok);
	for (int i = 0; i < n; i++)
		if (t[i].is_advisor)
			note(io_write_path(t[i].path, t[i].value), &first, missing_ok);
	for (int i = 0; i < n; i++)
		if (t[i].is_run)
			note(io_write_path(t[i].path, t[i].value), &first, missing_ok);
	return first;
}

int ksm_guard_restore(void) { return restore_table(guard.saved, guard.n, false); }

/* Restores, and once every setting is back, removes the saved-settings file. Async-signal-safe. */
static int restore_and_forget(void)
{
	int r = ksm_guard_restore();
	if (r == 0 && guard.file_path[0]) {
		io_remove(guard.file_path);
		guard.file_current = 0;
	}
	return r;
}

static void on_guarded_signal(int sig)
{
	int saved_errno = errno;
	restore_and_forget();
	bool crash = false;
	for (size_t i = 0; i < N_CRASH; i++)
		crash |= sig == crash_signals[i];
	if (guard.on_signal && !crash) {
		guard.on_signal(sig);
		errno = saved_errno;
		return;
	}
	fatal_signal_reraise(sig); /* so the exit status tells the signal */
}

static void stop_set(sigset_t *set)
{
	sigemptyset(set);
	stop_signals_add(set);
	sigaddset(set, SIGPIPE);
}

static int install_handlers(void)
{
	stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof(alt_stack)};
	if (sigaltstack(&ss, NULL) < 0)
		return -errno;
	struct sigaction sa = {.sa_handler = on_guarded_signal};
	stop_set(&sa.sa_mask);
	for (size_t i = 0; i < N_STOP + N_CRASH; i++) {
		int sig = i < N_STOP ? stop_signal(i) : crash_signals[i - N_STOP];
		sa.sa_flags = i < N_STOP ? 0 : SA_ONSTACK;
		if (sigaction(sig, &sa, &guard.old[i]) < 0)
			return -errno;
	}
	return 0;
}

/* Where the saved-settings file is kept: the runtime directory, for the host's own KSM (sys root
 * /sys, or none given); a fixture tree's settings are not the machine's, and their file would stand
 * in for the host's. A test build's VMHOST_RUNTIME_DIR takes any root. NULL: not kept. */
static const char *saved_dir(const struct io_root *root, char *buf, size_t cap)
{
	if (root->sys && strcmp(root->sys, "/sys") && !io_test_hook("VMHOST_RUNTIME_DIR"))
		return NULL;
	return io_runtime_dir(buf, cap);
}

/* The saved-settings file of this guard: its place and its header (no setting yet). */
static int file_setup(const struct io_root *root)
{
	guard.file_dir[0] = guard.file_path[0] = '\0';
	guard.doc = (struct ksm_saved){.pid = (long)getpid()};
	guard.file_current = 0;
	if (!saved_dir(root, guard.file_dir, sizeof(guard.file_dir)))
		return 0;
	int r = io_path(root, IO_SYS, guard.doc.dir, sizeof(guard.doc.dir), "kernel/mm/ksm");
	if (r == 0 && guard.doc.dir[0] != '/')
		r = -EINVAL;
	if (r == 0 && snprintf(guard.file_path, sizeof(guard.file_path), "%s/%s", guard.file_dir, KSM_SAVED_FILE) >=
			      (int)sizeof(guard.file_path))
		r = -ENAMETOOLONG;
	if (r < 0)
		guard.file_dir[0] = guard.file_path[0] = '\0';
	return r;
}

/* A sysctl's file under a proc directory: "kernel.task_delayacct" is PROC/sys/kernel/task_delayacct. */
static int sysctl_path(const char *proc, const char *name, char *buf, size_t cap)
{
	if (snprintf(buf, cap, "%s/sys/%s", proc, name) >= (int)cap)
		return -ENAMETOOLONG;
	for (char *p = buf + strlen(proc) + 5; *p; p++)
		*p = *p == '.' ? '/' : *p;
	return 0;
}

/* A table to write back from what a saved-settings file says. */
static int restore_saved(const struct ksm_saved *left)
{
	struct saved t[KSM_SAVED_MAX];
	for (size_t i = 0; i < left->n; i++) {
		const char *name = left->set[i].name;
		if (ksm_saved_is_sysctl(name) ? sysctl_path(left->proc, name, t[i].path, sizeof(t[i].path)) < 0
					      : snprintf(t[i].path, sizeof(t[i].path), "%s/%s", left->dir, name) >=
							(int)sizeof(t[i].path))
			return -ENAMETOOLONG;
		snprintf(t[i].value, sizeof(t[i].value), "%s", left->set[i].value);
		t[i].is_advisor = !strcmp(name, "advisor_mode");
		t[i].is_run = !strcmp(name, "run");
	}
	return restore_table(t, (int)left->n, true);
}

int ksm_guard_restore_left(const struct io_root *root, struct ksm_saved *ret)
{
	char dir[4096], path[4200], *buf;
	size_t len;
	if (!saved_dir(root, dir, sizeof(dir)))
		return 0;
	int r = io_state_read(dir, KSM_SAVED_FILE, 16384, &buf, &len);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	struct ksm_saved left;
	r = ksm_saved_parse(buf, len, &left);
	free(buf);
	if (r == 0)
		r = restore_saved(&left);
	if (r < 0)
		return r; /* the file stays, for a restore that can */
	snprintf(path, sizeof(path), "%s/%s", dir, KSM_SAVED_FILE);
	io_remove(path);
	if (ret)
		*ret = left;
	return 1;
}

const char *ksm_guard_strerror(int err)
{
	if (err == -EBADMSG)
		return "a saved-settings file (" KSM_SAVED_FILE " in the runtime directory, " IO_RUNTIME_DIR_ROOT
		       " for root) does not read: check KSM's settings, then remove it";
	return strerror(-err);
}

int ksm_guard_begin(const struct io_root *root, void (*on_signal)(int sig))
{
	/* A second begin would forget the values saved so far and the handlers it replaced. */
	if (guard.active)
		return -EBUSY;
	guard.root = *root;
	guard.n = 0;
	guard.on_signal = on_signal;
	int r = file_setup(root);
	int left = r < 0 ? r : ksm_guard_restore_left(root, NULL);
	if (left < 0)
		return left;
	if ((r = install_handlers()) < 0)
		return r;
	guard.active = 1;
	return left;
}

/* Writes the saved-settings file anew when a setting joined since it was written: before the
 * setting is changed, so that a writer killed after the change leaves it written down. */
static int keep_file(void)
{
	if (!guard.file_dir[0] || guard.file_current)
		return 0;
	char text[8192];
	sigset_t block, prev;
	stop_set(&block);
	sigprocmask(SIG_BLOCK, &block, &prev); /* a stop's restore removes the file after it is written */
	int r = ksm_saved_format(&guard.doc, text, sizeof(text));
	if (r >= 0)
		r = io_state_write(guard.file_dir, KSM_SAVED_FILE, text, (size_t)r);
	if (r == 0)
		guard.file_current = 1;
	sigprocmask(SIG_SETMASK, &prev, NULL);
	return r;
}

/* Adds a setting and its value before any change to the table (and the file's text). */
static int add_saved(const char *file, const char *path, const char *old)
{
	if (guard.n == GUARD_MAX)
		return -ENOSPC;
	struct saved s = {.is_advisor = !strcmp(file, "advisor_mode"), .is_run = !strcmp(file, "run")};
	if (s.is_advisor && parse_sysfs_choice(old, s.value, sizeof(s.value)) < 0)
		return -EINVAL;
	if (!s.is_advisor)
		snprintf(s.value, sizeof(s.value), "%s", old);
	snprintf(s.path, sizeof(s.path), "%s", path);
	struct ksm_saved_setting d;
	if (snprintf(d.name, sizeof(d.name), "%s", file) >= (int)sizeof(d.name))
		return -ENAMETOOLONG;
	snprintf(d.value, sizeof(d.value), "%s", s.value);
	/* Block the handlers while the table grows so they never see a half-written entry. */
	sigset_t block, prev;
	stop_set(&block);
	sigprocmask(SIG_BLOCK, &block, &prev);
	guard.saved[guard.n] = s;
	guard.doc.set[guard.doc.n++] = d;
	guard.n = guard.n + 1;
	guard.file_current = 0;
	sigprocmask(SIG_SETMASK, &prev, NULL);
	return 0;
}

/* Saves the setting's current value once (the first call wins), written down in the file before
 * the caller changes it. file: its name in the file, path: where it is (the caller's). */
static int remember_at(const char *file, const char *path)
{
	bool known = false;
	for (int i = 0; i < guard.n && !known; i++)
		known = !strcmp(guard.saved[i].path, path);
	if (!known) {
		char old[64];
		ssize_t n = io_read_small(path, old, sizeof(old));
		if (n < 0)
			return (int)n;
		old[strcspn(old, "\n")] = '\0';
		int r = add_saved(file, path, old);
		if (r < 0)
			return r;
	}
	return keep_file();
}

/* remember_at for a file of the KSM directory; its path in path. */
static int remember(const char *file, char *path, size_t cap)
{
	int r = io_path(&guard.root, IO_SYS, path, cap, "kernel/mm/ksm/%s", file);
	return r < 0 ? r : remember_at(file, path);
}

int ksm_guard_set_sysctl(const char *name, const char *value)
{
	if (!ksm_saved_is_sysctl(name))
		return -EINVAL;
	const char *proc = guard.root.proc ? guard.root.proc : "/proc";
	char path[256];
	int r = sysctl_path(proc, name, path, sizeof(path));
	if (r < 0)
		return r;
	if (!guard.doc.proc[0]) {
		if (proc[0] != '/' || strlen(proc) >= sizeof(guard.doc.proc))
			return -EINVAL; /* the file names an absolute place */
		sigset_t block, prev;
		stop_set(&block);
		sigprocmask(SIG_BLOCK, &block, &prev);
		snprintf(guard.doc.proc, sizeof(guard.doc.proc), "%s", proc);
		guard.file_current = 0;
		sigprocmask(SIG_SETMASK, &prev, NULL);
	}
	if ((r = remember_at(name, path)) < 0)
		return r;
	return io_write_path(path, value);
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
	int r = restore_and_forget(); /* a restore that failed leaves the file, for a later one */
	if (guard.active)
		for (size_t i = 0; i < N_STOP + N_CRASH; i++)
			sigaction(i < N_STOP ? stop_signal(i) : crash_signals[i - N_STOP], &guard.old[i], NULL);
	guard.active = 0;
	guard.n = 0;
	guard.doc.n = 0;
	guard.file_current = 0;
	guard.file_dir[0] = guard.file_path[0] = '\0';
	return r;
}

int ksm_unmerge_wait(struct ksm_sampler *sm, double timeout_seconds, double poll_seconds,
		     volatile sig_atomic_t *stop)
{
	int r = ksm_guard_set_int("run", 2);
	if (r < 0)
		return r;
	double until = clock_monotonic_seconds() + timeout_seconds;
	struct ksm_sample s;
	while (!*stop && clock_monotonic_seconds() < until) {
		if (ksm_sample_take(sm, &s) < 0)
			return -ENOENT;
		if (s.k.pages_shared.v == 0 && s.k.pages_sharing.v == 0)
			return 0;
		sleep_for(poll_seconds);
	}
	return *stop ? -EINTR : -ETIMEDOUT;
}
