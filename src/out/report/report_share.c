#include "out/report/report_share.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out/report/html.h"
#include "out/svg.h"
#include "out/fmt.h"

#define MAP_PLOT 880.0  /* px of the cells' square at most (cells of 6 px at least): the page's width less the names */
#define CELL_MAX 28.0
#define CELL_MIN 6.0
#define LABEL_CHARS 24  /* of a VM's name on the axes */

static const char *const bin_colors[SHARE_BINS] = {"#fff3b0", "#fed976", "#feb24c", "#fd8d3c",
						   "#fc4e2a", "#e31a1c", "#bd0026", "#800026"};

/* A square-root scale, so that pairs sharing a little still show beside those sharing a lot. */
static int report_share_bin(int64_t pages, int64_t max_pages)
{
	if (pages <= 0 || max_pages <= 0)
		return 0;
	int b = 1 + (int)floor(SHARE_BINS * sqrt((double)pages / (double)max_pages));
	return b > SHARE_BINS ? SHARE_BINS : b;
}

/* The smallest pages of bin b (1..SHARE_BINS) against max. */
static double bin_floor(int b, int64_t max_pages)
{
	double x = (double)(b - 1) / SHARE_BINS;
	return x * x * (double)max_pages;
}

struct map {
	const struct share_run *run;
	size_t *order; /* display place -> VM */
	const long long *sections; /* VM -> its section's id, -1 none; or NULL */
	int64_t max_pages;
	double cell, font, left, top, width, height;
};

static int64_t at(const struct map *m, size_t i, size_t j)
{
	return m->run->pairs[m->order[i] * m->run->n + m->order[j]];
}

static void label_of(const struct share_run_vm *v, char *buf, size_t cap)
{
	if (v->name[0])
		snprintf(buf, cap, "%.*s", LABEL_CHARS, v->name);
	else
		snprintf(buf, cap, "pid %d", (int)v->pid);
}

/* MiB with the digits a reader needs: "0", "0.25", "12.5", "1250". */
static void fmt_mib(FILE *f, int64_t pages, int64_t page_size)
{
	double v = (double)pages * (double)page_size / 1048576.0;
	if (pages == 0)
		fputc('0', f);
	else if (v >= 100)
		fprintf(f, "%.0f", v);
	else if (v >= 10)
		fprintf(f, "%.1f", v);
	else
		fprintf(f, "%.2f", v);
}

static void map_layout(struct map *m)
{
	const struct share_run *r = m->run;
	size_t n = r->n, longest = 4;
	m->cell = fmin(CELL_MAX, fmax(CELL_MIN, MAP_PLOT / (double)(n ? n : 1)));
	m->font = fmin(11, m->cell * 0.9);
	for (size_t i = 0; i < n; i++) {
		char b[LABEL_CHARS + 16];
		label_of(&r->vms[i], b, sizeof(b));
		longest = strlen(b) > longest ? strlen(b) : longest;
	}
	m->left = m->top = 8 + ceil(m->font * 0.62 * (double)longest);
	m->width = m->left + m->cell * (double)n + 8;
	m->height = m->top + m->cell * (double)n + 8;
	m->max_pages = 0;
	for (size_t i = 0; i < n * n; i++)
		m->max_pages = r->pairs[i] > m->max_pages ? r->pairs[i] : m->max_pages;
}

/* The names on both axes: rows on the left (linked to the VM's section), columns above, read
 * upwards. */
static void map_labels(FILE *f, const struct map *m)
{
	for (size_t i = 0; i < m->run->n; i++) {
		char b[LABEL_CHARS + 16];
		label_of(&m->run->vms[m->order[i]], b, sizeof(b));
		double mid = (double)i * m->cell + m->cell / 2;
		long long section = m->sections ? m->sections[m->order[i]] : -1;
		if (section >= 0)
			fprintf(f, "<a href=\"#vm-%lld\">", section);
		fprintf(f, "<text class=\"r\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" dy=\".35em\">", m->left - 4,
			m->top + mid);
		svg_escape(f, b);
		fprintf(f, "</text>%s<text transform=\"translate(%.1f %.1f) rotate(-90)\" dy=\".35em\">",
			section >= 0 ? "</a>" : "", m->left + mid, m->top - 4);
		svg_escape(f, b);
		fputs("</text>\n", f);
	}
}

/* One path per colour, in cell units: a row's run of cells of one colour is one rectangle. */
static void map_cells(FILE *f, const struct map *m)
{
	size_t n = m->run->n;
	fprintf(f, "<g transform=\"translate(%.1f %.1f) scale(%.3f)\">\n", m->left, m->top, m->cell);
	for (int b = 1; b <= SHARE_BINS; b++) {
		bool open = false;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n;) {
				size_t k = j;
				while (k < n && report_share_bin(at(m, i, k), m->max_pages) == b)
					k++;
				if (k == j) {
					j++;
					continue;
				}
				if (!open)
					fprintf(f, "<path class=\"h%d\" d=\"", b);
				open = true;
				fprintf(f, "M%zu %zuh%zuv1h-%zuz", j, i, k - j, k - j);
				j = k;
			}
		if (open)
			fputs("\"/>\n", f);
	}
	fputs("</g>\n", f);
}

