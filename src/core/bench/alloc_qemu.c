#include "core/bench/alloc_qemu.h"
#include "core/base/stop.h"
#include "core/base/fatal_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/bench/alloc.h"
#include "io/file.h"
#include "io/peer/qmp.h"
#include "parse/qemu_log.h"

/* What the signal handler needs to kill and clean up: the one process-wide state of this module,
 * as only a handler can reach it. */
static volatile sig_atomic_t signal_pid;
static char signal_sock[160], signal_log[160], signal_dir[128];

static void on_fatal_signal(int sig)
{
	pid_t pid = (pid_t)signal_pid;
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		io_remove(signal_sock);
		io_remove(signal_log);
		io_remove_dir(signal_dir);
	}
	fatal_signal_reraise(sig);
}

void qemu_guard_signals(void)
{
	struct sigaction sa = {.sa_handler = on_fatal_signal};
	sigemptyset(&sa.sa_mask);
	stop_signals_add(&sa.sa_mask);
	for (size_t i = 0; i < STOP_NSIGNALS; i++)
		sigaction(stop_signals[i], &sa, NULL);
	/* A write to a QMP socket QEMU already closed must be an error, not a death. */
	signal(SIGPIPE, SIG_IGN);
}

const char *qemu_default_binary(void)
{
	struct utsname u;
	if (uname(&u) == 0 && strcmp(u.machine, "aarch64") == 0)
		return "qemu-system-aarch64";
	return "qemu-system-x86_64";
}

bool qemu_kvm_usable(void) { return io_can_open("/dev/kvm", O_RDWR); }

static void path_in(const struct qemu_vm *vm, const char *name, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%s", vm->dir, name);
}

/* QEMU's first "qemu-system-...: ..." line from its log, for error messages. */
static void log_first_error(const struct qemu_vm *vm, char *buf, size_t cap)
{
	char path[160], *text;
	size_t len;
	buf[0] = '\0';
	path_in(vm, "qemu.log", path, sizeof(path));
	if (io_read_path(path, 1 << 20, &text, &len) < 0)
		return;
	parse_qemu_log_error(text, len, buf, cap);
	free(text);
}

static void remove_dir(struct qemu_vm *vm)
{
	if (!vm->dir[0])
		return;
	char path[160];
	path_in(vm, "qmp.sock", path, sizeof(path));
	io_remove(path);
	path_in(vm, "qemu.log", path, sizeof(path));
	io_remove(path);
	io_remove_dir(vm->dir);
	vm->dir[0] = '\0';
}

/* SIGKILL, reap, remove the temp dir. Safe on a stopped vm. */
static void qemu_kill(struct qemu_vm *vm)
{
	if (vm->pid > 0) {
		kill(vm->pid, SIGKILL);
		while (waitpid(vm->pid, NULL, 0) < 0 && errno == EINTR)
			;
		vm->pid = 0;
		signal_pid = 0;
	}
	qmp_close(vm->qmp);
	vm->qmp = NULL;
	remove_dir(vm);
}

/* Reaps the child if it has exited; true when it is gone. */
static bool reaped(struct qemu_vm *vm)
{
	if (vm->pid <= 0)
		return true;
	pid_t r = waitpid(vm->pid, NULL, WNOHANG);
	if (r == vm->pid || (r < 0 && errno == ECHILD)) {
		vm->pid = 0;
		signal_pid = 0;
		return true;
	}
	return false;
}

static pid_t spawn(const struct qemu_opts *o, const char *sock, const char *log)
{
	const char *bin = o->binary ? o->binary : qemu_default_binary();
	uint64_t mib = (o->ram_bytes + (1 << 20) - 1) >> 20;
	char mem[32], backend[160], machine[64], qmp[200];
	snprintf(mem, sizeof(mem), "%lluM", (unsigned long long)mib);
	snprintf(backend, sizeof(backend), "memory-backend-ram,id=vmhost-ram,size=%lluM,prealloc=on,prealloc-threads=%u",
		 (unsigned long long)mib, o->prealloc_threads ? o->prealloc_threads : 1);
	snprintf(machine, sizeof(machine), "%smemory-backend=vmhost-ram",
		 strstr(bin, "aarch64") ? "virt," : "");
	snprintf(qmp, sizeof(qmp), "unix:%s,server=on,wait=off", sock);
	char *const argv[] = {
		(char *)bin, "-nodefaults", "-display", "none", "-S", "-accel", o->kvm ? "kvm" : "tcg",
		"-m", mem, "-object", backend, "-machine", machine, "-qmp", qmp, NULL,
	};
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* The child: dies with vmhost, whatever kills vmhost. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (io_redirect_std("/dev/null", log, O_CREAT | O_TRUNC) < 0)
		_exit(127);
	execvp(bin, argv);
	dprintf(2, "%s: cannot run: %s\n", bin, strerror(errno));
	_exit(127);
}

/* A private directory for QEMU's socket and log: in $TMPDIR when it is short enough for a socket
 * path (tests find their own QEMUs by it), else /tmp. */
static int make_dir(struct qemu_vm *vm, char *err, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 60)
		tmp = "/tmp";
	snprintf(vm->dir, sizeof(vm->dir), "%s/vmhost-qemu.XXXXXX", tmp);
	int e = io_make_temp_dir(vm->dir);
	if (e == 0)
		return 0;
	snprintf(err, cap, "temp dir: %s", strerror(-e));
	vm->dir[0] = '\0';
	return e;
}

