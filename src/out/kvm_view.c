/* The views of a KVM counter change (core/kvm_delta): JSON, the human table, the notes around it,
 * and the --log lines. */
#include "out/kvm_view.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/kvm/kvm_halt.h"
#include "out/fmt.h"
#include "out/screen.h"
#include "out/text.h"

/* Counters shown by --log when no --fields is given: the ones that explain a slow guest. */
static const char *const log_default_fields[] = {
	"exits", "halt_exits", "io_exits", "mmio_exits", "irq_exits", "irq_window_exits",
	"request_irq_exits", "signal_exits", "insn_emulation", "host_state_reload", "fpu_reload",
	"hypercalls", "pf_taken", "pf_fixed", "tlb_flush", "remote_tlb_flush", "halt_wait_ns",
	"halt_poll_success_ns", "halt_poll_fail_ns",
};

/* ---- JSON ---- */

/* A reason's time over the interval: seconds, the exits that ended, their log2 histogram (the
 * buckets that hold any: [from_ns, to_ns)). */
void kvm_view_json_time(struct json *j, const struct kvm_exit_time *t)
{
	json_double(j, "seconds", (double)t->ns / 1e9);
	json_int(j, "count", (int64_t)t->count);
	json_array_begin(j, "histogram");
	for (int i = 0; i < KVM_TIME_BUCKETS; i++) {
		if (!t->hist[i])
			continue;
		json_object_begin(j, NULL);
		json_int(j, "from_ns", i ? (int64_t)(UINT64_C(1) << i) : 0);
		if (i < 62)
			json_int(j, "to_ns", (int64_t)(UINT64_C(2) << i));
		else
			json_null(j, "to_ns");
		json_int(j, "count", (int64_t)t->hist[i]);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_change_fields(struct json *j, enum kvm_stat_kind kind, const struct kvm_change *c)
{
	json_maybe(j, "total", c->total);
	json_maybe(j, "delta", c->delta);
	json_double(j, "per_second", c->per_second);
	if (kind == KVM_STAT_TIME_NS)
		json_double(j, "fraction", c->per_second / 1e9);
	if (kind != KVM_STAT_GAUGE)
		json_bool(j, "reset", c->reset);
}

static void json_change(struct json *j, const char *key, enum kvm_stat_kind kind, const struct kvm_change *c)
{
	json_object_begin(j, key);
	json_change_fields(j, kind, c);
	json_object_end(j);
}

static void json_vm_ident(struct json *j, const struct kvm_vm_sample *vm)
{
	json_int(j, "pid", vm->pid);
	json_string(j, "name", vm->name[0] ? vm->name : NULL);
	json_string(j, "vmm", vm->vmm != VMM_NONE ? vmm_kind_name(vm->vmm) : NULL);
	json_string(j, "source", kvm_source_name(vm->source));
	json_string(j, "debugfs_dir", vm->kvm_fd >= 0 ? vm->dir : NULL);
	if (vm->kvm_fd >= 0)
		json_int(j, "kvm_fd", vm->kvm_fd);
	else
		json_null(j, "kvm_fd");
	if (vm->unavailable[0])
		json_string(j, "unavailable", vm->unavailable);
	if (vm->vcpus >= 0)
		json_int(j, "vcpus", vm->vcpus);
	else
		json_null(j, "vcpus");
}

static bool is_reason(const struct kvm_reader *kr, const struct kvm_delta *d, size_t s)
{
	return kvm_counter_kind(kr, d->sel[s]) == KVM_STAT_REASON;
}

/* Reason counters ("kvm_pio/0x80 out") as {"kvm_pio": {"0x80 out": {...}}}, events in order;
 * with times (a VM's, NULL for none), a timed event's reasons also have their time. */
static void json_reasons(struct json *j, const struct kvm_reader *kr, const struct kvm_delta *d,
			 const struct kvm_change *ch, const struct kvm_exit_time *times)
{
	bool timed = false;
	char event[64] = "";
	bool any = false;
	for (size_t s = 0; s < d->nsel; s++) {
		if (!is_reason(kr, d, s))
			continue;
		const char *name = kvm_counter_name(kr, d->sel[s]), *slash = strchr(name, '/');
		size_t elen = slash ? (size_t)(slash - name) : strlen(name);
		if (!any)
			json_object_begin(j, "reasons");
		if (!any || strlen(event) != elen || strncmp(event, name, elen)) {
			if (any)
				json_object_end(j);
			snprintf(event, sizeof(event), "%.*s", (int)elen, name);
			json_object_begin(j, event);
			timed = times && kvm_reader_reasons_timed(kr, event);
		}
		any = true;
		json_object_begin(j, slash ? slash + 1 : name);
		json_change_fields(j, KVM_STAT_REASON, &ch[s]);
		if (timed)
			kvm_view_json_time(j, &times[s]);
		json_object_end(j);
	}
	if (any) {
		json_object_end(j);
		json_object_end(j);
	}
}

/* "halt_poll": seconds of one host CPU per second spent polling halted vCPUs (caught the wake-up,
 * or gave up and slept), and asleep; null with why where the source has no halt counters. */
static void json_halt(struct json *j, const struct kvm_halt_index *ix, const struct kvm_delta *d,
		      const struct kvm_change *changes, const char *why)
{
	bool present = ix->success_ns >= 0 || ix->fail_ns >= 0 || ix->wait_ns >= 0, selected = false;
	for (size_t s = 0; s < d->nsel; s++)
		selected |= (int)d->sel[s] == ix->success_ns || (int)d->sel[s] == ix->fail_ns ||
			    (int)d->sel[s] == ix->wait_ns;
	if (present && !selected)
		return; /* --fields left them out */
	struct kvm_halt h;
	kvm_halt_change(ix, d->sel, d->nsel, changes, &h);
	json_object_begin(j, "halt_poll");
	json_double(j, "poll_seconds_per_second", h.poll_per_second);
	json_double(j, "success_seconds_per_second", h.success_per_second);
	json_double(j, "fail_seconds_per_second", h.fail_per_second);
	json_double(j, "wait_seconds_per_second", h.wait_per_second);
	json_double(j, "poll_seconds", h.poll_ns.known ? (double)h.poll_ns.v / 1e9 : NAN);
	json_maybe(j, "polls", h.polls);
	json_maybe(j, "successful_polls", h.successful_polls);
	if (!h.poll_ns.known)
		json_string(j, "unavailable", why && why[0] ? why
					      : ix->success_ns < 0 || ix->fail_ns < 0
						      ? "its source has no halt_poll_success_ns/halt_poll_fail_ns"
						      : "its source did not give halt_poll_success_ns and halt_poll_fail_ns");
	json_object_end(j);
}

/* "vcpus": [{"index": 0, "counters": {...}}], the counters a vCPU has (known at the later read). */
static void json_vcpus(struct json *j, const struct kvm_reader *kr, const struct kvm_delta *d,
		       const struct kvm_halt_index *ix, const struct kvm_delta_vm *view)
{
	json_array_begin(j, "vcpus");
	for (size_t c = 0; c < view->nvcpus; c++) {
		json_object_begin(j, NULL);
		json_int(j, "index", view->vcpus[c].index);
		json_object_begin(j, "counters");
		bool reasons = false;
		for (size_t s = 0; s < d->nsel; s++) {
			reasons |= is_reason(kr, d, s) && view->vcpus[c].changes[s].total.known;
			if (!is_reason(kr, d, s) && view->vcpus[c].changes[s].total.known)
				json_change(j, kvm_counter_name(kr, d->sel[s]), kvm_counter_kind(kr, d->sel[s]),
					    &view->vcpus[c].changes[s]);
		}
		json_object_end(j);
		if (reasons) /* counted by thread (eBPF) */
			json_reasons(j, kr, d, view->vcpus[c].changes, NULL);
		json_halt(j, ix, d, view->vcpus[c].changes, NULL);
		json_object_end(j);
	}
	json_array_end(j);
}

/* The fields of one reading inside the caller's open JSON object. */
static void kvm_view_json(struct json *j, const struct kvm_reader *kr, const struct kvm_delta *d)
{
	struct kvm_halt_index ix;
	kvm_halt_index(kr, &ix);
	json_double(j, "interval_seconds", d->seconds);
	json_object_begin(j, "kinds");
	for (size_t s = 0; s < d->nsel; s++)
		if (!is_reason(kr, d, s))
			json_string(j, kvm_counter_name(kr, d->sel[s]), kvm_stat_kind_name(kvm_counter_kind(kr, d->sel[s])));
	json_object_end(j);
	json_object_begin(j, "total");
	for (size_t s = 0; s < d->nsel; s++)
		if (!is_reason(kr, d, s))
			json_change(j, kvm_counter_name(kr, d->sel[s]), kvm_counter_kind(kr, d->sel[s]), &d->total[s]);
	json_reasons(j, kr, d, d->total, NULL);
	json_halt(j, &ix, d, d->total, NULL);
	json_object_end(j);
	json_array_begin(j, "vms");
	for (size_t v = 0; v < d->nvms; v++) {
		const struct kvm_delta_vm *view = &d->vms[v];
		json_object_begin(j, NULL);
		json_vm_ident(j, view->vm);
		json_bool(j, "appeared", view->appeared);
		if (view->vm->read_seconds > 0) { /* paced: how old its figures are, what they are over */
			json_bool(j, "held", view->held);
			json_double(j, "stats_age_seconds", view->age_seconds);
			json_double(j, "stats_interval_seconds", view->seconds);
		}
		json_object_begin(j, "counters");
		for (size_t s = 0; s < d->nsel; s++)
			if (!is_reason(kr, d, s))
				json_change(j, kvm_counter_name(kr, d->sel[s]), kvm_counter_kind(kr, d->sel[s]),
					    &view->changes[s]);
		json_object_end(j);
		json_reasons(j, kr, d, view->changes, view->times);
		json_halt(j, &ix, d, view->changes, view->vm->unavailable);
		if (view->nvcpus)
			json_vcpus(j, kr, d, &ix, view);
		json_object_end(j);
	}
	json_array_end(j);
	json_array_begin(j, "vanished");
	for (size_t v = 0; v < d->ngone; v++) {
		json_object_begin(j, NULL);
		json_vm_ident(j, d->gone[v]);
		json_object_end(j);
	}
	json_array_end(j);
	json_int(j, "unreadable_vms", d->vanished);
	if (d->reasons_why && d->reasons_why[0])
		json_string(j, "reasons_unavailable", d->reasons_why);
	if (d->reasons_counter && d->reasons_counter[0])
		json_string(j, "reasons_counter", d->reasons_counter);
	if (d->pace_why && d->pace_why[0])
		json_string(j, "vcpu_stats_paced", d->pace_why);
	if (d->private_mounts && d->private_mounts[0])
		json_string(j, "private_mounts", d->private_mounts);
}

/* ---- human formats ---- */

static void fmt_count(char *buf, size_t cap, maybe_i64 v)
{
	if (v.known)
		snprintf(buf, cap, "%lld", (long long)v.v);
	else
		snprintf(buf, cap, "n/a");
}

static void fmt_ns(char *buf, size_t cap, maybe_i64 v)
{
	if (v.known)
		fmt_seconds(buf, cap, (double)v.v / 1e9);
	else
		snprintf(buf, cap, "n/a");
}

/* The rate cell: events per second (out/fmt.h), percent of the interval for times, "-" for gauges. */
static void rate_cell(char *buf, size_t cap, enum kvm_stat_kind kind, const struct kvm_change *c)
{
	if (kind == KVM_STAT_GAUGE)
		snprintf(buf, cap, "-");
	else if (c->reset)
		snprintf(buf, cap, "reset");
	else if (isnan(c->per_second))
		snprintf(buf, cap, "n/a");
	else if (kind == KVM_STAT_TIME_NS)
		snprintf(buf, cap, "%.1f%%", c->per_second / 1e7);
	else
		fmt_rate(buf, cap, c->per_second);
}

static void fmt_delta(char *buf, size_t cap, enum kvm_stat_kind kind, const struct kvm_change *c)
{
	if (c->reset)
		snprintf(buf, cap, "reset");
	else if (kind == KVM_STAT_TIME_NS)
		fmt_ns(buf, cap, c->delta);
	else if (kind == KVM_STAT_GAUGE && c->delta.known)
		snprintf(buf, cap, "%+lld", (long long)c->delta.v);
	else
		fmt_count(buf, cap, c->delta);
}

static void fmt_total(char *buf, size_t cap, enum kvm_stat_kind kind, const struct kvm_change *c)
{
	if (kind == KVM_STAT_TIME_NS)
		fmt_ns(buf, cap, c->total);
	else
		fmt_count(buf, cap, c->total);
}

void kvm_vm_label(char *buf, size_t cap, const struct kvm_vm_sample *vm)
{
	if (vm->name[0])
		text_for_terminal(buf, cap, vm->name, 0); /* long names are cut */
	else
		snprintf(buf, cap, "pid %d", (int)vm->pid);
}

/* Row order: events by rate, then times by share, then gauges; ties by total, then name. */
struct row_key {
	const struct kvm_reader *kr;
	const struct kvm_delta *d;
	size_t s;
};

static int kind_rank(enum kvm_stat_kind k)
{
	return k == KVM_STAT_EVENTS ? 0 : k == KVM_STAT_REASON ? 1 : k == KVM_STAT_TIME_NS ? 2 : 3;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct row_key *a = pa, *b = pb;
	enum kvm_stat_kind ka = kvm_counter_kind(a->kr, a->d->sel[a->s]), kb = kvm_counter_kind(b->kr, b->d->sel[b->s]);
	if (kind_rank(ka) != kind_rank(kb))
		return kind_rank(ka) - kind_rank(kb);
	const struct kvm_change *ca = &a->d->total[a->s], *cb = &b->d->total[b->s];
	double ra = isnan(ca->per_second) ? -1 : ca->per_second, rb = isnan(cb->per_second) ? -1 : cb->per_second;
	if (ra != rb)
		return ra < rb ? 1 : -1;
	int64_t ta = ca->total.known ? ca->total.v : -1, tb = cb->total.known ? cb->total.v : -1;
	if (ta != tb)
		return ta < tb ? 1 : -1;
	return strcmp(kvm_counter_name(a->kr, a->d->sel[a->s]), kvm_counter_name(b->kr, b->d->sel[b->s]));
}

static bool row_is_quiet(const struct kvm_change *c)
{
	return c->total.known && c->total.v == 0 && (!c->delta.known || c->delta.v == 0) && !c->reset;
}

/* The mean time of a reason's exits that ended in the interval, over the VMs timed: "-" when none. */
static void fmt_mean(char *buf, size_t cap, const struct kvm_delta *d, size_t s)
{
	uint64_t ns = 0, n = 0;
	for (size_t v = 0; v < d->nvms; v++)
		if (d->vms[v].times) {
			ns += d->vms[v].times[s].ns;
			n += d->vms[v].times[s].count;
		}
	if (!n)
		snprintf(buf, cap, "-");
	else if ((double)ns / (double)n < 1e4)
		snprintf(buf, cap, "%.2fus", (double)ns / (double)n / 1e3);
	else
		fmt_seconds(buf, cap, (double)ns / (double)n / 1e9);
}

static bool any_times(const struct kvm_delta *d)
{
	for (size_t v = 0; v < d->nvms; v++)
		if (d->vms[v].times)
			return true;
	return false;
}

/* Cells of the human table, one row per counter; columns EVENT TOTAL DELTA PER SEC (MEAN TIME
 * when exits are timed), then the per-second rate of each VM that fits in max_width (0 = no
 * limit); at most max_rows lines (0 = no limit), each ending in eol. Returns the lines printed. */
static int kvm_view_table(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, bool show_all, size_t max_width,
			  size_t max_rows, const char *eol, size_t *ret_hidden_vms)
{
	enum { W_NAME = 26, W_NUM = 14, W_RATE = 10 };
	struct row_key *rows = calloc(d->nsel ? d->nsel : 1, sizeof(*rows));
	if (!rows)
		return 0;
	size_t nrows = 0;
	for (size_t s = 0; s < d->nsel; s++)
		if (show_all || !row_is_quiet(&d->total[s]))
			rows[nrows++] = (struct row_key){kr, d, s};
	qsort(rows, nrows, sizeof(*rows), cmp_rows);

	/* VM columns: as many as fit; one VM alone is the total already. */
	bool mean = any_times(d);
	size_t width = W_NAME + 2 * (W_NUM + 1) + W_RATE + 1 + (mean ? W_RATE + 1 : 0), nvms = 0;
	size_t colw[64], taken[64];
	char label[64][64];
	for (; d->nvms > 1 && nvms < d->nvms && nvms < 64; nvms++) {
		kvm_vm_label(label[nvms], sizeof(label[nvms]), d->vms[nvms].vm);
		size_t w = strlen(label[nvms]) > W_RATE ? strlen(label[nvms]) : W_RATE;
		colw[nvms] = w > 24 ? 24 : w;
		taken[nvms] = colw[nvms] + 2; /* "  " before each */
	}
	size_t nvmcols = screen_fit(max_width, width, taken, nvms);
	*ret_hidden_vms = d->nvms > 1 ? d->nvms - nvmcols : 0;

	int lines = 0;
	fprintf(f, "%-*s %*s %*s %*s", W_NAME, "EVENT", W_NUM, "TOTAL", W_NUM, "DELTA", W_RATE, "PER SEC");
	if (mean)
		fprintf(f, " %*s", W_RATE, "MEAN TIME");
	for (size_t v = 0; v < nvmcols; v++)
		fprintf(f, "  %*.*s", (int)colw[v], (int)colw[v], label[v]);
	fprintf(f, "%s\n", eol);
	lines++;
	for (size_t i = 0; i < nrows && (!max_rows || (size_t)lines < max_rows); i++) {
		size_t s = rows[i].s;
		enum kvm_stat_kind kind = kvm_counter_kind(kr, d->sel[s]);
		char total[32], delta[32], rate[32];
		fmt_total(total, sizeof(total), kind, &d->total[s]);
		fmt_delta(delta, sizeof(delta), kind, &d->total[s]);
		rate_cell(rate, sizeof(rate), kind, &d->total[s]);
		fprintf(f, "%-*s %*s %*s %*s", W_NAME, kvm_counter_name(kr, d->sel[s]), W_NUM, total, W_NUM, delta,
			W_RATE, rate);
		if (mean) {
			fmt_mean(rate, sizeof(rate), d, s);
			fprintf(f, " %*s", W_RATE, rate);
		}
		for (size_t v = 0; v < nvmcols; v++) {
			rate_cell(rate, sizeof(rate), kind, &d->vms[v].changes[s]);
			fprintf(f, "  %*s", (int)colw[v], rate);
		}
		fprintf(f, "%s\n", eol);
		lines++;
	}
	free(rows);
	return lines;
}

/* "db1, web (new), pid 4242": the VMs of the reading. */
static void kvm_view_vm_list(char *buf, size_t cap, const struct kvm_delta *d)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t v = 0; v < d->nvms && n + 1 < cap; v++) {
		char label[64];
		kvm_vm_label(label, sizeof(label), d->vms[v].vm);
		int w = snprintf(buf + n, cap - n, "%s%s%s", v ? ", " : "", label, d->vms[v].appeared ? " (new)" : "");
		if (w < 0 || (size_t)w >= cap - n)
			break;
		n += (size_t)w;
	}
}

