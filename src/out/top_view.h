/* How `vmhost top` shows its view (core/sample/top.h): the full-screen frame (columns that fit the
 * terminal, more as it widens), and the --batch frames for scripts (tab-separated, or one JSON
 * document a line). */
#ifndef VMHOST_OUT_TOP_VIEW_H
#define VMHOST_OUT_TOP_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/sample/top.h"

/* The columns that fit width (0: all), in the order they are shown; returns how many. */
size_t top_view_columns(size_t width, enum top_col *ret);

struct top_frame {
	double now_unix;     /* the header's time */
	double interval_seconds;
	size_t cols, rows;   /* the terminal's; 0 = no limit */
	bool full_screen;    /* home the cursor, clear each line's end and the screen's */
	bool colour;         /* bold heading, the sort column reversed (NO_COLOR: none) */
	bool keys;           /* keys are read: say which */
	enum top_col sort;
	bool reverse;
	const char *filter;  /* "" none */
	bool editing;        /* the filter is being typed */
	const char *exits_why; /* why exits/s is n/a everywhere ("" when read) */
	const char *exits_note; /* how some VMs' exits/s are read (a paced QEMU); "" or NULL none */
};

/* One frame of the rows order[0..n). */
void top_view_frame(FILE *f, const struct top_view *v, const size_t *order, size_t n, const struct top_frame *fr);

/* One --batch frame: "# vmhost top" and "# host" lines, a heading of column keys, a line per row
 * ("vm" or "helper", pid, its VM's pid, name, then every column; bytes in bytes, "n/a" unknown),
 * a blank line. Fields are separated by one tab. */
void top_view_batch(FILE *f, const struct top_view *v, const size_t *order, size_t n, double now_unix,
		    double interval_seconds);
/* The same frame as one JSON document on one line. */
void top_view_batch_json(FILE *f, const struct top_view *v, const size_t *order, size_t n, double now_unix,
			 double interval_seconds);

#endif
