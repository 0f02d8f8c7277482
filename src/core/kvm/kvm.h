/* KVM's counters from debugfs (<sys>/kernel/debug/kvm): the global files and one directory per
 * VM, kept open and re-read with one pread each, each VM named by the VM discovery.
 *
 *   struct kvm_reader *r;
 *   enum kvm_avail why;
 *   if (kvm_reader_open(root, &r, &why) < 0) ... say kvm_avail_hint(why)
 *   struct kvm_sample a, b;
 *   kvm_reader_sample(r, &a); sleep; kvm_reader_sample(r, &b);
 *   kvm_change(kind, before, after, seconds, appeared) for each counter
 *   kvm_sample_free(&a); kvm_sample_free(&b); kvm_reader_close(r);
 *
 * Counters are indexed 0..kvm_reader_ncounters()-1; the set is fixed when first found (the
 * global files, or the first VM directory when the global ones are missing). */
#ifndef VMHOST_CORE_KVM_H
#define VMHOST_CORE_KVM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/kvm/kvm_time.h"
#include "io/io.h"
#include "parse/kvm_debugfs.h"
#include "parse/maybe.h"
#include "parse/cmdline/vmcmd.h"

/* Why the counters are (not) there. */
enum kvm_avail {
	KVM_AVAILABLE,  /* <debugfs>/kvm is readable (maybe with no VM running) */
	KVM_NO_DEBUGFS, /* <sys>/kernel/debug is missing or empty: debugfs is not mounted */
	KVM_NO_KVM,     /* debugfs is mounted but has no kvm directory: KVM is not loaded */
	KVM_DENIED,     /* permission denied: not root, or the kernel is locked down */
};

/* One line telling the user what to do about it ("" for KVM_AVAILABLE). */
const char *kvm_avail_hint(enum kvm_avail why);

/* Where a VM's counters came from. */
enum kvm_source {
	KVM_SOURCE_NONE,    /* nowhere: unavailable says why */
	KVM_SOURCE_DEBUGFS, /* its <pid>-<fd> directory */
	KVM_SOURCE_QMP,     /* QEMU's query-stats on its QMP socket (core/kvm/kvm_qmp.h) */
	KVM_SOURCE_LIBVIRT, /* libvirt's domain statistics, for a QEMU whose monitor libvirt holds */
};
const char *kvm_source_name(enum kvm_source s); /* "debugfs", "qmp", "libvirt"; NULL for none */

/* One vCPU's counters (KVM_READ_VCPUS): the per-vCPU ones; VM-level counters are unknown. */
struct kvm_vcpu_sample {
	int index;
	maybe_i64 *values; /* [ncounters] */
	maybe_i64 *before; /* [its VM's nbefore] the read before values' (a paced VM's); NULL none */
};

struct kvm_vm_sample {
	char dir[32];      /* "<pid>-<fd>"; "<pid>-qmp" for a VM that has no debugfs directory */
	pid_t pid;
	int kvm_fd;        /* the VMM's file descriptor for this VM; -1 when not from debugfs */
	char name[256];    /* the VM's name from discovery; "" when unknown or not a VM process */
	enum vmm_kind vmm; /* its VMM from discovery (VMM_KVM: one vmhost does not know); VMM_NONE unknown */
	uint64_t start_ticks; /* the process's start time (0 unknown): pid + start identify it */
	int vcpus;         /* vcpuN subdirectories when the VM appeared; -1 when the kernel has none */
	maybe_i64 *values; /* [ncounters] */
	enum kvm_source source;
	unsigned denied;   /* its debugfs files we had no permission to read */
	char unavailable[320]; /* why counters are missing, in one line; "" when all were read */
	struct kvm_vcpu_sample *vcpu; /* [nvcpu] by index, with KVM_READ_VCPUS */
	size_t nvcpu;
	/* With KVM_READ_REASON_TIMES: the timed reason counters' times (cumulative like values),
	 * sorted by counter, those with no exit ended left out; NULL when none is timed. */
	struct kvm_reason_time *times;
	size_t ntimes;
	/* A paced VM (kvm_reader_pace: a QEMU 7.1-8.0 read at most every so often): its monitor's
	 * counters are the read at read_seconds (CLOCK_MONOTONIC), reused (held) between reads;
	 * before[nbefore] is the read before that one, at before_seconds (NULL: none yet), so that
	 * its last figures can be shown between reads. Exit reasons are always this sample's own.
	 * Not paced: read_seconds 0 (read with the sample), never held. */
	double read_seconds, before_seconds;
	bool held;
	maybe_i64 *before;
	size_t nbefore;
};

struct kvm_counter;

