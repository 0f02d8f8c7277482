/* A real QEMU started with preallocated guest RAM, paused, and stopped again: the VM creation and
 * destruction `vmhost bench alloc --qemu` times. A QEMU started here never outlives vmhost: it is
 * killed by pid on every error path, on SIGINT/SIGTERM/SIGHUP/SIGQUIT, and by PR_SET_PDEATHSIG
 * when vmhost itself dies. Library code: never prints; errors go to err. */
#ifndef VMHOST_CORE_ALLOC_QEMU_H
#define VMHOST_CORE_ALLOC_QEMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct qmp;

struct qemu_vm {
	pid_t pid;        /* 0 when not running */
	struct qmp *qmp;  /* QEMU's monitor (io/peer/qmp.h), NULL when not connected */
	char dir[128];    /* private temp dir ($TMPDIR or /tmp) holding qmp.sock and qemu.log */
};

struct qemu_opts {
	const char *binary;   /* NULL: qemu-system-<this machine> from PATH */
	uint64_t ram_bytes;
	unsigned prealloc_threads;
	bool kvm;             /* -accel kvm, else tcg */
	double timeout_seconds;
};

/* The default binary for this machine ("qemu-system-x86_64", ...). */
const char *qemu_default_binary(void);
/* True when /dev/kvm can be opened for reading and writing. */
bool qemu_kvm_usable(void);

/* Installs the handlers of SIGINT, SIGTERM, SIGHUP, SIGQUIT that kill a running QEMU, remove its
 * files, and end the process by the signal (once per process). */
void qemu_guard_signals(void);

/* Starts QEMU paused with -m ram_bytes and a memory backend with prealloc=on; returns once QMP
 * answers query-status (create time = that moment minus the fork). 0 or a negative errno;
 * on failure no QEMU is left and err says why (with QEMU's own first error line when it has one). */
int qemu_start(const struct qemu_opts *o, struct qemu_vm *vm, double *ret_create_seconds, char *err, size_t cap);

/* Sends QMP quit and waits until the process is gone (destroy time). Kills it after the timeout.
 * Always leaves no QEMU behind. */
int qemu_stop(struct qemu_vm *vm, double timeout_seconds, double *ret_destroy_seconds, char *err, size_t cap);

#endif
