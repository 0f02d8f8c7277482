/* vmhost report: one self-contained HTML file (inline SVG and CSS) from the recorded history.
 * The series come from store/store_series.h, the page's sections from out/report_html.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "core/model/host.h"
#include "io/file.h"
#include "out/json.h"
#include "out/report_html.h"
#include "store/store_growth.h"
#include "store/store_series.h"

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

static const struct opt report_opt_table[] = {
	{OPT("db", 'd', OPT_STRING), OPT_AT(struct report_opts, db)},
	{OPT("out", 'o', OPT_STRING), OPT_AT(struct report_opts, out)},
	{OPT("window", 'w', OPT_SECONDS), OPT_AT(struct report_opts, window_seconds),
	 .error = "--window takes seconds, not '%s'"},
	{OPT("growth-window", 'g', OPT_SECONDS), OPT_AT(struct report_opts, growth.window_seconds),
	 .error = "--growth-window takes seconds, not '%s'"},
	{OPT("title", 't', OPT_STRING), OPT_AT(struct report_opts, title)},
	{OPT("warmup", 'u', OPT_SECONDS0), OPT_AT(struct report_opts, growth.params.warmup_seconds),
	 .error = "--warmup takes seconds, not '%s'"},
	{OPT("help", 'h', OPT_HELP)},
};

/* What the page is made of, read from the database once (VM charts are read one at a time). */
struct report_data {
	double since, until;
	struct series_set host;
	int64_t page_size; /* of the recorded host */
	struct growth_scan growth;
	struct store_vm *vms;
	size_t nvms;
	struct report_vm *rows; /* nvms, in the order of vms */
};

static void report_data_free(struct report_data *d)
{
	series_free(&d->host);
	growth_scan_free(&d->growth);
	free(d->vms);
	free(d->rows);
}

static struct report_vm report_vm_of(const struct store_vm *v, const struct growth_result *g)
{
	return (struct report_vm){.name = v->name, .uuid = v->uuid, .vmm = v->vmm, .pid = (int)v->pid,
				  .guest_ram_bytes = v->guest_ram_bytes, .first_seconds = v->first_seconds,
				  .last_seconds = v->last_seconds, .samples = v->samples, .growth = g};
}

/* The table's rows: every VM series of the time range, with its verdict when it has one. */
static int report_rows(struct report_data *d)
{
	d->rows = calloc(d->nvms ? d->nvms : 1, sizeof(*d->rows));
	if (!d->rows)
		return -ENOMEM;
	for (size_t i = 0; i < d->nvms; i++) {
		const struct growth_result *g = NULL;
		for (size_t k = 0; k < d->growth.n; k++)
			if (d->growth.vms[k].vm.id == d->vms[i].id)
				g = &d->growth.vms[k].result;
		d->rows[i] = report_vm_of(&d->vms[i], g);
	}
	return 0;
}

/* Flagged VMs first, then the most recently seen. */
static int cmp_growth_vm(const void *a, const void *b)
{
	const struct growth_vm *x = a, *y = b;
	if (x->result.flagged != y->result.flagged)
		return y->result.flagged - x->result.flagged;
	return (x->vm.last_seconds < y->vm.last_seconds) - (x->vm.last_seconds > y->vm.last_seconds);
}

static int report_load(struct store *s, const struct report_opts *o, struct report_data *d)
{
	double first;
	int r = store_time_range(s, &first, &d->until);
	if (r < 0)
		return r;
	d->since = o->window_seconds > 0 && d->until - o->window_seconds > first ? d->until - o->window_seconds : first;
	d->page_size = host_page_size(); /* until a sample says which */
	r = store_host_series(s, d->since, d->until, REPORT_MAX_POINTS, &d->host, &d->page_size);
	if (r == 0)
		r = growth_scan_store(s, &o->growth, &d->growth);
	if (r == 0) /* in the order of their charts; the rows point into it */
		qsort(d->growth.vms, d->growth.n, sizeof(*d->growth.vms), cmp_growth_vm);
	if (r == 0)
		r = store_vms(s, d->since, d->until, &d->vms, &d->nvms);
	if (r == 0)
		r = report_rows(d);
	return r;
}

static int vm_chart(FILE *f, struct store *s, const struct report_data *d, const struct report_vm *vm, int64_t id)
{
	struct series_set set;
	int r = store_vm_series(s, id, d->since, d->until, d->page_size, vm->growth, REPORT_MAX_POINTS, &set);
	if (r < 0)
		return r;
	report_html_vm_chart(f, vm, &set, d->since, d->until);
	series_free(&set);
	return 0;
}

