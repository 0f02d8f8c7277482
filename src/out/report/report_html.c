#include "out/report/report_html.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/stop.h"
#include "core/sample/capacity.h"
#include "out/report/html.h"
#include "out/svg.h"
#include "out/fmt.h"

static const char *const C_GUEST = "#4c78a8", *const C_MERGED = "#72b7b2", *const C_OVERHEAD = "#e45756",
		      *const C_TOTAL = "#54585f", *const C_SWAP = "#b279a2", *const C_KSM = "#59a14f",
		      *const C_PROFIT = "#2f6b2a", *const C_CPU = "#f28e2b", *const C_FIT = "#8b1a12",
		      *const C_HUGE = "#9d755d";

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
#define CHART_MAX_SERIES 14

struct chart {
	const char *title, *note; /* note may be NULL */
	enum svg_unit unit;
	const struct series_set *set; /* the x values of every series */
	double since, until;
	int height;
	int width; /* 0: CHART_W */
	bool small; /* one of a VM's: whole px, bands without their top lines (100 VMs' charts in a few MB) */
};

static void chart_legend(FILE *f, const struct svg_series *se, size_t nseries)
{
	fprintf(f, "<div class=\"legend\">");
	for (size_t i = 0; i < nseries; i++) {
		fprintf(f, "<span><i class=\"%s\" style=\"background:%s\"></i>", se[i].style & SVG_DASHED ? "dash" : "",
			se[i].color);
		html_escape(f, se[i].name);
		fprintf(f, "</span>");
	}
	fprintf(f, "</div></figure>\n");
}

/* One <figure>: the title and note, the series over [since, until] with NaN as "no sample",
 * lines broken where the recording paused, and the legend. */
static void chart(FILE *f, const struct chart *c, const struct svg_series *series, size_t nseries)
{
	struct svg_series se[CHART_MAX_SERIES];
	const int w = c->width ? c->width : CHART_W;
	const double *t = c->set->t;
	size_t n = c->set->n;
	double gap = svg_gap_for(t, n);
	nseries = nseries < CHART_MAX_SERIES ? nseries : CHART_MAX_SERIES;
	for (size_t i = 0; i < nseries; i++) {
		se[i] = series[i];
		se[i].x = t;
		se[i].n = n;
		se[i].gap = gap;
		if (c->small && (se[i].style & SVG_AREA))
			se[i].style &= ~SVG_LINES;
	}
	fprintf(f, "<figure class=\"chart\"><figcaption>");
	html_escape(f, c->title);
	if (c->note) {
		fprintf(f, "<span class=\"note\">");
		html_escape(f, c->note);
		fprintf(f, "</span>");
	}
	fprintf(f, "</figcaption>\n");
	struct svg *s = svg_begin_inline(f, w, c->height);
	if (!s) {
		fprintf(f, "<p class=\"note\">(out of memory drawing this chart)</p></figure>\n");
		return;
	}
	struct svg_plot p;
	double ymax = svg_stacked_max(se, nseries);
	svg_plot_begin(s, &p, &(struct svg_plot_spec){
		.left = CHART_LEFT, .top = CHART_TOP, .width = w - CHART_LEFT - CHART_RIGHT,
		.height = c->height - CHART_TOP - CHART_BOTTOM,
		.x = {.min = isfinite(c->since) ? c->since : n ? t[0] : 0,
		      .max = isfinite(c->until) ? c->until : n ? t[n - 1] : 1, .time = true},
		.y = {.min = 0, .max = ymax > 0 ? ymax : 1, .unit = c->unit},
		.legend = SVG_LEGEND_NONE, .whole_px = c->small,
	});
	int r = 0;
	for (size_t i = 0; i < nseries; i++)
		if (svg_plot_add(&p, &se[i]) < 0)
			r = -ENOMEM;
	svg_plot_end(&p);
	if (n == 0)
		svg_text(s, w / 2.0, c->height / 2.0, "middle", 12, "no samples");
	svg_end(s);
	if (r < 0)
		fprintf(f, "<p class=\"note\">(out of memory stacking this chart: bands drawn unstacked)</p>");
	chart_legend(f, se, nseries);
}

/* "+1.50 MiB" for a signed number of bytes. */
static void fmt_signed_bytes(char *buf, size_t cap, double v)
{
	char b[32];
	fmt_bytes(b, sizeof(b), (int64_t)llround(fabs(v)));
	snprintf(buf, cap, "%s%s", v < 0 ? "-" : "+", b);
}

void report_html_begin(FILE *f, const char *title, double since, double until, size_t host_samples, size_t vms)
{
	char a[64], b[64];
	html_page_begin(f, title);
	fprintf(f, "<h1>");
	html_escape(f, title);
	fmt_time(a, sizeof(a), since);
	fmt_time(b, sizeof(b), until);
	fprintf(f, "</h1>\n<p class=\"sub\">%s &ndash; %s &middot; %zu host samples &middot; %zu VM series</p>\n", a, b,
		host_samples, vms);
}

