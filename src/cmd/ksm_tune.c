/* vmhost ksm tune: the KSM tuning daemon. The control law lives in core/tune/tuner.c; this file
 * samples, logs each decision with its reason, and writes through the KSM guard. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "io/file.h"
#include "core/base/stop.h"
#include "core/tune/ksm_guard.h"
#include "core/model/ksm.h"
#include "core/tune/tuner.h"
#include "core/tune/tuner_daemon.h"
#include "out/json.h"
#include "out/fmt.h"
#include "parse/ini.h"
#include "core/model/host.h"
#include "io/state.h"
#include "io/test_hook.h"

static void ksm_tune_help(void)
{
	printf("usage: vmhost ksm tune [--cpu-budget PCT] [--interval SEC] [--dry-run] [--config FILE]\n"
	       "                       [--duration SEC] [--verbose] [--json]\n"
	       "\n"
	       "The KSM tuning daemon. It scans fast (sleep 20 ms, pages_to_scan sized to the CPU budget)\n"
	       "while there is new memory to scan or merging is under way, and falls to a near-idle rate\n"
	       "(100 pages / 1000 ms) once full scans stop finding anything to merge. It wakes within an\n"
	       "interval when /proc shows mergeable memory ksmd has not scanned yet (a guest starts, grows\n"
	       "or migrates in) and once when memory pressure begins; a host with no mergeable memory\n"
	       "stays idle. Under memory pressure it allows twice the CPU and waits twice as many flat\n"
	       "scans before idling.\n"
	       "\n"
	       "  --cpu-budget PCT  ksmd CPU while scanning fast, percent of one CPU (default 20)\n"
	       "  --interval SEC    sampling and decision period (default 2)\n"
	       "  --dry-run         print every decision, write nothing (no root needed)\n"
	       "  --config FILE     INI file, section [tune] (docs/ksm.md lists the keys)\n"
	       "  --duration SEC    stop after this long (default: until SIGINT/SIGTERM/SIGHUP)\n"
	       "  --verbose         log every decision, not only changes (and one a minute)\n"
	       "\n"
	       "Every setting it changes is restored when it stops, on a signal, a crash or an error, and\n"
	       "written down before it is changed (" IO_RUNTIME_DIR_ROOT "/" KSM_SAVED_FILE "): what a tuner killed\n"
	       "outright left is put back by the next one, or by 'vmhost ksm status --restore'. A closed\n"
	       "output (ksm tune | head) stops it, restored. A second instance is refused\n"
	       "(" TUNER_INSTANCE_LOCK "), and so is running while another vmhost holds the machine-wide\n"
	       "KSM lock. Needs root (exit 77 without).\n");
}

struct tune_args {
	struct tuner_config cfg;
	bool dry_run, verbose;
	double duration;
	const char *config;
	const char *cpu_budget, *interval; /* as given: applied over the config file's */
};

static const struct opt tune_opt_table[] = {
	{OPT("cpu-budget", 'b', OPT_STRING), OPT_AT(struct tune_args, cpu_budget)},
	{OPT("interval", 'i', OPT_STRING), OPT_AT(struct tune_args, interval)},
	{OPT("dry-run", 'n', OPT_FLAG), OPT_AT(struct tune_args, dry_run)},
	{OPT("config", 'c', OPT_STRING), OPT_AT(struct tune_args, config)},
	{OPT("duration", 'd', OPT_SECONDS), OPT_AT(struct tune_args, duration),
	 .error = "--duration takes seconds, not '%s'"},
	{OPT("verbose", 'v', OPT_FLAG), OPT_AT(struct tune_args, verbose)},
	{OPT("help", 'h', OPT_HELP)},
};

static int ini_key(void *user, const char *section, const char *key, const char *value, char *err, size_t cap)
{
	if (strcmp(section, "tune")) {
		snprintf(err, cap, "unknown section [%s] (expected [tune])", section[0] ? section : "");
		return -EINVAL;
	}
	return tuner_config_set(user, key, value, err, cap);
}