/* The figures for the page's script: MiB row by row in the axes' order, each row VM's error. */
static void map_data(FILE *f, const struct map *m)
{
	const struct share_run *r = m->run;
	fprintf(f, " data-n=\"%zu\" data-x=\"%.1f\" data-y=\"%.1f\" data-cell=\"%.3f\" data-mib=\"", r->n, m->left,
		m->top, m->cell);
	for (size_t i = 0; i < r->n; i++)
		for (size_t j = 0; j < r->n; j++) {
			if (i || j)
				fputc(',', f);
			fmt_mib(f, at(m, i, j), r->page_size);
		}
	fputs("\" data-err=\"", f);
	for (size_t i = 0; i < r->n; i++) {
		if (i)
			fputc(',', f);
		fmt_mib(f, r->vms[m->order[i]].error_bound_pages, r->page_size);
	}
	fputc('"', f);
}

static void map_svg(FILE *f, const struct map *m)
{
	/* No wider than drawn: a few VMs' cells stay cells, not tiles. */
	fprintf(f, "<figure class=\"chart\">\n<svg id=\"sharemap\" style=\"max-width:%.0fpx\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" role=\"img\"",
		m->width, m->width, m->height);
	map_data(f, m);
	fprintf(f, "><title>VMs by the memory they share; point at a cell for its figures</title>\n<style>"
		   "#sharemap text{font-size:%.1fpx}", m->font);
	for (int b = 1; b <= SHARE_BINS; b++)
		fprintf(f, "#sharemap .h%d{fill:%s}", b, bin_colors[b - 1]);
	fprintf(f, "</style>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f4f5f7\"/>\n", m->left,
		m->top, m->cell * (double)m->run->n, m->cell * (double)m->run->n);
	map_labels(f, m);
	map_cells(f, m);
	fputs("</svg>\n<div class=\"legend\" style=\"margin-left:0\">", f);
	for (int b = 1; b <= SHARE_BINS; b++) {
		fprintf(f, "<span><i style=\"background:%s;opacity:1\"></i>%s", bin_colors[b - 1], b == 1 ? "&gt; " : "");
		fmt_mib(f, b == 1 ? 0 : (int64_t)ceil(bin_floor(b, m->max_pages)), m->run->page_size);
		fputs(" MiB</span>", f);
	}
	fputs("</div>\n<p class=\"note\" id=\"sharetip\">Point at a cell: the row VM's memory that the column VM "
	      "also holds.</p></figure>\n", f);
}

/* When, how sampled, how exact, and what merging everything would save against what was saved. */
static void map_line(FILE *f, const struct share_run *r, double ksm_saved_now)
{
	char when[64], read[32], err[32], could[32], then[32] = "n/a", now[32] = "n/a";
	int64_t bound = 0, pages = 0;
	for (size_t i = 0; i < r->n; i++) {
		bound = r->vms[i].error_bound_pages > bound ? r->vms[i].error_bound_pages : bound;
		pages += r->vms[i].pages;
	}
	fmt_time(when, sizeof(when), r->t);
	fmt_bytes(read, sizeof(read), pages * r->page_size);
	fmt_bytes(err, sizeof(err), bound * r->page_size);
	fmt_bytes(could, sizeof(could), r->mergeable_savings_bytes);
	if (r->ksm_saved_bytes.known)
		fmt_bytes(then, sizeof(then), r->ksm_saved_bytes.v);
	if (isfinite(ksm_saved_now))
		fmt_bytes(now, sizeof(now), (int64_t)llround(ksm_saved_now));
	fprintf(f, "<p class=\"sub\">Taken %s over %zu VMs (%s of guest RAM read), sampling 1/%lld of the page "
		   "hashes: each figure within &plusmn;%s (two standard errors, the largest of the VMs&apos;). "
		   "With every VM merged KSM could save <b>%s</b>; <b>%s</b> was saved then",
		when, r->n, read, (long long)r->sample_n, err, could, then);
	if (r->ksm_saved_bytes.known && r->mergeable_savings_bytes > 0)
		fprintf(f, " (%.0f%% of it)", 100.0 * (double)r->ksm_saved_bytes.v / (double)r->mergeable_savings_bytes);
	fprintf(f, "; KSM&apos;s counters show <b>%s</b> saved now (the last sample)", now);
	fputs(". Rows: a VM&apos;s pages; columns: the VM that also holds them; the diagonal: pages a VM holds "
	      "twice or more. VMs that share the most sit side by side.", f);
	size_t partial = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->vms[i].partial_reason[0]) {
			char b[LABEL_CHARS + 16];
			label_of(&r->vms[i], b, sizeof(b));
			fputs(partial++ ? ", " : " Read in part: ", f);
			html_escape(f, b);
			fputs(" (", f);
			html_escape(f, r->vms[i].partial_reason); /* from the database: whoever wrote it */
			fputs(")", f);
		}
	fputs(partial ? ".</p>\n" : "</p>\n", f);
}

void report_html_share(FILE *f, const struct report_share *s)
{
	const struct share_run *run = s->run;
	fputs("<h2 id=\"sharing\">Who shares memory with whom</h2>\n", f);
	if (!run || !run->n) {
		fputs("<p class=\"sub\">No sharing map in this database: <code>vmhost share --db ", f);
		html_escape(f, s->db);
		fputs("</code> makes one.</p>\n", f);
		return;
	}
	struct map m = {.run = run, .order = malloc(run->n * sizeof(size_t)), .sections = s->sections};
	if (!m.order) {
		fputs("<p class=\"note\">(out of memory drawing the sharing map)</p>\n", f);
		return;
	}
	for (size_t i = 0; i < run->n; i++)
		m.order[i] = s->order ? s->order[i] : i;
	map_layout(&m);
	map_line(f, run, s->ksm_saved_now_bytes);
	map_svg(f, &m);
	free(m.order);
}