static void card(FILE *f, const char *value, const char *label)
{
	fprintf(f, "<div class=\"card\"><b>");
	html_escape(f, value);
	fprintf(f, "</b><span>");
	html_escape(f, label);
	fprintf(f, "</span></div>");
}

void report_html_cards(FILE *f, size_t vms, size_t flagged, const struct series_set *host)
{
	char v[160], a[64], b[64];
	fprintf(f, "<div class=\"cards\">");
	snprintf(v, sizeof(v), "%zu", vms);
	card(f, v, "VMs recorded");
	snprintf(v, sizeof(v), "%zu", flagged);
	card(f, v, flagged ? "VMs with growing overhead" : "VMs with growing overhead (none)");
	double used = series_last(series_row(host, SERIES_HOST_USED), host->n);
	double total = series_last(series_row(host, SERIES_HOST_TOTAL), host->n);
	if (isfinite(used) && isfinite(total)) {
		fmt_bytes(a, sizeof(a), (int64_t)used);
		fmt_bytes(b, sizeof(b), (int64_t)total);
		snprintf(v, sizeof(v), "%s / %s", a, b);
		card(f, v, "host memory used (last sample)");
	}
	double saved = series_last(series_row(host, SERIES_HOST_KSM_SAVED), host->n);
	if (isfinite(saved)) {
		fmt_bytes(v, sizeof(v), (int64_t)saved);
		card(f, v, "saved by KSM (last sample)");
	}
	double cpu = series_mean(series_row(host, SERIES_HOST_KSMD_CPU), host->n);
	if (isfinite(cpu)) {
		snprintf(v, sizeof(v), "%.2f%%", cpu);
		card(f, v, "ksmd CPU, mean of one CPU");
	}
	fprintf(f, "</div>\n");
}

void report_html_capacity(FILE *f, const char *sentence)
{
	if (!sentence[0])
		return;
	fputs("<p class=\"sub capacity\">At the last sample: ", f);
	html_escape(f, sentence);
	fprintf(f, " (MemAvailable less %.0f%% of MemTotal, each new guest of the running VMs' median RAM and "
		   "overhead; what the guests could give back is not recorded: <code>vmhost capacity</code> on the "
		   "host counts it)</p>\n", CAPACITY_RESERVE_PERCENT);
}

#define STACK_TOP 8 /* VMs with a band of their own in the host's memory chart */

/* A VM's figures now: the last finite value of a row of its series, NaN without one. */
static double vm_now(const struct report_vm *v, enum series_vm_row row)
{
	return v->series ? series_last(series_row(v->series, row), v->series->n) : NAN;
}

bool report_vm_running_at(const struct report_vm *v, double until)
{
	return fabs(v->last_seconds - until) <= 1e-3;
}

static double vm_cost_now(const struct report_vm *v)
{
	double c = vm_now(v, SERIES_VM_COST);
	return isfinite(c) ? c : -1; /* unknown ranks last */
}

struct ranked {
	double cost;
	size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	return (x->cost < y->cost) - (x->cost > y->cost);
}

/* The VMs by memory cost now, the largest first; NULL on -ENOMEM. */
static struct ranked *rank_by_cost(const struct report_vm *vms, size_t n)
{
	struct ranked *r = calloc(n ? n : 1, sizeof(*r));
	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){vm_cost_now(&vms[i]), i};
	qsort(r, n, sizeof(*r), cmp_ranked);
	return r;
}

/* v into row at cell j of the stack: a VM without a sample in a host cell was not running
 * then (the host's own cells exist only where it was sampled), so it adds nothing. */
static void stack_add(double *row, size_t j, double v)
{
	if (isfinite(v))
		row[j] = (isfinite(row[j]) ? row[j] : 0) + v;
	else if (!isfinite(row[j]))
		row[j] = 0;
}

/* Rows 0..top-1: the top VMs' cost beyond their overhead, top: the others', top + 1: every
 * VM's overhead, all at the host's times. */
static int stack_rows(const struct series_set *host, const struct report_vm *vms, const struct ranked *rank,
		      size_t n, size_t top, struct series_set *ret)
{
	if (series_alloc(ret, host->n, top + 2) < 0)
		return -ENOMEM;
	for (size_t k = 0; k < top + 2; k++)
		for (size_t j = 0; j < host->n; j++)
			series_row(ret, k)[j] = NAN;
	for (size_t k = 0; k < n; k++) {
		const struct report_vm *v = &vms[rank[k].i];
		double *row = series_row(ret, k < top ? k : top), *over = series_row(ret, top + 1);
		for (size_t j = 0; j < host->n; j++) {
			double c = v->cost_on_host ? v->cost_on_host[j] : NAN;
			double o = v->overhead_on_host ? v->overhead_on_host[j] : NAN;
			stack_add(row, j, isfinite(c) ? fmax(c - (isfinite(o) ? o : 0), 0) : NAN);
			stack_add(over, j, o);
		}
	}
	memcpy(ret->t, host->t, host->n * sizeof(double));
	return 0;
}