static int load_config(struct ctx *ctx, const char *path, struct tuner_config *cfg)
{
	/* A config file is no procfs: read it through io with a root that resolves the path as given. */
	struct io_root here = {.proc = path[0] == '/' ? "" : "."};
	char *buf;
	size_t len;
	int r = io_read_alloc(&here, IO_PROC, &buf, &len, "%s", path);
	if (r < 0)
		return fail(ctx, EXIT_USAGE, "config", "%s: %s", path, strerror(-r));
	int line = 0;
	char err[256] = "";
	r = ini_parse(buf, len, ini_key, cfg, &line, err, sizeof(err));
	free(buf);
	if (r < 0)
		return fail(ctx, EXIT_USAGE, "config", "%s:%d: %s", path, line, err);
	return EXIT_OK;
}

/* The options, then the config file under them: OPTS_GO, or the exit code (after the help or an error). */
static int parse_args(struct ctx *ctx, int argc, char **argv, struct tune_args *a)
{
	static const struct opts_spec spec = OPTS_SPEC(tune_opt_table, 0, ksm_tune_help);
	int rc = opts_parse(ctx, &spec, argc, argv, a);
	if (rc != OPTS_GO)
		return rc;
	tuner_config_default(&a->cfg);
	if (a->config && (rc = load_config(ctx, a->config, &a->cfg)) != EXIT_OK)
		return rc;
	char err[256];
	/* The command line wins over the file. */
	if (a->cpu_budget && tuner_config_set(&a->cfg, "cpu_budget", a->cpu_budget, err, sizeof(err)) < 0)
		return usage_error(ctx, "--cpu-budget: %s", err);
	if (a->interval && tuner_config_set(&a->cfg, "interval", a->interval, err, sizeof(err)) < 0)
		return usage_error(ctx, "--interval: %s", err);
	if (tuner_config_check(&a->cfg, err, sizeof(err)) < 0)
		return usage_error(ctx, "%s", err);
	return OPTS_GO;
}

static void log_decision(const struct ctx *ctx, const struct tune_args *a, const struct tuner_decision *d,
			 const struct tuner_input *in, const struct ksm_rates *r, bool applied)
{
	time_t now = time(NULL);
	struct tm tm;
	char when[32];
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (ctx->format == OUT_JSON) {
		struct json j;
		json_init(&j, stdout, false);
		json_object_begin(&j, NULL);
		json_string(&j, "time", when);
		json_string(&j, "mode", tuner_mode_name(d->mode));
		json_int(&j, "run", d->run);
		json_int(&j, "pages_to_scan", d->pages_to_scan);
		json_int(&j, "sleep_millisecs", d->sleep_millisecs);
		json_bool(&j, "changed", d->changed);
		json_bool(&j, "applied", applied);
		json_bool(&j, "memory_pressure", d->pressure);
		json_maybe(&j, "saved_bytes", r->saved_bytes);
		json_double(&j, "ksmd_cpu_percent", r->ksmd_cpu_percent);
		json_double(&j, "pages_scanned_per_second", r->pages_scanned_per_second);
		json_maybe(&j, "mergeable_processes", in->mergeable_processes);
		json_maybe(&j, "unscanned_new_pages", tuner_news_pages(in));
		json_string(&j, "reason", d->reason);
		json_object_end(&j);
		json_finish(&j);
	} else {
		char saved[32] = "n/a", cpu[16] = "n/a";
		if (r->saved_bytes.known)
			fmt_bytes(saved, sizeof(saved), r->saved_bytes.v);
		if (isfinite(r->ksmd_cpu_percent))
			snprintf(cpu, sizeof(cpu), "%.1f%%", r->ksmd_cpu_percent);
		printf("%s %s%s pages_to_scan=%lld sleep_millisecs=%lld | saved %s, ksmd %s | %s\n", when,
		       a->dry_run ? "(dry run) " : "", tuner_mode_name(d->mode), (long long)d->pages_to_scan,
		       (long long)d->sleep_millisecs, saved, cpu, d->reason);
	}
	/* A log nobody reads any more (ksm tune | head, a dead log pipe): a stop, as SIGPIPE is. */
	if (fflush(stdout) == EOF || ferror(stdout))
		stop_handler(SIGPIPE);
}

