#include "core/sample/top.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/rate.h"
#include "core/base/stop.h"
#include "core/kvm/kvm.h"
#include "core/kvm/kvm_delta.h"
#include "core/kvm/kvm_halt.h"
#include "core/model/ksm.h"
#include "core/model/proc.h"
#include "core/model/survey.h"
#include "parse/parse.h"

static const char *const col_keys[TOP_NCOLS] = {
	[TOP_NAME] = "name", [TOP_CPU] = "cpu", [TOP_DELAY] = "delay", [TOP_RSS] = "rss", [TOP_PSS] = "pss",
	[TOP_KSM_SAVED] = "ksm", [TOP_OVERHEAD] = "overhead", [TOP_EXITS] = "exits", [TOP_CG_MEM] = "cgroup",
	[TOP_MEM_PSI] = "mempsi", [TOP_PID] = "pid", [TOP_CPU_PSI] = "cpupsi", [TOP_IO_PSI] = "iopsi",
	[TOP_COST] = "cost", [TOP_KSMD] = "ksmd",
	[TOP_DISK_READ] = "read", [TOP_DISK_WRITE] = "write", [TOP_NET_RX] = "netrx",
	[TOP_NET_TX] = "nettx", [TOP_POLL] = "poll", [TOP_STALL] = "stall",
};

const char *top_col_key(enum top_col c) { return c < TOP_NCOLS ? col_keys[c] : NULL; }

int top_col_parse(const char *key, enum top_col *ret)
{
	for (int c = 0; c < TOP_NCOLS; c++)
		if (!strcmp(key, col_keys[c])) {
			*ret = (enum top_col)c;
			return 0;
		}
	if (!strcmp(key, "wait")) { /* the deprecated name of delay */
		*ret = TOP_DELAY;
		return 0;
	}
	return -EINVAL;
}

/* ---- the source and its readings ---- */

struct top_source {
	struct io_root root;
	pid_t ksmd_pid; /* 0 when not found */
	struct kvm_reader *kr; /* NULL: no KVM counters at all */
	enum kvm_avail kvm_why;
	struct kvm_sample last;
	bool have_last;
	bool exits_readable;
	char why[800]; /* top_source_exits_why's: the reader's, and the first VM it could not read */
	char libvirt_why[640]; /* top_source_libvirt_why's */
	pid_t *visible;        /* top_source_visible's, sorted; NULL: every reading reads everything */
	size_t nvisible;
	pid_t *young;          /* the VMs new at the reading before (no rates yet), sorted */
	size_t nyoung;
	unsigned tick;         /* readings taken: which slice is due */
};

int top_source_open(const struct io_root *root, struct top_source **ret)
{
	struct top_source *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->root = *root;
	/* the same few files of every VM, read every second: kept open between refreshes */
	if (io_cache_new(&s->root.cache) < 0)
		s->root.cache = NULL;
	if (ksmd_find(root, &s->ksmd_pid) < 0)
		s->ksmd_pid = 0;
	if (kvm_reader_open_with(root, KVM_READ_QMP, &s->kr, &s->kvm_why) < 0)
		s->kr = NULL;
	snprintf(s->why, sizeof(s->why), "%s", kvm_avail_hint(s->kr ? s->kvm_why : KVM_NO_KVM));
	*ret = s;
	return 0;
}

void top_source_close(struct top_source *s)
{
	if (!s)
		return;
	if (s->have_last)
		kvm_sample_free(&s->last);
	kvm_reader_close(s->kr);
	io_cache_free(s->root.cache);
	free(s->visible);
	free(s->young);
	free(s);
}

const char *top_source_exits_why(const struct top_source *s)
{
	return s->exits_readable ? "" : s->why;
}

void top_source_pace(struct top_source *s, double seconds)
{
	if (s->kr)
		kvm_reader_pace(s->kr, seconds);
}

