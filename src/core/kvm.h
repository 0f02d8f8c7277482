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

#include "io/io.h"
#include "parse/kvm_debugfs.h"
#include "parse/parse.h"

/* Why the counters are (not) there. */
enum kvm_avail {
	KVM_AVAILABLE,  /* <debugfs>/kvm is readable (maybe with no VM running) */
	KVM_NO_DEBUGFS, /* <sys>/kernel/debug is missing or empty: debugfs is not mounted */
	KVM_NO_KVM,     /* debugfs is mounted but has no kvm directory: KVM is not loaded */
	KVM_DENIED,     /* permission denied: not root, or the kernel is locked down */
};

/* One line telling the user what to do about it ("" for KVM_AVAILABLE). */
const char *kvm_avail_hint(enum kvm_avail why);

struct kvm_vm_sample {
	char dir[32];      /* "<pid>-<fd>" */
	pid_t pid;
	int kvm_fd;        /* the VMM's file descriptor for this VM */
	char name[256];    /* the VM's name from discovery; "" when unknown or not a VM process */
	uint64_t start_ticks; /* the process's start time (0 unknown): pid + start identify it */
	int vcpus;         /* vcpuN subdirectories when the VM appeared; -1 when the kernel has none */
	maybe_i64 *values; /* [ncounters] */
};

struct kvm_sample {
	double monotonic_seconds; /* CLOCK_MONOTONIC when read */
	size_t ncounters;
	maybe_i64 *total; /* [ncounters]: the global files (the kernel's sum over live VMs) */
	struct kvm_vm_sample *vms; /* sorted by dir */
	size_t nvms;
	unsigned vanished; /* VMs whose directory went away while being read (not in vms) */
	unsigned denied;   /* files we had no permission to read */
};

struct kvm_reader;

/* Opens <sys>/kernel/debug/kvm. On failure returns a negative errno and says why in *ret_why. */
int kvm_reader_open(const struct io_root *root, struct kvm_reader **ret, enum kvm_avail *ret_why);
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
void kvm_sample_free(struct kvm_sample *s);

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

/* Adds one VM's change into a sum (delta unknown as soon as one part is; reset is sticky). */
void kvm_change_add(struct kvm_change *sum, const struct kvm_change *part, double seconds);
/* The neutral element for kvm_change_add. */
struct kvm_change kvm_change_zero(void);

#endif
