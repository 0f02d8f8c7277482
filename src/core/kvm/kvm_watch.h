/* What vmhost exits watches, as core/sample/top.c is top's source: the KVM reader opened for a
 * selection of VMs (by name or pid) and of counters (an extended regular expression), from
 * debugfs, or where debugfs is closed from QEMU's monitors (the sockets given, libvirt's, the
 * others found); and what changed between two of its readings for that selection. */
#ifndef VMHOST_CORE_KVM_WATCH_H
#define VMHOST_CORE_KVM_WATCH_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/kvm/kvm.h"
#include "core/kvm/kvm_delta.h"

struct kvm_watch {
	const char *const *vm_names; /* [nvm_names] and pids[npids]: the VMs; none of either: every VM */
	size_t nvm_names;
	const pid_t *pids;
	size_t npids;
	const regex_t *fields;  /* the counters whose names match; NULL: every counter */
	unsigned read_flags;    /* KVM_READ_* (core/kvm/kvm.h) */
	const pid_t *qmp_pids;  /* [nqmp] with qmp_paths: QEMU monitors given by hand */
	const char *const *qmp_paths;
	size_t nqmp;
	const char *libvirt_uri; /* NULL: qemu:///system */
	double pace_seconds;     /* a QEMU 7.1-8.0 read at most this often (kvm_reader_pace); < 0: not paced */
	bool probe;              /* without debugfs, fail unless a selected VM can be read (else the
				    reader counts a command's exit reasons alone) */
};

/* The reader for w. 0 with *ret; or a negative errno with *ret_why, and qmp_why saying why no QEMU
 * gave its counters ("" when none was asked). *ret_why is also set on success (KVM_OK, or why
 * debugfs is closed when the monitors are read instead). */
int kvm_watch_open(const struct io_root *root, const struct kvm_watch *w, struct kvm_reader **ret,
		   enum kvm_avail *ret_why, char *qmp_why, size_t cap);

/* Whether w selects the VM (by name or pid; false when w names no VM). */
bool kvm_watch_selects(const struct kvm_watch *w, const struct kvm_vm_sample *vm);

/* What changed from a to b in w's VMs and counters (kvm_delta_build). 0 or -ENOMEM. */
int kvm_watch_delta(const struct kvm_reader *kr, const struct kvm_watch *w, const struct kvm_sample *a,
		    const struct kvm_sample *b, struct kvm_delta *ret);

/* Runs the command argv (exits -- CMD) to its end, its output to stderr when quiet_stdout (JSON on
 * stdout), a stop (Ctrl-C) going to it, and with KVM_READ_REASONS its exit reasons counted from
 * before its exec (so a VM it creates and ends between two reads is counted too). Its exit status
 * and *ret_wall its seconds, or a negative errno. */
int kvm_watch_command(struct kvm_reader *kr, char *const *argv, bool quiet_stdout, double *ret_wall);

#endif
