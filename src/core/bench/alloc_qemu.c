#include "core/bench/alloc_qemu.h"
#include "core/base/clock.h"
#include "core/base/fatal_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/bench/alloc.h"

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
		unlink(signal_sock);
		unlink(signal_log);
		rmdir(signal_dir);
	}
	fatal_signal_reraise(sig);
}

void qemu_guard_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa = {.sa_handler = on_fatal_signal};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
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

bool qemu_kvm_usable(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void path_in(const struct qemu_vm *vm, const char *name, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%s", vm->dir, name);
}

/* QEMU's first "qemu-system-...: ..." line from its log, for error messages. */
static void log_first_error(const struct qemu_vm *vm, char *buf, size_t cap)
{
	char path[160], line[512];
	buf[0] = '\0';
	path_in(vm, "qemu.log", path, sizeof(path));
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || strstr(line, "warning:"))
			continue;
		snprintf(buf, cap, "%.250s", line);
		break;
	}
	fclose(f);
}

static void remove_dir(struct qemu_vm *vm)
{
	if (!vm->dir[0])
		return;
	char path[160];
	path_in(vm, "qmp.sock", path, sizeof(path));
	unlink(path);
	path_in(vm, "qemu.log", path, sizeof(path));
	unlink(path);
	rmdir(vm->dir);
	vm->dir[0] = '\0';
}

void qemu_kill(struct qemu_vm *vm)
{
	if (vm->pid > 0) {
		kill(vm->pid, SIGKILL);
		while (waitpid(vm->pid, NULL, 0) < 0 && errno == EINTR)
			;
		vm->pid = 0;
		signal_pid = 0;
	}
	if (vm->qmp_fd >= 0) {
		close(vm->qmp_fd);
		vm->qmp_fd = -1;
	}
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

/* Reads QMP lines until one contains want; an "error" reply fails. Returns 0, -ETIMEDOUT,
 * -EPIPE (QEMU closed the socket) or -EPROTO (error reply, copied to err). */
static int qmp_wait_for(struct qemu_vm *vm, const char *want, double deadline, char *err, size_t cap)
{
	for (;;) {
		char *nl;
		while ((nl = memchr(vm->rbuf, '\n', vm->rlen))) {
			*nl = '\0';
			bool hit = strstr(vm->rbuf, want) != NULL;
			bool error = strstr(vm->rbuf, "\"error\"") != NULL;
			if (error)
				snprintf(err, cap, "QMP: %.300s", vm->rbuf);
			size_t used = (size_t)(nl + 1 - vm->rbuf);
			memmove(vm->rbuf, nl + 1, vm->rlen - used);
			vm->rlen -= used;
			if (error)
				return -EPROTO;
			if (hit)
				return 0;
		}
		if (vm->rlen == sizeof(vm->rbuf) - 1)
			vm->rlen = 0; /* a line longer than any reply vmhost waits for: drop it */
		double left = deadline - clock_monotonic_seconds();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = {.fd = vm->qmp_fd, .events = POLLIN};
		int n = poll(&p, 1, (int)(left * 1000) + 1);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		ssize_t got = read(vm->qmp_fd, vm->rbuf + vm->rlen, sizeof(vm->rbuf) - 1 - vm->rlen);
		if (got == 0)
			return -EPIPE;
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		vm->rlen += (size_t)got;
	}
}

static int qmp_send(struct qemu_vm *vm, const char *cmd)
{
	size_t len = strlen(cmd), off = 0;
	while (off < len) {
		ssize_t w = write(vm->qmp_fd, cmd + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)w;
	}
	return 0;
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
	int in = open("/dev/null", O_RDONLY);
	int out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (in < 0 || out < 0)
		_exit(127);
	dup2(in, 0);
	dup2(out, 1);
	dup2(out, 2);
	execvp(bin, argv);
	dprintf(2, "%s: cannot run: %s\n", bin, strerror(errno));
	_exit(127);
}

int qemu_start(const struct qemu_opts *o, struct qemu_vm *vm, double *ret_create_seconds, char *err, size_t cap)
{
	*vm = (struct qemu_vm){.qmp_fd = -1};
	/* $TMPDIR when it is short enough for a socket path (tests find their own QEMUs by it). */
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 60)
		tmp = "/tmp";
	snprintf(vm->dir, sizeof(vm->dir), "%s/vmhost-qemu.XXXXXX", tmp);
	if (!mkdtemp(vm->dir)) {
		int e = -errno;
		snprintf(err, cap, "temp dir: %s", strerror(errno));
		vm->dir[0] = '\0';
		return e;
	}
	char sock[160], log[160];
	path_in(vm, "qmp.sock", sock, sizeof(sock));
	path_in(vm, "qemu.log", log, sizeof(log));
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

	double deadline = t0 + o->timeout_seconds;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof(addr.sun_path)) {
		snprintf(err, cap, "socket path too long: %s", sock);
		qemu_kill(vm);
		return -ENAMETOOLONG;
	}
	memcpy(addr.sun_path, sock, strlen(sock) + 1);
	int r = -ETIMEDOUT;
	while (clock_monotonic_seconds() < deadline) {
		if (reaped(vm)) {
			r = -ECHILD;
			break;
		}
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			r = -errno;
			break;
		}
		if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
			vm->qmp_fd = fd;
			r = 0;
			break;
		}
		close(fd);
		sleep_for(0.001);
	}
	/* The greeting comes once QEMU's main loop runs, after guest RAM is preallocated. */
	if (r == 0)
		r = qmp_wait_for(vm, "\"QMP\"", deadline, err, cap);
	if (r == 0)
		r = qmp_send(vm, "{\"execute\": \"qmp_capabilities\"}\n");
	if (r == 0)
		r = qmp_wait_for(vm, "\"return\"", deadline, err, cap);
	if (r == 0)
		r = qmp_send(vm, "{\"execute\": \"query-status\"}\n");
	if (r == 0)
		r = qmp_wait_for(vm, "\"status\"", deadline, err, cap);
	double t1 = clock_monotonic_seconds();
	if (r == 0) {
		*ret_create_seconds = t1 - t0;
		return 0;
	}
	char qemu_says[300];
	/* Let a dying QEMU finish writing its error before reading the log. */
	for (int i = 0; i < 200 && !reaped(vm); i++)
		sleep_for(0.005);
	log_first_error(vm, qemu_says, sizeof(qemu_says));
	if (qemu_says[0])
		snprintf(err, cap, "%s", qemu_says);
	else if (r == -ETIMEDOUT)
		snprintf(err, cap, "QMP did not answer within %.0f s", o->timeout_seconds);
	else if (r != -EPROTO)
		snprintf(err, cap, "QEMU exited before its monitor answered (%s)", strerror(-r));
	qemu_kill(vm);
	return r;
}

int qemu_stop(struct qemu_vm *vm, double timeout_seconds, double *ret_destroy_seconds, char *err, size_t cap)
{
	int r = qmp_send(vm, "{\"execute\": \"quit\"}\n");
	double t0 = clock_monotonic_seconds();
	if (r < 0)
		snprintf(err, cap, "QMP quit: %s", strerror(-r));
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
