#include "out/svg.h"
#include "core/base/stats.h"
#include "core/sample/series.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TICKS 40
#define TIME_TICKS 8      /* at most this many date/time ticks */
#define AREA_OPACITY 0.55 /* stacked bands stay see-through so the grid shows */

static const char *const palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
	"#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#000000", "#393b79",
};

/* The palette color of series i ("#1f77b4", ...). */
static const char *svg_color(size_t i) { return palette[i % (sizeof(palette) / sizeof(palette[0]))]; }

void svg_escape(FILE *f, const char *text)
{
	for (const char *c = text ? text : ""; *c; c++) {
		switch (*c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			if ((unsigned char)*c >= 0x20 || *c == '\t' || *c == '\n')
				fputc(*c, f);
		}
	}
}

static struct svg *begin(FILE *f, double width, double height, bool standalone)
{
	struct svg *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	*s = (struct svg){.f = f, .width = width, .height = height};
	if (standalone)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"font-family=\"sans-serif\"%s>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
		width, height, width, height, standalone ? "" : " role=\"img\"");
	return s;
}

struct svg *svg_begin(FILE *f, double width, double height) { return begin(f, width, height, true); }

struct svg *svg_begin_inline(FILE *f, double width, double height) { return begin(f, width, height, false); }

int svg_end(struct svg *s)
{
	if (!s)
		return 0;
	fputs("</svg>\n", s->f);
	int r = fflush(s->f) != 0 || ferror(s->f) ? -EIO : 0;
	free(s);
	return r;
}

void svg_text(struct svg *s, double x, double y, const char *anchor, double size, const char *text)
{
	fprintf(s->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.0f\">", x, y,
		anchor ? anchor : "start", size);
	svg_escape(s->f, text);
	fputs("</text>\n", s->f);
}

/* ---- pure helpers ---- */

double svg_time_step(double span, int max_ticks)
{
	static const double steps[] = {
		1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
		86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 91 * 86400, 182 * 86400, 365 * 86400,
	};
	size_t n = sizeof(steps) / sizeof(steps[0]);
	if (max_ticks < 1)
		max_ticks = 1;
	for (size_t i = 0; i < n; i++)
		if (span / steps[i] <= max_ticks)
			return steps[i];
	return ceil(span / max_ticks / (365 * 86400.0)) * 365 * 86400.0;
}

double svg_time_first_tick(double t, double step, long gmtoff)
{
	return ceil((t + (double)gmtoff) / step) * step - (double)gmtoff;
}

void svg_time_label(double t, double step, char *buf, size_t cap)
{
	time_t tt = (time_t)llround(t);
	struct tm tm;
	localtime_r(&tt, &tm);
	const char *fmt = step < 60 ? "%H:%M:%S" : step < 86400 ? "%H:%M" : step < 365 * 86400.0 ? "%b %d" : "%Y";
	if (!strftime(buf, cap, fmt, &tm) && cap)
		buf[0] = 0;
}

double svg_nice_step(double span, int max_ticks)
{
	if (!(span > 0) || !isfinite(span))
		return 1;
	double raw = span / (max_ticks < 1 ? 1 : max_ticks);
	double mag = pow(10, floor(log10(raw)));
	static const double nice[] = {1, 2, 2.5, 5, 10};
	for (size_t i = 0; i < sizeof(nice) / sizeof(nice[0]); i++)
		if (nice[i] * mag >= raw)
			return nice[i] * mag;
	return 10 * mag;
}

static const char *const byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

/* The binary unit (power of 1024) that keeps v between 1 and 1024. */
static int byte_unit_for(double v)
{
	int u = 0;
	while (u < 5 && v >= 1024.0) {
		v /= 1024.0;
		u++;
	}
	return u;
}

static int decimals_for(double step)
{
	int d = 0;
	while (d < 3 && fabs(step * pow(10, d) - llround(step * pow(10, d))) > 1e-6)
		d++;
	return d;
}

void svg_value_label(double v, enum svg_unit unit, double step, char *buf, size_t cap)
{
	if (unit == SVG_BYTES) {
		int u = byte_unit_for(step * 4 > 0 ? step * 4 : 1);
		double scale = pow(1024.0, u);
		snprintf(buf, cap, "%.*f %s", decimals_for(step / scale), v / scale, byte_units[u]);
	} else if (unit == SVG_PERCENT) {
		snprintf(buf, cap, "%.*f%%", decimals_for(step), v);
	} else {
		snprintf(buf, cap, "%.*f", decimals_for(step), v);
	}
}