int top_source_visible(struct top_source *s, const pid_t *pids, size_t n)
{
	pid_t *v = realloc(s->visible, (n ? n : 1) * sizeof(*v));
	if (!v) {
		free(s->visible);
		s->visible = NULL;
		s->nvisible = 0;
		return -ENOMEM;
	}
	if (n)
		memcpy(v, pids, n * sizeof(*v));
	qsort(v, n, sizeof(*v), io_pid_cmp);
	s->visible = v;
	s->nvisible = n;
	return 0;
}

/* survey_opts' due: a process the view shows, of this reading's slice, or a VM new at the
 * reading before (read again for its first rates, by which it is sorted). */
static bool due(const void *cls, pid_t pid)
{
	const struct top_source *s = cls;
	return (unsigned)pid % TOP_SLICES == s->tick % TOP_SLICES ||
	       io_pid_in(s->visible, s->nvisible, pid) || io_pid_in(s->young, s->nyoung, pid);
}

/* The VMs of r new to the view (not in before; all at the first reading): pid order, as a
 * reading has them. */
static void note_young(struct top_source *s, const struct top_reading *before, const struct top_reading *r)
{
	s->nyoung = 0;
	pid_t *y = realloc(s->young, (r->vms.n ? r->vms.n : 1) * sizeof(*y));
	if (!y)
		return; /* they wait for their slice */
	s->young = y;
	for (size_t i = 0; i < r->vms.n; i++)
		if (!before || !vm_list_find(&before->vms, &r->vms.vms[i]))
			y[s->nyoung++] = r->vms.vms[i].pid;
}

void top_source_libvirt(struct top_source *s, const char *uri)
{
	if (s->kr)
		kvm_reader_libvirt(s->kr, uri, 750);
}

const char *top_source_libvirt_why(const struct top_source *s) { return s->libvirt_why; }

const char *top_source_exits_note(const struct top_source *s)
{
	return s->kr ? kvm_reader_pace_why(s->kr) : "";
}

/* Each helper's own status and stat: what top shows on the helper's line. */
static int read_helpers(const struct io_root *root, struct top_reading *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->vms.n; i++)
		n += r->vms.vms[i].nhelpers;
	if (!n)
		return 0;
	if (!(r->helpers = calloc(n, sizeof(*r->helpers))))
		return -ENOMEM;
	for (size_t i = 0; i < r->vms.n; i++) {
		const struct vm *vm = &r->vms.vms[i];
		for (size_t k = 0; k < vm->nhelpers; k++) {
			struct proc_stat st;
			if (proc_read_stat(root, vm->helpers[k], &st) < 0)
				continue; /* a helper that exited is no longer shown */
			struct top_helper *h = &r->helpers[r->nhelpers++];
			*h = (struct top_helper){.vm = i, .pid = vm->helpers[k], .start_ticks = st.start_ticks,
						 .cpu_seconds = ticks_to_seconds(st.utime_ticks + st.stime_ticks)};
			snprintf(h->comm, sizeof(h->comm), "%s", st.comm);
			struct mem_counters mc;
			unsigned denied = 0;
			h->rss_bytes = proc_read_counters(root, h->pid, &mc, &denied) == 0 ? mc.rss : UNKNOWN;
		}
	}
	return 0;
}

/* Why exits/s is n/a everywhere: the reader's reason, and the first VM it could not read. */
static void set_why(struct top_source *s, const struct kvm_vm_sample *unread)
{
	const char *hint = s->kvm_why != KVM_AVAILABLE ? kvm_avail_hint(s->kvm_why) : "no VM's KVM counters are readable";
	if (unread)
		snprintf(s->why, sizeof(s->why), "%s; VM %.60s: %.320s", hint, unread->name[0] ? unread->name : "?",
			 unread->unavailable);
	else
		snprintf(s->why, sizeof(s->why), "%s", hint);
}

