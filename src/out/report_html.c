#include "out/report_html.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"
#include "out/html.h"
#include "out/svg.h"
#include "out/table.h"

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
#define CHART_MAX_SERIES 8

struct chart {
	const char *title, *note; /* note may be NULL */
	enum svg_unit unit;
	const struct series_set *set; /* the x values of every series */
	double since, until;
	int height;
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
	const double *t = c->set->t;
	size_t n = c->set->n;
	double gap = svg_gap_for(t, n);
	nseries = nseries < CHART_MAX_SERIES ? nseries : CHART_MAX_SERIES;
	for (size_t i = 0; i < nseries; i++) {
		se[i] = series[i];
		se[i].x = t;
		se[i].n = n;
		se[i].gap = gap;
	}
	fprintf(f, "<figure class=\"chart\"><figcaption>");
	html_escape(f, c->title);
	if (c->note) {
		fprintf(f, "<span class=\"note\">");
		html_escape(f, c->note);
		fprintf(f, "</span>");
	}
	fprintf(f, "</figcaption>\n");
	struct svg *s = svg_begin_inline(f, CHART_W, c->height);
	if (!s) {
		fprintf(f, "<p class=\"note\">(out of memory drawing this chart)</p></figure>\n");
		return;
	}
	struct svg_plot p;
	double ymax = svg_stacked_max(se, nseries);
	svg_plot_begin(s, &p, &(struct svg_plot_spec){
		.left = CHART_LEFT, .top = CHART_TOP, .width = CHART_W - CHART_LEFT - CHART_RIGHT,
		.height = c->height - CHART_TOP - CHART_BOTTOM,
		.x = {.min = isfinite(c->since) ? c->since : n ? t[0] : 0,
		      .max = isfinite(c->until) ? c->until : n ? t[n - 1] : 1, .time = true},
		.y = {.min = 0, .max = ymax > 0 ? ymax : 1, .unit = c->unit},
		.legend = SVG_LEGEND_NONE,
	});
	int r = 0;
	for (size_t i = 0; i < nseries; i++)
		if (svg_plot_add(&p, &se[i]) < 0)
			r = -ENOMEM;
	svg_plot_end(&p);
	if (n == 0)
		svg_text(s, CHART_W / 2.0, c->height / 2.0, "middle", 12, "no samples");
	svg_end(s);
	if (r < 0)
		fprintf(f, "<p class=\"note\">(out of memory stacking this chart: bands drawn unstacked)</p>");
	chart_legend(f, se, nseries);
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

void report_html_host(FILE *f, const struct series_set *host, double since, double until)
{
	fprintf(f, "<h2>Host</h2>\n");
	const struct svg_series mem[] = {
		{.name = "used (total - available)", .color = C_GUEST, .y = series_row(host, SERIES_HOST_USED),
		 .style = AREA},
		{.name = "total", .color = C_TOTAL, .y = series_row(host, SERIES_HOST_TOTAL), .style = DASHED},
		{.name = "swap used", .color = C_SWAP, .y = series_row(host, SERIES_HOST_SWAP), .style = LINE},
	};
	chart(f, &(struct chart){"Host memory", NULL, SVG_BYTES, host, since, until, 250}, mem, 3);
	const struct svg_series ksm[] = {
		{.name = "saved: (pages_sharing + ksm_zero_pages) x page size", .color = C_KSM,
		 .y = series_row(host, SERIES_HOST_KSM_SAVED), .style = AREA},
		{.name = "general_profit (saved minus KSM metadata)", .color = C_PROFIT,
		 .y = series_row(host, SERIES_HOST_KSM_PROFIT), .style = DASHED},
	};
	chart(f, &(struct chart){"KSM savings", NULL, SVG_BYTES, host, since, until, 220}, ksm, 2);
	const struct svg_series cpu[] = {
		{.name = "ksmd CPU (percent of one CPU)", .color = C_CPU, .y = series_row(host, SERIES_HOST_KSMD_CPU),
		 .style = AREA},
	};
	chart(f, &(struct chart){"ksmd CPU", "from ksmd's scheduler run time between samples", SVG_PERCENT, host, since,
				 until, 200},
	      cpu, 1);
}

void report_html_kvm(FILE *f, const struct series_set *exits, double since, double until)
{
	const struct svg_series rate[] = {
		{.name = "exits per second", .color = C_CPU, .y = series_row(exits, 0), .style = AREA},
	};
	chart(f, &(struct chart){"KVM exits, all VMs", "debugfs kvm/exits", SVG_PLAIN, exits, since, until, 200}, rate,
	      1);
}

static void cell_bytes(FILE *f, maybe_i64 v)
{
	char b[32];
	if (!v.known) {
		fputs("<td>n/a</td>", f);
		return;
	}
	fmt_bytes(b, sizeof(b), v.v);
	fprintf(f, "<td>%s</td>", b);
}

static void vm_row(FILE *f, const struct report_vm *v)
{
	const struct growth_result *g = v->growth;
	char a[64], b[64];
	fprintf(f, "<tr%s><td class=\"l\">", g && g->flagged ? " class=\"flag\"" : "");
	html_escape(f, v->name[0] ? v->name : "unnamed");
	if (v->uuid[0]) {
		fprintf(f, "<br><span class=\"note\" style=\"margin:0\">");
		html_escape(f, v->uuid);
		fprintf(f, "</span>");
	}
	fprintf(f, "</td><td>%d</td><td class=\"l\">", v->pid);
	html_escape(f, v->vmm);
	fprintf(f, "</td>");
	cell_bytes(f, v->guest_ram_bytes);
	fmt_time_short(a, sizeof(a), v->first_seconds);
	fmt_time_short(b, sizeof(b), v->last_seconds);
	fprintf(f, "<td class=\"l\">%s</td><td class=\"l\">%s</td><td>%zu</td>", a, b, v->samples);
	if (!g) {
		fprintf(f, "<td class=\"l\">not in the growth window</td><td>n/a</td><td>n/a</td></tr>\n");
		return;
	}
	fprintf(f, "<td class=\"l %s\">%s</td>", g->flagged ? "bad" : "", growth_state_name(g->state));
	if (isfinite(g->bytes_per_hour)) {
		fmt_signed_bytes(a, sizeof(a), g->bytes_per_hour);
		fprintf(f, "<td>%s</td><td>%.2f</td></tr>\n", a, g->consistency);
	} else {
		fprintf(f, "<td>n/a</td><td>n/a</td></tr>\n");
	}
}

void report_html_growth(FILE *f, const struct growth_params *p, double window_seconds, const struct report_vm *vms,
			size_t n)
{
	char a[64], b[64];
	fprintf(f, "<h2>Memory growth</h2>\n<p class=\"sub\">Theil-Sen trend of each VM's overhead over the last "
		   "%g s of the recording; flagged when at least ",
		window_seconds);
	fmt_bytes(a, sizeof(a), (int64_t)p->threshold_bytes_per_hour);
	fmt_bytes(b, sizeof(b), (int64_t)p->min_growth_bytes);
	fprintf(f, "%s/hour, %s in the window, and sustained (Kendall's tau &ge; %.2f). Samples taken before guest RAM "
		   "was fully populated, or in a VM's first %g s, are warm-up and ignored.</p>\n",
		a, b, p->min_consistency, p->warmup_seconds);
	fprintf(f, "<table><thead><tr><th class=\"l\">VM</th><th>PID</th><th class=\"l\">VMM</th>"
		   "<th>guest RAM</th><th class=\"l\">first sample</th><th class=\"l\">last sample</th>"
		   "<th>samples</th><th class=\"l\">growth</th><th>overhead/hour</th><th>sustained</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < n; i++)
		vm_row(f, &vms[i]);
	fprintf(f, "</tbody></table>\n");
}

void report_html_vms_begin(FILE *f)
{
	fprintf(f, "<h2>Virtual machines</h2>\n<p class=\"sub\">Stack height is the VM's resident memory (RSS): overhead "
		   "at the bottom, then guest RAM (and on top, guest RAM on huge pages, which RSS does not count). Overhead is the cheap estimate (RSS beyond guest RAM), a lower bound "
		   "until the guest has touched all its RAM.</p>\n");
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
	fprintf(f, "<div class=\"%s\">", g->flagged ? "vm flagged" : "vm");
	chart(f, &(struct chart){title, note, SVG_BYTES, s, since, until, 210}, series, n);
	/* CPU, where the recording has it (schema 2 and later). */
	if (isfinite(series_mean(series_row(s, SERIES_VM_CPU), s->n))) {
		const struct svg_series cpu[] = {
			{.name = "CPU of the VMM and helpers", .color = C_CPU, .y = series_row(s, SERIES_VM_CPU), .style = AREA},
			{.name = "vCPU delay (runnable, no host CPU)", .color = C_OVERHEAD,
			 .y = series_row(s, SERIES_VM_VCPU_DELAY), .style = LINE},
		};
		char cpu_title[440];
		snprintf(cpu_title, sizeof(cpu_title), "%s: CPU, percent of one CPU", title);
		chart(f, &(struct chart){cpu_title, "from /proc stat ticks and the vCPU threads' schedstat", SVG_PERCENT, s,
					 since, until, 160},
		      cpu, 2);
	}
	fprintf(f, "</div>\n");
}

void report_html_end(FILE *f, size_t vms, size_t charted, const char *db)
{
	if (vms > charted)
		fprintf(f, "<p class=\"note\">%zu more VM series are in the table above but not charted.</p>\n",
			vms - charted);
	if (vms == 0)
		fprintf(f, "<p>No VM was recorded in this time range.</p>\n");
	char now[64];
	fmt_time(now, sizeof(now), clock_wall_seconds());
	fprintf(f, "<footer>Generated by vmhost %s on %s from ", VMHOST_VERSION, now);
	html_escape(f, db);
	fprintf(f, ". Means over longer intervals replace old samples (docs/record.md); each chart shows at most %d "
		   "points.</footer>\n",
		REPORT_MAX_POINTS);
	html_page_end(f);
}
