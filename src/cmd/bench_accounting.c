/* vmhost bench accounting: what each way of getting a VM's memory costs, and how far it is from
 * the exact PSS, on VM-like processes merged by real KSM. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "core/account.h"
#include "core/ksm_guard.h"
#include "core/sampler.h"
#include "core/snapshot.h"
#include "core/vm.h"
#include "core/workload.h"
#include "out/json.h"
#include "out/table.h"
#include "core/stats.h"
#include "core/host.h"
#include "core/clock.h"

#define MAX_GUESTS 16

struct guest {
	struct workload_spec spec;
	const char *label;
	pid_t pid;
	struct pss_calibration cal; /* from one exact read while KSM was still merging */
	struct mem_counters mem;
	struct smaps_rollup exact;
	maybe_i64 estimate, bound, calibrated;
};

struct scenario {
	const char *name;
	size_t n;
	struct guest g[MAX_GUESTS];
	double merge_seconds;
	int64_t pages_shared, pages_sharing;
	/* median cost per VM, seconds: status, estimate, calibrated, smaps before merge, smaps after */
	double cost_status, cost_estimate, cost_calibrated, cost_smaps_unmerged, cost_smaps;
	double cost_host_ksm; /* reading the host's KSM counters once per sample, shared by all VMs */
};

struct bench_opts {
	unsigned guests, repeat;
	uint64_t guest_bytes;
};

enum method { M_STATUS, M_ESTIMATE, M_CALIBRATED, M_SMAPS, M_HOST_KSM };

/* Median cost of one method for one VM over all guests and repeats. */
static double time_method(const struct io_root *root, struct scenario *s, enum method m, unsigned repeat)
{
	size_t n = s->n * repeat, k = 0;
	double *t = calloc(n, sizeof(*t));
	if (!t)
		return NAN;
	char buf[4096];
	for (unsigned r = 0; r < repeat; r++) {
		/* The estimate also needs the host's KSM counters, read once per sample for all VMs:
		 * timed on their own (M_HOST_KSM), not spread over a handful of guests. */
		struct ksm_sysfs k_now;
		if (m == M_ESTIMATE || m == M_CALIBRATED)
			ksm_read(root, &k_now);
		if (m == M_HOST_KSM) {
			double t0 = clock_monotonic_seconds();
			ksm_read(root, &k_now);
			t[k++] = clock_monotonic_seconds() - t0;
			continue;
		}
		for (size_t i = 0; i < s->n; i++) {
			struct guest *g = &s->g[i];
			double t0 = clock_monotonic_seconds();
			if (m == M_STATUS) {
				io_read(root, IO_PROC, buf, sizeof(buf), "%d/status", g->pid);
			} else if (m == M_ESTIMATE || m == M_CALIBRATED) {
				struct mem_counters mc;
				unsigned denied = 0;
				proc_read_counters(root, g->pid, &mc, &denied);
				(void)pss_estimate(&mc, &k_now, host_page_size(),
						   m == M_CALIBRATED && g->cal.valid ? &g->cal : NULL);
			} else {
				struct smaps_rollup sr;
				proc_read_smaps_rollup(root, g->pid, &sr);
			}
			t[k++] = clock_monotonic_seconds() - t0;
		}
	}
	double med = median(t, k);
	free(t);
	return med;
}

static int wait_settled(const struct io_root *root, struct scenario *s, double timeout, bool calibrate_mid_merge)
{
	double start = clock_monotonic_seconds();
	struct ksm_sysfs k;
	ksm_read(root, &k);
	int64_t scans0 = k.full_scans.v, last_sharing = -1, scans_seen = scans0;
	size_t turn = 0, calibrated = 0;
	while (clock_monotonic_seconds() - start < timeout) {
		sleep_for(0.1);
		ksm_read(root, &k);
		if (!k.full_scans.known || k.full_scans.v == scans_seen)
			continue;
		scans_seen = k.full_scans.v;
		if (calibrate_mid_merge && scans_seen - scans0 >= 2 && k.pages_sharing.v > 0) {
			/* As record and serve do: one exact read per full scan, round robin over the VMs,
			 * while merging goes on (the first scan only fills KSM's unstable tree). */
			struct guest *g = &s->g[turn++ % s->n];
			struct mem_counters mc;
			struct smaps_rollup sr;
			unsigned denied = 0;
			if (proc_read_counters(root, g->pid, &mc, &denied) == 0 &&
			    proc_read_smaps_rollup(root, g->pid, &sr) == 0)
				g->cal = pss_calibrate(&mc, &sr, host_page_size());
			calibrated++;
		}
		bool all_calibrated = !calibrate_mid_merge || calibrated >= s->n;
		if (k.pages_sharing.v == last_sharing && scans_seen - scans0 >= 3 && all_calibrated) {
			s->merge_seconds = clock_monotonic_seconds() - start;
			return 0;
		}
		last_sharing = k.pages_sharing.v;
	}
	return -ETIMEDOUT;
}