/* The exits of every VM since the last KVM read, keyed by pid and start time. */
static void read_exits(struct top_source *s, struct top_reading *r)
{
	struct kvm_sample now;
	if (!s->kr || kvm_reader_sample_vms(s->kr, &r->vms, &now) < 0)
		return;
	kvm_reader_libvirt_why(s->kr, s->libvirt_why, sizeof(s->libvirt_why));
	const struct kvm_vm_sample *unread = NULL;
	for (size_t i = 0; i < now.nvms; i++) {
		r->exits_readable |= now.vms[i].source != KVM_SOURCE_NONE;
		if (now.vms[i].source == KVM_SOURCE_NONE && now.vms[i].unavailable[0] && !unread)
			unread = &now.vms[i];
	}
	s->exits_readable = r->exits_readable;
	set_why(s, unread);
	int exits = kvm_counter_index(s->kr, "exits");
	struct kvm_delta d;
	struct kvm_halt_index ix;
	kvm_halt_index(s->kr, &ix);
	if (s->have_last && exits >= 0 && kvm_delta_build(s->kr, &s->last, &now, NULL, &d) == 0) {
		size_t sel = d.nsel;
		for (size_t k = 0; k < d.nsel; k++)
			if (d.sel[k] == (size_t)exits)
				sel = k;
		r->exits = d.nvms && sel < d.nsel ? calloc(d.nvms, sizeof(*r->exits)) : NULL;
		for (size_t v = 0; r->exits && v < d.nvms; v++) {
			const struct kvm_vm_sample *vm = d.vms[v].vm;
			struct kvm_halt h;
			kvm_halt_change(&ix, d.sel, d.nsel, d.vms[v].changes, &h);
			if (vm->start_ticks && isfinite(d.vms[v].changes[sel].per_second))
				r->exits[r->nexits++] = (struct top_exits){vm->pid, vm->start_ticks,
									   d.vms[v].changes[sel].per_second,
									   100 * h.poll_per_second};
		}
		kvm_delta_free(&d);
	}
	if (s->have_last)
		kvm_sample_free(&s->last);
	s->last = now;
	s->have_last = true;
}

int top_reading_take(struct top_source *s, const struct top_reading *before, bool exact, struct top_reading *ret,
		     enum survey_step *ret_step)
{
	struct top_reading r = {.exact = exact, .ksmd_cpu_ns = UNKNOWN};
	/* The files of processes gone since the reading before; read a slice at a time, a VM's files
	 * stay open over the readings between. */
	io_cache_sweep(s->root.cache, s->visible ? TOP_SLICES : 0);
	/* Counters only: no PSS sampling budget, exact sources only when asked (the e key). Once the
	 * view said what it shows, the rest a slice a reading (not the exact sources: all at once). */
	struct survey_opts so = {.exact = exact, .before = before ? &before->vms : NULL,
				 .due = s->visible && !exact ? due : NULL, .due_cls = s};
	s->tick++;
	int err = survey_take(&s->root, &so, &r.host, &r.vms, ret_step);
	if (err < 0)
		return err;
	note_young(s, before, &r);
	r.monotonic_seconds = clock_monotonic_seconds();
	int64_t ns;
	if (s->ksmd_pid > 0 && ksmd_cpu_ns(&s->root, s->ksmd_pid, &ns) == 0)
		r.ksmd_cpu_ns = MAYBE(ns);
	if ((err = read_helpers(&s->root, &r)) < 0) {
		top_reading_free(&r);
		*ret_step = SURVEY_PROCESSES;
		return err;
	}
	read_exits(s, &r);
	*ret = r;
	return 0;
}

void top_reading_free(struct top_reading *r)
{
	vm_list_free(&r->vms);
	free(r->helpers);
	free(r->exits);
	r->helpers = NULL;
	r->exits = NULL;
	r->nhelpers = r->nexits = 0;
}

/* ---- the view ---- */

static double known_or_nan(maybe_i64 m) { return m.known ? (double)m.v : NAN; }

/* Disk and network rates over the interval (the taps summed: RX is what the guest sent). */
static void io_cols(double *v, const struct vm_io *io, bool rates)
{
	if (!rates)
		return;
	v[TOP_DISK_READ] = io->read_bytes_per_second;
	v[TOP_DISK_WRITE] = io->write_bytes_per_second;
	if (!io->ifaces_known)
		return;
	double rx = 0, tx = 0;
	for (size_t i = 0; i < io->nifaces; i++) {
		rx += io->ifaces[i].rx_bytes_per_second;
		tx += io->ifaces[i].tx_bytes_per_second;
	}
	v[TOP_NET_RX] = rx;
	v[TOP_NET_TX] = tx;
}