/* The lines around the table: which VMs, which appeared or went away, what is unknown. */
void kvm_view_notes(FILE *f, const struct kvm_delta *d, const char *eol)
{
	for (size_t v = 0; v < d->ngone; v++) {
		char label[64];
		kvm_vm_label(label, sizeof(label), d->gone[v]);
		fprintf(f, "VM %s (%s) went away during the interval: its last events are not counted%s\n", label,
			d->gone[v]->dir, eol);
	}
	for (size_t v = 0; v < d->nvms; v++) {
		char label[64];
		kvm_vm_label(label, sizeof(label), d->vms[v].vm);
		if (d->vms[v].vm->unavailable[0])
			fprintf(f, "VM %s: %s%s\n", label, d->vms[v].vm->unavailable, eol);
	}
	if (d->vanished)
		fprintf(f, "%u VM director%s vanished while being read%s\n", d->vanished, d->vanished == 1 ? "y" : "ies",
			eol);
	if (d->denied)
		fprintf(f, "%u counter file%s could not be read (permission denied): shown as n/a%s\n", d->denied,
			d->denied == 1 ? "" : "s", eol);
	if (d->reasons_why && d->reasons_why[0])
		fprintf(f, "exit reasons not counted: %s%s\n", d->reasons_why, eol);
	else if (d->reasons_counter && d->reasons_counter[0])
		fprintf(f, "exit reasons counted by %s%s\n", d->reasons_counter, eol);
	if (d->pace_why && d->pace_why[0])
		fprintf(f, "%s (--kvm-interval); between reads its last figures are shown%s\n", d->pace_why, eol);
	if (d->private_mounts && d->private_mounts[0])
		fprintf(f, "%s: not mounted on this host; mounted for this run alone (the host's mounts unchanged)%s\n",
			d->private_mounts, eol);
	if (!d->nvms && !d->nlisted)
		fprintf(f, "KVM is loaded but no VM is running (no <pid>-<fd> directory in debugfs)%s\n", eol);
}

