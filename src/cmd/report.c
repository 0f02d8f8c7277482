/* vmhost report: one self-contained HTML file (inline SVG and CSS) from the recorded history. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/ksm.h"
#include "out/html.h"
#include "out/json.h"
#include "out/svg.h"
#include "out/table.h"
#include "store/store_growth.h"
#include "core/stats.h"

#define MAX_POINTS 600  /* per chart: about one per 1.5 px of plot width */
#define MAX_VM_CHARTS 40

static const char *const C_GUEST = "#4c78a8", *const C_MERGED = "#72b7b2", *const C_OVERHEAD = "#e45756",
		      *const C_TOTAL = "#54585f", *const C_SWAP = "#b279a2", *const C_KSM = "#59a14f",
		      *const C_PROFIT = "#2f6b2a", *const C_CPU = "#f28e2b", *const C_FIT = "#8b1a12";

/* Series styles of the report's charts: stacked bands, lines, and dashed reference lines. */
#define AREA (SVG_AREA | SVG_LINES)
#define LINE SVG_LINES
#define DASHED (SVG_LINES | SVG_DASHED)

/* Chart layout: the SVG scales to the page width; the legend is HTML below it. */
#define CHART_W 960
#define CHART_LEFT 78
#define CHART_RIGHT 16
#define CHART_TOP 12
#define CHART_BOTTOM 40
#define CHART_MAX_SERIES 8

/* One <figure>: the title and note, the series over [since, until] with NaN as "no sample",
 * lines broken where the recording paused, and the legend. */
static void write_chart(FILE *f, const char *title, const char *note, enum svg_unit unit, const double *t, size_t n,
			double since, double until, int height, const struct svg_series *series, size_t nseries)
{
	struct svg_series se[CHART_MAX_SERIES];
	double gap = svg_gap_for(t, n);
	nseries = nseries < CHART_MAX_SERIES ? nseries : CHART_MAX_SERIES;
	for (size_t i = 0; i < nseries; i++) {
		se[i] = series[i];
		se[i].x = t;
		se[i].n = n;
		se[i].gap = gap;
	}
	fprintf(f, "<figure class=\"chart\"><figcaption>");
	html_escape(f, title);
	if (note) {
		fprintf(f, "<span class=\"note\">");
		html_escape(f, note);
		fprintf(f, "</span>");
	}
	fprintf(f, "</figcaption>\n");
	struct svg *s = svg_begin_inline(f, CHART_W, height);
	if (!s) {
		fprintf(f, "<p class=\"note\">(out of memory drawing this chart)</p></figure>\n");
		return;
	}
	struct svg_plot p;
	double ymax = svg_stacked_max(se, nseries);
	svg_plot_begin(s, &p, &(struct svg_plot_spec){
		.left = CHART_LEFT, .top = CHART_TOP, .width = CHART_W - CHART_LEFT - CHART_RIGHT,
		.height = height - CHART_TOP - CHART_BOTTOM,
		.x = {.min = isfinite(since) ? since : n ? t[0] : 0, .max = isfinite(until) ? until : n ? t[n - 1] : 1,
		      .time = true},
		.y = {.min = 0, .max = ymax > 0 ? ymax : 1, .unit = unit},
		.legend = SVG_LEGEND_NONE,
	});
	int r = 0;
	for (size_t i = 0; i < nseries; i++)
		if (svg_plot_add(&p, &se[i]) < 0)
			r = -ENOMEM;
	svg_plot_end(&p);
	if (n == 0)
		svg_text(s, CHART_W / 2.0, height / 2.0, "middle", 12, "no samples");
	svg_end(s);
	if (r < 0)
		fprintf(f, "<p class=\"note\">(out of memory stacking this chart: bands drawn unstacked)</p>");
	fprintf(f, "<div class=\"legend\">");
	for (size_t i = 0; i < nseries; i++) {
		fprintf(f, "<span><i class=\"%s\" style=\"background:%s\"></i>", se[i].style & SVG_DASHED ? "dash" : "",
			se[i].color);
		html_escape(f, se[i].name);
		fprintf(f, "</span>");
	}
	fprintf(f, "</div></figure>\n");
}