/* A step on a linear axis: 1-2-2.5-5 in the unit the span calls for. */
static double value_step(double span, enum svg_unit unit)
{
	if (unit != SVG_BYTES)
		return svg_nice_step(span, 5);
	double scale = pow(1024.0, byte_unit_for(span));
	return svg_nice_step(span / scale, 5) * scale;
}

double svg_stacked_max(const struct svg_series *series, size_t nseries)
{
	size_t n = 0;
	for (size_t s = 0; s < nseries; s++)
		n = series[s].n > n ? series[s].n : n;
	double max = 0;
	for (size_t i = 0; i < n; i++) {
		double base = 0;
		for (size_t s = 0; s < nseries; s++) {
			if (i >= series[s].n || !isfinite(series[s].y[i]))
				continue;
			double y = series[s].y[i];
			if (series[s].style & SVG_AREA) {
				base += y > 0 ? y : 0;
				y = base;
			}
			max = y > max ? y : max;
		}
	}
	return max;
}

double svg_gap_for(const double *xs, size_t n)
{
	if (n < 3)
		return 0;
	double *d = malloc((n - 1) * sizeof(*d));
	if (!d)
		return 0;
	for (size_t i = 1; i < n; i++)
		d[i - 1] = xs[i] - xs[i - 1];
	qsort(d, n - 1, sizeof(*d), cmp_double);
	double med = d[(n - 1) / 2];
	free(d);
	return med > 0 ? 3.5 * med : 0;
}

/* ---- axes ---- */

/* Widens the axis to whole ticks and lists them; *step is the linear step (0 otherwise). */
static size_t axis_ticks(struct svg_axis *a, double *ticks, double *step)
{
	*step = 0;
	if (a->ticks && a->nticks) {
		size_t n = 0;
		for (size_t i = 0; i < a->nticks && n < MAX_TICKS; i++)
			if (a->ticks[i] >= a->min && a->ticks[i] <= a->max && (!a->log || a->ticks[i] > 0))
				ticks[n++] = a->ticks[i];
		return n;
	}
	if (a->time) {
		if (!(a->max - a->min >= 1))
			a->max = a->min + 1;
		*step = svg_time_step(a->max - a->min, TIME_TICKS);
		time_t t0 = (time_t)a->min;
		struct tm tm;
		localtime_r(&t0, &tm);
		size_t n = 0;
		for (double t = svg_time_first_tick(a->min, *step, tm.tm_gmtoff); t <= a->max + 1e-6 && n < MAX_TICKS;
		     t += *step)
			ticks[n++] = t;
		return n;
	}
	if (a->log) {
		if (!(a->min > 0))
			a->min = a->max > 0 ? a->max / 10 : 1;
		if (!(a->max > a->min))
			a->max = a->min * 10;
		double lo = floor(log10(a->min)), hi = ceil(log10(a->max));
		if (hi <= lo)
			hi = lo + 1;
		a->min = pow(10, lo);
		a->max = pow(10, hi);
		static const double fine[] = {1, 2, 5};
		bool few = hi - lo <= 2;
		size_t n = 0;
		for (double d = lo; d <= hi && n < MAX_TICKS; d++)
			for (size_t k = 0; k < (few ? 3u : 1u) && n < MAX_TICKS; k++) {
				double v = fine[k] * pow(10, d);
				if (v <= a->max * 1.0000001)
					ticks[n++] = v;
			}
		return n;
	}
	if (!(a->max > a->min))
		a->max = a->min + 1;
	*step = value_step(a->max - a->min, a->unit);
	a->min = floor(a->min / *step) * *step;
	a->max = ceil(a->max / *step) * *step;
	size_t n = 0;
	for (double v = a->min; v <= a->max + *step / 2 && n < MAX_TICKS; v += *step)
		ticks[n++] = fabs(v) < *step / 1e6 ? 0 : v;
	return n;
}