static void measure_errors(const struct io_root *root, struct scenario *s)
{
	struct ksm_sysfs k;
	ksm_read(root, &k);
	s->pages_shared = k.pages_shared.v;
	s->pages_sharing = k.pages_sharing.v;
	for (size_t i = 0; i < s->n; i++) {
		struct guest *g = &s->g[i];
		unsigned denied = 0;
		proc_read_counters(root, g->pid, &g->mem, &denied);
		proc_read_smaps_rollup(root, g->pid, &g->exact);
		g->estimate = pss_estimate(&g->mem, &k, host_page_size(), NULL);
		g->bound = pss_estimate_bound(&g->mem, &k, host_page_size());
		g->calibrated = g->cal.valid ? pss_estimate(&g->mem, &k, host_page_size(), &g->cal) : UNKNOWN;
	}
}

static int run_scenario(struct ctx *ctx, struct scenario *s, const struct bench_opts *o)
{
	const struct io_root *root = &ctx->root;
	int r;
	if ((r = ksm_guard_set("run", "2")) < 0) /* unmerge everything: start from nothing merged */
		return fail(ctx, r == -EACCES ? EXIT_NOPERM : EXIT_FAIL, "KSM", "cannot write run: %s", strerror(-r));
	fprintf(stderr, "bench accounting: %s: starting %zu guests of %llu MiB...\n", s->name, s->n,
		(unsigned long long)(o->guest_bytes >> 20));
	for (size_t i = 0; i < s->n; i++) {
		if ((r = workload_spawn(&s->g[i].spec, &s->g[i].pid)) < 0) {
			for (size_t j = 0; j < i; j++)
				workload_stop(s->g[j].pid);
			return fail(ctx, EXIT_FAIL, "starting guests", "%s", strerror(-r));
		}
	}
	s->cost_smaps_unmerged = time_method(root, s, M_SMAPS, o->repeat);
	ksm_guard_set("pages_to_scan", "10000");
	ksm_guard_set("sleep_millisecs", "10");
	ksm_guard_set("run", "1");
	fprintf(stderr, "bench accounting: %s: KSM merging...\n", s->name);
	r = wait_settled(root, s, 600, true);
	ksm_guard_set("run", "0"); /* freeze the merged state while measuring */
	if (r == 0) {
		measure_errors(root, s);
		s->cost_status = time_method(root, s, M_STATUS, o->repeat);
		s->cost_estimate = time_method(root, s, M_ESTIMATE, o->repeat);
		s->cost_calibrated = time_method(root, s, M_CALIBRATED, o->repeat);
		s->cost_smaps = time_method(root, s, M_SMAPS, o->repeat);
		s->cost_host_ksm = time_method(root, s, M_HOST_KSM, o->repeat);
	}
	for (size_t i = 0; i < s->n; i++)
		workload_stop(s->g[i].pid);
	ksm_guard_set("run", "2");
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "KSM", "merging did not settle within 600 s");
	return EXIT_OK;
}

static void setup_scenarios(struct scenario *sym, struct scenario *asym, const struct bench_opts *o)
{
	/* One image booted N times: 70% of pages identical across guests, 10% zero, 20% unique. */
	*sym = (struct scenario){.name = "symmetric", .n = o->guests};
	for (size_t i = 0; i < sym->n; i++) {
		sym->g[i].label = "one image";
		sym->g[i].spec = (struct workload_spec){.guest_bytes = o->guest_bytes, .shared_fraction = 0.7,
							.zero_fraction = 0.1, .image_seed = 1, .guest_index = (unsigned)i,
							.thp = true, .mergeable = true};
	}
	/* Guests that share different fractions, and one full of zero pages on 4 KiB pages (its zero
	 * pages merge into 256-way KSM pages while the others' merge 2- to 4-way). */
	static const struct { const char *label; double shared, zero; bool thp; } mix[] = {
		{"shares 80%", 0.8, 0.05, true},
		{"shares 50%", 0.5, 0.05, true},
		{"shares 20%", 0.2, 0.05, true},
		{"60% zero pages", 0.1, 0.6, false},
	};
	*asym = (struct scenario){.name = "asymmetric", .n = o->guests < 4 ? o->guests : 4};
	for (size_t i = 0; i < asym->n; i++) {
		asym->g[i].label = mix[i].label;
		asym->g[i].spec = (struct workload_spec){.guest_bytes = o->guest_bytes, .shared_fraction = mix[i].shared,
							 .zero_fraction = mix[i].zero, .image_seed = 1,
							 .guest_index = (unsigned)(100 + i), .thp = mix[i].thp,
							 .mergeable = true};
	}
}

