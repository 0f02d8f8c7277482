/* vmhost report: one self-contained HTML file (inline SVG and CSS) from the recorded history.
 * The series come from store/store_series.h, the page's sections from out/report/report_html.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "core/base/stats.h"
#include "core/model/host.h"
#include "core/sample/capacity.h"
#include "io/file.h"
#include "out/capacity_view.h"
#include "out/json.h"
#include "out/report/report_html.h"
#include "out/report/report_share.h"
#include "store/store_growth.h"
#include "store/store_series.h"
#include "store/store_share.h"

/* Sections of charts drawn by default: every VM of a host of 100, a page of a few MB at 4,000
 * (the table still lists every VM). */
#define REPORT_CHARTS 100

struct report_opts {
	const char *db, *out, *title;
	double window_seconds; /* 0: everything recorded */
	long charts;           /* VMs with a section of charts; 0: every VM */
	struct growth_scan_opts growth;
};

static void report_help(void)
{
	printf("usage: vmhost report [--db FILE] --out FILE.html [--window SEC] [--growth-window SEC]\n"
	       "                     [--warmup SEC] [--charts N|all] [--title TEXT]\n"
	       "\n"
	       "Writes one self-contained HTML file (inline SVG, CSS and a little script; no network): the\n"
	       "host's memory split by the VMs that cost most, the VMs whose overhead grows, the busiest\n"
	       "VMs, what KSM saves and ksmd costs, a sortable table of every VM, and VMs' charts on demand.\n"
	       "\n"
	       "  --db FILE            database written by 'vmhost record' [./vmhost.db]\n"
	       "  --out FILE.html      where to write the report (replaced atomically)\n"
	       "  --window SEC         only the last SEC of the recording [everything]\n"
	       "  --growth-window SEC  window of the growth verdicts, as 'vmhost growth --window' [21600]\n"
	       "  --warmup SEC         a VM's first SEC are warm-up, as 'vmhost growth --warmup' [600]\n"
	       "  --charts N|all       charts for N VMs: the flagged, the busiest, then the costliest;\n"
	       "                       the table lists every VM either way [" OPT_TEXT(REPORT_CHARTS) "]\n"
	       "  --title TEXT         page title [vmhost report: HOSTNAME]\n");
}

static int opt_charts(struct ctx *ctx, void *opts, const char *arg)
{
	long n = 0;
	if (strcmp(arg, "all") && arg_count(arg, &n) < 0)
		return usage_error(ctx, "--charts takes a number of VMs or 'all', not '%s'", arg);
	((struct report_opts *)opts)->charts = n;
	return EXIT_OK;
}

static const struct opt report_opt_table[] = {
	{OPT("db", 'd', OPT_STRING), OPT_AT(struct report_opts, db)},
	{OPT("out", 'o', OPT_STRING), OPT_AT(struct report_opts, out)},
	{OPT("window", 'w', OPT_SECONDS), OPT_AT(struct report_opts, window_seconds),
	 .error = "--window takes seconds, not '%s'"},
	{OPT("growth-window", 'g', OPT_SECONDS), OPT_AT(struct report_opts, growth.window_seconds),
	 .error = "--growth-window takes seconds, not '%s'"},
	{OPT("title", 't', OPT_STRING), OPT_AT(struct report_opts, title)},
	{OPT("charts", 'c', OPT_CALL), .call = opt_charts},
	{OPT("warmup", 'u', OPT_SECONDS0), OPT_AT(struct report_opts, growth.params.warmup_seconds),
	 .error = "--warmup takes seconds, not '%s'"},
	{OPT("help", 'h', OPT_HELP)},
};

/* What the page is made of, read from the database once. */
struct report_data {
	double since, until;
	struct series_set host;
	int64_t page_size; /* of the recorded host */
	struct growth_scan growth;
	struct store_vm *vms;
	size_t nvms;
	struct report_vm *rows;     /* nvms: flagged first, then by memory cost */
	struct series_set *series;  /* nvms, in the order of vms */
	double *on_host;            /* nvms x 2 x host.n: cost and overhead at the host's times */
};

static void report_data_free(struct report_data *d)
{
	series_free(&d->host);
	growth_scan_free(&d->growth);
	for (size_t i = 0; d->series && i < d->nvms; i++)
		series_free(&d->series[i]);
	free(d->series);
	free(d->on_host);
	free(d->vms);
	free(d->rows);
}

