#include "core/tune/ksmtuned.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/base/stop.h"
#include "core/tune/ksm_guard.h"
#include "io/file.h"
#include "parse/elements.h"
#include "parse/parse.h"

/* The settings the script writes (its KSMCTL function). */
static const char *const written[] = {"pages_to_scan", "sleep_millisecs", "run"};
#define NWRITTEN (ELEMENTSOF(written))

struct ksmtuned {
	struct io_root root;
	char dir[128];
	pid_t supervisor, pgid;
	char saved[NWRITTEN][32];
	char log[192];
};

void ksmtuned_config_default(struct ksmtuned_config *c)
{
	*c = (struct ksmtuned_config){
		.script = KSMTUNED_SCRIPT,
		.monitor_interval_seconds = 60,
		.npages_boost = 300,
		.npages_decay = -50,
		.npages_min = 64,
		.npages_max = 1250,
		.sleep_msec = 10,
		.thres_coef = 20,
		.thres_const = 2048,
	};
}

void ksmtuned_adjust(const struct ksmtuned_config *c, int64_t total_kb, int64_t free_kb, int64_t committed_kb,
		     int64_t *npages, struct ksmtuned_step *ret)
{
	int64_t thres = total_kb * c->thres_coef / 100;
	if (thres < c->thres_const)
		thres = c->thres_const;
	if (committed_kb + thres < total_kb && free_kb > thres) {
		*ret = (struct ksmtuned_step){.run = false};
		return;
	}
	int64_t n = *npages + (free_kb < thres ? c->npages_boost : c->npages_decay);
	if (n > c->npages_max)
		n = c->npages_max;
	if (n < c->npages_min)
		n = c->npages_min;
	int64_t sleep_ms = (int64_t)c->sleep_msec * 16 * 1024 * 1024 / total_kb;
	if (sleep_ms < 10)
		sleep_ms = 10; /* the script's floor, whatever KSM_SLEEP_MSEC says */
	*npages = n;
	*ret = (struct ksmtuned_step){.run = true, .pages_to_scan = n, .sleep_millisecs = sleep_ms};
}

static void file_in(const struct ksmtuned *t, const char *name, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%s", t->dir, name);
}

/* Whatever the script left in its directory, then the directory. */
static void remove_dir(const struct ksmtuned *t)
{
	static const char *const files[] = {"ksmtuned", "ksmtuned.conf", "ksmtuned.log", "ksmtuned.pid"};
	char path[256];
	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		file_in(t, files[i], path, sizeof(path));
		io_remove(path);
	}
	io_remove_dir(t->dir);
}

