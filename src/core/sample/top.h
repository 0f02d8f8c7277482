/* The model of `vmhost top`: a reading of the host (survey's cheap counters, each helper's own
 * RSS and CPU, ksmd's CPU time, KVM exits where readable), and the view two readings give: one
 * row per VM and per helper with its rates, sorted by any column, filtered by name, each VM's
 * helpers right under it.
 *
 *   struct top_source *src;  top_source_open(root, &src);
 *   struct top_reading a, b;  top_reading_take(src, NULL, false, &a); ... top_reading_take(src, &a, false, &b);
 *   struct top_view v;  top_view_build(&a, &b, &v);      a NULL: no rates yet
 *   size_t order[v.nrows], n = top_view_order(&v, TOP_CPU, false, "web", order);
 *   top_view_free(&v); top_reading_free(&a); ...; top_source_close(src);
 *
 * VMs and helpers are the same process in two readings only when both pid and start time match:
 * a VM that vanished is gone from the view, one that appeared (or reuses a pid) has no rates
 * yet, never the figures of the process it replaced. */
#ifndef VMHOST_CORE_TOP_H
#define VMHOST_CORE_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/model/host.h"
#include "core/model/survey.h"
#include "core/model/vm.h"
#include "io/io.h"

/* The columns, in the order they are given room as the terminal widens. */
enum top_col {
	TOP_NAME, TOP_CPU, TOP_DELAY, TOP_RSS, TOP_PSS, TOP_KSM_SAVED, TOP_OVERHEAD, TOP_EXITS, TOP_CG_MEM,
	TOP_MEM_PSI, TOP_PID, TOP_CPU_PSI, TOP_IO_PSI, TOP_COST, TOP_KSMD, TOP_DISK_READ, TOP_DISK_WRITE, TOP_NET_RX,
	TOP_NET_TX, TOP_POLL, TOP_STALL, TOP_NCOLS
};

/* The column's short name (--sort, the batch format's heading): "name", "cpu", "pss", ... */
const char *top_col_key(enum top_col c);

/* One helper process of a VM in a reading. */
struct top_helper {
	size_t vm;             /* index of its VM in the reading's vms */
	pid_t pid;
	uint64_t start_ticks;
	char comm[64];
	maybe_i64 rss_bytes;
	double cpu_seconds;    /* NaN unknown */
};

/* A VM's exit rate and halt polling in a reading (from the KVM delta since the reading before). */
struct top_exits {
	pid_t pid;
	uint64_t start_ticks;
	double per_second;
	double poll_percent; /* host CPU spent polling its halted vCPUs, percent of one CPU; NaN unknown */
};

struct top_reading {
	double monotonic_seconds;
	struct host host;
	struct vm_list vms;
	struct top_helper *helpers;
	size_t nhelpers;
	maybe_i64 ksmd_cpu_ns;
	struct top_exits *exits;
	size_t nexits;
	bool exits_readable; /* some VM's KVM counters were read */
	bool exact;          /* PSS and overhead from the exact sources */
};

struct top_source;

/* Finds ksmd and opens the KVM counters (debugfs, else QMP) once. 0 or -ENOMEM: exits are
 * simply unknown where KVM's counters cannot be read. */
int top_source_open(const struct io_root *root, struct top_source **ret);
void top_source_close(struct top_source *s);
/* Why exits/s is n/a for every VM ("" when some VM's counters are read). */
const char *top_source_exits_why(const struct top_source *s);
/* A QEMU 7.1-8.0's vCPU statistics at most every seconds (core/kvm/kvm_pace.h; 0: every refresh),
 * and the one line that says so when a VM is paced ("" otherwise). */
void top_source_pace(struct top_source *s, double seconds);
/* The libvirt to read libvirt's QEMUs through (NULL: qemu:///system). */
void top_source_libvirt(struct top_source *s, const char *uri);

/* Every VM the live view does not show is read afresh at least every TOP_SLICES readings. */
#define TOP_SLICES 10
/* The VMs the live view shows now (their pids). From the next reading on, a reading reads afresh
 * only them, the processes new to it, the VMs new at the reading before (for their first rates),
 * and a slice of the rest (pid % TOP_SLICES: each every TOP_SLICES readings); every other VM is carried over as the reading before had it (its figures
 * and the rates of its last read), every other process taken as it was, while /proc lists its pid
 * (survey.h: due). --batch, which prints every VM, never calls it: then, and for the exact sources
 * (the e key), every reading reads everything. 0 or -ENOMEM (then it reads everything). */
int top_source_visible(struct top_source *s, const pid_t *pids, size_t n);
const char *top_source_exits_note(const struct top_source *s);
/* When the last reading could not ask libvirt about the VMs whose monitor it holds, the one line
 * that says so (core/kvm/kvm.h kvm_reader_libvirt_why); "" otherwise. */
const char *top_source_libvirt_why(const struct top_source *s);

/* One reading: survey's cheap counters (exact: smaps_rollup and pagemap too), the helpers' own
 * figures, ksmd's CPU time and the exits since the last reading; before (NULL: none) is the
 * reading before, for what need not be read again. 0, or a negative errno with what failed in
 * *ret_step (nothing to free then). */
int top_reading_take(struct top_source *s, const struct top_reading *before, bool exact, struct top_reading *ret,
		     enum survey_step *ret_step);
void top_reading_free(struct top_reading *r);

struct top_row {
	bool helper;
	size_t vm;               /* a helper's VM row */
	pid_t pid;
	char name[256];          /* the VM's name ("pid N" without one), a helper's comm */
	double v[TOP_NCOLS];     /* NaN unknown; TOP_NAME unused */
	enum measure_method pss_method;
};

struct top_view {
	struct top_row *rows;    /* every VM, then every helper */
	size_t nrows, nvms;
	double seconds;          /* between the readings; 0 for the first */
	double mem_total_bytes, mem_available_bytes, ksm_saved_bytes, ksmd_cpu_percent; /* NaN unknown */
	maybe_i64 ksm_run;
	bool exact, exits_readable;
	unsigned skipped;
};

/* The view of after, with rates over the time since before (NULL: none). 0 or -ENOMEM. */
int top_view_build(const struct top_reading *before, struct top_reading *after, struct top_view *ret);
void top_view_free(struct top_view *v);

/* The rows to show, in order, into order[] (room for nrows): VMs sorted by col (numbers largest
 * first, names A-Z; reverse flips; unknown last either way; ties by name, then pid), each
 * followed by its helpers sorted the same way. filter (NULL or "": all) keeps the VMs whose
 * name, or one of whose helpers' names, contains it (case-insensitive). Returns the count. */
size_t top_view_order(const struct top_view *v, enum top_col col, bool reverse, const char *filter, size_t *order);

/* For tests: the column names --sort takes. */

/* Its column by short name; 0 or -EINVAL. */
int top_col_parse(const char *key, enum top_col *ret);

#endif