static struct report_vm report_vm_of(const struct store_vm *v, const struct growth_result *g)
{
	return (struct report_vm){.name = v->name, .uuid = v->uuid, .vmm = v->vmm, .pid = (int)v->pid,
				  .id = (long long)v->id, .guest_ram_bytes = v->guest_ram_bytes,
				  .first_seconds = v->first_seconds, .last_seconds = v->last_seconds,
				  .samples = v->samples, .growth = g};
}

/* VM i's series: at the host's times for the stack, then thinned for its own charts. */
static int report_vm_series(struct store *s, struct report_data *d, size_t i)
{
	struct report_vm *row = &d->rows[i];
	struct series_set *set = &d->series[i];
	int r = store_vm_series(s, d->vms[i].id, d->since, d->until, d->page_size, row->growth, REPORT_MAX_POINTS,
				set);
	if (r < 0)
		return r;
	double *cost = d->on_host + 2 * i * d->host.n, *over = cost + d->host.n;
	series_resample(set->t, series_row(set, SERIES_VM_COST), set->n, d->host.t, d->host.n, cost);
	series_resample(set->t, series_row(set, SERIES_VM_OVERHEAD), set->n, d->host.t, d->host.n, over);
	row->series = set;
	row->cost_on_host = cost;
	row->overhead_on_host = over;
	return series_thin(set, REPORT_VM_POINTS, SERIES_EQUAL_TIME);
}

static double cost_now(const struct report_vm *v)
{
	double c = series_last(series_row(v->series, SERIES_VM_COST), v->series->n);
	return isfinite(c) ? c : -1;
}

/* Flagged VMs first, then the costliest. */
static int cmp_row(const void *a, const void *b)
{
	const struct report_vm *x = a, *y = b;
	bool fx = x->growth && x->growth->flagged, fy = y->growth && y->growth->flagged;
	if (fx != fy)
		return fy - fx;
	double cx = cost_now(x), cy = cost_now(y);
	return (cx < cy) - (cx > cy);
}

/* The rows: every VM series of the time range, with its verdict when it has one, and its series. */
static int report_rows(struct store *s, struct report_data *d)
{
	size_t n = d->nvms ? d->nvms : 1;
	d->rows = calloc(n, sizeof(*d->rows));
	d->series = calloc(n, sizeof(*d->series));
	d->on_host = calloc(n * 2 * (d->host.n ? d->host.n : 1), sizeof(double));
	if (!d->rows || !d->series || !d->on_host)
		return -ENOMEM;
	int r = 0;
	for (size_t i = 0; i < d->nvms && r == 0; i++) {
		const struct growth_result *g = NULL;
		for (size_t k = 0; k < d->growth.n; k++)
			if (d->growth.vms[k].vm.id == d->vms[i].id)
				g = &d->growth.vms[k].result;
		d->rows[i] = report_vm_of(&d->vms[i], g);
		r = report_vm_series(s, d, i);
	}
	if (r == 0)
		qsort(d->rows, d->nvms, sizeof(*d->rows), cmp_row);
	return r;
}

/* The recording's time range; a database that holds only sharing maps (vmhost share, no record
 * yet) is read as empty at its latest map's time. */
static int time_range(struct store *s, double *ret_first, double *ret_last)
{
	int r = store_time_range(s, ret_first, ret_last);
	struct share_run run;
	if (r != -ENODATA || store_share_latest(s, &run) < 0)
		return r;
	*ret_first = *ret_last = run.t;
	share_run_free(&run);
	return 0;
}

static int report_load(struct store *s, const struct report_opts *o, struct report_data *d)
{
	double first;
	int r = time_range(s, &first, &d->until);
	if (r < 0)
		return r;
	d->since = o->window_seconds > 0 && d->until - o->window_seconds > first ? d->until - o->window_seconds : first;
	d->page_size = host_page_size(); /* until a sample says which */
	r = store_host_series(s, d->since, d->until, REPORT_MAX_POINTS, &d->host, &d->page_size);
	if (r == 0)
		r = growth_scan_store(s, &o->growth, &d->growth);
	if (r == 0)
		r = store_vms(s, d->since, d->until, &d->vms, &d->nvms);
	if (r == 0)
		r = report_rows(s, d);
	return r;
}