/* The script with every mention of its config path replaced by ours. -ENOEXEC without one. */
static int copy_script(const struct ksmtuned *t, const char *script, char *err, size_t cap)
{
	char *text;
	size_t len;
	int r = io_read_path(script, 1 << 20, &text, &len);
	if (r < 0) {
		snprintf(err, cap, "%s: %s%s", script, strerror(-r), r == -ENOENT ? " (install the package ksmtuned)" : "");
		return r;
	}
	char conf[192], copy[192];
	file_in(t, "ksmtuned.conf", conf, sizeof(conf));
	file_in(t, "ksmtuned", copy, sizeof(copy));
	size_t olen = strlen(KSMTUNED_CONF), nlen = strlen(conf), hits = 0;
	for (const char *p = text; (p = strstr(p, KSMTUNED_CONF)); p += olen)
		hits++;
	char *out = malloc(len + hits * nlen + 1);
	if (!out) {
		free(text);
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	size_t o = 0;
	for (const char *p = text, *q; p < text + len; p = q + olen) {
		q = strstr(p, KSMTUNED_CONF);
		if (!q)
			q = text + len;
		memcpy(out + o, p, (size_t)(q - p));
		o += (size_t)(q - p);
		if (q == text + len)
			break;
		memcpy(out + o, conf, nlen);
		o += nlen;
	}
	free(text);
	if (!hits) {
		free(out);
		snprintf(err, cap, "%s does not read %s: cannot give it a config of its own", script, KSMTUNED_CONF);
		return -ENOEXEC;
	}
	r = io_write_whole(copy, out, o, 0700);
	free(out);
	if (r < 0)
		snprintf(err, cap, "%s: %s", copy, strerror(-r));
	return r;
}

static int write_conf(const struct ksmtuned *t, const struct ksmtuned_config *c, char *err, size_t cap)
{
	char conf[192], text[1024];
	file_in(t, "ksmtuned.conf", conf, sizeof(conf));
	int n = snprintf(text, sizeof(text),
			 "# One run of ksmtuned under vmhost; the variables are the script's own.\n"
			 "KSM_MONITOR_INTERVAL=%d\nKSM_NPAGES_BOOST=%d\nKSM_NPAGES_DECAY=%d\nKSM_NPAGES_MIN=%d\n"
			 "KSM_NPAGES_MAX=%d\nKSM_SLEEP_MSEC=%d\nKSM_THRES_COEF=%d\nKSM_THRES_CONST=%d\n"
			 "DEBUG=1\nLOGFILE=%s\nPIDFILE=%s/ksmtuned.pid\n",
			 c->monitor_interval_seconds, c->npages_boost, c->npages_decay, c->npages_min, c->npages_max,
			 c->sleep_msec, c->thres_coef, c->thres_const, t->log, t->dir);
	if (n < 0 || (size_t)n >= sizeof(text)) {
		snprintf(err, cap, "config too long");
		return -ENAMETOOLONG;
	}
	int r = io_write_whole(conf, text, (size_t)n, 0600);
	if (r < 0)
		snprintf(err, cap, "%s: %s", conf, strerror(-r));
	return r;
}

static bool group_alive(pid_t pgid) { return pgid > 0 && (kill(-pgid, 0) == 0 || errno == EPERM); }

static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void restore_settings(const struct ksmtuned *t)
{
	/* run last, as the guard does: numbers first, then whether ksmd runs. */
	for (size_t i = 0; i < NWRITTEN; i++)
		if (t->saved[i][0])
			io_write(&t->root, IO_SYS, t->saved[i], "kernel/mm/ksm/%s", written[i]);
}

/* The supervisor, a child of the caller: a subreaper, so the script's backgrounded loop stays
 * its child; it waits for a stop (SIGTERM from ksmtuned_stop, or from the kernel when the caller
 * dies), then ends the script's group, restores and cleans up. Signals arrive blocked. */
static void supervise(struct ksmtuned *t, pid_t parent, int report_fd)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		raise(SIGTERM); /* the caller died before the line above: still pending, handled below */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	char copy[192];
	file_in(t, "ksmtuned", copy, sizeof(copy));
	pid_t g = fork();
	if (g == 0) {
		setpgid(0, 0);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (io_redirect_std("/dev/null", t->log, O_CREAT | O_APPEND) < 0)
			_exit(127);
		execl("/bin/bash", "/bin/bash", copy, (char *)NULL);
		_exit(127);
	}
	if (g > 0)
		setpgid(g, g); /* also here: no window in which the parent's kill finds no group */
	pid_t report = g > 0 ? g : -1;
	if (write(report_fd, &report, sizeof(report)) != (ssize_t)sizeof(report))
		report = -1;
	close(report_fd);
	sigset_t wait_for;
	sigemptyset(&wait_for);
	stop_signals_add(&wait_for);
	sigaddset(&wait_for, SIGCHLD);
	while (g > 0) {
		struct timespec tick = {.tv_sec = 0, .tv_nsec = 200000000L};
		int sig = sigtimedwait(&wait_for, NULL, &tick);
		reap_all();
		if (sig > 0 && sig != SIGCHLD)
			break;
		if (!group_alive(g))
			break; /* it ended by itself */
	}
	if (g > 0) {
		kill(-g, SIGTERM);
		for (int i = 0; i < 40 && group_alive(g); i++) {
			sleep_for(0.05);
			reap_all();
		}
		kill(-g, SIGKILL);
		for (int i = 0; i < 100 && group_alive(g); i++) {
			sleep_for(0.02);
			reap_all();
		}
	}
	reap_all();
	restore_settings(t);
	/* The caller died (SIGKILL): what its guard wrote down goes back now, not at the next writer;
	 * the KSM lock is still held, through the descriptor this process shares. */
	if (getppid() != parent)
		ksm_guard_restore_left(&t->root, NULL);
	remove_dir(t);
	_exit(0);
}

