/* vmhost exits: KVM exit and event counters per VM (kvm_stat's debugfs mode, without the fuzz). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/kvm.h"
#include "core/snapshot.h"
#include "out/json.h"
#include "out/table.h"
#include "core/clock.h"

#define MAX_FILTERS 64
#define LOG_HEADER_EVERY 20

enum exits_mode { MODE_LIVE, MODE_ONCE, MODE_LOG, MODE_COMMAND };

struct exits_opts {
	enum exits_mode mode;
	double interval_seconds;
	const char *vm_names[MAX_FILTERS];
	size_t nvm_names;
	pid_t pids[MAX_FILTERS];
	size_t npids;
	const char *fields_arg;
	regex_t fields;
	bool have_fields;
	long count; /* refreshes before stopping (live, log); 0 = until interrupted */
	char **command;
};

/* Counters shown by --log when no --fields is given: the ones that explain a slow guest. */
static const char *const log_default_fields[] = {
	"exits", "halt_exits", "io_exits", "mmio_exits", "irq_exits", "irq_window_exits",
	"request_irq_exits", "signal_exits", "insn_emulation", "host_state_reload", "fpu_reload",
	"hypercalls", "pf_taken", "pf_fixed", "tlb_flush", "remote_tlb_flush", "halt_wait_ns",
	"halt_poll_success_ns", "halt_poll_fail_ns",
};

/* ---- signals: stop the loops cleanly (terminal restored, nothing half printed) ---- */


/* ---- options ---- */

static void exits_help(void)
{
	printf("usage: vmhost exits [--once|--log] [--interval SEC] [--count N] [--vm NAME]... [--pid PID]...\n"
	       "                    [--fields REGEX] [--json|--csv] [-- CMD ARGS...]\n"
	       "\n"
	       "KVM exit and event counters from debugfs (<sys-root>/kernel/debug/kvm), per VM and in total.\n"
	       "Files stay open and are re-read with one pread each; VMs are named by pid (exact match).\n"
	       "\n"
	       "  (default)        live view every --interval: full screen on a terminal, sorted by rate;\n"
	       "                   q or Ctrl-C quits\n"
	       "  --once           two reads --interval apart, then print (like kvm_stat -1)\n"
	       "  --log            one line per interval with the deltas, header repeated; --csv for CSV,\n"
	       "                   --json for one JSON document per line\n"
	       "  -- CMD ARGS...   run CMD, then print the deltas over its run, its wall time and exit\n"
	       "                   status; vmhost exits with CMD's status (under --json CMD's stdout goes\n"
	       "                   to stderr so stdout stays one JSON document)\n"
	       "  --interval SEC   seconds between reads (default 1)\n"
	       "  --count N        stop after N refreshes (live view, --log)\n"
	       "  --vm NAME        only this VM (exact name; repeatable)\n"
	       "  --pid PID        only the VM of this process (exact pid; repeatable)\n"
	       "  --fields REGEX   only counters whose name matches (extended regex, unanchored as in\n"
	       "                   kvm_stat -f: use ^exits$ for one)\n"
	       "\n"
	       "Counters ending in _ns are times: shown as seconds and as percent of the interval\n"
	       "(of one CPU; vCPUs add up). Gauges (pages_4k, mmu_unsync, ...) show their value.\n"
	       "A counter that went down was reset (cleared, or KVM reloaded): shown as 'reset', never as\n"
	       "a negative rate. Needs root; see docs/exits.md.\n");
}