/* With per-vCPU reads: a line per VM of each vCPU's exits per second (when exits is selected). */
static void kvm_view_vcpus(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const char *eol)
{
	int e = kvm_counter_index(kr, "exits");
	size_t s = 0;
	while (e >= 0 && s < d->nsel && d->sel[s] != (size_t)e)
		s++;
	for (size_t v = 0; e >= 0 && s < d->nsel && v < d->nvms; v++) {
		const struct kvm_delta_vm *view = &d->vms[v];
		if (!view->nvcpus)
			continue;
		char label[64], rate[32];
		kvm_vm_label(label, sizeof(label), view->vm);
		fprintf(f, "%s exits/s by vCPU:", label);
		for (size_t c = 0; c < view->nvcpus; c++) {
			rate_cell(rate, sizeof(rate), KVM_STAT_EVENTS, &view->vcpus[c].changes[s]);
			fprintf(f, "  %d: %s", view->vcpus[c].index, rate);
		}
		fprintf(f, "%s\n", eol);
	}
}

/* A line per VM that polled halted vCPUs: polling as percent of one host CPU, caught vs gave up,
 * halted asleep, polls per second (when halt_poll_*_ns are selected and known). */
static void kvm_view_halt(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const char *eol)
{
	struct kvm_halt_index ix;
	kvm_halt_index(kr, &ix);
	for (size_t v = 0; v < d->nvms; v++) {
		struct kvm_halt h;
		kvm_halt_change(&ix, d->sel, d->nsel, d->vms[v].changes, &h);
		if (!(h.poll_per_second > 0))
			continue;
		char label[64];
		kvm_vm_label(label, sizeof(label), d->vms[v].vm);
		fprintf(f, "%s halt polling: %.1f%% of a host CPU (caught the wake-up %.1f%%, gave up %.1f%%)", label,
			100 * h.poll_per_second, 100 * h.success_per_second, 100 * h.fail_per_second);
		if (isfinite(h.wait_per_second))
			fprintf(f, ", halted asleep %.1f%%", 100 * h.wait_per_second);
		if (h.polls.known && h.successful_polls.known && h.polls.v > 0)
			fprintf(f, "; %.0f polls/s, %.0f%% caught", (double)h.polls.v / d->seconds,
				100.0 * (double)h.successful_polls.v / (double)h.polls.v);
		fprintf(f, "%s\n", eol);
	}
}