int ksmtuned_start(const struct io_root *root, const struct ksmtuned_config *c, struct ksmtuned **ret,
		   char *err, size_t cap)
{
	struct ksmtuned *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	t->root = *root;
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 80)
		tmp = "/tmp";
	snprintf(t->dir, sizeof(t->dir), "%s/vmhost-ksmtuned.XXXXXX", tmp);
	int e = io_make_temp_dir(t->dir);
	if (e < 0) {
		snprintf(err, cap, "temporary directory: %s", strerror(-e));
		free(t);
		return e;
	}
	file_in(t, "ksmtuned.log", t->log, sizeof(t->log));
	int r = copy_script(t, c->script ? c->script : KSMTUNED_SCRIPT, err, cap);
	if (r == 0)
		r = write_conf(t, c, err, cap);
	for (size_t i = 0; r == 0 && i < NWRITTEN; i++) {
		ssize_t n = io_read(root, IO_SYS, t->saved[i], sizeof(t->saved[i]), "kernel/mm/ksm/%s", written[i]);
		if (n <= 0 || (r = ksm_guard_save(written[i])) < 0) {
			r = n < 0 ? (int)n : r < 0 ? r : -EIO;
			snprintf(err, cap, "saving KSM %s: %s", written[i], strerror(-r));
		}
		t->saved[i][strcspn(t->saved[i], "\n")] = '\0';
	}
	int fds[2] = {-1, -1};
	if (r == 0 && pipe2(fds, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(err, cap, "pipe: %s", strerror(errno));
	}
	if (r < 0) {
		remove_dir(t);
		free(t);
		return r;
	}
	/* The supervisor starts with these blocked: it takes them with sigtimedwait. */
	sigset_t block, prev;
	sigemptyset(&block);
	stop_signals_add(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &prev);
	pid_t parent = getpid(), s = fork();
	if (s == 0) {
		close(fds[0]);
		supervise(t, parent, fds[1]);
	}
	int fork_errno = errno;
	sigprocmask(SIG_SETMASK, &prev, NULL);
	close(fds[1]);
	pid_t g = -1;
	ssize_t n = s > 0 ? read(fds[0], &g, sizeof(g)) : -1;
	close(fds[0]);
	if (s < 0 || n != (ssize_t)sizeof(g) || g <= 0) {
		r = s < 0 ? -fork_errno : -ECHILD;
		snprintf(err, cap, "starting %s: %s", c->script ? c->script : KSMTUNED_SCRIPT, strerror(-r));
		if (s > 0) {
			kill(s, SIGTERM);
			waitpid(s, NULL, 0);
		}
		remove_dir(t);
		free(t);
		return r;
	}
	t->supervisor = s;
	t->pgid = g;
	*ret = t;
	return 0;
}

bool ksmtuned_running(const struct ksmtuned *t) { return t && group_alive(t->pgid); }

pid_t ksmtuned_pgid(const struct ksmtuned *t) { return t ? t->pgid : 0; }

pid_t ksmtuned_loop_pid(const struct ksmtuned *t)
{
	char buf[32];
	struct io_root here = {.proc = t->dir};
	ssize_t n = io_read(&here, IO_PROC, buf, sizeof(buf), "ksmtuned.pid");
	int64_t v;
	if (n <= 0 || parse_i64(buf, &v) < 0 || v <= 0)
		return 0;
	return (pid_t)v;
}

const char *ksmtuned_log_path(const struct ksmtuned *t) { return t->log; }

int ksmtuned_stop(struct ksmtuned *t)
{
	if (!t)
		return 0;
	kill(t->supervisor, SIGTERM);
	int status;
	while (waitpid(t->supervisor, &status, 0) < 0 && errno == EINTR)
		;
	/* The supervisor restored; check, and write again what did not take. */
	int first = 0;
	for (size_t i = 0; i < NWRITTEN; i++) {
		char now[32];
		ssize_t n = io_read(&t->root, IO_SYS, now, sizeof(now), "kernel/mm/ksm/%s", written[i]);
		if (n > 0)
			now[strcspn(now, "\n")] = '\0';
		if (n > 0 && !strcmp(now, t->saved[i]))
			continue;
		int r = io_write(&t->root, IO_SYS, t->saved[i], "kernel/mm/ksm/%s", written[i]);
		if (r < 0 && !first)
			first = r;
	}
	remove_dir(t);
	free(t);
	return first;
}