/* Not a dry run: this tuner alone (the instance lock), and no other vmhost changing KSM (the
 * machine-wide lock). EXIT_OK with the instance lock's fd, or the exit code after an error. */
static int take_locks(struct ctx *ctx, int *ret_fd)
{
	const char *lock_path = io_test_hook("VMHOST_TUNE_LOCK");
	if (!lock_path)
		lock_path = TUNER_INSTANCE_LOCK;
	int instance_fd = tuner_instance_lock(lock_path);
	if (instance_fd == -EBUSY)
		return fail(ctx, EXIT_FAIL, "already running", "another 'vmhost ksm tune' holds %s", lock_path);
	if (instance_fd < 0)
		return fail(ctx, instance_fd == -EACCES ? EXIT_NOPERM : EXIT_FAIL, "lock file", "%s: %s", lock_path,
			    io_lock_strerror(instance_fd));
	int r = ksm_lock(false);
	if (r == -EBUSY) {
		close(instance_fd);
		return fail(ctx, EXIT_FAIL, "KSM busy", "another vmhost (ksm sweep, bench ksm or a test) holds " KSM_LOCK_PATH);
	}
	if (r < 0) {
		close(instance_fd);
		return fail(ctx, EXIT_FAIL, "KSM lock", KSM_LOCK_PATH ": %s", io_lock_strerror(r));
	}
	*ret_fd = instance_fd;
	return EXIT_OK;
}

/* Stops on a signal: a dry run only notes it; otherwise the guard restores KSM's settings first. */
static int catch_signals(struct ctx *ctx, const struct tune_args *a)
{
	struct sigaction sa = {.sa_handler = stop_handler};
	sigemptyset(&sa.sa_mask);
	if (a->dry_run) {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		signal(SIGPIPE, SIG_IGN); /* the log's EPIPE stops it (log_decision) */
		return EXIT_OK;
	}
	int r = ksm_guard_begin(&ctx->root, stop_handler); /* SIGPIPE among its signals */
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "guarding KSM settings", "%s", ksm_guard_strerror(r));
	if (r > 0)
		warn(ctx, "put back the KSM settings a vmhost that died left changed (" KSM_SAVED_FILE ")");
	return EXIT_OK;
}

/* Decides, writes and logs every interval until a stop, --duration or an error: an exit code. */
static int tune_loop(struct ctx *ctx, const struct tune_args *a, struct ksm_sampler *sampler, struct ksm_sample *first,
		     struct tuner_watch *watch)
{
	struct tuner_state state;
	tuner_init(&state);
	struct ksm_rates rates;
	struct tuner_decision d;
	struct tuner_input in;
	struct ksm_sample prev = *first, now = *first; /* the first decision: the law only needs counters */
	double start = prev.t, last_log = -1e9;
	int64_t page = host_page_size();
	while (!stop_requested()) {
		ksm_rates_compute(&prev, &now, page, NULL, &rates);
		if (tuner_decide(&a->cfg, &state, watch, &prev, &now, &rates, &d, &in) < 0)
			warn(ctx, "out of memory reading /proc: this decision is made from KSM's counters only");
		int r = a->dry_run ? 0 : tuner_apply(&a->cfg, &d, &now.k, stop_flag());
		if (r < 0) {
			ksm_guard_end();
			return fail(ctx, exit_code_for(r), "writing KSM settings", "%s (settings restored)", strerror(-r));
		}
		if (a->dry_run || a->verbose || d.changed || now.t - last_log >= 60) {
			log_decision(ctx, a, &d, &in, &rates, !a->dry_run);
			last_log = now.t;
		}
		if (a->duration > 0 && now.t - start >= a->duration)
			break;
		double wake = now.t + a->cfg.interval_seconds;
		while (!stop_requested() && clock_monotonic_seconds() < wake)
			sleep_for(fmin(0.2, wake - clock_monotonic_seconds()));
		if (stop_requested())
			break;
		prev = now;
		if (ksm_sample_take(sampler, &now) < 0)
			return fail(ctx, EXIT_FAIL, "reading KSM", "%s/kernel/mm/ksm vanished", ctx->root.sys);
	}
	return EXIT_OK;
}