/* The busiest reason of one vCPU over the interval: its position in sel, or nsel for none. */
static size_t busiest_reason(const struct kvm_reader *kr, const struct kvm_delta *d, const struct kvm_change *ch)
{
	size_t best = d->nsel;
	for (size_t s = 0; s < d->nsel; s++)
		if (is_reason(kr, d, s) && ch[s].per_second > 0 && (best == d->nsel || ch[s].per_second > ch[best].per_second))
			best = s;
	return best;
}

/* With reasons counted per vCPU (eBPF, --vcpu): a line per VM of each vCPU's busiest reason. */
static void kvm_view_vcpu_reasons(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const char *eol)
{
	for (size_t v = 0; v < d->nvms; v++) {
		const struct kvm_delta_vm *view = &d->vms[v];
		bool any = false;
		for (size_t c = 0; c < view->nvcpus; c++) {
			size_t s = busiest_reason(kr, d, view->vcpus[c].changes);
			if (s == d->nsel)
				continue;
			char label[64], rate[32];
			if (!any) {
				kvm_vm_label(label, sizeof(label), view->vm);
				fprintf(f, "%s busiest exit reason by vCPU:", label);
				any = true;
			}
			rate_cell(rate, sizeof(rate), KVM_STAT_REASON, &view->vcpus[c].changes[s]);
			fprintf(f, "  %d: %s %s/s", view->vcpus[c].index, kvm_counter_name(kr, d->sel[s]), rate);
		}
		if (any)
			fprintf(f, "%s\n", eol);
	}
}