/* The top VMs' legend entries: "name: cost now". */
static void stack_names(const struct report_vm *vms, const struct ranked *rank, size_t top, char (*names)[96])
{
	for (size_t k = 0; k < top; k++) {
		const struct report_vm *v = &vms[rank[k].i];
		char b[32] = "n/a";
		if (rank[k].cost >= 0)
			fmt_bytes(b, sizeof(b), (int64_t)rank[k].cost);
		snprintf(names[k], sizeof(names[k]), "%s: %s", v->name[0] ? v->name : "unnamed", b);
	}
}

static const char *const stack_colors[STACK_TOP] = {"#4c78a8", "#f58518", "#54a24b", "#b279a2",
						    "#eeca3b", "#9d755d", "#ff9da6", "#79706e"};

static void host_stack_chart(FILE *f, const struct series_set *host, const struct series_set *st, size_t top,
			     size_t others, const struct report_vm *vms, const struct ranked *rank, double since,
			     double until)
{
	char names[STACK_TOP][96], other_name[64];
	stack_names(vms, rank, top, names);
	snprintf(other_name, sizeof(other_name), "the other %zu VMs", others);
	struct svg_series se[CHART_MAX_SERIES];
	size_t ns = 0;
	for (size_t k = 0; k < top; k++)
		se[ns++] = (struct svg_series){.name = names[k], .color = stack_colors[k], .y = series_row(st, k),
					       .style = AREA};
	if (others)
		se[ns++] = (struct svg_series){.name = other_name, .color = "#bab0ac", .y = series_row(st, top),
					       .style = AREA};
	se[ns++] = (struct svg_series){.name = "VMM overhead, all VMs", .color = C_OVERHEAD,
				       .y = series_row(st, top + 1), .style = AREA};
	se[ns++] = (struct svg_series){.name = "saved by KSM (would be resident without it)", .color = C_KSM,
				       .y = series_row(host, SERIES_HOST_KSM_SAVED), .style = AREA};
	se[ns++] = (struct svg_series){.name = "host used (total - available)", .color = C_TOTAL,
				       .y = series_row(host, SERIES_HOST_USED), .style = DASHED};
	se[ns++] = (struct svg_series){.name = "swap used", .color = C_SWAP, .y = series_row(host, SERIES_HOST_SWAP),
				       .style = LINE};
	/* Not the total: at its scale 100 VMs' bands would be hairlines (the cards give it). */
	chart(f, &(struct chart){"Where the host's memory goes", "each VM's memory cost (PSS plus huge pages) above its "
			       "VMM overhead; KSM's savings on top",
				 SVG_BYTES, st, since, until, 300, 0, false},
	      se, ns);
}

void report_html_host(FILE *f, const struct series_set *host, const struct report_vm *vms, size_t n, double since,
		      double until)
{
	struct ranked *rank = rank_by_cost(vms, n);
	struct series_set st = {0};
	size_t top = n < STACK_TOP ? n : STACK_TOP;
	if (!rank || stack_rows(host, vms, rank, n, top, &st) < 0)
		fprintf(f, "<p class=\"note\">(out of memory stacking the host's memory)</p>\n");
	else
		host_stack_chart(f, host, &st, top, n - top, vms, rank, since, until);
	series_free(&st);
	free(rank);
}

void report_html_flagged(FILE *f, const struct growth_params *p, double window_seconds, const struct report_vm *vms,
			 size_t n)
{
	char a[64], b[64];
	size_t flagged = 0;
	fprintf(f, "<div class=\"flagged\"><b>Growing overhead:</b> ");
	for (size_t i = 0; i < n; i++) {
		const struct growth_result *g = vms[i].growth;
		if (!g || !g->flagged)
			continue;
		fmt_signed_bytes(a, sizeof(a), g->bytes_per_hour);
		fprintf(f, "%s<a href=\"#vm-%lld\">", flagged++ ? ", " : "", (long long)vms[i].id);
		html_escape(f, vms[i].name[0] ? vms[i].name : "unnamed");
		fprintf(f, "</a> <span class=\"bad\">%s/hour</span>", a);
	}
	if (!flagged)
		fprintf(f, "no VM");
	fmt_bytes(a, sizeof(a), (int64_t)p->threshold_bytes_per_hour);
	fmt_bytes(b, sizeof(b), (int64_t)p->min_growth_bytes);
	fprintf(f, "<span class=\"note\">Theil-Sen trend of each VM's overhead over the last %g s; flagged at %s/hour "
		   "or more, %s in the window, sustained (Kendall's tau &ge; %.2f); a VM's first %g s and samples "
		   "before its RAM was populated are warm-up.</span></div>\n",
		window_seconds, a, b, p->min_consistency, p->warmup_seconds);
}