struct kvm_sample {
	double monotonic_seconds; /* CLOCK_MONOTONIC when read */
	size_t ncounters;
	/* [ncounters] the counters' names and kinds when read (kvm_sample_counter_name/kind). The
	 * reader only appends to its set, in place, so a sample handed to another thread (serve's HTTP
	 * side) names its counters without the reader, which may be growing; valid while it is open. */
	const struct kvm_counter *counters;
	maybe_i64 *total; /* [ncounters]: the global files (the kernel's sum over live VMs) */
	struct kvm_vm_sample *vms; /* sorted by dir */
	size_t nvms;
	unsigned vanished; /* VMs whose directory went away while being read (not in vms) */
	unsigned denied;   /* files we had no permission to read */
};

struct kvm_reader;

/* Opens <sys>/kernel/debug/kvm. On failure returns a negative errno and says why in *ret_why. */
int kvm_reader_open(const struct io_root *root, struct kvm_reader **ret, enum kvm_avail *ret_why);

/* KVM_READ_QMP: also read, through QMP query-stats, every QEMU VM whose debugfs counters are
 * missing or denied (one discovery pass and one short QMP visit per such VM and read), and list
 * the VMs that cannot be read at all with their reason. Then debugfs may be absent: the reader
 * opens anyway, *ret_why says what debugfs lacks, kvm_reader_has_debugfs() is false. */
#define KVM_READ_QMP (1u << 0)
/* KVM_READ_REASONS: also count each VM's exit reasons by tracepoints (core/kvm/kvm_trace.h), one perf
 * event per thread and reason: counters of kind KVM_STAT_REASON named "<event>/<reason>"
 * ("kvm_exit/HLT", "kvm_userspace_exit/IO", "kvm_pio/0x80 out"), added to the set once the first
 * VM's events are open; kvm_reader_reasons_why() says why there are none. */
#define KVM_READ_REASONS (1u << 1)
/* KVM_READ_REASON_TIMES: with KVM_READ_REASONS, also the time per exit reason where eBPF
 * counts them (core/kvm/kvm_time.h, kvm_vm_sample.times): kvm_exit's to the next kvm_entry
 * where the host fires both (not under PVM), kvm_userspace_exit's to the thread's next KVM_RUN;
 * kvm_reader_reasons_counter() says when it cannot be measured. */
#define KVM_READ_REASON_TIMES (1u << 3)
/* KVM_READ_VCPUS: also each vCPU's counters (debugfs vcpuN/ files, or QMP's per-vCPU stats). */
#define KVM_READ_VCPUS (1u << 2)
int kvm_reader_open_with(const struct io_root *root, unsigned flags, struct kvm_reader **ret,
			 enum kvm_avail *ret_why);
bool kvm_reader_has_debugfs(const struct kvm_reader *r);
/* Why exit reasons are not counted, in one line ("" when they are, or were not asked for). */
const char *kvm_reader_reasons_why(const struct kvm_reader *r);
/* Which of debugfs and tracefs the reader reads where the host has not mounted them, mounted for
 * this run alone (io/mountns.h): "debugfs", "tracefs", "debugfs and tracefs", or "". */
const char *kvm_reader_private_mounts(const struct kvm_reader *r);
/* Which counter counts the exit reasons, in one line: "eBPF (counted in the kernel)" or "perf
 * tracepoint filters: <why eBPF is not used>"; "" before the first VM's reasons were opened. */
const char *kvm_reader_reasons_counter(const struct kvm_reader *r);
/* Whether the exits of event ("kvm_exit", "kvm_userspace_exit") are timed (KVM_READ_REASON_TIMES
 * granted): a reason of it with no time in a sample had no exit end. */
bool kvm_reader_reasons_timed(const struct kvm_reader *r, const char *event);
/* The QMP socket of the VM process pid, where its command line has none (or another): used by
 * KVM_READ_QMP from the next read on. 0 or -ENOMEM. */
int kvm_reader_qmp_socket(struct kvm_reader *r, pid_t pid, const char *path);
/* With KVM_READ_REASONS, follows a command from before its exec (exits -- CMD; argv0 its
 * program): its exit reasons are counted by events that it and every thread and child it creates
 * inherit, and every read from then on lists it as a VM once it counted any (vmm from argv0,
 * else "kvm"), also after it exited: a VM that came and went between two reads is counted.
 * 0, or a negative errno (kvm_reader_reasons_why() then says why). */
int kvm_reader_follow(struct kvm_reader *r, pid_t pid, const char *argv0);
/* The libvirt connection that KVM_READ_QMP reads libvirt's QEMUs through (their monitor is
 * libvirt's): uri NULL is qemu:///system, read-only; each read asks it once, within deadline_ms
 * (libvirt blocks: a hung libvirtd costs that and a reason, never a hang). 0 or -ENOMEM. */