void kvm_view_once(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, bool show_all,
		   const struct kvm_command_run *cmd)
{
	if (cmd) {
		char secs[32];
		fmt_seconds(secs, sizeof(secs), cmd->wall_seconds);
		fprintf(f, "command: %s ... exited with status %d after %s\n", cmd->argv[0], cmd->status, secs);
	}
	char list[1024], secs[32];
	kvm_view_vm_list(list, sizeof(list), d);
	fmt_seconds(secs, sizeof(secs), d->seconds);
	if (d->nvms)
		fprintf(f, "KVM counters over %s, %zu VM%s: %s\n\n", secs, d->nvms, d->nvms == 1 ? "" : "s", list);
	else
		fprintf(f, "KVM counters over %s\n\n", secs);
	size_t hidden = 0;
	if (kvm_view_table(f, kr, d, show_all, 0, 0, "", &hidden) == 1)
		fprintf(f, "(every selected counter is zero)\n");
	fprintf(f, "\n");
	kvm_view_vcpus(f, kr, d, "");
	kvm_view_halt(f, kr, d, "");
	kvm_view_vcpu_reasons(f, kr, d, "");
	kvm_view_notes(f, d, "");
	fprintf(f, "PER SEC: events per second; for *_ns times, percent of the interval (of one CPU)\n");
	if (any_times(d))
		fprintf(f, "MEAN TIME: of the exits that ended in the interval: kvm_exit to the thread's next kvm_entry;\n"
			   "kvm_userspace_exit to its next KVM_RUN (the VMM's handling and any wait for a CPU)\n");
}