/* The index of the VM running at until with the most of row now, at least REPORT_BUSY_PERCENT and
 * not among taken[0..ntaken); n when there is none. */
static size_t most_of(const struct report_vm *vms, size_t n, double until, enum series_vm_row row,
		      const size_t *taken, size_t ntaken)
{
	size_t best = n;
	double most = REPORT_BUSY_PERCENT;
	for (size_t i = 0; i < n; i++) {
		double v = vm_now(&vms[i], row);
		bool was_taken = false;
		for (size_t k = 0; k < ntaken; k++)
			was_taken |= taken[k] == i;
		if (!was_taken && report_vm_running_at(&vms[i], until) && v >= most) {
			most = v;
			best = i;
		}
	}
	return best;
}

/* Up to REPORT_BUSIEST of them by row, the most first: their indexes into ret; how many. */
static size_t busiest_by(const struct report_vm *vms, size_t n, double until, enum series_vm_row row, size_t *ret)
{
	size_t k = 0, i;
	while (k < REPORT_BUSIEST && (i = most_of(vms, n, until, row, ret, k)) < n)
		ret[k++] = i;
	return k;
}

void report_busiest(const struct report_vm *vms, size_t n, double until, struct report_busy *ret)
{
	ret->ncpu = busiest_by(vms, n, until, SERIES_VM_CPU, ret->cpu);
	ret->ndelay = busiest_by(vms, n, until, SERIES_VM_VCPU_DELAY, ret->delay);
}

/* The busiest by row, idx[0..k): "NAME 190%" each, linked to its section; "none". */
static void busiest_line(FILE *f, const struct report_vm *vms, const size_t *idx, size_t k, enum series_vm_row row)
{
	for (size_t j = 0; j < k; j++) {
		const struct report_vm *v = &vms[idx[j]];
		fprintf(f, "%s<a href=\"#vm-%lld\">", j ? ", " : "", v->id);
		html_escape(f, v->name[0] ? v->name : "unnamed");
		fprintf(f, "</a> %.0f%%", vm_now(v, row));
	}
	if (!k)
		fputs("none", f);
}

void report_html_busiest(FILE *f, const struct report_vm *vms, const struct report_busy *busy)
{
	fputs("<div class=\"busy\"><b>Busiest at the last sample:</b> CPU ", f);
	busiest_line(f, vms, busy->cpu, busy->ncpu, SERIES_VM_CPU);
	fputs("; vCPU delay ", f);
	busiest_line(f, vms, busy->delay, busy->ndelay, SERIES_VM_VCPU_DELAY);
	fprintf(f, "<span class=\"note\">The VMs with the most CPU (the VMM and its helpers) and the most vCPU delay "
		   "(vCPU threads waiting for a host CPU), percent of one CPU over the last interval; up to %d each, "
		   "from %.0f%%.</span></div>\n",
		REPORT_BUSIEST, REPORT_BUSY_PERCENT);
}

void report_html_ksm(FILE *f, const struct series_set *host, double since, double until)
{
	fprintf(f, "<div class=\"pair\">");
	const struct svg_series ksm[] = {
		{.name = "saved: (pages_sharing + ksm_zero_pages) x page size", .color = C_KSM,
		 .y = series_row(host, SERIES_HOST_KSM_SAVED), .style = AREA},
		{.name = "general_profit (saved minus KSM metadata)", .color = C_PROFIT,
		 .y = series_row(host, SERIES_HOST_KSM_PROFIT), .style = DASHED},
	};
	chart(f, &(struct chart){"What KSM saves", NULL, SVG_BYTES, host, since, until, 240, 560, false}, ksm, 2);
	const struct svg_series cpu[] = {
		{.name = "ksmd CPU (percent of one CPU)", .color = C_CPU, .y = series_row(host, SERIES_HOST_KSMD_CPU),
		 .style = AREA},
	};
	chart(f, &(struct chart){"What ksmd costs", "its scheduler run time between samples", SVG_PERCENT, host, since,
				 until, 240, 560, false},
	      cpu, 1);
	fprintf(f, "</div>\n");
}

void report_html_kvm(FILE *f, const struct series_set *exits, double since, double until)
{
	const struct svg_series rate[] = {
		{.name = "exits per second", .color = C_CPU, .y = series_row(exits, 0), .style = AREA},
	};
	chart(f, &(struct chart){"KVM exits, all VMs", "debugfs kvm/exits", SVG_PLAIN, exits, since, until, 180, 0, false},
	      rate, 1);
}

