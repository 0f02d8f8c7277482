#ifndef VMHOST_CORE_KVM_KVM_READER_H
#define VMHOST_CORE_KVM_KVM_READER_H

/* The reader's insides, shared by its files and no one else: kvm.c (the counter set, a read),
 * kvm_debugfs.c (debugfs' VM directories), kvm_monitors.c (QEMU's monitor: QMP, or libvirt
 * holding it) and kvm_reasons.c (exit reasons by eBPF or tracepoints). */

#include <errno.h>
#include <stdbool.h>

#include "core/kvm/kvm.h"
#include "core/kvm/kvm_virt.h"
#include "core/model/vm.h"

#define KVM_DIR "kernel/debug/kvm"
/* The counter set lives in arrays of this capacity, never moved, only appended to: a sample
 * carries the set's first ncounters entries (kvm_sample.counters) to serve's HTTP threads while
 * the sampler's thread adds the exit reasons after them. */
#define KVM_COUNTERS_MAX 512

struct kvm_counter {
	char name[64];
	enum kvm_stat_kind kind;
};

/* One VM directory with its counter files held open. */
struct kvm_vm_files {
	char dir[32];
	pid_t pid;
	int kvm_fd;
	char name[256];
	enum vmm_kind vmm;
	uint64_t start_ticks;
	int vcpus;
	int *fds; /* [ncounters]; -1 when the file is missing */
	unsigned denied; /* files it refused to open */
	bool listed; /* in the latest listing */
};

/* One read of a VM's monitor, kept for a paced VM: values [n], per [vcpus x n] and index [vcpus]
 * with KVM_READ_VCPUS. */
struct kvm_qmp_read {
	double seconds; /* CLOCK_MONOTONIC when read */
	maybe_i64 *values, *per;
	int *index;
	size_t n;
	int vcpus;
};

/* A VM read through QMP, kept across reads for its schema (and a paced VM's last two reads). */
struct kvm_qmp_entry {
	pid_t pid;
	uint64_t start_ticks;
	struct kvm_qmp_vm *q;
	int permanent; /* an error that will not change for this process (TCG, QEMU before 7.1) */
	int kvm_vm;    /* it holds a KVM VM fd: 1 (for good), 0 (asked again after KVM_VM_RECHECK_S), -1 not asked */
	double kvm_vm_asked; /* when it was last asked (monotonic seconds) */
	int own_socket;      /* it listens on the socket itself: 1 (for good), 0 (asked again after
				KVM_VM_RECHECK_S), -1 not asked or cannot be told (SO_PEERCRED decides) */
	double own_socket_asked;
	bool seen;
	unsigned reads; /* successful reads */
	struct kvm_qmp_read last, before;
};

/* A VM's exit reasons by tracepoints, kept open across reads. */
struct kvm_trace_entry {
	pid_t pid;
	uint64_t start_ticks;
	struct kvm_trace *t; /* NULL when opening failed */
	bool retry;          /* it failed as no such process: opened again once the root lists the pid */
	bool seen;
	bool followed;     /* kvm_reader_follow's: kept, known by pid alone */
	enum vmm_kind vmm; /* a followed command's */
};