static void tick_label(const struct svg_axis *a, double v, double step, char *buf, size_t cap)
{
	if (a->fmt)
		a->fmt(buf, cap, v, step);
	else if (a->time)
		svg_time_label(v, step, buf, cap);
	else if (a->log || !step)
		snprintf(buf, cap, "%g", v);
	else
		svg_value_label(v, a->unit, step, buf, cap);
}

static double frac(const struct svg_axis *a, double v)
{
	if (a->log) {
		if (!(v > 0))
			return NAN;
		return (log10(v) - log10(a->min)) / (log10(a->max) - log10(a->min));
	}
	return (v - a->min) / (a->max - a->min);
}

double svg_plot_x(const struct svg_plot *p, double v)
{
	return p->spec.left + frac(&p->spec.x, v) * p->spec.width;
}

double svg_plot_y(const struct svg_plot *p, double v)
{
	return p->spec.top + (1 - frac(&p->spec.y, v)) * p->spec.height;
}

/* X tick labels; below sub-day time ticks, the date under the first tick of each day. */
static void x_labels(struct svg_plot *p, const double *ticks, size_t n, double step)
{
	FILE *f = p->svg->f;
	const struct svg_axis *a = &p->spec.x;
	double y = p->spec.top + p->spec.height + 18;
	int last_yday = -1, last_year = -1;
	char buf[64];
	for (size_t i = 0; i < n; i++) {
		double x = svg_plot_x(p, ticks[i]);
		tick_label(a, ticks[i], step, buf, sizeof(buf));
		fprintf(f, "<text class=\"xlab\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">", x, y);
		svg_escape(f, buf);
		if (a->time && step < 86400 && !a->fmt) {
			time_t tt = (time_t)llround(ticks[i]);
			struct tm tm;
			localtime_r(&tt, &tm);
			if (tm.tm_yday != last_yday &&
			    strftime(buf, sizeof(buf), tm.tm_year != last_year ? "%Y-%m-%d" : "%b %d", &tm))
				fprintf(f, "<tspan x=\"%.1f\" dy=\"13\">%s</tspan>", x, buf);
			last_yday = tm.tm_yday;
			last_year = tm.tm_year;
		}
		fputs("</text>\n", f);
	}
}

void svg_plot_begin(struct svg *s, struct svg_plot *p, const struct svg_plot_spec *spec)
{
	*p = (struct svg_plot){.svg = s, .spec = *spec};
	struct svg_plot_spec *sp = &p->spec;
	if (sp->width <= 0 || sp->height <= 0) {
		sp->left = 90;
		sp->top = sp->title ? 50 : 20;
		sp->width = s->width - sp->left - (sp->legend == SVG_LEGEND_RIGHT ? 250 : 30);
		sp->height = s->height - sp->top - 60;
	}
	double xt[MAX_TICKS], yt[MAX_TICKS], xstep, ystep;
	size_t nx = axis_ticks(&sp->x, xt, &xstep), ny = axis_ticks(&sp->y, yt, &ystep);
	FILE *f = s->f;
	char buf[64];
	double bottom = sp->top + sp->height, right = sp->left + sp->width;

	fprintf(f, "<g stroke=\"#dddddd\" stroke-width=\"1\">\n");
	for (size_t i = 0; i < nx; i++)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", svg_plot_x(p, xt[i]), sp->top,
			svg_plot_x(p, xt[i]), bottom);
	for (size_t i = 0; i < ny; i++)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", sp->left, svg_plot_y(p, yt[i]),
			right, svg_plot_y(p, yt[i]));
	fprintf(f, "</g>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333333\"/>\n",
		sp->left, sp->top, sp->width, sp->height);

	x_labels(p, xt, nx, xstep);
	for (size_t i = 0; i < ny; i++) {
		tick_label(&sp->y, yt[i], ystep, buf, sizeof(buf));
		fprintf(f, "<text class=\"ylab\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\">",
			sp->left - 6, svg_plot_y(p, yt[i]) + 4);
		svg_escape(f, buf);
		fputs("</text>\n", f);
	}
	if (sp->x.label)
		svg_text(s, sp->left + sp->width / 2, bottom + 42, "middle", 14, sp->x.label);
	if (sp->y.label) {
		double x = sp->left - 65, y = sp->top + sp->height / 2;
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"14\" "
			   "transform=\"rotate(-90 %.1f %.1f)\">", x, y, x, y);
		svg_escape(f, sp->y.label);
		fputs("</text>\n", f);
	}
	if (sp->title)
		svg_text(s, sp->left + sp->width / 2, sp->top - 20, "middle", 16, sp->title);
}