/* A number cell: the value to sort by in data-v, and its text ("n/a" and no value when unknown). */
static void cell_num(FILE *f, double v, const char *text)
{
	if (isfinite(v))
		fprintf(f, "<td data-v=\"%.6g\">%s</td>", v, text);
	else
		fputs("<td>n/a</td>", f);
}

static void cell_bytes(FILE *f, double v)
{
	char b[32] = "";
	if (isfinite(v))
		fmt_bytes(b, sizeof(b), (int64_t)llround(v));
	cell_num(f, v, b);
}

static void cell_spark(FILE *f, const struct report_vm *v, enum series_vm_row row, const char *color)
{
	fputs("<td class=\"s\">", f);
	if (v->series)
		svg_sparkline(f, series_row(v->series, row), v->series->n, 80, 18, color);
	fputs("</td>", f);
}

static void vm_row(FILE *f, const struct report_vm *v)
{
	const struct growth_result *g = v->growth;
	char b[64];
	fprintf(f, "<tr%s><td class=\"l\">", g && g->flagged ? " class=\"flag\"" : "");
	if (v->charted)
		fprintf(f, "<a href=\"#vm-%lld\">", v->id);
	html_escape(f, v->name[0] ? v->name : "unnamed");
	fprintf(f, "%s <span class=\"note\">%d</span></td>", v->charted ? "</a>" : "", v->pid);
	cell_bytes(f, v->guest_ram_bytes.known ? (double)v->guest_ram_bytes.v : NAN);
	cell_bytes(f, vm_now(v, SERIES_VM_COST));
	cell_spark(f, v, SERIES_VM_COST, C_GUEST);
	cell_bytes(f, vm_now(v, SERIES_VM_OVERHEAD));
	cell_bytes(f, vm_now(v, SERIES_VM_SAVED));
	double cpu = vm_now(v, SERIES_VM_CPU), delay = vm_now(v, SERIES_VM_VCPU_DELAY);
	snprintf(b, sizeof(b), "%.1f%%", cpu);
	cell_num(f, cpu, b);
	cell_spark(f, v, SERIES_VM_CPU, C_CPU);
	snprintf(b, sizeof(b), "%.1f%%", delay);
	cell_num(f, delay, b);
	if (g && isfinite(g->bytes_per_hour)) {
		fmt_signed_bytes(b, sizeof(b), g->bytes_per_hour);
		fprintf(f, "<td data-v=\"%.6g\" class=\"%s\">%s/h</td></tr>\n", g->bytes_per_hour,
			g->flagged ? "bad" : "", b);
	} else {
		fprintf(f, "<td>%s</td></tr>\n", g ? growth_state_name(g->state) : "n/a");
	}
}

