/* The SVG writer for every chart: a document (standalone or inline in HTML), plots with linear,
 * log or date/time axes, line/point/stacked-area series with gaps, point labels, a legend, and
 * text. Every string is escaped. Used by bench alloc, ksm sweep, bench ksm and report.
 *
 *   struct svg *s = svg_begin(f, 800, 500);
 *   struct svg_plot p;
 *   svg_plot_begin(s, &p, &(struct svg_plot_spec){
 *       .x = {.min = 1, .max = 1000, .log = true, .label = "size"},
 *       .y = {.min = 0, .max = 10, .label = "seconds"}, .title = "..."});
 *   svg_plot_series(&p, "name", xs, ys, n, SVG_LINES | SVG_POINTS);
 *   svg_plot_end(&p);   // draws the legend
 *   svg_end(s);         // closes the document; returns 0 or -EIO
 */
#ifndef VMHOST_OUT_SVG_H
#define VMHOST_OUT_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct svg {
	FILE *f;
	double width, height;
};

/* Formats a tick value for a label (e.g. fmt_bytes on a byte axis); step is the distance to the
 * next tick on a linear axis (0 on log and explicit-tick axes). */
typedef void (*svg_tick_fmt)(char *buf, size_t cap, double v, double step);

/* What a value axis counts: steps and default labels follow it (bytes: 1-2-2.5-5 x 1024^k). */
enum svg_unit { SVG_PLAIN, SVG_BYTES, SVG_PERCENT };

struct svg_axis {
	double min, max;     /* data range; for log axes both > 0 (widened to whole ticks) */
	bool log;            /* log10 scale */
	bool time;           /* Unix seconds: date/time ticks in local time; the range is kept as is */
	enum svg_unit unit;  /* linear axes */
	const char *label;   /* axis title, may be NULL */
	svg_tick_fmt fmt;    /* NULL: svg_value_label in the unit ("%g" on log axes) */
	const double *ticks; /* explicit tick values, or NULL for automatic ones */
	size_t nticks;
};

enum svg_legend { SVG_LEGEND_INSIDE, SVG_LEGEND_RIGHT, SVG_LEGEND_NONE };

struct svg_plot_spec {
	double left, top, width, height; /* plot area inside the document; 0 = fill it with margins */
	struct svg_axis x, y;
	const char *title;               /* may be NULL */
	enum svg_legend legend;          /* top-left inside the plot (default), right of it, or none */
	bool whole_px;                   /* series at whole pixels: a third smaller, for many small charts */
};

enum svg_style {
	SVG_LINES = 1,
	SVG_POINTS = 2,
	SVG_AREA = 4,   /* a filled band stacked on the areas added before it (same x values), and its top line */
	SVG_DASHED = 8, /* the line dashed (reference values, fits) */
};

struct svg_series {
	const char *name;
	const double *x, *y;
	size_t n;
	int style;                 /* enum svg_style bits */
	const char *color;         /* CSS color, or NULL for the series' palette color */
	const char *const *labels; /* text beside each point, or NULL */
	double gap;                /* lines and areas break where x advances by more than this; 0: never */
};

#define SVG_MAX_SERIES 24

struct svg_plot {
	struct svg *svg;
	struct svg_plot_spec spec;
	size_t nseries;
	char names[SVG_MAX_SERIES][64];
	const char *colors[SVG_MAX_SERIES];
	int styles[SVG_MAX_SERIES];
	double *stack;  /* running top of the stacked areas, one per x */
	size_t nstack;
};

/* Writes the XML header and the root element; returns NULL on allocation failure. */
struct svg *svg_begin(FILE *f, double width, double height);
/* The root element only, for an <svg> inside an HTML page (scales to the page's CSS width). */
struct svg *svg_begin_inline(FILE *f, double width, double height);
/* Closes the document and frees s; 0 or -EIO when the stream had an error. */
int svg_end(struct svg *s);

/* Text at (x, y); anchor is "start", "middle" or "end"; size in px. */
void svg_text(struct svg *s, double x, double y, const char *anchor, double size, const char *text);
/* Writes text with XML special characters escaped. */
void svg_escape(FILE *f, const char *text);

/* Draws the frame, grid, ticks, tick labels, axis labels and title. */
void svg_plot_begin(struct svg *s, struct svg_plot *p, const struct svg_plot_spec *spec);
/* Maps a data value to document coordinates (NaN for values a log axis cannot show). */
double svg_plot_x(const struct svg_plot *p, double v);
double svg_plot_y(const struct svg_plot *p, double v);
/* One series; points with non-finite or off-scale values are skipped (a line breaks there).
 * 0, or -ENOMEM when an area cannot be stacked (it is then drawn unstacked). */
int svg_plot_add(struct svg_plot *p, const struct svg_series *series);
/* Shorthand for svg_plot_add in the next palette color. */
void svg_plot_series(struct svg_plot *p, const char *name, const double *xs, const double *ys, size_t n,
		     int style);
/* A vertical dotted line at x across the plot with a short label at its top (an event: a guest
 * starting or stopping); nothing when x is outside the axis. */
void svg_plot_mark(struct svg_plot *p, double x, const char *label);
/* Draws the legend (unless SVG_LEGEND_NONE) and frees the plot's stack. */
void svg_plot_end(struct svg_plot *p);

/* A sparkline for a table cell: an inline <svg> of width x height px, the n values as one line
 * (means of about one value per 2 px; broken where there is none) from 0 to their largest, in color. */
void svg_sparkline(FILE *f, const double *y, size_t n, int width, int height, const char *color);

/* ---- pure helpers (tested) ---- */

/* The largest value the series reach, areas stacked as svg_plot_add stacks them (0 if none). */
double svg_stacked_max(const struct svg_series *series, size_t nseries);
/* A gap for svg_series.gap: 3.5 typical (median) steps of ascending xs; 0 (never) below 3 values. */
double svg_gap_for(const double *xs, size_t n);

/* Tick step in seconds for a time range of span seconds, at most max_ticks ticks: 1, 2, 5, 10,
 * 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, 1, 2, 7, 14, 30, 91, 182, 365 days. */
double svg_time_step(double span, int max_ticks);
/* First tick at or after t for a step, aligned in local time (gmtoff: seconds east of UTC). */
double svg_time_first_tick(double t, double step, long gmtoff);
/* Label of a tick: "14:05:30" (step < 1 min), "14:05" (< 1 day), "Mar 07" (days), "2026". */
void svg_time_label(double t, double step, char *buf, size_t cap);

/* A "nice" step (1, 2, 2.5 or 5 x 10^k) for about max_ticks ticks over span. */
double svg_nice_step(double span, int max_ticks);
/* Value label in a unit with the decimals the step needs: "1.5 GiB", "12%", "300". */
void svg_value_label(double v, enum svg_unit unit, double step, char *buf, size_t cap);

#endif