/* Connects to QEMU's monitor once it listens and negotiates (io/peer/qmp.c): the greeting comes once
 * QEMU's main loop runs, after guest RAM is preallocated; then asks query-status. 0, -ECHILD
 * (QEMU exited), -ETIMEDOUT or io/peer/qmp.c's error (err says which for a QMP error reply). */
static int qmp_ready(struct qemu_vm *vm, const char *sock, double deadline, char *err, size_t cap)
{
	int r = -ETIMEDOUT;
	for (double left; (left = deadline - clock_monotonic_seconds()) > 0; sleep_for(0.001)) {
		if (reaped(vm))
			return -ECHILD;
		r = qmp_open(sock, vm->pid, (int)(left * 1000) + 1, &vm->qmp, NULL);
		if (r != -ENOENT && r != -ECONNREFUSED)
			break; /* not yet listening: try again */
	}
	if (r == -EBUSY)
		r = -ETIMEDOUT; /* no greeting before the deadline */
	if (r < 0)
		return r;
	struct json_doc reply;
	const struct json_value *ret;
	r = qmp_call(vm->qmp, "query-status", NULL, &reply, &ret);
	if (r == 0)
		json_free(&reply);
	else if (r == -EREMOTEIO)
		snprintf(err, cap, "QMP: %s: %.300s", qmp_error_class(vm->qmp), qmp_error_desc(vm->qmp));
	return r;
}

/* Why QEMU did not start, into err: its own first error line when it wrote one. */
static void start_failed(struct qemu_vm *vm, const struct qemu_opts *o, int r, char *err, size_t cap)
{
	char qemu_says[300];
	/* Let a dying QEMU finish writing its error before reading the log. */
	for (int i = 0; i < 200 && !reaped(vm); i++)
		sleep_for(0.005);
	log_first_error(vm, qemu_says, sizeof(qemu_says));
	if (qemu_says[0])
		snprintf(err, cap, "%s", qemu_says);
	else if (r == -ETIMEDOUT)
		snprintf(err, cap, "QMP did not answer within %.0f s", o->timeout_seconds);
	else if (r != -EREMOTEIO)
		snprintf(err, cap, "QEMU exited before its monitor answered (%s)",
			 r == -ECHILD ? strerror(ECHILD) : qmp_strerror(r));
}

int qemu_start(const struct qemu_opts *o, struct qemu_vm *vm, double *ret_create_seconds, char *err, size_t cap)
{
	*vm = (struct qemu_vm){0};
	int r = make_dir(vm, err, cap);
	if (r < 0)
		return r;
	char sock[160], log[160];
	path_in(vm, "qmp.sock", sock, sizeof(sock));
	path_in(vm, "qemu.log", log, sizeof(log));
	if (strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, cap, "socket path too long: %s", sock);
		remove_dir(vm);
		return -ENAMETOOLONG;
	}
	snprintf(signal_sock, sizeof(signal_sock), "%s", sock);
	snprintf(signal_log, sizeof(signal_log), "%s", log);
	snprintf(signal_dir, sizeof(signal_dir), "%s", vm->dir);

	/* The pid is published to the signal handler before a signal can interrupt the fork. */
	sigset_t prev;
	stop_block(&prev);
	double t0 = clock_monotonic_seconds();
	pid_t pid = spawn(o, sock, log);
	if (pid > 0) {
		vm->pid = pid;
		signal_pid = pid;
	}
	stop_unblock(&prev);
	if (pid < 0) {
		int e = -errno;
		snprintf(err, cap, "fork: %s", strerror(errno));
		remove_dir(vm);
		return e;
	}
	r = qmp_ready(vm, sock, t0 + o->timeout_seconds, err, cap);
	if (r == 0) {
		*ret_create_seconds = clock_monotonic_seconds() - t0;
		return 0;
	}
	start_failed(vm, o, r, err, cap);
	qemu_kill(vm);
	return r;
}

int qemu_stop(struct qemu_vm *vm, double timeout_seconds, double *ret_destroy_seconds, char *err, size_t cap)
{
	struct json_doc reply;
	const struct json_value *ret;
	double t0 = clock_monotonic_seconds();
	if (vm->qmp) /* the session opened at start: quit is a visit of its own */
		qmp_new_visit(vm->qmp, (int)(timeout_seconds * 1000) + 1);
	int r = vm->qmp ? qmp_call(vm->qmp, "quit", NULL, &reply, &ret) : -ENOTCONN;
	if (r == 0)
		json_free(&reply);
	else if (r == -ECONNRESET)
		r = 0; /* closed before its reply reached us: quitting all the same */
	if (r < 0)
		snprintf(err, cap, "QMP quit: %s", r == -ENOTCONN ? strerror(ENOTCONN) : qmp_strerror(r));
	while (r == 0 && !reaped(vm)) {
		if (clock_monotonic_seconds() - t0 > timeout_seconds) {
			snprintf(err, cap, "QEMU still running %.0f s after quit; killed", timeout_seconds);
			r = -ETIMEDOUT;
			break;
		}
		sleep_for(0.0005);
	}
	if (r == 0)
		*ret_destroy_seconds = clock_monotonic_seconds() - t0;
	qemu_kill(vm);
	return r;
}
