/* Time-series charts as inline SVG for the HTML report: lines and stacked areas over a real
 * date/time axis, no JavaScript. (A small writer of its own: issue 4's out/svg.h was not on main
 * when this was written.) */
#ifndef VMHOST_OUT_HTML_CHART_H
#define VMHOST_OUT_HTML_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum chart_unit { CHART_BYTES, CHART_PERCENT, CHART_PLAIN };

struct chart_series {
	const char *label;
	const char *color;   /* CSS color */
	const double *y;     /* n values; NaN = no value (a gap) */
	bool area;           /* filled, stacked on the areas before it */
	bool dashed;         /* a dashed line (reference values, fits) */
};

struct chart {
	const char *title;
	const char *note;    /* small text under the title, or NULL */
	enum chart_unit unit;
	const double *t;     /* n times, Unix seconds, ascending */
	size_t n;
	const struct chart_series *series;
	size_t nseries;
	double t_min, t_max; /* the x range (NaN: from t) */
	int height;          /* pixels in the viewBox (width is 960) */
};

/* Writes one <figure> with an <svg> chart. */
void chart_write_svg(FILE *f, const struct chart *c);

/* ---- axis helpers (pure, tested) ---- */

/* Tick step in seconds for a time range of span seconds, at most max_ticks ticks: 1, 2, 5, 10,
 * 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, 1, 2, 7, 14, 30, 91, 182, 365 days. */
double chart_time_step(double span, int max_ticks);
/* First tick at or after t for a step, aligned in local time (gmtoff: seconds east of UTC). */
double chart_time_first_tick(double t, double step, long gmtoff);
/* Label of a tick: "14:05:30" (step < 1 min), "14:05" (< 1 day), "Mar 07" (days). */
void chart_time_label(double t, double step, char *buf, size_t cap);

/* A "nice" step (1, 2, 2.5 or 5 x 10^k) for about max_ticks ticks from 0 to max. */
double chart_nice_step(double max, int max_ticks);
/* Value label in the chart's unit: "1.5 GiB", "12%", "300". */
void chart_value_label(double v, enum chart_unit unit, double step, char *buf, size_t cap);

#endif
