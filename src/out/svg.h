/* A small SVG writer for charts: a document, plots with linear or log axes, line/point series
 * with a legend, and text. Every string is escaped. Used by bench alloc, ksm sweep and report.
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

/* Formats a tick value for a label (e.g. fmt_bytes on a byte axis). */
typedef void (*svg_tick_fmt)(char *buf, size_t cap, double v);

struct svg_axis {
	double min, max;     /* data range; for log axes both > 0 (widened to whole ticks) */
	bool log;            /* log10 scale */
	const char *label;   /* axis title, may be NULL */
	svg_tick_fmt fmt;    /* NULL: "%g" */
	const double *ticks; /* explicit tick values, or NULL for automatic ones */
	size_t nticks;
};

struct svg_plot_spec {
	double left, top, width, height; /* plot area inside the document; 0 = fill it with margins */
	struct svg_axis x, y;
	const char *title;               /* may be NULL */
	bool legend_right;               /* legend beside the plot (auto layout keeps room), not inside */
};

enum svg_style { SVG_LINES = 1, SVG_POINTS = 2 };

#define SVG_MAX_SERIES 24

struct svg_plot {
	struct svg *svg;
	struct svg_plot_spec spec;
	size_t nseries;
	char names[SVG_MAX_SERIES][64];
	int styles[SVG_MAX_SERIES];
};

/* Writes the XML header and the root element; returns NULL on allocation failure. */
struct svg *svg_begin(FILE *f, double width, double height);
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
/* One series in the next palette color; points with non-finite or off-scale values are skipped
 * (a line breaks there). */
void svg_plot_series(struct svg_plot *p, const char *name, const double *xs, const double *ys, size_t n,
		     int style);
/* Draws the legend (top-left inside the plot, or right of it with legend_right). */
void svg_plot_end(struct svg_plot *p);

/* The palette color of series i ("#1f77b4", ...). */
const char *svg_color(size_t i);

#endif