void kvm_view_frame(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const struct kvm_frame *fr)
{
	const struct screen sc = {f, fr->cols, fr->rows, fr->full_screen};
	const char *eol = screen_eol(&sc);
	char list[1024];
	screen_begin(&sc);
	kvm_view_vm_list(list, sizeof(list), d);
	screen_title(&sc, "exits", fr->now_unix, fr->interval_seconds, d->nvms, "%s%s", d->nvms ? ": " : "", list);
	fprintf(f, "%s%s\n", fr->keys ? "q quits; sorted by rate; PER SEC for *_ns is percent of the interval" : "", eol);
	size_t hidden = 0;
	kvm_view_table(f, kr, d, fr->show_all, fr->cols, fr->rows > 6 ? fr->rows - 4 : 0, eol, &hidden);
	if (hidden)
		fprintf(f, "(%zu more VM%s not shown: widen the terminal, or --vm NAME)%s\n", hidden,
			hidden == 1 ? "" : "s", eol);
	kvm_view_halt(f, kr, d, eol);
	kvm_view_notes(f, d, eol);
	screen_end(&sc);
}

/* -- CMD: the command line, its exit status and wall time, in the caller's open JSON object. */
static void command_json(struct json *j, char *const *argv, int status, double wall_seconds)
{
	char cmd[4096];
	size_t n = 0;
	for (char *const *p = argv; *p && n < sizeof(cmd); p++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s%s", p == argv ? "" : " ", *p);
	json_string(j, "command", cmd);
	json_int(j, "exit_status", status);
	json_double(j, "wall_seconds", wall_seconds);
}

void kvm_view_once_json(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d,
			const struct kvm_command_run *cmd)
{
	struct json j;
	json_init(&j, f, false);
	json_object_begin(&j, NULL);
	kvm_view_json(&j, kr, d);
	if (cmd)
		command_json(&j, cmd->argv, cmd->status, cmd->wall_seconds);
	json_object_end(&j);
	json_finish(&j);
}

/* ---- --log ---- */

int kvm_log_columns(const struct kvm_reader *kr, const struct kvm_delta *d, bool every_selected,
		    struct kvm_log_cols *ret)
{
	ret->sel_pos = malloc((d->nsel ? d->nsel : 1) * sizeof(*ret->sel_pos));
	ret->n = 0;
	if (!ret->sel_pos)
		return -ENOMEM;
	for (size_t s = 0; s < d->nsel; s++) {
		const char *name = kvm_counter_name(kr, d->sel[s]);
		bool take = every_selected;
		for (size_t k = 0; !take && k < sizeof(log_default_fields) / sizeof(log_default_fields[0]); k++)
			take = !strcmp(name, log_default_fields[k]);
		if (take)
			ret->sel_pos[ret->n++] = s;
	}
	return 0;
}

static size_t log_width(const char *name)
{
	size_t l = strlen(name);
	return l < 8 ? 8 : l;
}

void kvm_log_header(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const struct kvm_log_cols *c,
		    bool csv)
{
	fputs(csv ? "time_unix,interval_seconds" : "time    ", f);
	for (size_t i = 0; i < c->n; i++) {
		const char *name = kvm_counter_name(kr, d->sel[c->sel_pos[i]]);
		if (csv)
			fprintf(f, ",%s", name);
		else
			fprintf(f, " %*s", (int)log_width(name), name);
	}
	fputc('\n', f);
}

void kvm_log_json(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, double now_unix)
{
	struct json j;
	json_init(&j, f, false);
	json_object_begin(&j, NULL);
	json_double(&j, "time_unix", now_unix);
	kvm_view_json(&j, kr, d);
	json_object_end(&j);
	json_finish(&j);
	fflush(f);
}

void kvm_log_line(FILE *f, const struct kvm_reader *kr, const struct kvm_delta *d, const struct kvm_log_cols *c,
		  bool csv, double now_unix)
{
	if (csv) {
		fprintf(f, "%.3f,%.6f", now_unix, d->seconds);
	} else {
		time_t t = (time_t)now_unix;
		struct tm tm;
		char hms[16];
		localtime_r(&t, &tm);
		strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
		fprintf(f, "%-8s", hms);
	}
	for (size_t i = 0; i < c->n; i++) {
		size_t s = c->sel_pos[i];
		enum kvm_stat_kind kind = kvm_counter_kind(kr, d->sel[s]);
		const struct kvm_change *ch = &d->total[s];
		char cell[32];
		if (csv) {
			if (ch->delta.known)
				snprintf(cell, sizeof(cell), "%lld", (long long)ch->delta.v);
			else
				cell[0] = '\0';
			fprintf(f, ",%s", cell);
			continue;
		}
		if (kind == KVM_STAT_TIME_NS)
			rate_cell(cell, sizeof(cell), kind, ch);
		else
			fmt_delta(cell, sizeof(cell), kind, ch);
		fprintf(f, " %*s", (int)log_width(kvm_counter_name(kr, d->sel[s])), cell);
	}
	fputc('\n', f);
	fflush(f);
}
