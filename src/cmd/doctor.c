/* vmhost doctor: what is wrong with this host's VMs, with the evidence and the fix. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "core/doctor/doctor.h"
#include "out/doctor_view.h"
#include "store/store_growth.h"

#define DOCTOR_SELECT_MAX 64 /* rules --only and --skip can name (doctor_nrules is 34) */

struct doctor_cmd_opts {
	const char *db;           /* --db: also judge the recorded history */
	double warmup_seconds;    /* --warmup: growth's warm-up (NaN: growth's default) */
	bool fail_on_set;         /* --fail-on */
	enum doctor_severity fail_on;
	bool list;                /* --list: the rules */
	bool only_set;            /* --only given: keep only[] */
	bool only[DOCTOR_SELECT_MAX], skip[DOCTOR_SELECT_MAX]; /* by index in doctor_rules */
	struct doctor_opts gather;
};

static void doctor_help(void)
{
	printf("usage: vmhost doctor [--db FILE [--warmup SEC]] [--fail-on info|warning|critical]\n"
	       "                     [--interval SEC] [--smaps-budget SEC] [--smaps-slow SEC] [--reasons]\n"
	       "                     [--only ID,...] [--skip ID,...] [--libvirt-uri URI] [--list] [--json]\n"
	       "\n"
	       "One pass over the host and its VMs (and, with --db, over the recorded history): a list\n"
	       "of findings, critical first, each with the VM it concerns (or the host), the figures\n"
	       "that prove it and the fix. \"no findings\" when all is well.\n"
	       "\n"
	       "  --db FILE          also flag VMs that 'vmhost growth' flags in FILE (vmhost record)\n"
	       "  --warmup SEC       with --db: a VM's first SEC are not judged, as in 'vmhost growth'\n"
	       "                     [600]\n"
	       "  --fail-on LEVEL    exit 1 when a finding is at least this severe (info, warning,\n"
	       "                     critical); without it doctor exits 0 whatever it finds\n"
	       "  --interval SEC     observe this long for the rates (ksmd CPU, merges, vCPU delay,\n"
	       "                     exits) [1]; 0: one reading, vCPU delay and exits since each VM\n"
	       "                     started, no KSM rates\n"
	       "  --smaps-budget SEC time spent reading smaps_rollup of the largest VMs, to measure its\n"
	       "                     cost [0.05]; 0: not measured. The largest VM is read 3 times, the\n"
	       "                     median kept\n"
	       "  --smaps-slow SEC   a read this long is slow (accounting-smaps-slow) [0.01]\n"
	       "  --only ID,...      only these rules' findings (repeatable; ids as --list shows them)\n"
	       "  --skip ID,...      silence these rules (repeatable); an old id (vcpu-wait-high) is\n"
	       "                     accepted for its new one, with a warning (deprecated)\n"
	       "  --reasons          also count exit reasons over the interval (tracepoints, as\n"
	       "                     'vmhost exits --reasons'): which port or MMIO access a VM's exits hit\n"
	       "  --libvirt-uri URI  the libvirt whose QEMUs' KVM counters to read, read-only (default\n"
	       "                     qemu:///system); each read waits at most 0.75 s for it\n"
	       "  --list             the rules: id, severity, what each looks for\n"
	       "\n"
	       "Every finding, its threshold and why: docs/doctor.md.\n");
}

static int opt_fail_on(struct ctx *ctx, void *opts, const char *arg)
{
	struct doctor_cmd_opts *o = opts;
	if (doctor_severity_parse(arg, &o->fail_on) < 0)
		return usage_error(ctx, "--fail-on takes info, warning or critical, not '%s'", arg);
	o->fail_on_set = true;
	return EXIT_OK;
}