static double pct_of_rss(maybe_i64 v, const struct guest *g)
{
	if (!v.known || !g->mem.rss.known || !g->exact.pss.known || g->mem.rss.v == 0)
		return NAN;
	return 100.0 * fabs((double)(v.v - g->exact.pss.v)) / (double)g->mem.rss.v;
}

enum { A_SCEN, A_METHOD, A_COST, A_RATIO, A_MAXERR, A_MEANERR, A_NCOLS };
static const struct col summary_cols[A_NCOLS] = {
	[A_SCEN] = {"scenario", "SCENARIO", COL_STR, 0, 0},
	[A_METHOD] = {"method", "METHOD", COL_STR, 0, 0},
	[A_COST] = {"cost_seconds_per_vm", "COST/VM", COL_SECONDS, 0, 0},
	[A_RATIO] = {"cost_vs_smaps_rollup", "x CHEAPER", COL_FLOAT, 0, 0},
	[A_MAXERR] = {"max_error_pct_of_rss", "MAX ERR %RSS", COL_FLOAT, 0, 3},
	[A_MEANERR] = {"mean_error_pct_of_rss", "MEAN ERR %RSS", COL_FLOAT, 0, 3},
};

enum { G_SCEN, G_GUEST, G_RSS, G_EXACT, G_EST, G_ERR, G_BOUND, G_BOUNDPCT, G_CAL, G_CALERR, G_NCOLS };
static const struct col guest_cols[G_NCOLS] = {
	[G_SCEN] = {"scenario", "SCENARIO", COL_STR, 0, 0},
	[G_GUEST] = {"guest", "GUEST", COL_STR, 0, 0},
	[G_RSS] = {"rss_bytes", "RSS", COL_BYTES, 0, 0},
	[G_EXACT] = {"pss_exact_bytes", "PSS EXACT", COL_BYTES, 0, 0},
	[G_EST] = {"pss_estimate_bytes", "ESTIMATE", COL_BYTES, 0, 0},
	[G_ERR] = {"estimate_error_pct_of_rss", "ERR %RSS", COL_FLOAT, 0, 3},
	[G_BOUND] = {"estimate_bound_bytes", "BOUND", COL_BYTES, 0, 0},
	[G_BOUNDPCT] = {"estimate_bound_pct_of_rss", "BOUND %RSS", COL_FLOAT, 0, 1},
	[G_CAL] = {"pss_calibrated_bytes", "CALIBRATED", COL_BYTES, 0, 0},
	[G_CALERR] = {"calibrated_error_pct_of_rss", "CAL ERR %RSS", COL_FLOAT, 0, 3},
};

/* The calibrated estimate per VM and sample: applying the weights, plus the VM's share of the
 * exact reads that keep them fresh (record and serve spend SAMPLER_CALIBRATION_BUDGET_SECONDS per
 * sample on them, and at least one read). */
static double calibrated_cost(const struct scenario *s)
{
	double n = (double)s->n, exact = fmax(s->cost_smaps, fmin(SAMPLER_CALIBRATION_BUDGET_SECONDS, n * s->cost_smaps));
	return s->cost_calibrated + exact / n;
}

static void add_summary(struct table *t, const struct scenario *s, const char *method, double cost,
			maybe_i64 (*value)(const struct guest *))
{
	double maxe = 0, sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		double e = pct_of_rss(value(&s->g[i]), &s->g[i]);
		if (isnan(e))
			continue;
		maxe = fmax(maxe, e);
		sum += e;
		n++;
	}
	table_add_row(t);
	table_set_str(t, A_SCEN, s->name);
	table_set_str(t, A_METHOD, method);
	table_set_float(t, A_COST, cost);
	table_set_float(t, A_RATIO, s->cost_smaps / cost);
	table_set_float(t, A_MAXERR, n ? maxe : NAN);
	table_set_float(t, A_MEANERR, n ? sum / (double)n : NAN);
}

static maybe_i64 v_rss(const struct guest *g) { return g->mem.rss; }
static maybe_i64 v_est(const struct guest *g) { return g->estimate; }
static maybe_i64 v_exact(const struct guest *g) { return g->exact.pss; }
static maybe_i64 v_cal(const struct guest *g) { return g->calibrated; }