void report_html_table(FILE *f, const struct report_vm *vms, size_t n, size_t charted)
{
	fprintf(f, "<h2>Every VM <input id=\"vmfilter\" type=\"search\" placeholder=\"filter by name\"></h2>\n"
		   "<p class=\"sub\">Now: the last point of the charts (a mean over their last span). Click a "
		   "column to sort, a name for its charts.</p>\n"
		   "<table id=\"vms\"><thead><tr><th class=\"l\" data-key=\"name\">VM <span class=\"note\">pid</span></th>"
		   "<th data-key=\"ram\" data-num>guest RAM</th><th data-key=\"cost\" data-num>memory cost</th><th></th>"
		   "<th data-key=\"overhead\" data-num>overhead</th><th data-key=\"saved\" data-num>KSM saves</th>"
		   "<th data-key=\"cpu\" data-num>CPU</th><th></th><th data-key=\"delay\" data-num>vCPU delay</th>"
		   "<th data-key=\"growth\" data-num>overhead growth</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < n; i++)
		vm_row(f, &vms[i]);
	fputs("</tbody></table>\n", f);
	if (n)
		fputs("<h2>Each VM</h2>\n", f);
	if (charted < n)
		fprintf(f, "<p class=\"sub\">Charts of %zu of the %zu VMs: the flagged, the busiest, then the costliest "
			   "(<code>vmhost report --charts N</code> or <code>all</code> for more).</p>\n",
			charted, n);
}

static void growth_text(char *buf, size_t cap, const struct growth_result *r)
{
	if (isfinite(r->bytes_per_hour)) {
		char b[40];
		fmt_signed_bytes(b, sizeof(b), r->bytes_per_hour);
		snprintf(buf, cap, "%s: overhead %s/hour (sustained %.2f, %zu samples)", growth_state_name(r->state), b,
			 r->consistency, r->samples);
	} else {
		snprintf(buf, cap, "%s (%zu usable samples, %zu in warm-up)", growth_state_name(r->state), r->samples,
			 r->warmup_samples);
	}
}

/* The chart note of a VM outside the growth window. */
static const struct growth_result no_verdict = {.state = GROWTH_TOO_FEW, .bytes_per_hour = NAN,
						.consistency = NAN, .anchor_bytes = NAN};

void report_html_vm_chart(FILE *f, const struct report_vm *vm, const struct series_set *s, double since,
			  double until)
{
	const struct growth_result *g = vm->growth ? vm->growth : &no_verdict;
	char title[400], note[400], verdict[200], over[32] = "n/a", saved[32] = "n/a";
	snprintf(title, sizeof(title), "%s (pid %d)", vm->name[0] ? vm->name : "unnamed", vm->pid);
	growth_text(verdict, sizeof(verdict), g);
	double v = series_last(series_row(s, SERIES_VM_OVERHEAD), s->n);
	if (isfinite(v))
		fmt_bytes(over, sizeof(over), (int64_t)v);
	v = series_last(series_row(s, SERIES_VM_SAVED), s->n);
	if (isfinite(v))
		fmt_bytes(saved, sizeof(saved), (int64_t)v);
	snprintf(note, sizeof(note), "%s; now: overhead %s, KSM saves %s", verdict, over, saved);
	/* Huge pages are in neither RSS nor PSS: on top of the stack, where the VM has any. */
	double huge = series_last(series_row(s, SERIES_VM_HUGETLB), s->n);
	bool on_huge = series_mean(series_row(s, SERIES_VM_HUGETLB), s->n) > 0;
	if (on_huge && isfinite(huge)) {
		char b[32];
		fmt_bytes(b, sizeof(b), (int64_t)huge);
		size_t l = strlen(note);
		snprintf(note + l, sizeof(note) - l, ", huge pages %s", b);
	}
	/* Overhead at the bottom of the stack, so its trend line sits on the band it fits. */
	struct svg_series series[6];
	size_t n = 0;
	series[n++] = (struct svg_series){.name = "overhead (beyond guest RAM)", .color = C_OVERHEAD,
					  .y = series_row(s, SERIES_VM_OVERHEAD), .style = AREA};
	series[n++] = (struct svg_series){.name = "guest RAM merged by KSM", .color = C_MERGED,
					  .y = series_row(s, SERIES_VM_MERGED), .style = AREA};
	series[n++] = (struct svg_series){.name = "guest RAM, resident, not merged", .color = C_GUEST,
					  .y = series_row(s, SERIES_VM_PRIVATE), .style = AREA};
	if (on_huge)
		series[n++] = (struct svg_series){.name = "guest RAM on huge pages (hugetlbfs, not in RSS)",
						  .color = C_HUGE, .y = series_row(s, SERIES_VM_HUGETLB), .style = AREA};
	series[n++] = (struct svg_series){.name = "saved by KSM (not resident)", .color = C_KSM,
					  .y = series_row(s, SERIES_VM_SAVED), .style = LINE};
	if (g->flagged && isfinite(g->bytes_per_hour))
		series[n++] = (struct svg_series){.name = "overhead trend (Theil-Sen)", .color = C_FIT,
						  .y = series_row(s, SERIES_VM_FIT), .style = DASHED};
	chart(f, &(struct chart){title, note, SVG_BYTES, s, since, until, 210, 0, true}, series, n);
}

void report_html_vm_begin(FILE *f, const struct report_vm *vm)
{
	const struct growth_result *g = vm->growth ? vm->growth : &no_verdict;
	char verdict[200], cost[32] = "n/a";
	growth_text(verdict, sizeof(verdict), g);
	double c = vm_now(vm, SERIES_VM_COST);
	if (isfinite(c))
		fmt_bytes(cost, sizeof(cost), (int64_t)c);
	fprintf(f, "<details class=\"vm%s\" id=\"vm-%lld\"%s><summary>", g->flagged ? " flagged" : "",
		(long long)vm->id, g->flagged ? " open" : "");
	html_escape(f, vm->name[0] ? vm->name : "unnamed");
	fprintf(f, " <span class=\"note\">pid %d &middot; ", vm->pid);
	html_escape(f, vm->vmm);
	if (vm->uuid[0]) {
		fprintf(f, " &middot; ");
		html_escape(f, vm->uuid);
	}
	fprintf(f, " &middot; memory cost %s &middot; ", cost);
	html_escape(f, verdict);
	fprintf(f, "</span></summary>\n");
}

void report_html_vm_cpu(FILE *f, const struct report_vm *vm, const struct series_set *s, double since, double until)
{
	if (!isfinite(series_mean(series_row(s, SERIES_VM_CPU), s->n)))
		return; /* recorded from schema 2 on */
	const struct svg_series cpu[] = {
		{.name = "CPU of the VMM and helpers", .color = C_CPU, .y = series_row(s, SERIES_VM_CPU), .style = AREA},
		{.name = "vCPU delay (runnable, no host CPU)", .color = C_OVERHEAD, .y = series_row(s, SERIES_VM_VCPU_DELAY),
		 .style = LINE},
		{.name = "stalled on memory (copy-on-write, swap-in, reclaim, thrashing, compaction)", .color = C_SWAP,
		 .y = series_row(s, SERIES_VM_STALL), .style = LINE},
	};
	/* Stalls only where they were recorded (schema 7, delay accounting on): no empty legend. */
	size_t lines = isfinite(series_mean(series_row(s, SERIES_VM_STALL), s->n)) ? 3 : 2;
	char title[440];
	snprintf(title, sizeof(title), "%s: CPU and delay%s, percent of one CPU", vm->name[0] ? vm->name : "unnamed",
		 lines == 3 ? ", memory stalls" : "");
	chart(f,
	      &(struct chart){title,
			      lines == 3 ? "from /proc stat ticks, the vCPU threads' schedstat and delay accounting"
					 : "from /proc stat ticks and the vCPU threads' schedstat",
			      SVG_PERCENT, s, since, until, 160, 0, true},
	      cpu, lines);
}

void report_html_vm_io(FILE *f, const struct report_vm *vm, const struct series_set *s, double since, double until)
{
	if (!isfinite(series_mean(series_row(s, SERIES_VM_IO_WRITE), s->n)) &&
	    !isfinite(series_mean(series_row(s, SERIES_VM_NET_RX), s->n)))
		return; /* recorded from schema 4 on */
	const struct svg_series io[] = {
		{.name = "storage read", .color = C_CPU, .y = series_row(s, SERIES_VM_IO_READ), .style = LINE},
		{.name = "storage written", .color = C_OVERHEAD, .y = series_row(s, SERIES_VM_IO_WRITE), .style = LINE},
		{.name = "taps: the guest sent", .color = C_PROFIT, .y = series_row(s, SERIES_VM_NET_RX), .style = LINE},
		{.name = "taps: the guest received", .color = C_FIT, .y = series_row(s, SERIES_VM_NET_TX), .style = DASHED},
	};
	char title[440];
	snprintf(title, sizeof(title), "%s: disk and network, bytes a second", vm->name[0] ? vm->name : "unnamed");
	chart(f, &(struct chart){title, "/proc/PID/io of the VMM and helpers; the taps' counters as the host sees them",
				 SVG_BYTES, s, since, until, 160, 0, true},
	      io, 4);
}

void report_html_vm_disks(FILE *f, const struct report_vm *vm, const struct series_set *s, const char (*devices)[64],
			  size_t ndevices, size_t more, double since, double until)
{
	const char *const colors[] = {C_GUEST, C_OVERHEAD, C_KSM, C_CPU, C_SWAP, C_HUGE};
	struct svg_series se[CHART_MAX_SERIES];
	char names[CHART_MAX_SERIES][80];
	size_t n = 0;
	for (size_t d = 0; d < ndevices && n + 2 <= CHART_MAX_SERIES; d++) {
		const char *color = colors[d % (sizeof(colors) / sizeof(colors[0]))];
		snprintf(names[n], sizeof(names[n]), "%s written", devices[d]);
		se[n] = (struct svg_series){.name = names[n], .color = color, .y = series_row(s, 2 * d + 1), .style = LINE};
		n++;
		snprintf(names[n], sizeof(names[n]), "%s read", devices[d]);
		se[n] = (struct svg_series){.name = names[n], .color = color, .y = series_row(s, 2 * d), .style = DASHED};
		n++;
	}
	char title[440], note[160];
	snprintf(title, sizeof(title), "%s: disks, bytes a second", vm->name[0] ? vm->name : "unnamed");
	int w = snprintf(note, sizeof(note), "each disk as QEMU counts it (record --io)");
	if (more && w > 0 && (size_t)w < sizeof(note))
		snprintf(note + w, sizeof(note) - (size_t)w, "; %zu more disk%s not drawn", more, more == 1 ? "" : "s");
	chart(f, &(struct chart){title, note, SVG_BYTES, s, since, until, 160, 0, true}, se, n);
}

void report_html_vm_rate(FILE *f, const struct report_vm *vm, const char *what, const char *note,
			 const struct series_set *rate, double since, double until)
{
	const struct svg_series se[] = {{.name = what, .color = C_PROFIT, .y = series_row(rate, 0), .style = AREA}};
	char title[440];
	snprintf(title, sizeof(title), "%s: %s", vm->name[0] ? vm->name : "unnamed", what);
	chart(f, &(struct chart){title, note, SVG_PLAIN, rate, since, until, 160, 0, true}, se, 1);
}

void report_html_vm_end(FILE *f) { fputs("</details>\n", f); }

/* Sorting and filtering the table, and opening a VM's section when its link is followed. The
 * browser test's hooks: "#sort=KEY" in the address clicks that column once when the page loads,
 * "#filter=TEXT" types TEXT into the filter, "#first-screen" lists the captions and legends the window shows in the body's data-first-screen. */
static const char page_script[] =
	/* The sharing map (out/report/report_share.c): a cell's figures under the pointer, in the map's title
	 * and the line below it; "#cell=ROW,COLUMN" shows one when the page loads. */
	"(function(){var m=document.getElementById('sharemap');if(!m)return;"
	"var n=+m.getAttribute('data-n'),v=m.getAttribute('data-mib').split(','),er=m.getAttribute('data-err').split(','),"
	"x0=+m.getAttribute('data-x'),y0=+m.getAttribute('data-y'),c=+m.getAttribute('data-cell'),"
	"nm=m.querySelectorAll('text.r'),tip=document.getElementById('sharetip'),tt=m.querySelector('title');"
	"function show(i,j){if(!(i>=0&&j>=0&&i<n&&j<n))return;var a=nm[i].textContent,b=nm[j].textContent,"
	"s=(i===j?a+': '+v[i*n+j]+' MiB it holds twice or more':a+' \u2192 '+b+': '+v[i*n+j]+' MiB of '+a+"
	"'\u2019s memory also in '+b)+' (\u00b1'+er[i]+' MiB)';tip.textContent=s;tt.textContent=s;}"
	"m.addEventListener('mousemove',function(e){var p=m.createSVGPoint();p.x=e.clientX;p.y=e.clientY;"
	"p=p.matrixTransform(m.getScreenCTM().inverse());show(Math.floor((p.y-y0)/c),Math.floor((p.x-x0)/c));});"
	"var h=/^#cell=(\\d+),(\\d+)$/.exec(location.hash);if(h)show(+h[1],+h[2]);})();"
	"(function(){if(location.hash==='#first-screen'){var v=[],e=document.querySelectorAll('figcaption,.legend span');"
	"for(var k=0;k<e.length;k++)if(e[k].getBoundingClientRect().bottom<=innerHeight)v.push(e[k].textContent);"
	"document.body.setAttribute('data-first-screen',v.join('|'));}"
	"var t=document.getElementById('vms');if(!t)return;var b=t.tBodies[0],"
	"ths=t.tHead.rows[0].cells;"
	"function key(r,i,num){var c=r.cells[i];if(!num)return c.textContent.toLowerCase();"
	"var v=parseFloat(c.getAttribute('data-v'));return isNaN(v)?null:v;}"
	"function sort(th){var i=th.cellIndex,num=th.hasAttribute('data-num'),d=th.getAttribute('aria-sort'),"
	"asc=d?d==='descending':!num;"
	"for(var k=0;k<ths.length;k++)ths[k].removeAttribute('aria-sort');"
	"th.setAttribute('aria-sort',asc?'ascending':'descending');"
	"var rows=Array.prototype.slice.call(b.rows);"
	"rows.sort(function(x,y){var p=key(x,i,num),q=key(y,i,num);"
	"if(p===null||q===null)return(p===null)-(q===null);return(p<q?-1:p>q?1:0)*(asc?1:-1);});"
	"rows.forEach(function(r){b.appendChild(r);});}"
	"for(var k=0;k<ths.length;k++)if(ths[k].hasAttribute('data-key'))"
	"ths[k].addEventListener('click',function(e){sort(e.currentTarget);});"
	"var q=document.getElementById('vmfilter');q.addEventListener('input',function(){"
	"var s=q.value.toLowerCase();for(var k=0;k<b.rows.length;k++)"
	"b.rows[k].hidden=!!s&&b.rows[k].cells[0].textContent.toLowerCase().indexOf(s)<0;});"
	"function openHash(){var e=location.hash&&document.getElementById(location.hash.slice(1));"
	"if(e&&e.tagName==='DETAILS')e.open=true;}"
	"window.addEventListener('hashchange',openHash);openHash();"
	"var m=/^#sort=(\\w+)$/.exec(location.hash);"
	"if(m){var h=t.querySelector('th[data-key=\"'+m[1]+'\"]');if(h)h.click();}"
	"m=/^#filter=(.*)$/.exec(location.hash);"
	"if(m){q.value=decodeURIComponent(m[1]);q.dispatchEvent(new Event('input'));}})();";

void report_html_end(FILE *f, size_t vms, const char *db)
{
	if (vms == 0)
		fprintf(f, "<p>No VM was recorded in this time range.</p>\n");
	char now[64];
	fmt_time(now, sizeof(now), clock_wall_seconds());
	fprintf(f, "<footer>Generated by vmhost %s on %s from ", VMHOST_VERSION, now);
	html_escape(f, db);
	fprintf(f, ". Means over longer intervals replace old samples (docs/record.md); the host's charts show at most "
		   "%d points, a VM's %d.</footer>\n<script>%s</script>\n",
		REPORT_MAX_POINTS, REPORT_VM_POINTS, page_script);
	html_page_end(f);
}
