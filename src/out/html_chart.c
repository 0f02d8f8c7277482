#include "out/html_chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "out/html.h"

#define VIEW_W 960
#define PAD_L 78
#define PAD_R 16
#define PAD_T 12
#define PAD_B 40

double chart_time_step(double span, int max_ticks)
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

double chart_time_first_tick(double t, double step, long gmtoff)
{
	return ceil((t + (double)gmtoff) / step) * step - (double)gmtoff;
}

void chart_time_label(double t, double step, char *buf, size_t cap)
{
	time_t tt = (time_t)llround(t);
	struct tm tm;
	localtime_r(&tt, &tm);
	const char *fmt = step < 60 ? "%H:%M:%S" : step < 86400 ? "%H:%M" : step < 365 * 86400.0 ? "%b %d" : "%Y";
	if (!strftime(buf, cap, fmt, &tm) && cap)
		buf[0] = 0;
}

double chart_nice_step(double max, int max_ticks)
{
	if (!(max > 0) || !isfinite(max))
		return 1;
	double raw = max / (max_ticks < 1 ? 1 : max_ticks);
	double mag = pow(10, floor(log10(raw)));
	static const double nice[] = {1, 2, 2.5, 5, 10};
	for (size_t i = 0; i < sizeof(nice) / sizeof(nice[0]); i++)
		if (nice[i] * mag >= raw)
			return nice[i] * mag;
	return 10 * mag;
}

static const char *const byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