struct report_opts {
	const char *db, *out, *title;
	double window_seconds; /* 0: everything recorded */
	struct growth_scan_opts growth;
};

static void report_help(void)
{
	printf("usage: vmhost report [--db FILE] --out FILE.html [--window SEC] [--growth-window SEC]\n"
	       "                     [--warmup SEC] [--title TEXT]\n"
	       "\n"
	       "Writes one self-contained HTML file (inline SVG charts and CSS; no JavaScript, no network):\n"
	       "host memory, KSM savings and ksmd CPU over time, each VM's memory stacked (guest RAM,\n"
	       "the part of it merged by KSM, overhead), growth verdicts with their slopes, and tables.\n"
	       "\n"
	       "  --db FILE            database written by 'vmhost record' [./vmhost.db]\n"
	       "  --out FILE.html      where to write the report (replaced atomically)\n"
	       "  --window SEC         only the last SEC of the recording [everything]\n"
	       "  --growth-window SEC  window of the growth verdicts, as 'vmhost growth --window' [21600]\n"
	       "  --warmup SEC         a VM's first SEC are warm-up, as 'vmhost growth --warmup' [600]\n"
	       "  --title TEXT         page title [vmhost report: HOSTNAME]\n");
}

static int parse_report_opts(struct ctx *ctx, int argc, char **argv, struct report_opts *o, bool *help)
{
	static const struct option longopts[] = {
		{"db", required_argument, NULL, 'd'},
		{"out", required_argument, NULL, 'o'},
		{"window", required_argument, NULL, 'w'},
		{"growth-window", required_argument, NULL, 'g'},
		{"title", required_argument, NULL, 't'},
		{"warmup", required_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	args_reset();
	int c;
	while ((c = getopt_long(argc, argv, "+d:o:w:g:t:u:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->db = optarg; break;
		case 'o': o->out = optarg; break;
		case 't': o->title = optarg; break;
		case 'w':
			if (arg_seconds(optarg, &o->window_seconds) < 0)
				return usage_error(ctx, "--window takes seconds, not '%s'", optarg);
			break;
		case 'g':
			if (arg_seconds(optarg, &o->growth.window_seconds) < 0)
				return usage_error(ctx, "--growth-window takes seconds, not '%s'", optarg);
			break;
		case 'u':
			if (strcmp(optarg, "0") && arg_seconds(optarg, &o->growth.params.warmup_seconds) < 0)
				return usage_error(ctx, "--warmup takes seconds, not '%s'", optarg);
			if (!strcmp(optarg, "0"))
				o->growth.params.warmup_seconds = 0;
			break;
		case 'h': *help = true; break;
		default: return usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	if (!*help && !o->out)
		return usage_error(ctx, "--out FILE.html is required");
	return EXIT_OK;
}

/* ---- series preparation ---- */

/* k series over n times, thinned to at most MAX_POINTS equal-time bucket means. */
struct series_set {
	size_t n, k;
	double *t;
	double *y; /* k rows of n */
};

static double *row(struct series_set *s, size_t i) { return s->y + i * s->n; }

static int series_alloc(struct series_set *s, size_t n, size_t k)
{
	s->n = n;
	s->k = k;
	s->t = calloc(n ? n : 1, sizeof(double));
	s->y = calloc((n ? n : 1) * k, sizeof(double));
	return s->t && s->y ? 0 : -ENOMEM;
}

static void series_free(struct series_set *s)
{
	free(s->t);
	free(s->y);
}

static int series_thin(struct series_set *s)
{
	if (s->n <= MAX_POINTS)
		return 0;
	struct series_set o;
	if (series_alloc(&o, MAX_POINTS, s->k) < 0) {
		series_free(&o);
		return -ENOMEM;
	}
	double t0 = s->t[0], width = (s->t[s->n - 1] - t0) / MAX_POINTS;
	size_t m = 0, i = 0;
	for (size_t b = 0; b < MAX_POINTS && i < s->n; b++) {
		double end = b + 1 == MAX_POINTS ? INFINITY : t0 + width * (double)(b + 1);
		size_t start = i;
		double st = 0;
		while (i < s->n && s->t[i] < end)
			st += s->t[i++];
		if (i == start)
			continue; /* no sample: the chart shows a gap */
		o.t[m] = st / (double)(i - start);
		for (size_t r = 0; r < s->k; r++) {
			double sum = 0;
			size_t cnt = 0;
			for (size_t j = start; j < i; j++) {
				double v = row(s, r)[j];
				if (isfinite(v)) {
					sum += v;
					cnt++;
				}
			}
			row(&o, r)[m] = cnt ? sum / (double)cnt : NAN;
		}
		m++;
	}
	/* Compact the rows to m columns. */
	for (size_t r = 0; r < s->k; r++)
		memmove(o.y + r * m, row(&o, r), m * sizeof(double));
	o.n = m;
	series_free(s);
	*s = o;
	return 0;
}

static double num(maybe_i64 v) { return v.known ? (double)v.v : NAN; }

enum { H_USED, H_TOTAL, H_SWAP, H_KSM_SAVED, H_KSM_PROFIT, H_KSMD_CPU, H_NROWS };

static int host_series(const struct store_host_point *p, size_t n, struct series_set *s, int64_t *page_size)
{
	if (series_alloc(s, n, H_NROWS) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		s->t[i] = p[i].t;
		row(s, H_TOTAL)[i] = num(p[i].mem_total);
		row(s, H_USED)[i] = p[i].mem_total.known && p[i].mem_available.known
					    ? (double)(p[i].mem_total.v - p[i].mem_available.v)
					    : NAN;
		row(s, H_SWAP)[i] = p[i].swap_total.known && p[i].swap_free.known
					    ? (double)(p[i].swap_total.v - p[i].swap_free.v)
					    : NAN;
		if (p[i].page_size.known)
			*page_size = p[i].page_size.v;
		struct ksm_sysfs k = {.present = true, .pages_sharing = p[i].ksm_pages_sharing,
				      .ksm_zero_pages = p[i].ksm_zero_pages};
		row(s, H_KSM_SAVED)[i] = num(ksm_saved_bytes(&k, p[i].page_size.known ? p[i].page_size.v : 4096));
		row(s, H_KSM_PROFIT)[i] = num(p[i].ksm_general_profit);
		/* ksmd CPU over the interval before this sample, percent of one CPU. */
		double cpu = NAN;
		if (i > 0 && p[i].ksmd_cpu_ns.known && p[i - 1].ksmd_cpu_ns.known && p[i].t > p[i - 1].t &&
		    p[i].ksmd_cpu_ns.v >= p[i - 1].ksmd_cpu_ns.v)
			cpu = (double)(p[i].ksmd_cpu_ns.v - p[i - 1].ksmd_cpu_ns.v) / 1e9 / (p[i].t - p[i - 1].t) * 100;
		row(s, H_KSMD_CPU)[i] = cpu;
	}
	return series_thin(s);
}

enum { V_PRIVATE, V_MERGED, V_OVERHEAD, V_SAVED, V_FIT, V_NROWS };

static int vm_series(const struct store_vm_point *p, size_t n, int64_t page_size,
		     struct series_set *s)
{
	if (series_alloc(s, n, V_NROWS) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		s->t[i] = p[i].t;
		double rss = num(p[i].rss), over = num(p[i].overhead);
		double guest = rss - (isfinite(over) ? over : 0);
		double merged = p[i].ksm_merging_pages.known ? (double)p[i].ksm_merging_pages.v * (double)page_size : 0;
		if (merged > guest)
			merged = guest;
		row(s, V_PRIVATE)[i] = guest - merged;
		row(s, V_MERGED)[i] = isfinite(guest) ? merged : NAN;
		row(s, V_OVERHEAD)[i] = over;
		row(s, V_SAVED)[i] = num(p[i].ksm_saved);
		row(s, V_FIT)[i] = NAN;
	}
	return series_thin(s);
}

/* ---- page sections ---- */

static void fmt_time(char *buf, size_t cap, double t)
{
	if (!isfinite(t)) {
		snprintf(buf, cap, "n/a");
		return;
	}
	time_t tt = (time_t)llround(t);
	struct tm tm;
	localtime_r(&tt, &tm);
	strftime(buf, cap, "%Y-%m-%d %H:%M:%S %Z", &tm);
}

/* Table cells: the time zone is in the page's header. */
static void fmt_time_short(char *buf, size_t cap, double t)
{
	time_t tt = (time_t)llround(t);
	struct tm tm;
	localtime_r(&tt, &tm);
	if (!isfinite(t) || !strftime(buf, cap, "%m-%d %H:%M:%S", &tm))
		snprintf(buf, cap, "n/a");
}

static void cell_bytes(FILE *f, double v)
{
	char b[32];
	if (!isfinite(v)) {
		fputs("<td>n/a</td>", f);
		return;
	}
	fmt_bytes(b, sizeof(b), (int64_t)llround(v));
	fprintf(f, "<td>%s</td>", b);
}

static void card(FILE *f, const char *value, const char *label)
{
	fprintf(f, "<div class=\"card\"><b>");
	html_escape(f, value);
	fprintf(f, "</b><span>");
	html_escape(f, label);
	fprintf(f, "</span></div>");
}

static double last_finite(const double *v, size_t n)
{
	for (size_t i = n; i-- > 0;)
		if (isfinite(v[i]))
			return v[i];
	return NAN;
}

static double mean_finite(const double *v, size_t n)
{
	double s = 0;
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i])) {
			s += v[i];
			c++;
		}
	return c ? s / (double)c : NAN;
}

static void vm_label(char *buf, size_t cap, const struct store_vm *v)
{
	snprintf(buf, cap, "%s (pid %d)", v->name[0] ? v->name : "unnamed", (int)v->pid);
}

static void growth_text(char *buf, size_t cap, const struct growth_result *r)
{
	char b[32];
	if (isfinite(r->bytes_per_hour)) {
		fmt_bytes(b, sizeof(b), (int64_t)llround(fabs(r->bytes_per_hour)));
		snprintf(buf, cap, "%s: overhead %s%s/hour (sustained %.2f, %zu samples)", growth_state_name(r->state),
			 r->bytes_per_hour < 0 ? "-" : "+", b, r->consistency, r->samples);
	} else {
		snprintf(buf, cap, "%s (%zu usable samples, %zu in warm-up)", growth_state_name(r->state), r->samples,
			 r->warmup_samples);
	}
}

static int write_vm_chart(FILE *f, struct store *s, const struct growth_vm *g, double since, double until,
			  int64_t page_size)
{
	struct store_vm_point *p;
	size_t n;
	int r = store_vm_points(s, g->vm.id, since, until, &p, &n);
	if (r < 0)
		return r;
	struct series_set set = {0};
	r = vm_series(p, n, page_size, &set);
	free(p);
	if (r < 0) {
		series_free(&set);
		return r;
	}
	/* The fitted trend over the growth window, for a flagged VM. */
	bool fit = g->result.flagged && isfinite(g->result.bytes_per_hour);
	if (fit) {
		double *over = row(&set, V_OVERHEAD), *line = row(&set, V_FIT);
		/* anchor the Theil-Sen slope on the median residual of the usable span */
		double *res = malloc(set.n * sizeof(double));
		size_t m = 0;
		for (size_t i = 0; res && i < set.n; i++)
			if (set.t[i] >= g->result.first_t && set.t[i] <= g->result.last_t && isfinite(over[i]))
				res[m++] = over[i] - g->result.bytes_per_hour / 3600 * (set.t[i] - g->result.first_t);
		if (m) {
			qsort(res, m, sizeof(*res), cmp_double);
			double b = res[m / 2];
			for (size_t i = 0; i < set.n; i++)
				if (set.t[i] >= g->result.first_t && set.t[i] <= g->result.last_t)
					line[i] = b + g->result.bytes_per_hour / 3600 * (set.t[i] - g->result.first_t);
		}
		free(res);
	}
	char title[400], note[400], verdict[200], over[32] = "n/a", saved[32] = "n/a";
	vm_label(title, sizeof(title), &g->vm);
	growth_text(verdict, sizeof(verdict), &g->result);
	double v = last_finite(row(&set, V_OVERHEAD), set.n);
	if (isfinite(v))
		fmt_bytes(over, sizeof(over), (int64_t)v);
	v = last_finite(row(&set, V_SAVED), set.n);
	if (isfinite(v))
		fmt_bytes(saved, sizeof(saved), (int64_t)v);
	snprintf(note, sizeof(note), "%s; now: overhead %s, KSM saves %s", verdict, over, saved);
	/* Overhead at the bottom of the stack, so its trend line sits on the band it fits. */
	const struct svg_series series[] = {
		{.name = "overhead (beyond guest RAM)", .color = C_OVERHEAD, .y = row(&set, V_OVERHEAD), .style = AREA},
		{.name = "guest RAM merged by KSM", .color = C_MERGED, .y = row(&set, V_MERGED), .style = AREA},
		{.name = "guest RAM, resident, not merged", .color = C_GUEST, .y = row(&set, V_PRIVATE), .style = AREA},
		{.name = "saved by KSM (not resident)", .color = C_KSM, .y = row(&set, V_SAVED), .style = LINE},
		{.name = "overhead trend (Theil-Sen)", .color = C_FIT, .y = row(&set, V_FIT), .style = DASHED},
	};
	fprintf(f, "<div class=\"%s\">", g->result.flagged ? "vm flagged" : "vm");
	write_chart(f, title, note, SVG_BYTES, set.t, set.n, since, until, 210, series, fit ? 5 : 4);
	fprintf(f, "</div>\n");
	series_free(&set);
	return 0;
}

static void vm_table(FILE *f, const struct growth_scan *g, const struct store_vm *vms, size_t nvms)
{
	fprintf(f, "<table><thead><tr><th class=\"l\">VM</th><th>PID</th><th class=\"l\">VMM</th>"
		   "<th>guest RAM</th><th class=\"l\">first sample</th><th class=\"l\">last sample</th>"
		   "<th>samples</th><th class=\"l\">growth</th><th>overhead/hour</th><th>sustained</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < nvms; i++) {
		const struct store_vm *v = &vms[i];
		const struct growth_vm *gv = NULL;
		for (size_t k = 0; k < g->n; k++)
			if (g->vms[k].vm.id == v->id)
				gv = &g->vms[k];
		char a[64], b[64];
		fprintf(f, "<tr%s><td class=\"l\">", gv && gv->result.flagged ? " class=\"flag\"" : "");
		html_escape(f, v->name[0] ? v->name : "unnamed");
		if (v->uuid[0]) {
			fprintf(f, "<br><span class=\"note\" style=\"margin:0\">");
			html_escape(f, v->uuid);
			fprintf(f, "</span>");
		}
		fprintf(f, "</td><td>%d</td><td class=\"l\">", (int)v->pid);
		html_escape(f, v->vmm);
		fprintf(f, "</td>");
		cell_bytes(f, num(v->guest_ram_bytes));
		fmt_time_short(a, sizeof(a), v->first_seconds);
		fmt_time_short(b, sizeof(b), v->last_seconds);
		fprintf(f, "<td class=\"l\">%s</td><td class=\"l\">%s</td><td>%zu</td>", a, b, v->samples);
		if (!gv) {
			fprintf(f, "<td class=\"l\">not in the growth window</td><td>n/a</td><td>n/a</td></tr>\n");
			continue;
		}
		fprintf(f, "<td class=\"l %s\">%s</td>", gv->result.flagged ? "bad" : "",
			growth_state_name(gv->result.state));
		if (isfinite(gv->result.bytes_per_hour)) {
			char s[32];
			fmt_bytes(s, sizeof(s), (int64_t)llround(fabs(gv->result.bytes_per_hour)));
			fprintf(f, "<td>%s%s</td><td>%.2f</td></tr>\n", gv->result.bytes_per_hour < 0 ? "-" : "+", s,
				gv->result.consistency);
		} else {
			fprintf(f, "<td>n/a</td><td>n/a</td></tr>\n");
		}
	}
	fprintf(f, "</tbody></table>\n");
}

/* KVM exits per second, all VMs together, when KVM counters were recorded. Rows exist only
 * where the counter changed, so a rate spans the time since the previous row. */
static void write_kvm_chart(FILE *f, struct store *s, double since, double until)
{
	double *t;
	int64_t *v;
	size_t n;
	if (store_kvm_points(s, 0, "exits", since, until, &t, &v, &n) < 0)
		return;
	struct series_set set = {0};
	if (n >= 2 && series_alloc(&set, n - 1, 1) == 0) {
		for (size_t i = 1; i < n; i++) {
			set.t[i - 1] = t[i];
			row(&set, 0)[i - 1] = v[i] >= v[i - 1] && t[i] > t[i - 1] ? (double)(v[i] - v[i - 1]) / (t[i] - t[i - 1])
										    : NAN; /* reset */
		}
		if (series_thin(&set) == 0) {
			const struct svg_series series[] = {
				{.name = "exits per second", .color = C_CPU, .y = row(&set, 0), .style = AREA},
			};
			write_chart(f, "KVM exits, all VMs", "debugfs kvm/exits", SVG_PLAIN, set.t, set.n, since, until, 200,
				    series, 1);
		}
	}
	series_free(&set);
	free(t);
	free(v);
}

/* Flagged VMs first, then by their number of samples (a proxy for being current). */
static int cmp_growth_vm(const void *a, const void *b)
{
	const struct growth_vm *x = a, *y = b;
	if (x->result.flagged != y->result.flagged)
		return y->result.flagged - x->result.flagged;
	return (x->vm.last_seconds < y->vm.last_seconds) - (x->vm.last_seconds > y->vm.last_seconds);
}

static int write_report(FILE *f, struct store *s, const struct report_opts *o, const char **what)
{
	double first, last;
	*what = "reading the database";
	int r = store_time_range(s, &first, &last);
	if (r < 0)
		return r;
	double since = o->window_seconds > 0 && last - o->window_seconds > first ? last - o->window_seconds : first;
	struct store_host_point *hp;
	size_t nh;
	r = store_host_points(s, since, last, &hp, &nh);
	if (r < 0)
		return r;
	struct series_set host = {0};
	int64_t page_size = 4096;
	r = host_series(hp, nh, &host, &page_size);
	free(hp);
	struct growth_scan g = {0};
	struct store_vm *vms = NULL;
	size_t nvms = 0;
	if (r == 0)
		r = growth_scan_store(s, &o->growth, &g);
	if (r == 0)
		r = store_vms(s, since, last, &vms, &nvms);
	if (r < 0)
		goto out;

	char host_name[256] = "this host", title[400], a[64], b[64];
	gethostname(host_name, sizeof(host_name) - 1);
	if (o->title)
		snprintf(title, sizeof(title), "%s", o->title);
	else
		snprintf(title, sizeof(title), "vmhost report: %s", host_name);
	html_page_begin(f, title);
	fprintf(f, "<h1>");
	html_escape(f, title);
	fmt_time(a, sizeof(a), since);
	fmt_time(b, sizeof(b), last);
	fprintf(f, "</h1>\n<p class=\"sub\">%s &ndash; %s &middot; %zu host samples &middot; %zu VM series</p>\n", a, b,
		host.n, nvms);

	size_t flagged = 0;
	for (size_t i = 0; i < g.n; i++)
		flagged += g.vms[i].result.flagged;
	fprintf(f, "<div class=\"cards\">");
	char v[160];
	snprintf(v, sizeof(v), "%zu", nvms);
	card(f, v, "VMs recorded");
	snprintf(v, sizeof(v), "%zu", flagged);
	card(f, v, flagged ? "VMs with growing overhead" : "VMs with growing overhead (none)");
	double used = last_finite(row(&host, H_USED), host.n), total = last_finite(row(&host, H_TOTAL), host.n);
	if (isfinite(used) && isfinite(total)) {
		fmt_bytes(a, sizeof(a), (int64_t)used);
		fmt_bytes(b, sizeof(b), (int64_t)total);
		snprintf(v, sizeof(v), "%s / %s", a, b);
		card(f, v, "host memory used (last sample)");
	}
	double saved = last_finite(row(&host, H_KSM_SAVED), host.n);
	if (isfinite(saved)) {
		fmt_bytes(v, sizeof(v), (int64_t)saved);
		card(f, v, "saved by KSM (last sample)");
	}
	double cpu = mean_finite(row(&host, H_KSMD_CPU), host.n);
	if (isfinite(cpu)) {
		snprintf(v, sizeof(v), "%.2f%%", cpu);
		card(f, v, "ksmd CPU, mean of one CPU");
	}
	fprintf(f, "</div>\n");

	fprintf(f, "<h2>Host</h2>\n");
	const struct svg_series mem_series[] = {
		{.name = "used (total - available)", .color = C_GUEST, .y = row(&host, H_USED), .style = AREA},
		{.name = "total", .color = C_TOTAL, .y = row(&host, H_TOTAL), .style = DASHED},
		{.name = "swap used", .color = C_SWAP, .y = row(&host, H_SWAP), .style = LINE},
	};
	write_chart(f, "Host memory", NULL, SVG_BYTES, host.t, host.n, since, last, 250, mem_series, 3);
	const struct svg_series ksm_series[] = {
		{.name = "saved: (pages_sharing + ksm_zero_pages) x page size", .color = C_KSM,
		 .y = row(&host, H_KSM_SAVED), .style = AREA},
		{.name = "general_profit (saved minus KSM metadata)", .color = C_PROFIT, .y = row(&host, H_KSM_PROFIT),
		 .style = DASHED},
	};
	write_chart(f, "KSM savings", NULL, SVG_BYTES, host.t, host.n, since, last, 220, ksm_series, 2);
	const struct svg_series cpu_series[] = {
		{.name = "ksmd CPU (percent of one CPU)", .color = C_CPU, .y = row(&host, H_KSMD_CPU), .style = AREA},
	};
	write_chart(f, "ksmd CPU", "from ksmd's scheduler run time between samples", SVG_PERCENT, host.t, host.n, since,
		    last, 200, cpu_series, 1);

	write_kvm_chart(f, s, since, last);

	fprintf(f, "<h2>Memory growth</h2>\n<p class=\"sub\">Theil-Sen trend of each VM's overhead over the last "
		   "%g s of the recording; flagged when at least ",
		o->growth.window_seconds);
	fmt_bytes(a, sizeof(a), (int64_t)o->growth.params.threshold_bytes_per_hour);
	fmt_bytes(b, sizeof(b), (int64_t)o->growth.params.min_growth_bytes);
	fprintf(f, "%s/hour, %s in the window, and sustained (Kendall's tau &ge; %.2f). Samples taken before guest RAM "
		   "was fully populated, or in a VM's first %g s, are warm-up and ignored.</p>\n",
		a, b, o->growth.params.min_consistency, o->growth.params.warmup_seconds);
	vm_table(f, &g, vms, nvms);

	fprintf(f, "<h2>Virtual machines</h2>\n<p class=\"sub\">Stack height is the VM's resident memory (RSS): overhead at the bottom, then guest RAM. "
		   "Overhead is the cheap estimate (RSS beyond guest RAM), a lower bound until the guest has touched "
		   "all its RAM.</p>\n");
	/* Charts for the VMs of the growth window first (flagged ones on top), then the others. */
	qsort(g.vms, g.n, sizeof(*g.vms), cmp_growth_vm);
	size_t charts = 0;
	for (size_t i = 0; i < g.n && charts < MAX_VM_CHARTS && r == 0; i++, charts++)
		r = write_vm_chart(f, s, &g.vms[i], since, last, page_size);
	for (size_t i = 0; i < nvms && charts < MAX_VM_CHARTS && r == 0; i++) {
		bool done = false;
		for (size_t k = 0; k < g.n; k++)
			done |= g.vms[k].vm.id == vms[i].id;
		if (done)
			continue;
		struct growth_vm other = {.vm = vms[i],
					  .result = {.state = GROWTH_TOO_FEW, .bytes_per_hour = NAN, .consistency = NAN}};
		r = write_vm_chart(f, s, &other, since, last, page_size);
		charts++;
	}
	if (nvms > charts)
		fprintf(f, "<p class=\"note\">%zu more VM series are in the table above but not charted.</p>\n",
			nvms - charts);
	if (nvms == 0)
		fprintf(f, "<p>No VM was recorded in this time range.</p>\n");
	char now[64];
	fmt_time(now, sizeof(now), clock_wall_seconds());
	fprintf(f, "<footer>Generated by vmhost %s on %s from ", VMHOST_VERSION, now);
	html_escape(f, o->db);
	fprintf(f, ". Means over longer intervals replace old samples (docs/record.md); each chart shows at most %d "
		   "points.</footer>\n",
		MAX_POINTS);
	html_page_end(f);
out:
	series_free(&host);
	growth_scan_free(&g);
	free(vms);
	return r;
}

int cmd_report(struct ctx *ctx, int argc, char **argv)
{
	struct report_opts o = {.db = "vmhost.db", .growth = growth_scan_defaults()};
	bool help = false;
	int rc = parse_report_opts(ctx, argc, argv, &o, &help);
	if (rc != EXIT_OK)
		return rc;
	if (help) {
		report_help();
		return EXIT_OK;
	}
	o.growth.db = o.db;
	struct store *s;
	int r = store_open_read(o.db, &s);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "opening the database", "%s: %s%s", o.db, store_strerror(r),
			    r == -ENOENT ? " (record one with 'vmhost record')" : "");
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", o.out) >= (int)sizeof(tmp)) {
		store_close(s);
		return fail(ctx, EXIT_FAIL, "writing the report", "%s: %s", o.out, strerror(ENAMETOOLONG));
	}
	FILE *f = fopen(tmp, "w");
	if (!f) {
		r = -errno;
		store_close(s);
		return fail(ctx, EXIT_FAIL, "writing the report", "%s: %s", tmp, strerror(-r));
	}
	const char *what;
	r = write_report(f, s, &o, &what);
	store_close(s);
	int werr = ferror(f) ? EIO : 0;
	if (fclose(f) != 0 && !werr)
		werr = errno;
	if (r < 0 || werr) {
		unlink(tmp);
		if (r < 0)
			return fail(ctx, EXIT_FAIL, what, "%s: %s", o.db, store_strerror(r));
		return fail(ctx, EXIT_FAIL, "writing the report", "%s: %s", tmp, strerror(werr));
	}
	if (rename(tmp, o.out) < 0) {
		r = -errno;
		unlink(tmp);
		return fail(ctx, EXIT_FAIL, "writing the report", "%s: %s", o.out, strerror(-r));
	}
	if (ctx->format != OUT_JSON)
		printf("wrote %s\n", o.out);
	else {
		struct json j;
		json_init(&j, stdout, false);
		json_object_begin(&j, NULL);
		json_string(&j, "out", o.out);
		json_object_end(&j);
		json_finish(&j);
	}
	return EXIT_OK;
}
