/* The full screen of a live view (vmhost top, vmhost exits): each frame drawn over the last on a
 * terminal (the cursor homed, each line's end and then the screen's rest cleared) or printed one
 * after another elsewhere; the header line both start with ("vmhost top  12:00:00  every 2s  3
 * VMs"); and the columns that fit the terminal's width. The time comes from the caller: out/
 * reads no clock. */
#ifndef VMHOST_OUT_SCREEN_H
#define VMHOST_OUT_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct screen {
	FILE *f;
	size_t cols, rows; /* the terminal's; 0 = no limit */
	bool full_screen;  /* draw over the last frame */
};

/* A frame's start: the cursor homed on a full screen. */
void screen_begin(const struct screen *s);
/* What ends a line before its '\n': "\033[K" (clear to its end) on a full screen, else "". */
const char *screen_eol(const struct screen *s);
/* The end of a line: screen_eol and '\n'. */
void screen_newline(const struct screen *s);
/* One line of text, made safe for a terminal (out/text.h) and cut to its width less one column. */
void screen_line(const struct screen *s, const char *text);
/* The header line: "vmhost VIEW  HH:MM:SS  every Ns  N VM[s]" (now_unix in local time), then what
 * more_fmt makes, as one screen_line. */
void screen_title(const struct screen *s, const char *view, double now_unix, double interval_seconds, size_t nvms,
		  const char *more_fmt, ...) __attribute__((format(printf, 6, 7)));
/* A frame's end: the rest of the screen cleared, or a blank line between frames; flushed. */
void screen_end(const struct screen *s);

/* How many of the n columns fit in width (0: all of them) after used columns, each taking
 * widths[i] (its separator included), in order; the terminal's last column is never written into
 * (a terminal may wrap the line there). */
size_t screen_fit(size_t width, size_t used, const size_t *widths, size_t n);

#endif
