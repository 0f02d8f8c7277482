/* vmhost record: samples the host, KSM and every VM into SQLite until stopped. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "core/calibrate.h"
#include "core/kvm.h"
#include "core/snapshot.h"
#include "out/json.h"
#include "store/store.h"
#include "core/clock.h"

/* Time spent on exact PSS reads per sample (docs/accounting.md, "Calibration"). */
#define CALIBRATION_BUDGET_SECONDS 0.005

struct record_opts {
	const char *db;
	double interval, duration; /* duration 0: until a signal */
	double kvm_interval;       /* KVM counters at most this often; 0 never */
	struct store_retention retention;
	bool quiet;
};

/* The one piece of global state: set from the signal handler, read by the loop. */
static void record_help(void)
{
	printf("usage: vmhost record [--db FILE] [--interval SEC] [--duration SEC] [--keep-raw SEC]\n"
	       "                     [--kvm-interval SEC] [--quiet]\n"
	       "\n"
	       "Samples host memory, KSM (status, ksmd CPU), every VM's memory figures (those of\n"
	       "'vmhost mem', with the cheap estimates) and, where debugfs is readable, KVM's counters\n"
	       "(those of 'vmhost exits') into an SQLite database, in the foreground.\n"
	       "Each sample is one transaction: stopping (Ctrl-C, SIGTERM) finishes the sample in flight;\n"
	       "a crash loses at most that sample. One recorder per database.\n"
	       "\n"
	       "  --db FILE        database (default ./vmhost.db), created when missing\n"
	       "  --interval SEC   time between samples (default 10)\n"
	       "  --duration SEC   stop after this long (default: until stopped)\n"
	       "  --keep-raw SEC   keep every sample this long (default 2 days); older ones become\n"
	       "                   5-minute means (kept 30 days), then 1-hour means (kept 5 years)\n"
	       "  --kvm-interval SEC  KVM counters at most this often (default 60; 0: never); only\n"
	       "                   changed values are stored\n"
	       "  --quiet          no start and end lines\n"
	       "\n"
	       "Read it back with 'vmhost growth' and 'vmhost report'. Schema and sizes: docs/record.md.\n");
}