/* ---- series ---- */

static bool drawable(const struct svg_plot *p, double x, double y, double *px, double *py)
{
	*px = svg_plot_x(p, x);
	*py = svg_plot_y(p, y);
	return isfinite(x) && isfinite(y) && isfinite(*px) && isfinite(*py);
}

/* Whether point i starts a new run: the step from the point before is wider than the gap. */
static bool gap_before(const struct svg_series *se, size_t i)
{
	return se->gap > 0 && i > 0 && se->x[i] - se->x[i - 1] > se->gap;
}

/* A series' point in a path ("L12.3 45.6") or a polyline ("12.3,45.6"), to 0.1 px or whole px. */
static void point(const struct svg_plot *p, char cmd, char sep, double x, double y)
{
	FILE *f = p->svg->f;
	int d = p->spec.whole_px ? 0 : 1;
	if (cmd)
		fputc(cmd, f);
	fprintf(f, "%.*f%c%.*f", d, x, sep, d, y);
}

/* A filled band from base to top, one polygon per run without gaps. */
static void area_path(struct svg_plot *p, const struct svg_series *se, const double *base, const double *top,
		      const char *color)
{
	FILE *f = p->svg->f;
	double x, y;
	fprintf(f, "<path class=\"area\" fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"none\" d=\"", color, AREA_OPACITY);
	size_t i = 0;
	while (i < se->n) {
		while (i < se->n && !drawable(p, se->x[i], top[i], &x, &y))
			i++;
		size_t start = i;
		while (i < se->n && drawable(p, se->x[i], top[i], &x, &y) && (i == start || !gap_before(se, i))) {
			point(p, i == start ? 'M' : 'L', ' ', x, y);
			i++;
		}
		if (i == start)
			break;
		for (size_t k = i; k-- > start;)
			point(p, 'L', ' ', svg_plot_x(p, se->x[k]), svg_plot_y(p, base[k]));
		fputc('Z', f);
	}
	fputs("\"/>\n", f);
}

static void line(struct svg_plot *p, const struct svg_series *se, const double *ys, const char *color)
{
	FILE *f = p->svg->f;
	bool open = false;
	for (size_t i = 0; i < se->n; i++) {
		double x, y;
		if (!drawable(p, se->x[i], ys[i], &x, &y) || gap_before(se, i)) {
			if (open)
				fputs("\"/>\n", f);
			open = false;
			if (!drawable(p, se->x[i], ys[i], &x, &y))
				continue;
		}
		if (!open)
			fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" stroke-linejoin=\"round\"%s points=\"",
				color, se->style & SVG_DASHED ? " stroke-dasharray=\"6 4\"" : "");
		point(p, open ? ' ' : 0, ',', x, y);
		open = true;
	}
	if (open)
		fputs("\"/>\n", f);
}

int svg_plot_add(struct svg_plot *p, const struct svg_series *se)
{
	FILE *f = p->svg->f;
	size_t idx = p->nseries;
	const char *color = se->color ? se->color : svg_color(idx);
	if (idx < SVG_MAX_SERIES) {
		snprintf(p->names[idx], sizeof(p->names[idx]), "%s", se->name ? se->name : "");
		p->colors[idx] = color;
		p->styles[idx] = se->style;
		p->nseries++;
	}
	int r = 0;
	const double *ys = se->y;
	double *top = NULL;
	if ((se->style & SVG_AREA) && se->n) {
		if (p->nstack < se->n) {
			double *grown = realloc(p->stack, se->n * sizeof(*grown));
			if (grown) {
				memset(grown + p->nstack, 0, (se->n - p->nstack) * sizeof(*grown));
				p->stack = grown;
				p->nstack = se->n;
			}
		}
		top = malloc(se->n * sizeof(*top));
		if (!top || p->nstack < se->n)
			r = -ENOMEM;
	}
	fprintf(f, "<g class=\"series\" data-name=\"");
	svg_escape(f, se->name);
	fprintf(f, "\">\n");
	if (top && !r) {
		for (size_t i = 0; i < se->n; i++)
			top[i] = isfinite(se->y[i]) ? p->stack[i] + (se->y[i] > 0 ? se->y[i] : 0) : NAN;
		area_path(p, se, p->stack, top, color);
		for (size_t i = 0; i < se->n; i++)
			if (isfinite(top[i]))
				p->stack[i] = top[i];
		ys = top;
	}
	if (se->style & SVG_LINES)
		line(p, se, ys, color);
	if (se->style & SVG_POINTS)
		for (size_t i = 0; i < se->n; i++) {
			double x, y;
			if (!drawable(p, se->x[i], ys[i], &x, &y))
				continue;
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", x, y, color);
			if (se->labels && se->labels[i])
				svg_text(p->svg, x + 8, y - 6, "start", 12, se->labels[i]);
		}
	fputs("</g>\n", f);
	free(top);
	return r;
}