/* Charts for the VMs of the growth window first (flagged ones on top), then the others. */
static int vm_charts(FILE *f, struct store *s, const struct report_data *d, size_t *ret_charted)
{
	size_t charts = 0;
	int r = 0;
	for (size_t i = 0; i < d->growth.n && charts < REPORT_MAX_VM_CHARTS && r == 0; i++, charts++) {
		const struct growth_vm *g = &d->growth.vms[i];
		struct report_vm vm = report_vm_of(&g->vm, &g->result);
		r = vm_chart(f, s, d, &vm, g->vm.id);
	}
	for (size_t i = 0; i < d->nvms && charts < REPORT_MAX_VM_CHARTS && r == 0; i++) {
		if (d->rows[i].growth)
			continue; /* charted above */
		r = vm_chart(f, s, d, &d->rows[i], d->vms[i].id);
		charts++;
	}
	*ret_charted = charts;
	return r;
}

static int write_report(FILE *f, struct store *s, const struct report_opts *o, const char **what)
{
	struct report_data d = {0};
	*what = "reading the database";
	int r = report_load(s, o, &d);
	if (r < 0)
		goto out;
	char host_name[256] = "this host", title[400];
	gethostname(host_name, sizeof(host_name) - 1);
	if (o->title)
		snprintf(title, sizeof(title), "%s", o->title);
	else
		snprintf(title, sizeof(title), "vmhost report: %s", host_name);
	size_t flagged = 0, charted = 0;
	for (size_t i = 0; i < d.growth.n; i++)
		flagged += d.growth.vms[i].result.flagged;

	report_html_begin(f, title, d.since, d.until, d.host.n, d.nvms);
	report_html_cards(f, d.nvms, flagged, &d.host);
	report_html_host(f, &d.host, d.since, d.until);
	struct series_set exits;
	if (store_kvm_rate_series(s, "exits", d.since, d.until, REPORT_MAX_POINTS, &exits) == 0) {
		report_html_kvm(f, &exits, d.since, d.until);
		series_free(&exits);
	}
	report_html_growth(f, &o->growth.params, o->growth.window_seconds, d.rows, d.nvms);
	report_html_vms_begin(f);
	r = vm_charts(f, s, &d, &charted);
	if (r == 0)
		report_html_end(f, d.nvms, charted, o->db);
out:
	report_data_free(&d);
	return r;
}

/* Writes the page beside OUT under a fresh name and renames it over OUT (io/file.h), so a reader
 * never sees half a report and no link planted beside OUT is followed. */
static int write_report_file(struct ctx *ctx, struct store *s, const struct report_opts *o)
{
	struct io_replace rp;
	int r = io_replace_path(o->out, 0666, &rp); /* less the umask, as fopen */
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "writing the report", "%s: %s", o->out, strerror(-r));
	FILE *f = io_replace_stream(&rp);
	const char *what = "writing the report";
	r = f ? write_report(f, s, o, &what) : -errno;
	if (r < 0) {
		io_replace_abort(&rp);
		if (f)
			return fail(ctx, EXIT_FAIL, what, "%s: %s", o->db, store_strerror(r));
		return fail(ctx, EXIT_FAIL, what, "%s: %s", o->out, strerror(-r));
	}
	r = io_replace_commit(&rp);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "writing the report", "%s: %s", o->out, strerror(-r));
	return EXIT_OK;
}

int cmd_report(struct ctx *ctx, int argc, char **argv)
{
	struct report_opts o = {.db = "vmhost.db", .growth = growth_scan_defaults()};
	static const struct opts_spec spec = OPTS_SPEC(report_opt_table, 0, report_help);
	int rc = opts_parse(ctx, &spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	if (!o.out)
		return usage_error(ctx, "--out FILE.html is required");
	o.growth.db = o.db;
	struct store *s;
	int r = store_open_read(o.db, &s);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "opening the database", "%s: %s%s", o.db, store_strerror(r),
			    r == -ENOENT ? " (record one with 'vmhost record')" : "");
	rc = write_report_file(ctx, s, &o);
	store_close(s);
	if (rc != EXIT_OK)
		return rc;
	if (ctx->format != OUT_JSON) {
		printf("wrote %s\n", o.out);
		return EXIT_OK;
	}
	struct json j;
	json_init(&j, stdout, false);
	json_object_begin(&j, NULL);
	json_string(&j, "out", o.out);
	json_object_end(&j);
	json_finish(&j);
	return EXIT_OK;
}