/* --only and --skip: a comma-separated list of rule ids into set[], old ids taken with a warning. */
static int rule_list(struct ctx *ctx, const char *opt, const char *arg, bool *set)
{
	char buf[1024], *ids[sizeof(buf) / 2];
	snprintf(buf, sizeof(buf), "%s", arg);
	int n = arg_list(buf, ids, (int)(sizeof(ids) / sizeof(ids[0]))); /* an empty list: none (n < 0) */
	for (int i = 0; i < n; i++) {
		const char *id = ids[i];
		bool old = false;
		const struct doctor_rule *r = doctor_rule_find(id, &old);
		if (!r)
			return usage_error(ctx, "%s: no rule '%s' (vmhost doctor --list)", opt, id);
		if (old)
			warn(ctx, "%s: '%s' is the deprecated id of '%s'", opt, id, r->id);
		if ((size_t)(r - doctor_rules) < DOCTOR_SELECT_MAX)
			set[r - doctor_rules] = true;
	}
	return EXIT_OK;
}

static int opt_only(struct ctx *ctx, void *opts, const char *arg)
{
	struct doctor_cmd_opts *o = opts;
	o->only_set = true;
	return rule_list(ctx, "--only", arg, o->only);
}

static int opt_skip(struct ctx *ctx, void *opts, const char *arg)
{
	return rule_list(ctx, "--skip", arg, ((struct doctor_cmd_opts *)opts)->skip);
}

/* Drops the findings of rules --only left out or --skip silenced, in order. */
static void keep_selected(const struct doctor_cmd_opts *o, struct doctor_findings *f)
{
	size_t w = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct doctor_rule *r = doctor_rule_find(f->v[i].id, NULL);
		size_t k = r ? (size_t)(r - doctor_rules) : 0;
		if (!r || ((!o->only_set || o->only[k]) && !o->skip[k]))
			f->v[w++] = f->v[i];
	}
	f->n = w;
}

static const struct opt doctor_opt_table[] = {
	{OPT("db", 'd', OPT_STRING), OPT_AT(struct doctor_cmd_opts, db)},
	{OPT("fail-on", 'f', OPT_CALL), .call = opt_fail_on},
	{OPT("warmup", 'w', OPT_SECONDS0), OPT_AT(struct doctor_cmd_opts, warmup_seconds),
	 .error = "--warmup takes seconds, not '%s'"},
	{OPT("interval", 'i', OPT_SECONDS0), OPT_AT(struct doctor_cmd_opts, gather.interval_seconds),
	 .error = "--interval takes seconds (e.g. 1, 0.5, or 0), not '%s'"},
	{OPT("smaps-budget", 's', OPT_NUMBER), OPT_AT(struct doctor_cmd_opts, gather.smaps_budget_seconds), .lo = 0,
	 .hi = 10, .error = "--smaps-budget takes seconds (0 to 10), not '%s'"},
	{OPT("smaps-slow", 0, OPT_NUMBER), OPT_AT(struct doctor_cmd_opts, gather.smaps_slow_seconds), .lo = 1e-6,
	 .hi = 10, .error = "--smaps-slow takes seconds (0.000001 to 10), not '%s'"},
	{OPT("reasons", 'r', OPT_FLAG), OPT_AT(struct doctor_cmd_opts, gather.reasons)},
	{OPT("only", 'o', OPT_CALL), .call = opt_only},
	{OPT("skip", 'k', OPT_CALL), .call = opt_skip},
	{OPT("libvirt-uri", 'U', OPT_STRING), OPT_AT(struct doctor_cmd_opts, gather.libvirt_uri)},
	{OPT("list", 'l', OPT_FLAG), OPT_AT(struct doctor_cmd_opts, list)},
	{OPT("help", 'h', OPT_HELP)},
};