static void vm_row(struct top_row *row, const struct top_reading *before, struct top_reading *after, size_t i,
		   double seconds)
{
	struct vm *vm = &after->vms.vms[i];
	const struct vm *was = seconds > 0 ? vm_list_find(before ? &before->vms : NULL, vm) : NULL;
	/* Over the time between the two reads of its counters (a VM read a slice at a time was last
	 * read some readings ago); a VM carried over keeps the rates of its last read. */
	if (was && vm->read_at > 0 && was->read_at > 0)
		seconds = vm->read_at - was->read_at;
	if (was && !vm->carried && seconds > 0) {
		vm_cpu_rates(&was->cpu, &vm->cpu, seconds);
		vm_io_rates(&was->io, &vm->io, seconds);
		vm_stalls_rates(&was->stalls, &vm->stalls, seconds);
	}
	*row = (struct top_row){.pid = vm->pid, .pss_method = vm->pss_method};
	if (vm->cfg.name[0])
		snprintf(row->name, sizeof(row->name), "%s", vm->cfg.name);
	else
		snprintf(row->name, sizeof(row->name), "pid %d", (int)vm->pid);
	double *v = row->v;
	for (int c = 0; c < TOP_NCOLS; c++)
		v[c] = NAN;
	v[TOP_PID] = vm->pid;
	v[TOP_CPU] = was ? vm->cpu.cpu_percent : NAN;
	v[TOP_DELAY] = was ? vm->cpu.vcpu_delay_percent : NAN;
	v[TOP_STALL] = was ? vm->stalls.stall_percent : NAN;
	v[TOP_RSS] = known_or_nan(vm->mem.rss);
	v[TOP_PSS] = known_or_nan(vm->pss_bytes);
	v[TOP_KSM_SAVED] = known_or_nan(vm->ksm_saved_bytes);
	v[TOP_OVERHEAD] = known_or_nan(vm->overhead_bytes);
	v[TOP_COST] = known_or_nan(vm_memory_cost(vm));
	v[TOP_CG_MEM] = known_or_nan(vm->cg.memory_bytes);
	io_cols(v, &vm->io, was != NULL);
	static const int psi_cols[PRESSURE_NKINDS] = {[PRESSURE_MEMORY] = TOP_MEM_PSI, [PRESSURE_CPU] = TOP_CPU_PSI,
						      [PRESSURE_IO] = TOP_IO_PSI};
	for (int k = 0; k < PRESSURE_NKINDS; k++)
		if (vm->cg.have_pressure[k])
			v[psi_cols[k]] = vm->cg.pressure[k].some_avg10;
	for (size_t e = 0; e < after->nexits; e++)
		if (after->exits[e].pid == vm->pid && after->exits[e].start_ticks == vm->start_ticks) {
			v[TOP_EXITS] = after->exits[e].per_second;
			v[TOP_POLL] = after->exits[e].poll_percent;
		}
}

static void helper_row(struct top_row *row, const struct top_reading *before, const struct top_helper *h,
		       size_t vm_row_index, double seconds)
{
	*row = (struct top_row){.helper = true, .vm = vm_row_index, .pid = h->pid};
	snprintf(row->name, sizeof(row->name), "%s", h->comm);
	for (int c = 0; c < TOP_NCOLS; c++)
		row->v[c] = NAN;
	row->v[TOP_PID] = h->pid;
	row->v[TOP_RSS] = known_or_nan(h->rss_bytes);
	for (size_t k = 0; seconds > 0 && before && k < before->nhelpers; k++) {
		const struct top_helper *b = &before->helpers[k];
		if (b->pid == h->pid && b->start_ticks == h->start_ticks)
			row->v[TOP_CPU] = counter_percent_seconds(b->cpu_seconds, h->cpu_seconds, seconds);
	}
}

