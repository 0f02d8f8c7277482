/* vmhost record: loops over the sampler (core/sample/sampler.h), recording the host, KSM and every VM
 * into SQLite until stopped. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "core/base/stop.h"
#include "core/sample/sampler.h"
#include "out/json.h"
#include "store/store.h"

struct record_opts {
	const char *db;
	double interval, duration; /* duration 0: until a signal */
	double kvm_interval;       /* KVM counters at most this often; 0 never */
	struct store_retention retention;
	bool quiet;
	bool kvm_reasons;          /* also the exit reasons by tracepoints */
	bool io;                   /* --io: each QEMU's disks with every sample */
	const char *libvirt_uri;   /* NULL: qemu:///system */
};

static void record_help(void)
{
	printf("usage: vmhost record [--db FILE] [--interval SEC] [--duration SEC] [--keep-raw SEC]\n"
	       "                     [--kvm-interval SEC] [--kvm-reasons] [--io] [--libvirt-uri URI] [--quiet]\n"
	       "\n"
	       "Samples host memory, KSM (status, ksmd CPU), every VM's memory figures (those of\n"
	       "'vmhost mem', with the cheap estimates) and, where debugfs is readable, KVM's counters\n"
	       "(those of 'vmhost exits') into an SQLite database, in the foreground.\n"
	       "Each sample is one transaction: stopping (Ctrl-C, SIGTERM) finishes the sample in flight;\n"
	       "a crash loses at most that sample. One recorder per database.\n"
	       "\n"
	       "  --db FILE        database (default ./vmhost.db), created when missing\n"
	       "  --interval SEC   time between samples (default %g)\n"
	       "  --duration SEC   stop after this long (default: until stopped)\n"
	       "  --keep-raw SEC   keep every sample this long (default 2 days); older ones become\n"
	       "                   5-minute means (kept 30 days), then 1-hour means (kept 5 years)\n"
	       "  --kvm-interval SEC  KVM counters at most this often (default %g; 0: never); only\n"
	       "                   changed values are stored; a QEMU 7.1-8.0, which interrupts every vCPU\n"
	       "                   to answer (docs/exits.md), is thus read only this often too\n"
	       "  --kvm-reasons    also each VM's exits by reason from tracepoints (needs tracefs): by eBPF,\n"
	       "                   else by perf filters; the log says which\n"
	       "  --io             also each QEMU's disks (bytes, operations and their time, per device):\n"
	       "                   one short QMP visit per VM per sample (query-blockstats, 0.3 s at most),\n"
	       "                   or libvirt's block statistics for the domains whose monitor it holds\n"
	       "  --libvirt-uri URI  the libvirt whose QEMUs to read (KVM counters, --io's disks), read-only\n"
	       "                   (default qemu:///system); each read waits at most 0.75 s for it\n"
	       "  --quiet          no start and end lines\n"
	       "\n"
	       "Read it back with 'vmhost growth' and 'vmhost report'. Schema and sizes: docs/record.md.\n",
	       SAMPLER_INTERVAL_SECONDS, SAMPLER_KVM_INTERVAL_SECONDS);
}

static const struct opt record_opt_table[] = {
	{OPT("db", 'd', OPT_STRING), OPT_AT(struct record_opts, db)},
	{OPT("interval", 'i', OPT_SECONDS), OPT_AT(struct record_opts, interval), .lo = 0.01,
	 .error = "--interval takes seconds (at least 0.01), not '%s'"},
	{OPT("duration", 't', OPT_SECONDS), OPT_AT(struct record_opts, duration),
	 .error = "--duration takes seconds, not '%s'"},
	{OPT("keep-raw", 'k', OPT_SECONDS), OPT_AT(struct record_opts, retention.raw_seconds),
	 .error = "--keep-raw takes seconds, not '%s'"},
	{OPT("kvm-interval", 'K', OPT_SECONDS0), OPT_AT(struct record_opts, kvm_interval),
	 .error = "--kvm-interval takes seconds (0: never), not '%s'"},
	{OPT("libvirt-uri", 'U', OPT_STRING), OPT_AT(struct record_opts, libvirt_uri)},
	{OPT("quiet", 'q', OPT_FLAG), OPT_AT(struct record_opts, quiet)},
	{OPT("kvm-reasons", 'R', OPT_FLAG), OPT_AT(struct record_opts, kvm_reasons)},
	{OPT("io", 0, OPT_FLAG), OPT_AT(struct record_opts, io)},
	{OPT("help", 'h', OPT_HELP)},
};

/* The options together. */
static int record_check(struct ctx *ctx, void *opts, int argc, char **argv)
{
	(void)argc, (void)argv;
	struct record_opts *o = opts;
	if (o->retention.raw_seconds > o->retention.minute5_seconds)
		return usage_error(ctx, "--keep-raw must not exceed the 5-minute retention (30 days)");
	return EXIT_OK;
}

static const struct opts_spec record_spec =
	OPTS_SPEC_CHECKED(record_opt_table, OPTS_HELP_ANYWAY, record_help, record_check);