static int parse_record_opts(struct ctx *ctx, int argc, char **argv, struct record_opts *o, bool *help)
{
	static const struct option longopts[] = {
		{"db", required_argument, NULL, 'd'},
		{"interval", required_argument, NULL, 'i'},
		{"duration", required_argument, NULL, 't'},
		{"keep-raw", required_argument, NULL, 'k'},
		{"kvm-interval", required_argument, NULL, 'K'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	args_reset();
	int c;
	while ((c = getopt_long(argc, argv, "+d:i:t:k:K:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->db = optarg; break;
		case 'i':
			if (arg_seconds(optarg, &o->interval) < 0 || o->interval < 0.01)
				return usage_error(ctx, "--interval takes seconds (at least 0.01), not '%s'", optarg);
			break;
		case 't':
			if (arg_seconds(optarg, &o->duration) < 0)
				return usage_error(ctx, "--duration takes seconds, not '%s'", optarg);
			break;
		case 'k':
			if (arg_seconds(optarg, &o->retention.raw_seconds) < 0)
				return usage_error(ctx, "--keep-raw takes seconds, not '%s'", optarg);
			break;
		case 'K':
			if (!strcmp(optarg, "0"))
				o->kvm_interval = 0;
			else if (arg_seconds(optarg, &o->kvm_interval) < 0)
				return usage_error(ctx, "--kvm-interval takes seconds (0: never), not '%s'", optarg);
			break;
		case 'q': o->quiet = true; break;
		case 'h': *help = true; break;
		default: return usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	if (o->retention.raw_seconds > o->retention.minute5_seconds)
		return usage_error(ctx, "--keep-raw must not exceed the 5-minute retention (30 days)");
	return EXIT_OK;
}

struct record_totals {
	unsigned long samples, dropped, vms_max;
	int last_error;
};

static void print_summary(const struct ctx *ctx, const struct record_opts *o, const struct record_totals *t)
{
	if (ctx->format == OUT_JSON) {
		struct json j;
		json_init(&j, stdout, false);
		json_object_begin(&j, NULL);
		json_string(&j, "db", o->db);
		json_int(&j, "samples", (int64_t)t->samples);
		json_int(&j, "dropped_samples", (int64_t)t->dropped);
		json_int(&j, "vms_max", (int64_t)t->vms_max);
		json_double(&j, "interval_seconds", o->interval);
		json_string(&j, "stopped_by", stop_requested() ? strsignal(stop_requested()) : "duration");
		json_object_end(&j);
		json_finish(&j);
	} else if (!o->quiet) {
		printf("recorded %lu sample%s (up to %lu VM%s) in %s", t->samples, t->samples == 1 ? "" : "s",
		       t->vms_max, t->vms_max == 1 ? "" : "s", o->db);
		if (t->dropped)
			printf("; %lu sample%s dropped", t->dropped, t->dropped == 1 ? "" : "s");
		printf("\n");
	}
}

int cmd_record(struct ctx *ctx, int argc, char **argv)
{
	struct record_opts o = {.db = "vmhost.db", .interval = 10, .kvm_interval = 60,
				.retention = store_retention_default};
	bool help = false;
	int rc = parse_record_opts(ctx, argc, argv, &o, &help);
	if (rc != EXIT_OK)
		return rc;
	if (help) {
		record_help();
		return EXIT_OK;
	}
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

	/* KVM counters where debugfs is readable; without them the rest is recorded as usual. */
	struct kvm_reader *kvm = NULL;
	enum kvm_avail why;
	if (o.kvm_interval > 0 && kvm_reader_open(&ctx->root, &kvm, &why) < 0) {
		kvm = NULL;
		if (why != KVM_NO_KVM && ctx->format != OUT_JSON && !o.quiet)
			warn(ctx, "KVM counters are not recorded: %s", kvm_avail_hint(why));
	}

	/* Exact PSS, amortized: a few smaps_rollup reads per sample, oldest VM first. */
	struct calib_cache *calib = calib_new();
	struct record_totals totals = {0};
	bool warned_denied = false, in_full_episode = false;
	pid_t ksmd_pid = 0;
	double last_kvm = -INFINITY;
	double start = clock_monotonic_seconds(), next = start;
	rc = EXIT_OK;
	while (!stop_requested()) {
		struct snapshot snap;
		r = snapshot_take(&ctx->root, NULL, 0, 0, ksmd_pid, &snap);
		if (r < 0) {
			rc = fail(ctx, EXIT_FAIL, "sampling", "%s: %s", ctx->root.proc, strerror(-r));
			snapshot_free(&snap);
			break;
		}
		ksmd_pid = snap.ksmd_pid;
		if (calib)
			calib_apply(calib, &ctx->root, &snap.host, &snap.vms, CALIBRATION_BUDGET_SECONDS);
		if (snap.vms.denied && !warned_denied) {
			warn(ctx, "no permission to read some /proc files (KSM figures are n/a); run as root");
			warned_denied = true;
		}
		struct kvm_sample ks;
		bool have_kvm = false;
		if (kvm && snap.monotonic_seconds - last_kvm >= o.kvm_interval - o.interval / 2) {
			last_kvm = snap.monotonic_seconds;
			have_kvm = kvm_reader_sample(kvm, &ks) == 0;
			if (!have_kvm) { /* the kvm directory went away (module unloaded, debugfs unmounted) */
				warn(ctx, "KVM counters are no longer readable; recording the rest");
				kvm_reader_close(kvm);
				kvm = NULL;
			}
		}
		r = store_write_sample(store, &snap, have_kvm ? kvm : NULL, have_kvm ? &ks : NULL);
		if (have_kvm)
			kvm_sample_free(&ks);
		if (snap.vms.n > totals.vms_max)
			totals.vms_max = snap.vms.n;
		snapshot_free(&snap);
		if (r == -ENOSPC) {
			/* Keep going: the data so far is intact, and space may come back. */
			totals.dropped++;
			if (!in_full_episode)
				warn(ctx, "%s: %s: samples are dropped until there is room again; the recorded ones are kept",
				     o.db, store_strerror(r));
			in_full_episode = true;
			totals.last_error = r;
		} else if (r < 0) {
			rc = fail(ctx, EXIT_FAIL, "writing a sample", "%s: %s (the samples before it are kept)", o.db,
				  store_strerror(r));
			break;
		} else {
			if (in_full_episode)
				warn(ctx, "%s: recording again", o.db);
			in_full_episode = false;
			totals.samples++;
		}
		next += o.interval;
		double now = clock_monotonic_seconds();
		if (o.duration > 0 && next - start >= o.duration - 1e-6)
			break;
		if (next < now) /* sampling took longer than the interval: skip, do not burst */
			next = now + o.interval - fmod(now - next, o.interval);
		sleep_until(next);
	}
	kvm_reader_close(kvm);
	calib_free(calib);
	store_close(store);
	if (rc == EXIT_OK && totals.dropped) {
		rc = fail(ctx, EXIT_FAIL, "writing samples", "%s: %lu sample%s dropped: %s", o.db, totals.dropped,
			  totals.dropped == 1 ? "" : "s", store_strerror(totals.last_error));
		if (ctx->format == OUT_JSON)
			return rc;
	}
	if (rc == EXIT_OK || ctx->format != OUT_JSON)
		print_summary(ctx, &o, &totals);
	return rc;
}