struct kvm_reader {
	struct io_root root;
	unsigned flags;
	bool debugfs; /* <debugfs>/kvm is there */
	size_t monitors_resume; /* where the next monitors' pass starts: the last one ran out of time there */
	bool (*selects)(const struct kvm_vm_sample *vm, void *data); /* kvm_reader_select; NULL every VM */
	void *selects_data;
	struct kvm_counter *counters;
	const char **names; /* [ncounters] the counters' names, for QMP */
	size_t ncounters;
	int *global_fds; /* [ncounters] */
	struct kvm_vm_files *vms; /* sorted by dir */
	size_t nvms, cap;
	unsigned denied;
	bool reopen; /* the files are not seekable: read each by its path */
	struct kvm_qmp_entry *qmps;
	size_t nqmps;
	struct kvm_trace_entry *traces;
	size_t ntraces;
	struct kvm_qmp_socket {
		pid_t pid;
		char path[sizeof(((struct vm_qmp *)0)->path)];
	} *sockets; /* given by the user (exits --qmp-socket) */
	size_t nsockets;
	int isa;               /* enum kvm_trace_isa of the vendor module, read once; -1 not yet */
	size_t reasons_first;  /* index of the first reason counter; ncounters when none yet */
	size_t nreasons;
	char reasons_why[256];
	struct kvm_libvirt {
		struct virt *conn;          /* NULL until a libvirt QEMU is read */
		char uri[256];              /* "" qemu:///system */
		int deadline_ms;
		bool asked;                 /* this read asked libvirt already */
		int result;                 /* and what it answered */
		struct virt_domains domains;
		char why[256];
		/* this read: libvirt was asked and could not answer (no connection, no answer, a failed
		 * call), the VMs that left unread and the first of them */
		bool unreachable;
		size_t unread;
		pid_t first_pid;
		char first_name[64];
		/* paced like a QMP QEMU when libvirt's QEMU is 7.1-8.0 (its vcpu group asks the same
		 * query-stats): the call's successful reads, when the last was, the one before it */
		unsigned reads;
		bool held;                  /* this read reuses domains */
		double read_seconds, before_seconds;
		struct virt_domains before;
	} libvirt;
	double pace_seconds;         /* kvm_reader_pace's; 0 none */
	char pace_why[128];          /* kvm_reader_pace_why's */
	struct kvm_bpf *bpf;         /* the reasons counted in the kernel (core/kvm/kvm_bpf.h); NULL: perf */
	bool bpf_tried;
	char reasons_counter[320];   /* which counter counts the reasons, and why */
};

static inline bool kvm_is_denied(int err) { return err == -EACCES || err == -EPERM; }

/* kvm.c: the counter set, and a sample's parts */
/* Fixes the counter set: n names (kinds NULL: by name, as debugfs files), unused ones skipped. */
int kvm_set_counters(struct kvm_reader *r, const char *const *names, const enum kvm_stat_kind *kinds, size_t n);
/* Appends n counters (names copied) to the set: every array sized by ncounters grows with it. */
int kvm_grow_counters(struct kvm_reader *r, struct kvm_sample *ret, const char *const *names, size_t n);
/* Every value array of ret (its VMs', their vCPUs', the totals) grown from old to nc counters,
 * the new ones unknown: the set was fixed or grew while ret was being read. */
int kvm_sample_fit(struct kvm_sample *ret, size_t old, size_t nc);
void kvm_open_globals(struct kvm_reader *r);
int kvm_set_vcpus(struct kvm_vm_sample *s, size_t n, const int *index, const maybe_i64 *flat, size_t ncounters);
int kvm_cmp_sample_dir(const void *a, const void *b);

/* kvm_debugfs.c */
void kvm_debugfs_close_vm(struct kvm_reader *r, struct kvm_vm_files *vm);
/* Brings the open VM directories in line with debugfs' listing. */
int kvm_debugfs_sync(struct kvm_reader *r);
/* The global totals and every listed VM's counters into ret (room for r->nvms VMs). */
int kvm_debugfs_read(struct kvm_reader *r, struct kvm_sample *ret);

/* kvm_monitors.c: every QEMU VM whose debugfs counters are missing or denied, through QMP or
 * libvirt, or listed with the reason it cannot be read. given NULL: discovered here. */
int kvm_monitors_pass(struct kvm_reader *r, const struct vm_list *given, struct kvm_sample *ret);
void kvm_qmp_entry_free(struct kvm_qmp_entry *e);

/* kvm_reasons.c: the exit reasons of every VM in ret, and of a followed command. */
int kvm_reasons_pass(struct kvm_reader *r, struct kvm_sample *ret);

#endif