void svg_plot_series(struct svg_plot *p, const char *name, const double *xs, const double *ys, size_t n, int style)
{
	svg_plot_add(p, &(struct svg_series){.name = name, .x = xs, .y = ys, .n = n, .style = style});
}

void svg_plot_mark(struct svg_plot *p, double x, const char *label)
{
	if (!(x >= p->spec.x.min && x <= p->spec.x.max))
		return;
	double px = svg_plot_x(p, x), top = p->spec.top;
	fprintf(p->svg->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888888\" "
			   "stroke-width=\"1\" stroke-dasharray=\"2 3\"/>\n",
		px, top, px, top + p->spec.height);
	if (label)
		svg_text(p->svg, px + 3, top + 12, "start", 10, label);
}

void svg_plot_end(struct svg_plot *p)
{
	free(p->stack);
	p->stack = NULL;
	p->nstack = 0;
	if (!p->nseries || p->spec.legend == SVG_LEGEND_NONE)
		return;
	FILE *f = p->svg->f;
	double x = p->spec.left + (p->spec.legend == SVG_LEGEND_RIGHT ? p->spec.width + 10 : 10), y = p->spec.top + 10,
	       row = 18;
	size_t longest = 0;
	for (size_t i = 0; i < p->nseries; i++)
		if (strlen(p->names[i]) > longest)
			longest = strlen(p->names[i]);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\" fill-opacity=\"0.85\" "
		   "stroke=\"#cccccc\"/>\n",
		x, y, 40 + 7.0 * (double)longest, row * (double)p->nseries + 8);
	for (size_t i = 0; i < p->nseries; i++) {
		double cy = y + 4 + row * ((double)i + 0.5);
		const char *color = p->colors[i];
		if (p->styles[i] & SVG_AREA)
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"20\" height=\"10\" fill=\"%s\" fill-opacity=\"%.2f\"/>\n",
				x + 6, cy - 5, color, AREA_OPACITY);
		if (p->styles[i] & SVG_LINES)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
				x + 6, cy, x + 26, cy, color,
				p->styles[i] & SVG_DASHED ? " stroke-dasharray=\"6 4\"" : "");
		if (p->styles[i] & SVG_POINTS)
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", x + 16, cy, color);
		svg_text(p->svg, x + 32, cy + 4, "start", 12, p->names[i]);
	}
}

void svg_sparkline(FILE *f, const double *y, size_t n, int width, int height, const char *color)
{
	size_t m = n < (size_t)width / 2 ? n : (size_t)width / 2;
	double top = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(y[i]) && y[i] > top)
			top = y[i];
	fprintf(f, "<svg class=\"spark\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"><path fill=\"none\" "
		   "stroke=\"%s\" stroke-width=\"1.2\" d=\"",
		width, height, width, height, color);
	bool open = false;
	for (size_t j = 0; j < m; j++) {
		double v = series_mean(y + j * n / m, (j + 1) * n / m - j * n / m);
		if (!isfinite(v)) {
			open = false;
			continue;
		}
		double x = m > 1 ? (double)j * (width - 1) / (double)(m - 1) : width / 2.0;
		fprintf(f, "%c%.1f %.1f", open ? 'L' : 'M', x, height - 1 - (top > 0 ? v / top : 0) * (height - 2));
		open = true;
	}
	fprintf(f, "\"/></svg>");
}