/* The VMs `vmhost growth` flags in the database, with its default thresholds. */
static int read_growth(const struct ctx *ctx, const char *db, double warmup, struct doctor_evidence *e)
{
	struct growth_scan_opts go = growth_scan_defaults();
	go.db = db;
	if (!isnan(warmup))
		go.params.warmup_seconds = warmup;
	struct growth_scan g;
	const char *what;
	int r = growth_scan_run(&go, &g, &what);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, what, "%s: %s%s", db, store_strerror(r),
			    r == -ENOENT ? " (record one with 'vmhost record')" : "");
	e->growth = calloc(g.n ? g.n : 1, sizeof(*e->growth));
	if (!e->growth) {
		growth_scan_free(&g);
		return fail(ctx, EXIT_FAIL, "reading growth", "%s", strerror(ENOMEM));
	}
	for (size_t i = 0; i < g.n; i++) {
		const struct growth_vm *v = &g.vms[i];
		if (!v->result.flagged)
			continue;
		struct doctor_growth *d = &e->growth[e->ngrowth++];
		*d = (struct doctor_growth){.pid = v->vm.pid, .bytes_per_hour = v->result.bytes_per_hour,
					    .growth_bytes = v->result.growth_bytes, .first_seconds = v->result.first_t,
					    .samples = v->result.samples, .overhead_bytes = v->last_overhead,
					    .written_bytes = v->written_bytes};
		memcpy(d->name, v->vm.name, sizeof(d->name));
	}
	e->growth_known = true;
	growth_scan_free(&g);
	return EXIT_OK;
}

/* A test build's hook once the interval's first readings are taken: a test changes a counter
 * then, inside the interval whatever the machine's speed (VMHOST_DOCTOR_TEST_HOOK). */
static void under_way(void *cls)
{
	(void)cls;
	cmd_test_hook("VMHOST_DOCTOR_TEST_HOOK", 1);
}

int cmd_doctor(struct ctx *ctx, int argc, char **argv)
{
	struct doctor_cmd_opts o = {.warmup_seconds = NAN, .gather = {.interval_seconds = 1, .smaps_budget_seconds = 0.05}};
	static const struct opts_spec spec = OPTS_SPEC(doctor_opt_table, 0, doctor_help);
	int rc = opts_parse(ctx, &spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	if (ctx->format == OUT_CSV)
		return usage_error(ctx, "doctor has no table to write as CSV (use --json)");
	struct doc d;
	if (o.list) {
		ctx_doc(ctx, &d);
		doctor_view_rules(&d);
		return doc_finish(&d) < 0 ? EXIT_FAIL : EXIT_OK;
	}

	struct doctor_evidence e;
	enum survey_step step;
	char runtime[512];
	o.gather.memo_dir = ctx_runtime_dir(ctx, runtime, sizeof(runtime));
	o.gather.under_way = under_way;
	int r = doctor_gather(&ctx->root, &o.gather, &e, &step);
	if (r < 0 && step == SURVEY_HOST)
		return fail(ctx, EXIT_FAIL, "reading host memory", "%s/meminfo: %s", ctx->root.proc, strerror(-r));
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "looking at the host", "%s", strerror(-r));
	if (e.reasons_why[0])
		warn(ctx, "exit reasons not counted: %s", e.reasons_why);
	if (e.vms.denied)
		warn(ctx, "no permission to read some /proc files of %u process%s (their findings may be missing); run as root",
		     e.vms.denied, e.vms.denied == 1 ? "" : "es");
	if (o.db && (rc = read_growth(ctx, o.db, o.warmup_seconds, &e)) != EXIT_OK) {
		doctor_evidence_free(&e);
		return rc;
	}
	struct doctor_findings f;
	r = doctor_check(&e, &f);
	doctor_evidence_free(&e);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "checking", "%s", strerror(-r));

	keep_selected(&o, &f);
	ctx_doc(ctx, &d);
	doctor_view(&d, &f);
	r = doc_finish(&d);
	bool reached = false;
	for (size_t i = 0; o.fail_on_set && i < f.n; i++)
		reached |= f.v[i].severity >= o.fail_on;
	doctor_findings_free(&f);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(-r));
	return reached ? EXIT_FAIL : EXIT_OK;
}