static void help(void)
{
	printf("usage: vmhost bench accounting [--guests N] [--guest-size SIZE] [--repeat N] [--quick] [--json]\n"
	       "\n"
	       "Starts VM-like processes (guest RAM on transparent huge pages; pages identical across\n"
	       "guests as after booting one image, some zero, some unique), lets KSM merge them, and\n"
	       "for each way of getting a VM's memory reports the median cost per VM and the error\n"
	       "against the exact PSS (smaps_rollup) in percent of RSS:\n"
	       "  status-rss       /proc/PID/status VmRSS (ignores sharing)\n"
	       "  vmhost-estimate  vmhost's default: status + ksm_stat + the host's KSM counters\n"
	       "  calibrated       the estimate with per-VM weights from earlier exact reads, made one\n"
	       "                   VM per full scan (as record and serve refresh them, a few at a time);\n"
	       "                   its cost includes each VM's share of record's 5 ms of exact reads\n"
	       "                   per sample\n"
	       "  smaps_rollup     the exact PSS (walks every page-table entry)\n"
	       "Two scenarios: 'symmetric' (every guest the same mix) and 'asymmetric' (guests sharing\n"
	       "80/50/20%%, and one with 60%% zero pages on 4 KiB pages), with each guest's stated bound.\n"
	       "\n"
	       "  --guests N        guests per scenario (default 4; asymmetric uses 4 at most)\n"
	       "  --guest-size SIZE guest RAM each (default 2G; memory never touched before is slow\n"
	       "                    to fault in on a virtual host, so a first run takes longer)\n"
	       "  --repeat N        reads per method and guest (default 20)\n"
	       "  --quick           4 guests of 256 MiB, 10 repeats\n"
	       "Needs root (it drives KSM, restoring every setting when it ends or is interrupted).\n");
}