/* The binary unit (power of 1024) that keeps max between 1 and 1024. */
static int byte_unit_for(double max)
{
	int u = 0;
	while (u < 5 && max >= 1024.0) {
		max /= 1024.0;
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

void chart_value_label(double v, enum chart_unit unit, double step, char *buf, size_t cap)
{
	if (unit == CHART_BYTES) {
		int u = byte_unit_for(step * 4 > 0 ? step * 4 : 1);
		double scale = pow(1024.0, u);
		snprintf(buf, cap, "%.*f %s", decimals_for(step / scale), v / scale, byte_units[u]);
	} else if (unit == CHART_PERCENT) {
		snprintf(buf, cap, "%.*f%%", decimals_for(step), v);
	} else {
		snprintf(buf, cap, "%.*f", decimals_for(step), v);
	}
}

/* A step on the value axis: 1-2-2.5-5 in the unit the range calls for. */
static double value_step(double max, enum chart_unit unit)
{
	if (unit != CHART_BYTES)
		return chart_nice_step(max, 5);
	double scale = pow(1024.0, byte_unit_for(max));
	return chart_nice_step(max / scale, 5) * scale;
}

struct frame {
	double t0, t1, ymax;
	int w, h; /* plot area */
};

static double px(const struct frame *fr, double t) { return PAD_L + (t - fr->t0) / (fr->t1 - fr->t0) * fr->w; }
static double py(const struct frame *fr, double v) { return PAD_T + fr->h - v / fr->ymax * fr->h; }

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A gap: more than 3.5 typical intervals without a sample. */
static double gap_seconds(const double *t, size_t n)
{
	if (n < 3)
		return INFINITY;
	double *d = malloc((n - 1) * sizeof(*d));
	if (!d)
		return INFINITY;
	for (size_t i = 1; i < n; i++)
		d[i - 1] = t[i] - t[i - 1];
	qsort(d, n - 1, sizeof(*d), cmp_double);
	double med = d[(n - 1) / 2];
	free(d);
	return med > 0 ? 3.5 * med : INFINITY;
}

static void axes(FILE *f, const struct chart *c, const struct frame *fr, double ystep)
{
	char label[64];
	for (double v = 0; v <= fr->ymax * (1 + 1e-9); v += ystep) {
		double y = py(fr, v);
		fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", PAD_L, y, PAD_L + fr->w, y);
		chart_value_label(v, c->unit, ystep, label, sizeof(label));
		fprintf(f, "<text class=\"ylab\" x=\"%d\" y=\"%.1f\">%s</text>", PAD_L - 6, y + 4, label);
	}
	time_t now = (time_t)fr->t0;
	struct tm tm;
	localtime_r(&now, &tm);
	double step = chart_time_step(fr->t1 - fr->t0, 8);
	int last_yday = -1, last_year = -1;
	for (double t = chart_time_first_tick(fr->t0, step, tm.tm_gmtoff); t <= fr->t1 + 1e-6; t += step) {
		double x = px(fr, t);
		fprintf(f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, PAD_T, x,
			PAD_T + fr->h + 4);
		chart_time_label(t, step, label, sizeof(label));
		fprintf(f, "<text class=\"xlab\" x=\"%.1f\" y=\"%d\">%s", x, PAD_T + fr->h + 17, label);
		/* Sub-day ticks: the date under the first tick of each day. */
		time_t tt = (time_t)llround(t);
		localtime_r(&tt, &tm);
		if (step < 86400 && tm.tm_yday != last_yday) {
			strftime(label, sizeof(label), tm.tm_year != last_year ? "%Y-%m-%d" : "%b %d", &tm);
			fprintf(f, "<tspan x=\"%.1f\" dy=\"13\">%s</tspan>", x, label);
		}
		fprintf(f, "</text>");
		last_yday = tm.tm_yday;
		last_year = tm.tm_year;
	}
	fprintf(f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", PAD_L, PAD_T, fr->w, fr->h);
}

/* Polyline segments of one series (top = base + y when stacked), broken at gaps and NaN. */
static void line_path(FILE *f, const struct chart *c, const struct frame *fr, const double *top, double gap)
{
	bool open = false;
	for (size_t i = 0; i < c->n; i++) {
		if (!isfinite(top[i]) || (i > 0 && c->t[i] - c->t[i - 1] > gap)) {
			open = false;
			if (!isfinite(top[i]))
				continue;
		}
		fprintf(f, "%c%.1f %.1f", open ? 'L' : 'M', px(fr, c->t[i]), py(fr, top[i]));
		open = true;
	}
}

/* A filled band between base and top, one polygon per run without gaps. */
static void area_path(FILE *f, const struct chart *c, const struct frame *fr, const double *base, const double *top,
		      double gap)
{
	size_t i = 0;
	while (i < c->n) {
		while (i < c->n && !isfinite(top[i]))
			i++;
		size_t start = i;
		while (i < c->n && isfinite(top[i]) && (i == start || c->t[i] - c->t[i - 1] <= gap))
			i++;
		if (i == start)
			break;
		fprintf(f, "M%.1f %.1f", px(fr, c->t[start]), py(fr, top[start]));
		for (size_t k = start + 1; k < i; k++)
			fprintf(f, "L%.1f %.1f", px(fr, c->t[k]), py(fr, top[k]));
		for (size_t k = i; k-- > start;)
			fprintf(f, "L%.1f %.1f", px(fr, c->t[k]), py(fr, base[k]));
		fputc('Z', f);
	}
}

void chart_write_svg(FILE *f, const struct chart *c)
{
	int height = c->height > 0 ? c->height : 240;
	struct frame fr = {.t0 = c->t_min, .t1 = c->t_max, .w = VIEW_W - PAD_L - PAD_R, .h = height - PAD_T - PAD_B};
	if (!isfinite(fr.t0))
		fr.t0 = c->n ? c->t[0] : 0;
	if (!isfinite(fr.t1))
		fr.t1 = c->n ? c->t[c->n - 1] : 1;
	if (fr.t1 - fr.t0 < 1)
		fr.t1 = fr.t0 + 1;

	/* Stacked tops, and the largest value to scale to. */
	double *base = calloc(c->n ? c->n : 1, sizeof(double));
	double *tops = calloc((c->n ? c->n : 1) * (c->nseries ? c->nseries : 1), sizeof(double));
	fprintf(f, "<figure class=\"chart\"><figcaption>");
	html_escape(f, c->title);
	if (c->note) {
		fprintf(f, "<span class=\"note\">");
		html_escape(f, c->note);
		fprintf(f, "</span>");
	}
	fprintf(f, "</figcaption>\n");
	if (!base || !tops) {
		fprintf(f, "<p class=\"note\">(out of memory drawing this chart)</p></figure>\n");
		free(base);
		free(tops);
		return;
	}
	fr.ymax = 0;
	for (size_t s = 0; s < c->nseries; s++) {
		double *top = tops + s * c->n;
		for (size_t i = 0; i < c->n; i++) {
			double y = c->series[s].y[i];
			top[i] = c->series[s].area ? (isfinite(y) ? base[i] + (y > 0 ? y : 0) : NAN) : y;
			if (c->series[s].area && isfinite(y))
				base[i] = top[i];
			if (isfinite(top[i]) && top[i] > fr.ymax)
				fr.ymax = top[i];
		}
	}
	double ystep = value_step(fr.ymax > 0 ? fr.ymax : 1, c->unit);
	fr.ymax = ceil((fr.ymax > 0 ? fr.ymax : 1) / ystep * 1.0000001) * ystep;
	if (fr.ymax <= 0)
		fr.ymax = ystep;

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" role=\"img\">", VIEW_W, height);
	axes(f, c, &fr, ystep);
	double gap = gap_seconds(c->t, c->n);
	memset(base, 0, c->n * sizeof(double));
	for (size_t s = 0; s < c->nseries; s++) {
		const struct chart_series *se = &c->series[s];
		double *top = tops + s * c->n;
		if (se->area) {
			fprintf(f, "<path class=\"area\" fill=\"%s\" d=\"", se->color);
			area_path(f, c, &fr, base, top, gap);
			fprintf(f, "\"/>");
			for (size_t i = 0; i < c->n; i++)
				if (isfinite(top[i]))
					base[i] = top[i];
		}
		fprintf(f, "<path class=\"line%s\" stroke=\"%s\" d=\"", se->dashed ? " dashed" : "", se->color);
		line_path(f, c, &fr, top, gap);
		fprintf(f, "\"/>");
	}
	if (c->n == 0)
		fprintf(f, "<text class=\"empty\" x=\"%d\" y=\"%d\">no samples</text>", VIEW_W / 2, height / 2);
	fprintf(f, "</svg>\n<div class=\"legend\">");
	for (size_t s = 0; s < c->nseries; s++) {
		fprintf(f, "<span><i class=\"%s\" style=\"background:%s\"></i>", c->series[s].dashed ? "dash" : "",
			c->series[s].color);
		html_escape(f, c->series[s].label);
		fprintf(f, "</span>");
	}
	fprintf(f, "</div></figure>\n");
	free(base);
	free(tops);
}