int kvm_reader_libvirt(struct kvm_reader *r, const char *uri, int deadline_ms);
/* When the latest read could not ask libvirt about a QEMU whose monitor it holds (no connection,
 * no answer, the call failed), the one line that says so, as exits' notes name an unread VM:
 * "VM NAME: libvirt URI: cannot connect: ..." (NAME: "pid N" without one; "VM NAME and N more" for
 * several) into buf; "" when libvirt answered, was not needed, or not asked (--proc-root). Returns buf. */
const char *kvm_reader_libvirt_why(const struct kvm_reader *r, char *buf, size_t cap);
/* Long-running readers: a QEMU 7.1-8.0's vCPU statistics (each read interrupts every vCPU,
 * core/kvm/kvm_pace.h) at most every seconds, its last read reused in between; 0: every read. */
void kvm_reader_pace(struct kvm_reader *r, double seconds);
/* Readers that watch some VMs (exits --pid, --vm): only the VMs selects says yes to are visited
 * through their monitors (the others are left out of the sample, as the delta would leave them);
 * NULL: every VM. data is selects'. */
void kvm_reader_select(struct kvm_reader *r, bool (*selects)(const struct kvm_vm_sample *vm, void *data), void *data);
/* The one line on that pace ("QEMU 7.2 interrupts every vCPU for query-stats: read every 10 s")
 * when the latest read paced a VM, else "". */
const char *kvm_reader_pace_why(const struct kvm_reader *r);
/* One read to see whether any VM that keep keeps (NULL: every VM) can be read (without debugfs,
 * through QMP or libvirt): 0, or -ENOENT with why the first of them could not be in why
 * (": VM NAME: reason"; "" when there is none). */
int kvm_reader_probe(struct kvm_reader *r, bool (*keep)(const struct kvm_vm_sample *vm, void *data), void *data,
		     char *why, size_t cap);
void kvm_reader_close(struct kvm_reader *r);

size_t kvm_reader_ncounters(const struct kvm_reader *r);
const char *kvm_counter_name(const struct kvm_reader *r, size_t i);
enum kvm_stat_kind kvm_counter_kind(const struct kvm_reader *r, size_t i);
/* Index of a counter by name, or -1. */
int kvm_counter_index(const struct kvm_reader *r, const char *name);

/* One read of everything: lists the kvm directory (VMs that appeared are opened and named
 * with one discovery pass; VMs that went away are closed), then re-reads every open file.
 * Returns 0 or a negative errno when the kvm directory itself is gone or unreadable. */
int kvm_reader_sample(struct kvm_reader *r, struct kvm_sample *ret);
/* The same, with the VMs a caller discovered just before (a sample's snapshot) standing in for
 * KVM_READ_QMP's own discovery pass; NULL: discover. */
struct vm_list;
int kvm_reader_sample_vms(struct kvm_reader *r, const struct vm_list *vms, struct kvm_sample *ret);
void kvm_sample_free(struct kvm_sample *s);

/* The name and kind of a sample's counter i (< s->ncounters), as kvm_counter_name/kind. */
const char *kvm_sample_counter_name(const struct kvm_sample *s, size_t i);
enum kvm_stat_kind kvm_sample_counter_kind(const struct kvm_sample *s, size_t i);
bool kvm_sample_reasons_counted(const struct kvm_sample *s); /* reason counters are among its own */

/* The VM with that directory in a sample, or NULL. */
const struct kvm_vm_sample *kvm_sample_find(const struct kvm_sample *s, const char *dir);

/* A counter's change between two reads. */
struct kvm_change {
	maybe_i64 total;   /* the value at the second read */
	maybe_i64 delta;   /* after - before; unknown after a reset or when a read is missing */
	double per_second; /* delta / seconds (ns per second for times); NaN when unknown or a gauge */
	bool reset;        /* a cumulative counter went down: cleared, or KVM reloaded */
};

/* appeared: the VM was created between the reads, so its counters started at zero then. */
struct kvm_change kvm_change(enum kvm_stat_kind kind, maybe_i64 before, maybe_i64 after, double seconds,
			     bool appeared);

/* Adds one VM's change into a sum (delta unknown as soon as one part's is, the rates summed, NaN as
 * soon as one is; reset is sticky). */
void kvm_change_add(struct kvm_change *sum, const struct kvm_change *part);
/* The neutral element for kvm_change_add. */
struct kvm_change kvm_change_zero(void);

#endif
