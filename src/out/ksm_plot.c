#include "out/ksm_plot.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define W 760.0
#define H 440.0
#define L 70.0  /* left margin */
#define R 170.0 /* right margin: legend */
#define T 40.0
#define B 50.0

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"};

static void text_escaped(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* A "nice" step (1, 2, 5 x 10^k) giving about 5 ticks over [0, max]. */
static double nice_step(double max)
{
	if (!(max > 0))
		return 1;
	double raw = max / 5, mag = pow(10, floor(log10(raw))), n = raw / mag;
	return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * mag;
}

struct frame {
	double xmax, ymax;
};

static double px(const struct frame *fr, double x) { return L + x / fr->xmax * (W - L - R); }
static double py(const struct frame *fr, double y) { return H - B - y / fr->ymax * (H - T - B); }

static void axes(FILE *f, struct frame *fr, const char *title, const char *xlabel, const char *ylabel)
{
	double xs = nice_step(fr->xmax), ys = nice_step(fr->ymax);
	fr->xmax = ceil(fr->xmax / xs) * xs;
	fr->ymax = ceil(fr->ymax / ys) * ys;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		   "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%.0f\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">", W / 2);
	text_escaped(f, title);
	fprintf(f, "</text>\n");
	for (double x = 0; x <= fr->xmax + xs / 2; x += xs) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", px(fr, x), T,
			px(fr, x), H - B);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", px(fr, x), H - B + 16, x);
	}
	for (double y = 0; y <= fr->ymax + ys / 2; y += ys) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", L, py(fr, y),
			W - R, py(fr, y));
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6, py(fr, y) + 4, y);
	}
	fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#333\"/>\n", L, T,
		W - L - R, H - T - B);
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", L + (W - L - R) / 2, H - 12);
	text_escaped(f, xlabel);
	fprintf(f, "</text>\n<text transform=\"translate(16,%.0f) rotate(-90)\" text-anchor=\"middle\">",
		T + (H - T - B) / 2);
	text_escaped(f, ylabel);
	fprintf(f, "</text>\n");
}

static int finish(FILE *f)
{
	fprintf(f, "</svg>\n");
	return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

int plot_scatter_svg(FILE *f, const char *title, const char *xlabel, const char *ylabel,
		     const struct plot_point *pts, size_t n)
{
	struct frame fr = {0, 0};
	for (size_t i = 0; i < n; i++)
		if (isfinite(pts[i].x) && isfinite(pts[i].y)) {
			fr.xmax = fmax(fr.xmax, pts[i].x);
			fr.ymax = fmax(fr.ymax, pts[i].y);
		}
	fr.xmax = fr.xmax > 0 ? fr.xmax * 1.1 : 1;
	fr.ymax = fr.ymax > 0 ? fr.ymax * 1.1 : 1;
	axes(f, &fr, title, xlabel, ylabel);
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(pts[i].x) || !isfinite(pts[i].y))
			continue;
		const char *c = colors[i % (sizeof(colors) / sizeof(colors[0]))];
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>", px(&fr, pts[i].x), py(&fr, pts[i].y), c);
		if (pts[i].label) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", px(&fr, pts[i].x) + 8, py(&fr, pts[i].y) - 6);
			text_escaped(f, pts[i].label);
			fprintf(f, "</text>");
		}
		fputc('\n', f);
	}
	return finish(f);
}

int plot_lines_svg(FILE *f, const char *title, const char *xlabel, const char *ylabel,
		   const struct plot_series *series, size_t nseries)
{
	struct frame fr = {0, 0};
	for (size_t s = 0; s < nseries; s++)
		for (size_t i = 0; i < series[s].n; i++)
			if (isfinite(series[s].x[i]) && isfinite(series[s].y[i])) {
				fr.xmax = fmax(fr.xmax, series[s].x[i]);
				fr.ymax = fmax(fr.ymax, series[s].y[i]);
			}
	fr.xmax = fr.xmax > 0 ? fr.xmax : 1;
	fr.ymax = fr.ymax > 0 ? fr.ymax * 1.05 : 1;
	axes(f, &fr, title, xlabel, ylabel);
	for (size_t s = 0; s < nseries; s++) {
		const char *c = colors[s % (sizeof(colors) / sizeof(colors[0]))];
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
		for (size_t i = 0; i < series[s].n; i++)
			if (isfinite(series[s].x[i]) && isfinite(series[s].y[i]))
				fprintf(f, "%.1f,%.1f ", px(&fr, series[s].x[i]), py(&fr, series[s].y[i]));
		fprintf(f, "\"/>\n<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"3\"/>",
			W - R + 12, T + 10 + 20.0 * (double)s, W - R + 36, T + 10 + 20.0 * (double)s, c);
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">", W - R + 42, T + 14 + 20.0 * (double)s);
		text_escaped(f, series[s].name);
		fprintf(f, "</text>\n");
	}
	return finish(f);
}