/* --verbose: what watching /proc cost over the run. */
static void print_watch_cost(const struct tuner_watch *watch, double run_s)
{
	struct tuner_watch_cost cost;
	tuner_watch_cost(watch, &cost);
	fprintf(stderr, "vmhost: ksm tune: /proc watch: %llu walks in %llu intervals, %llu ksm_stat, %llu status, "
		"%llu smaps reads, %.3f s CPU (%.4f%% of one CPU)\n", (unsigned long long)cost.walks,
		(unsigned long long)cost.samples, (unsigned long long)cost.ksm_stat_reads,
		(unsigned long long)cost.status_reads, (unsigned long long)cost.smaps_reads, cost.cpu_seconds,
		run_s > 0 ? 100.0 * cost.cpu_seconds / run_s : 0.0);
}

int cmd_ksm_tune(struct ctx *ctx, int argc, char **argv)
{
	struct tune_args a = {0};
	int rc = parse_args(ctx, argc, argv, &a);
	if (rc != OPTS_GO)
		return rc;
	struct ksm_sampler sampler;
	ksm_sampler_init(&sampler, &ctx->root);
	struct ksm_sample first;
	if (ksm_sample_take(&sampler, &first) == -ENOENT)
		return fail(ctx, EXIT_FAIL, "KSM", "this kernel has no KSM (%s/kernel/mm/ksm)", ctx->root.sys);
	if (!a.dry_run && geteuid() != 0)
		return fail(ctx, EXIT_NOPERM, "permission", "changing KSM settings needs root (try --dry-run)");
	int instance_fd = -1;
	if (!a.dry_run && (rc = take_locks(ctx, &instance_fd)) != EXIT_OK)
		return rc;
	pid_t tuned = ksmtuned_find(&ctx->root);
	if (tuned)
		warn(ctx, "ksmtuned is running (pid %d): it rewrites pages_to_scan every 60 s and will fight this "
			  "tuner; stop it (systemctl stop ksmtuned)", (int)tuned);
	if ((rc = catch_signals(ctx, &a)) != EXIT_OK) {
		ksm_unlock();
		close(instance_fd);
		return rc;
	}
	struct tuner_watch *watch = NULL;
	if (tuner_watch_new(&ctx->root, host_page_size(), &watch) < 0)
		warn(ctx, "out of memory: new guests are noticed only once ksmd reaches them");
	rc = tune_loop(ctx, &a, &sampler, &first, watch);
	if (watch && a.verbose && ctx->format != OUT_JSON)
		print_watch_cost(watch, clock_monotonic_seconds() - first.t);
	tuner_watch_free(watch);
	if (!a.dry_run) {
		int r = ksm_guard_end();
		if (r < 0 && rc == EXIT_OK)
			rc = fail(ctx, EXIT_FAIL, "restoring KSM settings", "%s", strerror(-r));
		ksm_unlock();
		close(instance_fd);
	}
	if (ctx->format != OUT_JSON)
		fprintf(stderr, "vmhost: ksm tune: stopped%s%s\n", stop_requested() ? " on " : "",
			stop_requested() ? strsignal(stop_requested()) : "");
	return rc;
}