/* A VM's section: memory, CPU and delay, disk and network, each disk (record --io), KVM exits
 * where recorded (a further rate is one more report_html_vm_rate). */
static void vm_section(FILE *f, struct store *s, const struct report_data *d, const struct report_vm *vm)
{
	report_html_vm_begin(f, vm);
	report_html_vm_chart(f, vm, vm->series, d->since, d->until);
	report_html_vm_cpu(f, vm, vm->series, d->since, d->until);
	report_html_vm_io(f, vm, vm->series, d->since, d->until);
	struct history_disk_series disks;
	if (store_disk_series(s, vm->id, d->since, d->until, REPORT_VM_POINTS, &disks) == 0) {
		report_html_vm_disks(f, vm, &disks.set, disks.devices, disks.ndevices, disks.more, d->since, d->until);
		series_free(&disks.set);
	}
	struct series_set rate;
	if (store_kvm_rate_series(s, vm->id, "exits", d->since, d->until, REPORT_VM_POINTS, &rate) == 0) {
		report_html_vm_rate(f, vm, "KVM exits per second", "debugfs kvm/PID-FD/exits", &rate, d->since,
				    d->until);
		series_free(&rate);
	}
	report_html_vm_end(f);
}

/* The section of each VM of the map: a recorded series of its pid and name that ran when the
 * map was taken (within a sample's slack) and is charted, else -1. */
static void share_sections(const struct share_run *run, const struct report_data *d, long long *ret)
{
	for (size_t i = 0; i < run->n; i++) {
		ret[i] = -1;
		for (size_t k = 0; k < d->nvms; k++) {
			const struct report_vm *v = &d->rows[k];
			if (v->charted && v->pid == run->vms[i].pid && !strcmp(v->name, run->vms[i].name) &&
			    run->t >= v->first_seconds - 60 && run->t <= v->last_seconds + 60)
				ret[i] = v->id;
		}
	}
}

/* The latest sharing map, its VMs ordered so that clusters sit together and linked to their
 * sections; or the line on how to make one. */
static int share_section(FILE *f, struct store *s, const struct report_data *d, const char *db)
{
	struct share_run run;
	struct report_share rs = {.ksm_saved_now_bytes = series_last(series_row(&d->host, SERIES_HOST_KSM_SAVED), d->host.n),
				  .db = db};
	int r = store_share_latest(s, &run);
	if (r == -ENODATA) {
		report_html_share(f, &rs);
		return 0;
	}
	if (r < 0)
		return r;
	size_t *order = malloc((run.n ? run.n : 1) * sizeof(*order));
	long long *sections = malloc((run.n ? run.n : 1) * sizeof(*sections));
	r = order && sections ? share_run_order(&run, order) : -ENOMEM;
	if (r == 0) {
		share_sections(&run, d, sections);
		rs.run = &run;
		rs.order = order;
		rs.sections = sections;
		report_html_share(f, &rs);
	}
	free(order);
	free(sections);
	share_run_free(&run);
	return r;
}

/* The VMM kind a recorded VM's "vmm" names (vmm_kind_name's words). */
static enum vmm_kind recorded_vmm(const char *name)
{
	for (enum vmm_kind k = VMM_QEMU; k <= VMM_KVM; k++)
		if (!strcmp(name, vmm_kind_name(k)))
			return k;
	return VMM_NONE;
}

/* The first screen's capacity sentence (docs/capacity.md), into buf ("" when no VM ran at the last
 * sample to size a guest by): capacity_compute over what the recording holds at its last sample,
 * MemTotal and MemAvailable, and each VM then running, its VMM and its overhead; a new guest of the
 * median guest RAM among them. The recording holds no guest's reclaimable figure, so "after
 * reclaim" stays unknown and the sentence leaves it out. -ENOMEM or 0. */
