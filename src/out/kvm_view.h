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

/* A reason's time ("seconds", "count", "histogram": [{"from_ns", "to_ns", "count"}] of the
 * buckets that hold any) into the caller's open JSON object. */
void kvm_view_json_time(struct json *j, const struct kvm_exit_time *t);

/* VMs that went away, directories that vanished, denied files, no VM at all; each line ends in eol. */
void kvm_view_notes(FILE *f, const struct kvm_delta *d, const char *eol);

/* -- CMD's run, shown with the reading over it: its command line, exit status and wall time. */
struct kvm_command_run {
	char *const *argv;
	int status;
	double wall_seconds;
};

/* The whole --once reading: heading, table, notes, legend; cmd's line first (NULL: none). */
void kvm_view_once(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, bool show_all,
		   const struct kvm_command_run *cmd);
/* The --once reading as one JSON document, with cmd's "command", "exit_status" and "wall_seconds"
 * (NULL: none). */
void kvm_view_once_json(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d,
			const struct kvm_command_run *cmd);

/* One frame of the live view, drawn over the last one when full_screen. */
struct kvm_frame {
	double now_unix; /* the header's time */
	double interval_seconds;
	size_t cols, rows; /* the terminal's; 0 = no limit */
	bool full_screen;  /* home the cursor, clear to the end of each line and of the screen */
	bool keys;         /* keys are read: say which */
	bool show_all;     /* keep counters that are zero */
};
void kvm_view_frame(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const struct kvm_frame *fr);


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
/* --log --json: a reading a line, with its "time_unix". */
void kvm_log_json(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, double now_unix);
/* One line: the total deltas (percent of the interval for times); CSV leaves unknown cells empty. */
void kvm_log_line(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const struct kvm_log_cols *c,
		  bool csv, double now_unix);

#endif