static void print_summary(const struct ctx *ctx, const struct record_opts *o, const struct sampler_totals *t,
			  unsigned long vms_max)
{
	if (ctx->format == OUT_JSON) {
		struct json j;
		json_init(&j, stdout, false);
		json_object_begin(&j, NULL);
		json_string(&j, "db", o->db);
		json_int(&j, "samples", (int64_t)t->recorded);
		json_int(&j, "dropped_samples", (int64_t)t->dropped);
		json_int(&j, "vms_max", (int64_t)vms_max);
		json_double(&j, "interval_seconds", o->interval);
		json_string(&j, "stopped_by", stop_requested() ? strsignal(stop_requested()) : "duration");
		json_object_end(&j);
		json_finish(&j);
	} else if (!o->quiet) {
		printf("recorded %lu sample%s (up to %lu VM%s) in %s", t->recorded, t->recorded == 1 ? "" : "s",
		       vms_max, vms_max == 1 ? "" : "s", o->db);
		if (t->dropped)
			printf("; %lu sample%s dropped", t->dropped, t->dropped == 1 ? "" : "s");
		printf("\n");
	}
}

/* Samples dropped to a full disk make the exit status 1; the summary follows (with --json only
 * when there is no error document). */
static int finish(const struct ctx *ctx, const struct record_opts *o, const struct sampler_totals *t,
		  unsigned long vms_max, int rc)
{
	if (rc == EXIT_OK && t->dropped) {
		rc = fail(ctx, EXIT_FAIL, "writing samples", "%s: %lu sample%s dropped: %s", o->db, t->dropped,
			  t->dropped == 1 ? "" : "s", store_strerror(t->error));
		if (ctx->format == OUT_JSON)
			return rc;
	}
	if (rc == EXIT_OK || ctx->format != OUT_JSON)
		print_summary(ctx, o, t, vms_max);
	return rc;
}

static void sampler_warning(void *cls, const char *line) { warn(cls, "%s", line); }

/* The sampler over the store: KVM counters where debugfs is readable (without them the rest is
 * recorded as usual), exact PSS amortized over the samples. */
static int start_sampler(struct ctx *ctx, const struct record_opts *o, struct store *store, struct sampler **ret)
{
	struct sample_sink sink = store_sink(store, o->db);
	struct sampler_config sc = {.root = ctx->root, .kvm = o->kvm_interval > 0, .kvm_reasons = o->kvm_reasons, .interval_seconds = o->interval,
				    .disks = o->io,
				    .kvm_interval_seconds = o->kvm_interval, .libvirt_uri = o->libvirt_uri, .sink = &sink,
				    .warn = sampler_warning, .warn_cls = ctx};
	if (sampler_new(&sc, ret) < 0)
		return fail(ctx, EXIT_FAIL, "starting", "%s", strerror(ENOMEM));
	enum kvm_avail why;
	bool kvm = sc.kvm && sampler_kvm(*ret, &why);
	if (sc.kvm && why != KVM_AVAILABLE && why != KVM_NO_KVM && ctx->format != OUT_JSON && !o->quiet)
		warn(ctx, kvm ? "no debugfs KVM counters (%s); QEMU VMs are read through their QMP sockets"
			      : "KVM counters are not recorded: %s",
		     kvm_avail_hint(why));
	return EXIT_OK;
}

/* Samples until stopped or --duration is over; EXIT_OK or the exit code after a printed error.
 * A full disk is not an error here: the sampler drops samples until there is room again. */
static int record_loop(struct ctx *ctx, const struct record_opts *o, struct sampler *sampler,
		       unsigned long *vms_max)
{
	bool warned_denied = false;
	double start = clock_monotonic_seconds(), next = start;
	while (!stop_requested()) {
		struct sample *x;
		int r = sampler_take(sampler, &x);
		if (r < 0)
			return fail(ctx, exit_code_for(r), "sampling", "%s: %s", ctx->root.proc, strerror(-r));
		if (x->snap.vms.denied && !warned_denied) {
			warn(ctx, "no permission to read some /proc files (KSM figures are n/a); run as root, or see docs/privileges.md");
			warned_denied = true;
		}
		if (x->snap.vms.n > *vms_max)
			*vms_max = x->snap.vms.n;
		r = sampler_record(sampler, x);
		sample_unref(x);
		if (r < 0 && sampler_totals(sampler).stopped)
			return fail(ctx, EXIT_FAIL, "writing a sample", "%s: %s (the samples before it are kept)", o->db,
				    store_strerror(r));
		next += o->interval;
		double now = clock_monotonic_seconds();
		if (o->duration > 0 && next - start >= o->duration - 1e-6)
			break;
		if (next < now) /* sampling took longer than the interval: skip, do not burst */
			next = now + o->interval - fmod(now - next, o->interval);
		sleep_until(next);
	}
	return EXIT_OK;
}

int cmd_record(struct ctx *ctx, int argc, char **argv)
{
	struct record_opts o = {.db = "vmhost.db", .interval = SAMPLER_INTERVAL_SECONDS,
				.kvm_interval = SAMPLER_KVM_INTERVAL_SECONDS, .retention = store_retention_default};
	int rc = opts_parse(ctx, &record_spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	struct store *store;
	int r = store_open(o.db, &store);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "opening the database", "%s: %s", o.db, store_strerror(r));
	store_set_retention(store, &o.retention);
	stop_catch(false);
	if (ctx->format != OUT_JSON && !o.quiet) {
		printf("recording to %s every %gs%s (Ctrl-C stops)\n", o.db, o.interval,
		       o.duration > 0 ? "" : ", until stopped");
		fflush(stdout);
	}
	struct sampler *sampler = NULL;
	unsigned long vms_max = 0;
	rc = start_sampler(ctx, &o, store, &sampler);
	if (rc == EXIT_OK)
		rc = record_loop(ctx, &o, sampler, &vms_max);
	struct sampler_totals t = sampler ? sampler_totals(sampler) : (struct sampler_totals){0};
	sampler_free(sampler);
	store_close(store);
	return finish(ctx, &o, &t, vms_max, rc);
}