static int parse_exits_opts(struct ctx *ctx, int argc, char **argv, struct exits_opts *o, bool *help)
{
	static const struct option longopts[] = {
		{"once", no_argument, NULL, '1'},
		{"log", no_argument, NULL, 'l'},
		{"interval", required_argument, NULL, 'i'},
		{"count", required_argument, NULL, 'n'},
		{"vm", required_argument, NULL, 'g'},
		{"pid", required_argument, NULL, 'p'},
		{"fields", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	o->interval_seconds = 1.0;
	args_reset();
	int c;
	bool once = false, log = false;
	while ((c = getopt_long(argc, argv, "+1li:n:g:p:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case '1': once = true; break;
		case 'l': log = true; break;
		case 'i':
			if (arg_seconds(optarg, &o->interval_seconds) < 0)
				return usage_error(ctx, "--interval takes seconds (e.g. 1, 0.5), not '%s'", optarg);
			break;
		case 'n': {
			char *end;
			errno = 0;
			o->count = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->count <= 0)
				return usage_error(ctx, "--count takes a positive number, not '%s'", optarg);
			break;
		}
		case 'g':
			if (o->nvm_names == MAX_FILTERS)
				return usage_error(ctx, "too many --vm options");
			o->vm_names[o->nvm_names++] = optarg;
			break;
		case 'p': {
			int pid;
			if (arg_pid(optarg, &pid) < 0)
				return usage_error(ctx, "--pid takes a process id, not '%s'", optarg);
			if (o->npids == MAX_FILTERS)
				return usage_error(ctx, "too many --pid options");
			o->pids[o->npids++] = pid;
			break;
		}
		case 'f':
			if (o->have_fields)
				return usage_error(ctx, "--fields given twice (combine them: 'a|b')");
			if (regcomp(&o->fields, optarg, REG_EXTENDED | REG_NOSUB) != 0)
				return usage_error(ctx, "--fields: '%s' is not a valid extended regular expression", optarg);
			o->have_fields = true;
			o->fields_arg = optarg;
			break;
		case 'h': *help = true; break;
		default:
			return usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") != 0)
			return usage_error(ctx, "unexpected argument '%s' (a command to measure goes after --)", argv[optind]);
		o->command = argv + optind;
	} else if (optind > 1 && !strcmp(argv[optind - 1], "--")) {
		return usage_error(ctx, "-- must be followed by a command to run");
	}
	if (once + log + (o->command != NULL) > 1)
		return usage_error(ctx, "--once, --log and -- CMD are different modes: pick one");
	o->mode = o->command ? MODE_COMMAND : once ? MODE_ONCE : log ? MODE_LOG : MODE_LIVE;
	if (ctx->format == OUT_CSV && o->mode != MODE_LOG)
		return usage_error(ctx, "--csv goes with --log (one row per interval)");
	if (ctx->format == OUT_JSON && o->mode == MODE_LIVE)
		o->mode = MODE_ONCE; /* one JSON document: the --once reading */
	return EXIT_OK;
}

/* ---- the model of one reading: two samples and what changed ---- */

struct vm_view {
	const struct kvm_vm_sample *vm; /* in the later sample */
	bool appeared;                  /* not in the earlier sample: created during the interval */
	struct kvm_change *changes;     /* [nsel] */
};

struct report {
	double seconds;
	size_t nsel;
	size_t *sel;               /* selected counter indices */
	struct kvm_change *total;  /* [nsel] */
	struct vm_view *vms;
	size_t nvms;
	const struct kvm_vm_sample **gone; /* in the earlier sample only */
	size_t ngone;
	unsigned vanished;
	unsigned denied;
	bool filtered;
	size_t nlisted;            /* VMs in the later sample before filtering */
};

static void report_free(struct report *r)
{
	for (size_t i = 0; r->vms && i < r->nvms; i++)
		free(r->vms[i].changes);
	free(r->vms);
	free(r->sel);
	free(r->total);
	free(r->gone);
	memset(r, 0, sizeof(*r));
}

static bool vm_selected(const struct exits_opts *o, const struct kvm_vm_sample *vm)
{
	if (!o->nvm_names && !o->npids)
		return true;
	for (size_t i = 0; i < o->nvm_names; i++)
		if (vm->name[0] && !strcmp(vm->name, o->vm_names[i]))
			return true;
	for (size_t i = 0; i < o->npids; i++)
		if (vm->pid == o->pids[i])
			return true;
	return false;
}

static bool field_selected(const struct exits_opts *o, const char *name)
{
	return !o->have_fields || regexec(&o->fields, name, 0, NULL, 0) == 0;
}

static int build_report(const struct kvm_reader *kr, const struct exits_opts *o, const struct kvm_sample *a,
			const struct kvm_sample *b, struct report *r)
{
	memset(r, 0, sizeof(*r));
	r->seconds = b->monotonic_seconds - a->monotonic_seconds;
	r->filtered = o->nvm_names || o->npids;
	r->vanished = a->vanished + b->vanished;
	r->denied = b->denied;
	r->nlisted = b->nvms;
	size_t nc = b->ncounters;
	r->sel = malloc((nc ? nc : 1) * sizeof(*r->sel));
	r->total = malloc((nc ? nc : 1) * sizeof(*r->total));
	r->vms = calloc(b->nvms ? b->nvms : 1, sizeof(*r->vms));
	r->gone = calloc(a->nvms ? a->nvms : 1, sizeof(*r->gone));
	if (!r->sel || !r->total || !r->vms || !r->gone)
		goto nomem;
	for (size_t i = 0; i < nc; i++)
		if (field_selected(o, kvm_counter_name(kr, i)))
			r->sel[r->nsel++] = i;
	/* The counter set can grow between samples (found only once a VM appeared): the earlier
	 * sample has no value for the new ones. */
	for (size_t v = 0; v < b->nvms; v++) {
		const struct kvm_vm_sample *vm = &b->vms[v];
		if (!vm_selected(o, vm))
			continue;
		const struct kvm_vm_sample *before = kvm_sample_find(a, vm->dir);
		struct vm_view *view = &r->vms[r->nvms++];
		view->vm = vm;
		view->appeared = before == NULL;
		view->changes = malloc((r->nsel ? r->nsel : 1) * sizeof(*view->changes));
		if (!view->changes)
			goto nomem;
		for (size_t s = 0; s < r->nsel; s++) {
			size_t i = r->sel[s];
			maybe_i64 was = before && i < a->ncounters ? before->values[i] : UNKNOWN;
			view->changes[s] = kvm_change(kvm_counter_kind(kr, i), was, vm->values[i], r->seconds,
						      view->appeared);
		}
	}
	for (size_t v = 0; v < a->nvms; v++)
		if (vm_selected(o, &a->vms[v]) && !kvm_sample_find(b, a->vms[v].dir))
			r->gone[r->ngone++] = &a->vms[v];
	/* Totals: the kernel's global file when nothing is filtered; the sum of the shown VMs'
	 * changes for deltas (the global files drop when a VM exits, which is not a reset). */
	bool any_vm_dirs = a->nvms || b->nvms;
	for (size_t s = 0; s < r->nsel; s++) {
		size_t i = r->sel[s];
		enum kvm_stat_kind kind = kvm_counter_kind(kr, i);
		maybe_i64 was = i < a->ncounters ? a->total[i] : UNKNOWN;
		struct kvm_change global = kvm_change(kind, was, b->total[i], r->seconds, false);
		if (!r->filtered && (!any_vm_dirs || kind == KVM_STAT_GAUGE)) {
			r->total[s] = global;
			continue;
		}
		struct kvm_change sum = kvm_change_zero();
		for (size_t v = 0; v < r->nvms; v++)
			kvm_change_add(&sum, &r->vms[v].changes[s], r->seconds);
		if (kind == KVM_STAT_GAUGE)
			sum.per_second = NAN;
		if (!r->filtered)
			sum.total = b->total[i];
		r->total[s] = sum;
	}
	return 0;
nomem:
	report_free(r);
	return -ENOMEM;
}

/* ---- JSON ---- */

static void json_change(struct json *j, const char *key, enum kvm_stat_kind kind, const struct kvm_change *c)
{
	json_object_begin(j, key);
	json_maybe(j, "total", c->total);
	json_maybe(j, "delta", c->delta);
	json_double(j, "per_second", c->per_second);
	if (kind == KVM_STAT_TIME_NS)
		json_double(j, "fraction", c->per_second / 1e9);
	if (kind != KVM_STAT_GAUGE)
		json_bool(j, "reset", c->reset);
	json_object_end(j);
}

static void json_vm_ident(struct json *j, const struct kvm_vm_sample *vm)
{
	json_int(j, "pid", vm->pid);
	json_string(j, "name", vm->name[0] ? vm->name : NULL);
	json_string(j, "debugfs_dir", vm->dir);
	json_int(j, "kvm_fd", vm->kvm_fd);
	if (vm->vcpus >= 0)
		json_int(j, "vcpus", vm->vcpus);
	else
		json_null(j, "vcpus");
}

static void json_report_body(struct json *j, const struct kvm_reader *kr, const struct report *r)
{
	json_double(j, "interval_seconds", r->seconds);
	json_object_begin(j, "kinds");
	for (size_t s = 0; s < r->nsel; s++)
		json_string(j, kvm_counter_name(kr, r->sel[s]), kvm_stat_kind_name(kvm_counter_kind(kr, r->sel[s])));
	json_object_end(j);
	json_object_begin(j, "total");
	for (size_t s = 0; s < r->nsel; s++)
		json_change(j, kvm_counter_name(kr, r->sel[s]), kvm_counter_kind(kr, r->sel[s]), &r->total[s]);
	json_object_end(j);
	json_array_begin(j, "vms");
	for (size_t v = 0; v < r->nvms; v++) {
		const struct vm_view *view = &r->vms[v];
		json_object_begin(j, NULL);
		json_vm_ident(j, view->vm);
		json_bool(j, "appeared", view->appeared);
		json_object_begin(j, "counters");
		for (size_t s = 0; s < r->nsel; s++)
			json_change(j, kvm_counter_name(kr, r->sel[s]), kvm_counter_kind(kr, r->sel[s]), &view->changes[s]);
		json_object_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	json_array_begin(j, "vanished");
	for (size_t v = 0; v < r->ngone; v++) {
		json_object_begin(j, NULL);
		json_vm_ident(j, r->gone[v]);
		json_object_end(j);
	}
	json_array_end(j);
	json_int(j, "unreadable_vms", r->vanished);
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

/* The rate cell: events per second, percent of the interval for times, "-" for gauges. */
static void fmt_rate(char *buf, size_t cap, enum kvm_stat_kind kind, const struct kvm_change *c)
{
	if (kind == KVM_STAT_GAUGE)
		snprintf(buf, cap, "-");
	else if (c->reset)
		snprintf(buf, cap, "reset");
	else if (isnan(c->per_second))
		snprintf(buf, cap, "n/a");
	else if (kind == KVM_STAT_TIME_NS)
		snprintf(buf, cap, "%.1f%%", c->per_second / 1e7);
	else if (c->per_second < 100)
		snprintf(buf, cap, "%.1f", c->per_second);
	else
		snprintf(buf, cap, "%.0f", c->per_second);
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

static void vm_label(char *buf, size_t cap, const struct kvm_vm_sample *vm)
{
	if (vm->name[0])
		snprintf(buf, cap, "%.*s", (int)(cap - 1), vm->name); /* long names are cut */
	else
		snprintf(buf, cap, "pid %d", (int)vm->pid);
}

/* Row order: events by rate, then times by share, then gauges; ties by total, then name. */
struct row_key {
	const struct kvm_reader *kr;
	const struct report *r;
	size_t s;
};

static int kind_rank(enum kvm_stat_kind k) { return k == KVM_STAT_EVENTS ? 0 : k == KVM_STAT_TIME_NS ? 1 : 2; }

static int cmp_rows(const void *pa, const void *pb)
{
	const struct row_key *a = pa, *b = pb;
	enum kvm_stat_kind ka = kvm_counter_kind(a->kr, a->r->sel[a->s]), kb = kvm_counter_kind(b->kr, b->r->sel[b->s]);
	if (kind_rank(ka) != kind_rank(kb))
		return kind_rank(ka) - kind_rank(kb);
	const struct kvm_change *ca = &a->r->total[a->s], *cb = &b->r->total[b->s];
	double ra = isnan(ca->per_second) ? -1 : ca->per_second, rb = isnan(cb->per_second) ? -1 : cb->per_second;
	if (ra != rb)
		return ra < rb ? 1 : -1;
	int64_t ta = ca->total.known ? ca->total.v : -1, tb = cb->total.known ? cb->total.v : -1;
	if (ta != tb)
		return ta < tb ? 1 : -1;
	return strcmp(kvm_counter_name(a->kr, a->r->sel[a->s]), kvm_counter_name(b->kr, b->r->sel[b->s]));
}

static bool row_is_quiet(const struct kvm_change *c)
{
	return c->total.known && c->total.v == 0 && (!c->delta.known || c->delta.v == 0) && !c->reset;
}

/* Cells of the human table, one row per counter; columns EVENT TOTAL DELTA PER SEC, then the
 * per-second rate of each VM that fits in max_width (0 = no limit). Returns the lines printed. */
static int print_table(FILE *f, const struct kvm_reader *kr, const struct report *r, bool show_all, size_t max_width,
		       size_t max_rows, size_t *ret_hidden_vms)
{
	enum { W_NAME = 26, W_NUM = 14, W_RATE = 10 };
	struct row_key *rows = calloc(r->nsel ? r->nsel : 1, sizeof(*rows));
	if (!rows)
		return 0;
	size_t nrows = 0;
	for (size_t s = 0; s < r->nsel; s++)
		if (show_all || !row_is_quiet(&r->total[s]))
			rows[nrows++] = (struct row_key){kr, r, s};
	qsort(rows, nrows, sizeof(*rows), cmp_rows);

	/* VM columns: as many as fit; one VM alone is the total already. */
	size_t width = W_NAME + 2 * (W_NUM + 1) + W_RATE + 1, nvmcols = 0;
	size_t colw[64];
	char label[64][64];
	for (size_t v = 0; r->nvms > 1 && v < r->nvms && v < 64; v++) {
		vm_label(label[v], sizeof(label[v]), r->vms[v].vm);
		size_t w = strlen(label[v]) > W_RATE ? strlen(label[v]) : W_RATE;
		if (w > 24)
			w = 24;
		if (max_width && width + w + 2 > max_width)
			break;
		colw[v] = w;
		width += w + 2;
		nvmcols++;
	}
	*ret_hidden_vms = r->nvms > 1 ? r->nvms - nvmcols : 0;

	int lines = 0;
	fprintf(f, "%-*s %*s %*s %*s", W_NAME, "EVENT", W_NUM, "TOTAL", W_NUM, "DELTA", W_RATE, "PER SEC");
	for (size_t v = 0; v < nvmcols; v++)
		fprintf(f, "  %*.*s", (int)colw[v], (int)colw[v], label[v]);
	fputs(max_rows ? "\033[K\n" : "\n", f);
	lines++;
	for (size_t i = 0; i < nrows && (!max_rows || (size_t)lines < max_rows); i++) {
		size_t s = rows[i].s;
		enum kvm_stat_kind kind = kvm_counter_kind(kr, r->sel[s]);
		char total[32], delta[32], rate[32];
		fmt_total(total, sizeof(total), kind, &r->total[s]);
		fmt_delta(delta, sizeof(delta), kind, &r->total[s]);
		fmt_rate(rate, sizeof(rate), kind, &r->total[s]);
		fprintf(f, "%-*s %*s %*s %*s", W_NAME, kvm_counter_name(kr, r->sel[s]), W_NUM, total, W_NUM, delta,
			W_RATE, rate);
		for (size_t v = 0; v < nvmcols; v++) {
			fmt_rate(rate, sizeof(rate), kind, &r->vms[v].changes[s]);
			fprintf(f, "  %*s", (int)colw[v], rate);
		}
		fputs(max_rows ? "\033[K\n" : "\n", f);
		lines++;
	}
	free(rows);
	return lines;
}

static void vm_list_line(char *buf, size_t cap, const struct report *r)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t v = 0; v < r->nvms && n + 1 < cap; v++) {
		char label[64];
		vm_label(label, sizeof(label), r->vms[v].vm);
		int w = snprintf(buf + n, cap - n, "%s%s%s", v ? ", " : "", label, r->vms[v].appeared ? " (new)" : "");
		if (w < 0 || (size_t)w >= cap - n)
			break;
		n += (size_t)w;
	}
}

/* The lines around the table: which VMs, which appeared or went away, what is unknown. */
static void print_notes(FILE *f, const struct report *r, const char *eol)
{
	for (size_t v = 0; v < r->ngone; v++) {
		char label[64];
		vm_label(label, sizeof(label), r->gone[v]);
		fprintf(f, "VM %s (%s) went away during the interval: its last events are not counted%s\n", label,
			r->gone[v]->dir, eol);
	}
	if (r->vanished)
		fprintf(f, "%u VM director%s vanished while being read%s\n", r->vanished, r->vanished == 1 ? "y" : "ies",
			eol);
	if (r->denied)
		fprintf(f, "%u counter file%s could not be read (permission denied): shown as n/a%s\n", r->denied,
			r->denied == 1 ? "" : "s", eol);
	if (!r->nvms && !r->nlisted)
		fprintf(f, "KVM is loaded but no VM is running (no <pid>-<fd> directory in debugfs)%s\n", eol);
}

static void print_once_human(const struct kvm_reader *kr, const struct report *r, bool show_all)
{
	char list[1024], secs[32];
	vm_list_line(list, sizeof(list), r);
	fmt_seconds(secs, sizeof(secs), r->seconds);
	if (r->nvms)
		printf("KVM counters over %s, %zu VM%s: %s\n\n", secs, r->nvms, r->nvms == 1 ? "" : "s", list);
	else
		printf("KVM counters over %s\n\n", secs);
	size_t hidden = 0;
	if (print_table(stdout, kr, r, show_all, 0, 0, &hidden) == 1)
		printf("(every selected counter is zero)\n");
	printf("\n");
	print_notes(stdout, r, "");
	printf("PER SEC: events per second; for *_ns times, percent of the interval (of one CPU)\n");
}

/* ---- --log ---- */

struct log_cols {
	size_t *sel_pos; /* positions in report.sel */
	size_t n;
};

static int log_columns(const struct kvm_reader *kr, const struct exits_opts *o, const struct report *r,
		       struct log_cols *ret)
{
	ret->sel_pos = malloc((r->nsel ? r->nsel : 1) * sizeof(*ret->sel_pos));
	ret->n = 0;
	if (!ret->sel_pos)
		return -ENOMEM;
	for (size_t s = 0; s < r->nsel; s++) {
		const char *name = kvm_counter_name(kr, r->sel[s]);
		bool take = o->have_fields;
		for (size_t d = 0; !take && d < sizeof(log_default_fields) / sizeof(log_default_fields[0]); d++)
			take = !strcmp(name, log_default_fields[d]);
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

static void log_header(const struct kvm_reader *kr, const struct report *r, const struct log_cols *c, bool csv)
{
	printf(csv ? "time_unix,interval_seconds" : "%-8s", csv ? "" : "time");
	for (size_t i = 0; i < c->n; i++) {
		const char *name = kvm_counter_name(kr, r->sel[c->sel_pos[i]]);
		if (csv)
			printf(",%s", name);
		else
			printf(" %*s", (int)log_width(name), name);
	}
	printf("\n");
}

static void log_line(const struct kvm_reader *kr, const struct report *r, const struct log_cols *c, bool csv)
{
	double now = clock_wall_seconds();
	if (csv) {
		printf("%.3f,%.6f", now, r->seconds);
	} else {
		time_t t = (time_t)now;
		struct tm tm;
		char hms[16];
		localtime_r(&t, &tm);
		strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
		printf("%-8s", hms);
	}
	for (size_t i = 0; i < c->n; i++) {
		size_t s = c->sel_pos[i];
		enum kvm_stat_kind kind = kvm_counter_kind(kr, r->sel[s]);
		const struct kvm_change *ch = &r->total[s];
		char cell[32];
		if (csv) {
			if (ch->delta.known)
				snprintf(cell, sizeof(cell), "%lld", (long long)ch->delta.v);
			else
				cell[0] = '\0';
			printf(",%s", cell);
			continue;
		}
		if (kind == KVM_STAT_TIME_NS)
			fmt_rate(cell, sizeof(cell), kind, ch);
		else
			fmt_delta(cell, sizeof(cell), kind, ch);
		printf(" %*s", (int)log_width(kvm_counter_name(kr, r->sel[s])), cell);
	}
	printf("\n");
	fflush(stdout);
}

/* ---- running things: the test hook and -- CMD ---- */

/* Runs argv and waits; returns its exit status (128 + signal when killed), 127 when it could not
 * start, or a negative errno. stdout_to_stderr keeps our stdout for the JSON document. */
static int run_and_wait(char *const argv[], bool stdout_to_stderr)
{
	int errpipe[2];
	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(errpipe[0]);
		close(errpipe[1]);
		return e;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (stdout_to_stderr)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp(argv[0], argv);
		int e = errno;
		ssize_t w = write(errpipe[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(errpipe[1]);
	int exec_errno = 0;
	ssize_t n;
	do
		n = read(errpipe[0], &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	close(errpipe[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (n == sizeof(exec_errno))
		return -exec_errno;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Test-only: VMHOST_EXITS_TEST_HOOK is a shell command run after read N (given as $1), so tests
 * can change counter files between reads without racing the interval. */
static void test_hook(unsigned read_no)
{
	const char *hook = getenv("VMHOST_EXITS_TEST_HOOK");
	if (!hook || !*hook)
		return;
	char num[16];
	snprintf(num, sizeof(num), "%u", read_no);
	char *argv[] = {"sh", "-c", (char *)hook, "sh", num, NULL};
	fflush(stdout);
	run_and_wait(argv, true);
}

/* Sleeps until the deadline or a stop; returns 'q' when q was typed on a terminal. */
static int wait_until(double deadline, bool watch_keys)
{
	while (!stop_requested()) {
		double left = deadline - clock_monotonic_seconds();
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
		int ms = (int)(left * 1000) + 1;
		int n = poll(&p, watch_keys ? 1 : 0, ms);
		if (n > 0 && watch_keys) {
			char c;
			if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q'))
				return 'q';
		}
	}
	return 0;
}

/* ---- the modes ---- */

static int read_failed(const struct ctx *ctx, int r)
{
	if (r == -EACCES || r == -EPERM)
		return fail(ctx, EXIT_NOPERM, "reading KVM counters", "%s", kvm_avail_hint(KVM_DENIED));
	if (r == -ENOENT)
		return fail(ctx, EXIT_FAIL, "reading KVM counters", "%s/kernel/debug/kvm went away (KVM unloaded?)",
			    ctx->root.sys);
	return fail(ctx, EXIT_FAIL, "reading KVM counters", "%s", strerror(-r));
}

static int no_match(const struct ctx *ctx, const struct exits_opts *o, const struct report *r,
		    const struct kvm_sample *b)
{
	char want[512] = "", have[1024] = "";
	size_t n = 0;
	for (size_t i = 0; i < o->nvm_names && n < sizeof(want); i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%s--vm %s", n ? " " : "", o->vm_names[i]);
	for (size_t i = 0; i < o->npids && n < sizeof(want); i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%s--pid %d", n ? " " : "", (int)o->pids[i]);
	n = 0;
	for (size_t v = 0; v < b->nvms && n < sizeof(have); v++) {
		char label[64];
		vm_label(label, sizeof(label), &b->vms[v]);
		n += (size_t)snprintf(have + n, sizeof(have) - n, "%s%s", n ? ", " : "", label);
	}
	(void)r;
	return fail(ctx, EXIT_FAIL, "no such VM", "nothing matches %s (VMs with KVM counters: %s)", want,
		    b->nvms ? have : "none");
}

static int one_reading(struct ctx *ctx, const struct exits_opts *o, struct kvm_reader *kr)
{
	struct kvm_sample a, b;
	int r = kvm_reader_sample(kr, &a);
	if (r < 0)
		return read_failed(ctx, r);
	test_hook(1);
	int rc = EXIT_OK, cmd_status = 0;
	double wall = 0;
	if (o->mode == MODE_COMMAND) {
		stop_catch(true); /* like time(1): Ctrl-C goes to the command */
		double start = clock_monotonic_seconds();
		cmd_status = run_and_wait(o->command, ctx->format == OUT_JSON);
		wall = clock_monotonic_seconds() - start;
		stop_catch(false);
		if (cmd_status < 0) {
			kvm_sample_free(&a);
			return fail(ctx, 127, "running the command", "%s: %s", o->command[0], strerror(-cmd_status));
		}
	} else {
		wait_until(a.monotonic_seconds + o->interval_seconds, false);
		if (stop_requested()) {
			kvm_sample_free(&a);
			return 128 + stop_requested();
		}
	}
	r = kvm_reader_sample(kr, &b);
	if (r < 0) {
		kvm_sample_free(&a);
		return read_failed(ctx, r);
	}
	struct report rep;
	if (build_report(kr, o, &a, &b, &rep) < 0) {
		kvm_sample_free(&a);
		kvm_sample_free(&b);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	}
	if (rep.filtered && !rep.nvms && !rep.ngone) {
		rc = no_match(ctx, o, &rep, &b);
		goto out;
	}
	if (ctx->format == OUT_JSON) {
		struct json j;
		json_init(&j, stdout, false);
		json_object_begin(&j, NULL);
		json_report_body(&j, kr, &rep);
		if (o->mode == MODE_COMMAND) {
			char cmd[4096];
			size_t n = 0;
			for (char **p = o->command; *p && n < sizeof(cmd); p++)
				n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s%s", p == o->command ? "" : " ", *p);
			json_string(&j, "command", cmd);
			json_int(&j, "exit_status", cmd_status);
			json_double(&j, "wall_seconds", wall);
		}
		json_object_end(&j);
		json_finish(&j);
	} else {
		if (o->mode == MODE_COMMAND) {
			char secs[32];
			fmt_seconds(secs, sizeof(secs), wall);
			fprintf(stdout, "command: %s ... exited with status %d after %s\n", o->command[0], cmd_status, secs);
		}
		print_once_human(kr, &rep, o->have_fields);
	}
	if (o->mode == MODE_COMMAND)
		rc = cmd_status;
out:
	report_free(&rep);
	kvm_sample_free(&a);
	kvm_sample_free(&b);
	return rc;
}

static int log_mode(struct ctx *ctx, const struct exits_opts *o, struct kvm_reader *kr)
{
	struct kvm_sample a, b;
	int r = kvm_reader_sample(kr, &a);
	if (r < 0)
		return read_failed(ctx, r);
	test_hook(1);
	bool csv = ctx->format == OUT_CSV, json = ctx->format == OUT_JSON;
	int rc = EXIT_OK;
	long lines = 0;
	for (unsigned read_no = 2; !stop_requested() && (!o->count || lines < o->count); read_no++) {
		wait_until(a.monotonic_seconds + o->interval_seconds, false);
		if (stop_requested())
			break;
		if ((r = kvm_reader_sample(kr, &b)) < 0) {
			rc = read_failed(ctx, r);
			break;
		}
		struct report rep;
		struct log_cols cols = {0};
		if (build_report(kr, o, &a, &b, &rep) < 0 || log_columns(kr, o, &rep, &cols) < 0) {
			kvm_sample_free(&b);
			rc = fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
			break;
		}
		if (json) {
			struct json j;
			json_init(&j, stdout, false);
			json_object_begin(&j, NULL);
			json_double(&j, "time_unix", clock_wall_seconds());
			json_report_body(&j, kr, &rep);
			json_object_end(&j);
			json_finish(&j);
			fflush(stdout);
		} else {
			if (csv ? lines == 0 : lines % LOG_HEADER_EVERY == 0)
				log_header(kr, &rep, &cols, csv);
			log_line(kr, &rep, &cols, csv);
			if (!csv)
				print_notes(stderr, &rep, "");
		}
		lines++;
		free(cols.sel_pos);
		report_free(&rep);
		kvm_sample_free(&a);
		a = b;
		test_hook(read_no);
	}
	kvm_sample_free(&a);
	return rc ? rc : stop_requested() ? EXIT_OK : EXIT_OK;
}

/* ---- the live view ---- */

struct terminal {
	bool tty_out, tty_in;
	struct termios saved;
};

static void terminal_enter(struct terminal *t)
{
	t->tty_out = isatty(STDOUT_FILENO);
	t->tty_in = t->tty_out && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0;
	if (t->tty_in) {
		struct termios raw = t->saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	if (t->tty_out)
		fputs("\033[?1049h\033[?25l\033[H\033[2J", stdout); /* alternate screen, cursor hidden */
	fflush(stdout);
}

static void terminal_leave(struct terminal *t)
{
	if (t->tty_out)
		fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	if (t->tty_in)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
}

static void live_frame(const struct terminal *t, const struct kvm_reader *kr, const struct exits_opts *o,
		       const struct report *r)
{
	size_t cols = 0, rows = 0;
	struct winsize ws;
	if (t->tty_out && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
		cols = ws.ws_col;
		rows = ws.ws_row;
	}
	const char *eol = t->tty_out ? "\033[K" : "";
	if (t->tty_out)
		fputs("\033[H", stdout);
	char now[16], list[1024];
	time_t tt = time(NULL);
	struct tm tm;
	localtime_r(&tt, &tm);
	strftime(now, sizeof(now), "%H:%M:%S", &tm);
	vm_list_line(list, sizeof(list), r);
	printf("vmhost exits  %s  every %.2gs  %zu VM%s%s%s%s\n", now, o->interval_seconds, r->nvms,
	       r->nvms == 1 ? "" : "s", r->nvms ? ": " : "", list, eol);
	printf("%s%s\n", t->tty_in ? "q quits; sorted by rate; PER SEC for *_ns is percent of the interval" : "", eol);
	size_t hidden = 0;
	int used = 2 + print_table(stdout, kr, r, o->have_fields, cols, rows > 6 ? rows - 4 : 0, &hidden);
	(void)used;
	if (hidden)
		printf("(%zu more VM%s not shown: widen the terminal, or --vm NAME)%s\n", hidden, hidden == 1 ? "" : "s", eol);
	print_notes(stdout, r, eol);
	if (t->tty_out)
		fputs("\033[J", stdout);
	else
		putchar('\n');
	fflush(stdout);
}

static int live_mode(struct ctx *ctx, const struct exits_opts *o, struct kvm_reader *kr)
{
	struct kvm_sample a, b;
	int r = kvm_reader_sample(kr, &a);
	if (r < 0)
		return read_failed(ctx, r);
	test_hook(1);
	struct terminal term;
	terminal_enter(&term);
	int rc = EXIT_OK;
	long frames = 0;
	for (unsigned read_no = 2; !stop_requested() && (!o->count || frames < o->count); read_no++) {
		if (wait_until(a.monotonic_seconds + o->interval_seconds, term.tty_in) == 'q' || stop_requested())
			break;
		if ((r = kvm_reader_sample(kr, &b)) < 0) {
			terminal_leave(&term);
			kvm_sample_free(&a);
			return read_failed(ctx, r);
		}
		struct report rep;
		if (build_report(kr, o, &a, &b, &rep) < 0) {
			kvm_sample_free(&b);
			rc = EXIT_FAIL;
			break;
		}
		live_frame(&term, kr, o, &rep);
		frames++;
		report_free(&rep);
		kvm_sample_free(&a);
		a = b;
		test_hook(read_no);
	}
	terminal_leave(&term);
	kvm_sample_free(&a);
	return rc;
}

int cmd_exits(struct ctx *ctx, int argc, char **argv)
{
	struct exits_opts o = {0};
	bool help = false;
	int rc = parse_exits_opts(ctx, argc, argv, &o, &help);
	if (rc != EXIT_OK || help) {
		if (help)
			exits_help();
		if (o.have_fields)
			regfree(&o.fields);
		return rc;
	}
	struct kvm_reader *kr = NULL;
	enum kvm_avail why;
	int r = kvm_reader_open(&ctx->root, &kr, &why);
	if (r < 0) {
		if (o.have_fields)
			regfree(&o.fields);
		if (why == KVM_DENIED)
			return fail(ctx, EXIT_NOPERM, "reading KVM counters", "%s", kvm_avail_hint(why));
		if (r == -ENOENT)
			return fail(ctx, EXIT_FAIL, "no KVM counters", "%s (looked in %s/kernel/debug/kvm)", kvm_avail_hint(why),
				    ctx->root.sys);
		return fail(ctx, EXIT_FAIL, "reading KVM counters", "%s", strerror(-r));
	}
	stop_clear();
	stop_catch(false);
	switch (o.mode) {
	case MODE_ONCE:
	case MODE_COMMAND: rc = one_reading(ctx, &o, kr); break;
	case MODE_LOG: rc = log_mode(ctx, &o, kr); break;
	case MODE_LIVE: rc = live_mode(ctx, &o, kr); break;
	}
	kvm_reader_close(kr);
	if (o.have_fields)
		regfree(&o.fields);
	return rc;
}
