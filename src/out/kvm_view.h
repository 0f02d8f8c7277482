/* How a KVM counter change (core/kvm_delta) is shown: `vmhost exits`' JSON document, its human
 * table (one row per counter, busiest first, a rate column per VM that fits), the notes around
 * it, and the --log lines.
 *
 * Rates: events per second; *_ns times as percent of the interval (of one CPU); gauges as their
 * value; a reset as "reset", never a negative number. */
#ifndef VMHOST_OUT_KVM_VIEW_H
#define VMHOST_OUT_KVM_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/kvm/kvm_delta.h"
#include "out/json.h"

/* The fields of one reading inside the caller's open JSON object. */
void kvm_view_json(struct json *j, const struct kvm_reader *kr, const struct kvm_delta *d);

/* A reason's time ("seconds", "count", "histogram": [{"from_ns", "to_ns", "count"}] of the
 * buckets that hold any) into the caller's open JSON object. */
void kvm_view_json_time(struct json *j, const struct kvm_exit_time *t);

/* The table; max_width and max_rows 0 = no limit (with max_rows, lines end in a clear-to-eol for a
 * full-screen view). show_all keeps counters that are zero. Returns the lines printed; VMs without
 * a column in *ret_hidden_vms. */
int kvm_view_table(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, bool show_all, size_t max_width,
		   size_t max_rows, size_t *ret_hidden_vms);

/* "db1, web (new), pid 4242": the VMs of the reading. */
void kvm_view_vm_list(char *buf, size_t cap, const struct kvm_delta *d);

/* VMs that went away, directories that vanished, denied files, no VM at all; each line ends in eol. */
void kvm_view_notes(FILE *f, const struct kvm_delta *d, const char *eol);

/* With per-vCPU reads: a line per VM of each vCPU's exits per second (when exits is selected). */
void kvm_view_vcpus(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const char *eol);

/* A line per VM that polled halted vCPUs: polling as percent of one host CPU, caught vs gave up,
 * halted asleep, polls per second (when halt_poll_*_ns are selected and known). */
void kvm_view_halt(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const char *eol);

/* With reasons counted per vCPU (eBPF, --vcpu): a line per VM of each vCPU's busiest reason. */
void kvm_view_vcpu_reasons(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const char *eol);

/* The whole --once reading: heading, table, notes, legend. */
void kvm_view_once(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, bool show_all);

/* One frame of the live view, drawn over the last one when full_screen. */
struct kvm_frame {
	double interval_seconds;
	size_t cols, rows; /* the terminal's; 0 = no limit */
	bool full_screen;  /* home the cursor, clear to the end of each line and of the screen */
	bool keys;         /* keys are read: say which */
	bool show_all;     /* keep counters that are zero */
};
void kvm_view_frame(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const struct kvm_frame *fr);

/* -- CMD: the command line, its exit status and wall time, in the caller's open JSON object. */
void kvm_view_command_json(struct json *j, char *const *argv, int status, double wall_seconds);

/* The VM's name, or "pid N"; long names are cut to cap. */
void kvm_vm_label(char *buf, size_t cap, const struct kvm_vm_sample *vm);

/* --log: the columns (every selected counter, or the default set that explains a slow guest). */
struct kvm_log_cols {
	size_t *sel_pos; /* positions in d->sel */
	size_t n;
};
int kvm_log_columns(const struct kvm_reader *kr, const struct kvm_delta *d, bool every_selected,
		    struct kvm_log_cols *ret);
void kvm_log_header(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const struct kvm_log_cols *c,
		    bool csv);
/* One line: the total deltas (percent of the interval for times); CSV leaves unknown cells empty. */
void kvm_log_line(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const struct kvm_log_cols *c,
		  bool csv, double now_unix);

#endif
