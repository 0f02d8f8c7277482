#include "out/svg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TICKS 40

static const char *const palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
	"#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#000000", "#393b79",
};

const char *svg_color(size_t i) { return palette[i % (sizeof(palette) / sizeof(palette[0]))]; }

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

struct svg *svg_begin(FILE *f, double width, double height)
{
	struct svg *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	*s = (struct svg){.f = f, .width = width, .height = height};
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"font-family=\"sans-serif\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
		width, height, width, height);
	return s;
}

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

static void default_fmt(char *buf, size_t cap, double v) { snprintf(buf, cap, "%g", v); }

/* Widens the axis to whole ticks and lists them. */
static size_t axis_ticks(struct svg_axis *a, double *ticks)
{
	if (a->ticks && a->nticks) {
		size_t n = 0;
		for (size_t i = 0; i < a->nticks && n < MAX_TICKS; i++)
			if (a->ticks[i] >= a->min && a->ticks[i] <= a->max && (!a->log || a->ticks[i] > 0))
				ticks[n++] = a->ticks[i];
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
	double raw = (a->max - a->min) / 5, mag = pow(10, floor(log10(raw))), step;
	double r = raw / mag;
	step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
	a->min = floor(a->min / step) * step;
	a->max = ceil(a->max / step) * step;
	size_t n = 0;
	for (double v = a->min; v <= a->max + step / 2 && n < MAX_TICKS; v += step)
		ticks[n++] = fabs(v) < step / 1e6 ? 0 : v;
	return n;
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

void svg_plot_begin(struct svg *s, struct svg_plot *p, const struct svg_plot_spec *spec)
{
	*p = (struct svg_plot){.svg = s, .spec = *spec};
	struct svg_plot_spec *sp = &p->spec;
	if (sp->width <= 0 || sp->height <= 0) {
		sp->left = 90;
		sp->top = sp->title ? 50 : 20;
		sp->width = s->width - sp->left - (sp->legend_right ? 250 : 30);
		sp->height = s->height - sp->top - 60;
	}
	double xt[MAX_TICKS], yt[MAX_TICKS];
	size_t nx = axis_ticks(&sp->x, xt), ny = axis_ticks(&sp->y, yt);
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

	svg_tick_fmt fx = sp->x.fmt ? sp->x.fmt : default_fmt, fy = sp->y.fmt ? sp->y.fmt : default_fmt;
	for (size_t i = 0; i < nx; i++) {
		fx(buf, sizeof(buf), xt[i]);
		svg_text(s, svg_plot_x(p, xt[i]), bottom + 18, "middle", 12, buf);
	}
	for (size_t i = 0; i < ny; i++) {
		fy(buf, sizeof(buf), yt[i]);
		svg_text(s, sp->left - 6, svg_plot_y(p, yt[i]) + 4, "end", 12, buf);
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

void svg_plot_series(struct svg_plot *p, const char *name, const double *xs, const double *ys, size_t n, int style)
{
	FILE *f = p->svg->f;
	size_t idx = p->nseries;
	const char *color = svg_color(idx);
	if (idx < SVG_MAX_SERIES) {
		snprintf(p->names[idx], sizeof(p->names[idx]), "%s", name ? name : "");
		p->styles[idx] = style;
		p->nseries++;
	}
	fprintf(f, "<g class=\"series\" data-name=\"");
	svg_escape(f, name);
	fprintf(f, "\">\n");
	if (style & SVG_LINES) {
		bool open = false;
		for (size_t i = 0; i < n; i++) {
			double x = svg_plot_x(p, xs[i]), y = svg_plot_y(p, ys[i]);
			bool ok = isfinite(x) && isfinite(y) && isfinite(xs[i]) && isfinite(ys[i]);
			if (!ok) {
				if (open)
					fputs("\"/>\n", f);
				open = false;
				continue;
			}
			if (!open)
				fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
			fprintf(f, "%s%.1f,%.1f", open ? " " : "", x, y);
			open = true;
		}
		if (open)
			fputs("\"/>\n", f);
	}
	if (style & SVG_POINTS)
		for (size_t i = 0; i < n; i++) {
			double x = svg_plot_x(p, xs[i]), y = svg_plot_y(p, ys[i]);
			if (isfinite(x) && isfinite(y) && isfinite(xs[i]) && isfinite(ys[i]))
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", x, y, color);
		}
	fputs("</g>\n", f);
}

void svg_plot_end(struct svg_plot *p)
{
	if (!p->nseries)
		return;
	FILE *f = p->svg->f;
	double x = p->spec.left + (p->spec.legend_right ? p->spec.width + 10 : 10), y = p->spec.top + 10, row = 18;
	size_t longest = 0;
	for (size_t i = 0; i < p->nseries; i++)
		if (strlen(p->names[i]) > longest)
			longest = strlen(p->names[i]);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\" fill-opacity=\"0.85\" "
		   "stroke=\"#cccccc\"/>\n",
		x, y, 40 + 7.0 * (double)longest, row * (double)p->nseries + 8);
	for (size_t i = 0; i < p->nseries; i++) {
		double cy = y + 4 + row * ((double)i + 0.5);
		const char *color = svg_color(i);
		if (p->styles[i] & SVG_LINES)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
				x + 6, cy, x + 26, cy, color);
		if (p->styles[i] & SVG_POINTS)
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", x + 16, cy, color);
		svg_text(p->svg, x + 32, cy + 4, "start", 12, p->names[i]);
	}
}