static int capacity_line(const struct report_data *d, char *buf, size_t cap)
{
	buf[0] = '\0';
	double used = series_last(series_row(&d->host, SERIES_HOST_USED), d->host.n);
	double total = series_last(series_row(&d->host, SERIES_HOST_TOTAL), d->host.n);
	struct vm *vms = calloc(d->nvms ? d->nvms : 1, sizeof(*vms));
	double *ram = calloc(d->nvms ? d->nvms : 1, sizeof(*ram));
	if (!vms || !ram) {
		free(vms);
		free(ram);
		return -ENOMEM;
	}
	size_t n = 0, nram = 0;
	for (size_t i = 0; i < d->nvms; i++) {
		const struct report_vm *row = &d->rows[i];
		double over = row->series ? series_last(series_row(row->series, SERIES_VM_OVERHEAD), row->series->n) : NAN;
		if (!report_vm_running_at(row, d->until))
			continue; /* not running at the last sample */
		struct vm *vm = &vms[n++];
		vm->cfg.vmm = recorded_vmm(row->vmm);
		vm->overhead_bytes = isfinite(over) ? MAYBE((int64_t)llround(over)) : UNKNOWN;
		vm->overhead_method = METHOD_ESTIMATE; /* the recording does not say which: one median over all */
		if (vm->cfg.vmm != VMM_PROCESS && row->guest_ram_bytes.known)
			ram[nram++] = (double)row->guest_ram_bytes.v;
	}
	double size = nram ? median(ram, nram) : NAN;
	if (isfinite(size) && size > 0) {
		struct host h = {.mem_known = isfinite(used) && isfinite(total)};
		h.mem.mem_total = isfinite(total) ? MAYBE((int64_t)total) : UNKNOWN;
		h.mem.mem_available = isfinite(total) && isfinite(used) ? MAYBE((int64_t)(total - used)) : UNKNOWN;
		struct vm_list list = {.vms = vms, .n = n};
		struct capacity_opts o = {.size_bytes = (int64_t)llround(size), .reserve_percent = CAPACITY_RESERVE_PERCENT,
					  .overhead_bytes = UNKNOWN, .kind = VMM_QEMU, .shared_bytes = UNKNOWN};
		struct capacity c;
		capacity_compute(&h, &list, &o, &c);
		capacity_sentence(buf, cap, &c);
	}
	free(vms);
	free(ram);
	return 0;
}

/* Which VMs get a section of charts: the first `charts` rows (flagged first, then the costliest)
 * and the busiest the first screen names (their names link to their sections); how many. */
static size_t mark_charted(struct report_data *d, long charts, const struct report_busy *busy)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nvms; i++)
		d->rows[i].charted = charts == 0 || i < (size_t)charts;
	for (size_t i = 0; i < busy->ncpu; i++)
		d->rows[busy->cpu[i]].charted = true;
	for (size_t i = 0; i < busy->ndelay; i++)
		d->rows[busy->delay[i]].charted = true;
	for (size_t i = 0; i < d->nvms; i++)
		n += d->rows[i].charted;
	return n;
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
	size_t flagged = 0;
	for (size_t i = 0; i < d.growth.n; i++)
		flagged += d.growth.vms[i].result.flagged;

	struct report_busy busy;
	report_busiest(d.rows, d.nvms, d.until, &busy);
	size_t ncharted = mark_charted(&d, o->charts, &busy);
	report_html_begin(f, title, d.since, d.until, d.host.n, d.nvms);
	report_html_cards(f, d.nvms, flagged, &d.host);
	char room[512];
	if ((r = capacity_line(&d, room, sizeof(room))) < 0)
		goto out;
	report_html_capacity(f, room);
	report_html_host(f, &d.host, d.rows, d.nvms, d.since, d.until);
	report_html_flagged(f, &o->growth.params, o->growth.window_seconds, d.rows, d.nvms);
	report_html_busiest(f, d.rows, &busy);
	report_html_ksm(f, &d.host, d.since, d.until);
	if ((r = share_section(f, s, &d, o->db)) < 0)
		goto out;
	struct series_set exits;
	if (store_kvm_rate_series(s, 0, "exits", d.since, d.until, REPORT_MAX_POINTS, &exits) == 0) {
		report_html_kvm(f, &exits, d.since, d.until);
		series_free(&exits);
	}
	report_html_table(f, d.rows, d.nvms, ncharted);
	for (size_t i = 0; i < d.nvms; i++)
		if (d.rows[i].charted)
			vm_section(f, s, &d, &d.rows[i]);
	report_html_end(f, d.nvms, o->db);
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
	struct report_opts o = {.db = "vmhost.db", .charts = REPORT_CHARTS, .growth = growth_scan_defaults()};
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