int cmd_bench_accounting(struct ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"guests", required_argument, NULL, 'g'}, {"guest-size", required_argument, NULL, 's'},
		{"repeat", required_argument, NULL, 'r'}, {"quick", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'}, {0},
	};
	struct bench_opts o = {.guests = 4, .repeat = 20, .guest_bytes = 2ull << 30};
	args_reset();
	int c;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		int v;
		switch (c) {
		case 'g':
			if (arg_pid(optarg, &v) < 0 || v < 2 || v > MAX_GUESTS)
				return usage_error(ctx, "--guests takes 2 to %d", MAX_GUESTS);
			o.guests = (unsigned)v;
			break;
		case 's':
			if (arg_size(optarg, &o.guest_bytes) < 0 || o.guest_bytes < (16u << 20))
				return usage_error(ctx, "--guest-size takes a size of at least 16M, not '%s'", optarg);
			break;
		case 'r':
			if (arg_pid(optarg, &v) < 0 || v > 10000)
				return usage_error(ctx, "--repeat takes 1 to 10000");
			o.repeat = (unsigned)v;
			break;
		case 'q':
			o = (struct bench_opts){.guests = 4, .repeat = 10, .guest_bytes = 256u << 20};
			break;
		case 'h': help(); return EXIT_OK;
		default: return usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		}
	}
	struct host host;
	if (host_read(&ctx->root, &host) < 0 || !host.ksm.present)
		return fail(ctx, EXIT_FAIL, "KSM", "this kernel has no KSM (%s/kernel/mm/ksm)", ctx->root.sys);
	uint64_t need = (uint64_t)o.guests * o.guest_bytes; /* one scenario at a time */
	if (host.mem.mem_available.known && (double)need > 0.8 * (double)host.mem.mem_available.v)
		return fail(ctx, EXIT_FAIL, "memory", "%u guests of %llu MiB need more than 80%% of MemAvailable",
			    o.guests, (unsigned long long)(o.guest_bytes >> 20));
	int r = ksm_take_control(ctx, NULL);
	if (r != EXIT_OK)
		return r;
	if (host.ksm.advisor_mode[0] && ksm_guard_set("advisor_mode", "none") < 0) {
		ksm_guard_end();
		return fail(ctx, EXIT_NOPERM, "KSM", "cannot change KSM settings (need root)");
	}
	ksm_guard_set("use_zero_pages", "0");
	ksm_guard_set("smart_scan", "0");

	struct scenario *sc = calloc(2, sizeof(*sc));
	if (!sc) {
		ksm_guard_end();
		return fail(ctx, EXIT_FAIL, "memory", "%s", strerror(ENOMEM));
	}
	setup_scenarios(&sc[0], &sc[1], &o);
	int rc = EXIT_OK;
	for (int i = 0; i < 2 && rc == EXIT_OK; i++)
		rc = run_scenario(ctx, &sc[i], &o);
	int restored = ksm_guard_end();
	ksm_unlock();
	if (restored < 0)
		warn(ctx, "could not restore every KSM setting: %s", strerror(-restored));
	if (rc != EXIT_OK) {
		free(sc);
		return rc;
	}

	struct table *sum = table_new(summary_cols, A_NCOLS), *per = table_new(guest_cols, G_NCOLS);
	for (int i = 0; i < 2 && sum && per; i++) {
		struct scenario *s = &sc[i];
		add_summary(sum, s, "status-rss", s->cost_status, v_rss);
		add_summary(sum, s, "vmhost-estimate", s->cost_estimate, v_est);
		add_summary(sum, s, "calibrated", calibrated_cost(s), v_cal);
		add_summary(sum, s, "smaps_rollup", s->cost_smaps, v_exact);
		for (size_t k = 0; k < s->n; k++) {
			const struct guest *g = &s->g[k];
			table_add_row(per);
			table_set_str(per, G_SCEN, s->name);
			table_set_str(per, G_GUEST, g->label);
			table_set_maybe(per, G_RSS, g->mem.rss);
			table_set_maybe(per, G_EXACT, g->exact.pss);
			table_set_maybe(per, G_EST, g->estimate);
			table_set_float(per, G_ERR, pct_of_rss(g->estimate, g));
			table_set_maybe(per, G_BOUND, g->bound);
			table_set_float(per, G_BOUNDPCT, g->bound.known && g->mem.rss.v ? 100.0 * (double)g->bound.v / (double)g->mem.rss.v : NAN);
			table_set_maybe(per, G_CAL, g->calibrated);
			table_set_float(per, G_CALERR, pct_of_rss(g->calibrated, g));
		}
	}
	if (!sum || !per) {
		rc = fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	} else if (ctx->format == OUT_JSON) {
		struct json j;
		bench_json_begin(&j, o.guests, o.guest_bytes);
		json_int(&j, "repeat", o.repeat);
		json_object_end(&j);
		json_array_begin(&j, "scenarios");
		for (int i = 0; i < 2; i++) {
			json_object_begin(&j, NULL);
			json_string(&j, "name", sc[i].name);
			json_double(&j, "merge_seconds", sc[i].merge_seconds);
			json_int(&j, "pages_shared", sc[i].pages_shared);
			json_int(&j, "pages_sharing", sc[i].pages_sharing);
			json_double(&j, "smaps_rollup_unmerged_seconds_per_vm", sc[i].cost_smaps_unmerged);
			json_double(&j, "smaps_rollup_merged_seconds_per_vm", sc[i].cost_smaps);
			json_double(&j, "host_ksm_counters_seconds_per_sample", sc[i].cost_host_ksm);
			json_object_end(&j);
		}
		json_array_end(&j);
		table_print_json(sum, &j, "methods");
		table_print_json(per, &j, "guests");
		json_object_end(&j);
		json_finish(&j);
	} else if (ctx->format == OUT_CSV) {
		table_print_csv(sum, stdout);
	} else {
		printf("%u guests of %llu MiB per scenario; cost = median per VM over %u reads\n\n", o.guests,
		       (unsigned long long)(o.guest_bytes >> 20), o.repeat);
		table_print_human(sum, stdout, ctx->raw_bytes);
		printf("\n");
		table_print_human(per, stdout, ctx->raw_bytes);
		for (int i = 0; i < 2; i++) {
			char a[32], b[32];
			fmt_seconds(a, sizeof(a), sc[i].cost_smaps_unmerged);
			fmt_seconds(b, sizeof(b), sc[i].cost_smaps);
			printf("\n%s: KSM settled in %.0f s (pages_shared %lld, pages_sharing %lld); smaps_rollup per VM "
			       "%s on huge pages before merging, %s after (%.0fx slower)",
			       sc[i].name, sc[i].merge_seconds, (long long)sc[i].pages_shared,
			       (long long)sc[i].pages_sharing, a, b, sc[i].cost_smaps / sc[i].cost_smaps_unmerged);
		}
		char hk[32];
		fmt_seconds(hk, sizeof(hk), sc[0].cost_host_ksm);
		printf("\n\nThe estimate also reads the host's KSM counters once per sample for all VMs: %s.", hk);
		printf("\nBOUND: the estimate's worst case (docs/accounting.md). CALIBRATED: per-VM weights from\n"
		       "exact reads made one VM per full scan while KSM was merging, applied to later counters.\n");
	}
	table_free(sum);
	table_free(per);
	free(sc);
	return rc;
}