int top_view_build(const struct top_reading *before, struct top_reading *after, struct top_view *ret)
{
	struct top_view v = {.nvms = after->vms.n, .nrows = after->vms.n + after->nhelpers, .exact = after->exact,
			     .exits_readable = after->exits_readable, .skipped = after->vms.skipped};
	if (!(v.rows = calloc(v.nrows ? v.nrows : 1, sizeof(*v.rows))))
		return -ENOMEM;
	v.seconds = before ? after->monotonic_seconds - before->monotonic_seconds : 0;
	for (size_t i = 0; i < after->vms.n; i++)
		vm_row(&v.rows[i], before, after, i, v.seconds);
	for (size_t k = 0; k < after->nhelpers; k++)
		helper_row(&v.rows[v.nvms + k], before, &after->helpers[k], after->helpers[k].vm, v.seconds);
	const struct host *h = &after->host;
	v.mem_total_bytes = known_or_nan(h->mem.mem_total);
	v.mem_available_bytes = known_or_nan(h->mem.mem_available);
	v.ksm_saved_bytes = h->ksm.present ? known_or_nan(ksm_saved_bytes(&h->ksm, h->page_size_bytes)) : NAN;
	v.ksm_run = h->ksm.run;
	v.ksmd_cpu_percent = before ? counter_percent_ns(before->ksmd_cpu_ns, after->ksmd_cpu_ns, v.seconds) : NAN;
	for (size_t i = 0; i < after->vms.n; i++) /* what each VM costs ksmd: its share of the pages ksmd tracks */
		v.rows[i].v[TOP_KSMD] = v.ksmd_cpu_percent * ksmd_vm_cpu_share(&after->vms.vms[i].mem, &h->ksm);
	*ret = v;
	return 0;
}

void top_view_free(struct top_view *v)
{
	free(v->rows);
	v->rows = NULL;
	v->nrows = v->nvms = 0;
}

/* ---- order ---- */

struct order_ctx {
	const struct top_view *v;
	enum top_col col;
	bool reverse;
};

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct order_ctx *c = arg;
	const struct top_row *a = &c->v->rows[*(const size_t *)pa], *b = &c->v->rows[*(const size_t *)pb];
	int r = 0;
	if (c->col == TOP_NAME) {
		r = strcasecmp(a->name, b->name);
		r = c->reverse ? -r : r;
	} else {
		double x = a->v[c->col], y = b->v[c->col];
		if (isnan(x) != isnan(y))
			return isnan(x) ? 1 : -1; /* unknown last, whichever way */
		if (!isnan(x) && x != y)
			r = (x > y ? -1 : 1) * (c->reverse ? -1 : 1);
	}
	if (!r)
		r = strcasecmp(a->name, b->name);
	if (!r)
		r = (a->pid > b->pid) - (a->pid < b->pid);
	return r;
}

static bool name_has(const char *name, const char *filter) { return strcasestr(name, filter) != NULL; }

size_t top_view_order(const struct top_view *v, enum top_col col, bool reverse, const char *filter, size_t *order)
{
	struct order_ctx c = {v, col, reverse};
	bool all = !filter || !*filter;
	size_t n = 0;
	for (size_t i = 0; i < v->nvms; i++) {
		bool keep = all || name_has(v->rows[i].name, filter);
		for (size_t k = v->nvms; !keep && k < v->nrows; k++)
			keep = v->rows[k].vm == i && name_has(v->rows[k].name, filter);
		if (keep)
			order[n++] = i;
	}
	qsort_r(order, n, sizeof(*order), cmp_rows, &c);
	/* Each VM's helpers right under it: walk the sorted VMs from the end, inserting. */
	size_t total = n;
	for (size_t k = v->nvms; k < v->nrows; k++)
		for (size_t i = 0; i < n; i++)
			total += order[i] == v->rows[k].vm;
	size_t out = total;
	for (size_t i = n; i-- > 0;) {
		size_t vm = order[i], first = out;
		for (size_t k = v->nvms; k < v->nrows; k++)
			if (v->rows[k].vm == vm)
				order[--first] = k;
		qsort_r(order + first, out - first, sizeof(*order), cmp_rows, &c);
		order[first - 1] = vm;
		out = first - 1;
	}
	return total;
}
