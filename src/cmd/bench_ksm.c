/* vmhost bench ksm: five KSM policies, each from unmerged state, on one identical workload of
 * VM-like processes. Per policy: time and ksmd CPU to 95% of the achievable savings, ksmd CPU
 * over the steady period that follows, final savings. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/stats.h"
#include "core/clock.h"
#include "core/ksm_guard.h"
#include "core/ksm_rates.h"
#include "core/tuner.h"
#include "core/tuner_daemon.h"
#include "core/workload.h"
#include "out/json.h"
#include "out/svg.h"
#include "out/table.h"
#include "core/host.h"

#define MAX_GUESTS 16
#define MAX_REPEAT 9
#define SAMPLE_SECONDS 1.0

enum policy { P_DEFAULT, P_CONSERVATIVE, P_KSMTUNED, P_ADVISOR, P_VMHOST, P_N };
static const char *const policy_names[P_N] = {"kernel-default", "conservative", "ksmtuned", "kernel-advisor", "vmhost"};

struct series {
	double *t, *saved; /* seconds since start, workload saved bytes */
	int64_t *cpu_ns;   /* ksmd CPU since start */
	size_t n, cap;
};

struct run_result {
	struct series s;
	maybe_i64 final_saved;
	double steady_cpu_percent;
	bool available; /* false: the policy cannot run here (no advisor) */
};

struct bench_opts {
	unsigned guests;
	uint64_t guest_bytes;
	double duration, steady;
	int repeat;
	const char *svg;
	bool policy_on[P_N];
};

static void bench_ksm_help(void)
{
	printf("usage: vmhost bench ksm [--quick] [--guests N] [--guest-size SIZE] [--duration SEC]\n"
	       "                        [--steady SEC] [--repeat N] [--policies LIST] [--svg FILE] [--json]\n"
	       "\n"
	       "KSM policies compared on one identical, reproducible workload: N VM-like processes with\n"
	       "guest RAM on transparent huge pages, 50%% identical across guests (one image), 10%% zero,\n"
	       "10%% volatile (rewritten every 200 ms), the rest unique. Each policy starts from unmerged\n"
	       "state (fresh guests, run=2) and runs for --duration:\n"
	       "  kernel-default  100 pages / 20 ms\n"
	       "  conservative    100 pages / 120 ms\n"
	       "  ksmtuned        its algorithm and defaults, simulated at its 60 s cadence\n"
	       "  kernel-advisor  advisor_mode=scan-time (kernel defaults)\n"
	       "  vmhost          the 'vmhost ksm tune' control law with its defaults\n"
	       "\n"
	       "Achievable savings = the most any policy saved in this run; a policy's time to 95%% is the\n"
	       "first sample at or above 95%% of that. Steady ksmd CPU is measured over the last --steady\n"
	       "seconds of each run.\n"
	       "\n"
	       "  --quick           4 x 128 MiB guests, 120 s per policy, 40 s steady window\n"
	       "  (default)         4 x 256 MiB guests, 600 s per policy, 120 s steady window\n"
	       "  --policies LIST   a subset, e.g. kernel-default,vmhost\n"
	       "  --repeat N        run every policy N times (interleaved); medians are reported\n"
	       "  --svg FILE        saved bytes over time, one line per policy\n"
	       "\n"
	       "Takes the machine-wide KSM lock (waits) and restores every KSM setting at the end.\n");
}

static int series_add(struct series *s, double t, double saved, int64_t cpu)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		double *nt = realloc(s->t, cap * sizeof(double));
		if (!nt)
			return -ENOMEM;
		s->t = nt;
		double *ns = realloc(s->saved, cap * sizeof(double));
		if (!ns)
			return -ENOMEM;
		s->saved = ns;
		int64_t *nc = realloc(s->cpu_ns, cap * sizeof(int64_t));
		if (!nc)
			return -ENOMEM;
		s->cpu_ns = nc;
		s->cap = cap;
	}
	s->t[s->n] = t;
	s->saved[s->n] = saved;
	s->cpu_ns[s->n] = cpu;
	s->n++;
	return 0;
}

static void series_free(struct series *s)
{
	free(s->t);
	free(s->saved);
	free(s->cpu_ns);
}

static struct workload_spec guest_spec(const struct bench_opts *o, unsigned i)
{
	return (struct workload_spec){
		.guest_bytes = o->guest_bytes, .shared_fraction = 0.5, .zero_fraction = 0.1,
		.volatile_fraction = 0.1, .image_seed = 0x6b736d62656e6368ull, /* "ksmbench" */
		.guest_index = i, .thp = true, .mergeable = true, .rewrite_ms = 200,
	};
}

/* Bytes KSM saves on the workload's guests: each merged page of content shared by all G guests
 * is G mappings for one page, so (G-1)/G of the merged pages are saved; ksm_zero_pages are saved
 * whole. Counting only our guests keeps other processes on the host out of the figure. */
static double workload_saved(const struct io_root *root, const pid_t *pids, unsigned n, int64_t page, int64_t *ret_rss)
{
	int64_t merging = 0, zero = 0, rss = 0;
	char buf[1024];
	for (unsigned i = 0; i < n; i++) {
		ssize_t l = io_read(root, IO_PROC, buf, sizeof(buf), "%d/ksm_stat", (int)pids[i]);
		struct ksm_stat st;
		if (l > 0 && parse_ksm_stat(buf, (size_t)l, &st) >= 0) {
			merging += st.merging_pages.known ? st.merging_pages.v : 0;
			zero += st.zero_pages.known ? st.zero_pages.v : 0;
		} else if ((l = io_read(root, IO_PROC, buf, sizeof(buf), "%d/ksm_merging_pages", (int)pids[i])) > 0) {
			int64_t v;
			if (parse_i64(buf, &v) == 0)
				merging += v;
		}
		l = io_read(root, IO_PROC, buf, sizeof(buf), "%d/status", (int)pids[i]);
		struct proc_status ps;
		if (l > 0 && parse_status(buf, (size_t)l, &ps) >= 0 && ps.vm_rss.known)
			rss += ps.vm_rss.v;
	}
	if (ret_rss)
		*ret_rss = rss;
	return ((double)merging * (double)(n - 1) / (double)n + (double)zero) * (double)page;
}

/* ksmtuned's adjust(), as published: every 60 s, from free memory alone. */
struct ksmtuned_sim {
	int64_t npages;
};

static int ksmtuned_adjust(struct ksmtuned_sim *k, const struct io_root *root, int64_t committed_bytes,
			   const volatile sig_atomic_t *stop)
{
	char buf[4096];
	ssize_t l = io_read(root, IO_PROC, buf, sizeof(buf), "meminfo");
	struct meminfo m;
	if (l <= 0 || parse_meminfo(buf, (size_t)l, &m) < 0 || !m.mem_total.known)
		return -EIO;
	int64_t total = m.mem_total.v / 1024, committed = committed_bytes / 1024; /* kB, as the script */
	int64_t free_kb = (m.mem_free.v + (m.buffers.known ? m.buffers.v : 0) + (m.cached.known ? m.cached.v : 0)) / 1024;
	int64_t thres = total * 20 / 100;
	if (thres < 2048)
		thres = 2048;
	if (*stop)
		return 0;
	if (committed + thres < total && free_kb > thres)
		return ksm_guard_set_int("run", 0);
	k->npages += free_kb < thres ? 300 : -50;
	if (k->npages > 1250)
		k->npages = 1250;
	if (k->npages < 64)
		k->npages = 64;
	int64_t sleep_ms = 10 * 16 * 1024 * 1024 / total;
	if (sleep_ms < 10)
		sleep_ms = 10;
	int r = ksm_guard_set_int("pages_to_scan", k->npages);
	if (!r)
		r = ksm_guard_set_int("sleep_millisecs", sleep_ms);
	if (!r)
		r = ksm_guard_set_int("run", 1);
	return r;
}

static int unmerge_all(struct ksm_sampler *sm, bool has_advisor)
{
	int r = has_advisor ? ksm_guard_set("advisor_mode", "none") : 0;
	return r < 0 ? r : ksm_unmerge_wait(sm, 180, 0.2, stop_flag());
}

static int run_policy(struct ctx *ctx, const struct bench_opts *o, enum policy p, struct ksm_sampler *sm,
		      bool has_advisor, struct run_result *res)
{
	pid_t pids[MAX_GUESTS] = {0};
	int r = 0;
	int64_t page = host_page_size();
	memset(res, 0, sizeof(*res));
	res->available = true;
	res->steady_cpu_percent = NAN;
	if (p == P_ADVISOR && !has_advisor) {
		res->available = false;
		return 0;
	}
	/* Fresh guests for every policy: splitting huge pages on a merge is not undone by run=2. */
	for (unsigned i = 0; i < o->guests && r >= 0; i++) {
		struct workload_spec spec = guest_spec(o, i);
		r = workload_spawn(&spec, &pids[i]);
	}
	if (r >= 0)
		r = unmerge_all(sm, has_advisor);
	if (r < 0)
		goto out;
	if (ctx->format == OUT_HUMAN)
		fprintf(stderr, "vmhost: bench ksm: %s: %u guests ready, unmerged, running %.0f s\n", policy_names[p],
			o->guests, o->duration);
	switch (p) {
	case P_DEFAULT:
	case P_CONSERVATIVE:
		r = ksm_guard_set_int("pages_to_scan", 100);
		if (!r)
			r = ksm_guard_set_int("sleep_millisecs", p == P_DEFAULT ? 20 : 120);
		if (!r)
			r = ksm_guard_set_int("run", 1);
		break;
	case P_ADVISOR:
		r = ksm_guard_set_int("sleep_millisecs", 20);
		if (!r)
			r = ksm_guard_set("advisor_mode", "scan-time");
		if (!r)
			r = ksm_guard_set_int("run", 1);
		break;
	case P_KSMTUNED: /* the daemon sleeps its interval before its first adjustment */
		r = ksm_guard_set_int("run", 0);
		break;
	case P_VMHOST:
	case P_N:
		break;
	}
	if (r < 0)
		goto out;

	struct tuner_config cfg;
	tuner_config_default(&cfg);
	struct tuner_state ts;
	tuner_init(&ts);
	struct ksmtuned_sim tuned = {0};
	struct ksm_sample first, prev_tune, now;
	if (ksm_sample_take(sm, &first) < 0) {
		r = -ENOENT;
		goto out;
	}
	prev_tune = first;
	double next_tune = first.t, next_tuned = first.t + 60, next_sample = first.t;
	while (!stop_requested()) {
		if (ksm_sample_take(sm, &now) < 0) {
			r = -ENOENT;
			break;
		}
		double t = now.t - first.t;
		if (now.t >= next_sample - 0.01) {
			int64_t rss = 0;
			double saved = workload_saved(&ctx->root, pids, o->guests, page, &rss);
			int64_t cpu = now.ksmd_cpu_ns.known && first.ksmd_cpu_ns.known ? now.ksmd_cpu_ns.v - first.ksmd_cpu_ns.v : -1;
			if ((r = series_add(&res->s, t, saved, cpu)) < 0)
				break;
			next_sample += SAMPLE_SECONDS;
			if (p == P_KSMTUNED && now.t >= next_tuned) {
				next_tuned += 60;
				if ((r = ksmtuned_adjust(&tuned, &ctx->root, rss, stop_flag())) < 0)
					break;
			}
		}
		if (p == P_VMHOST && now.t >= next_tune - 0.01) {
			struct ksm_rates rates;
			struct tuner_input in;
			struct tuner_decision d;
			ksm_rates_compute(&prev_tune, &now, page, NULL, &rates);
			tuner_input_from(&prev_tune, &now, &rates, &in);
			tuner_step(&cfg, &ts, &in, &d);
			if ((r = tuner_apply(&cfg, &d, &now.k, stop_flag())) < 0)
				break;
			if (d.changed && getenv("VMHOST_BENCH_VERBOSE"))
				fprintf(stderr, "  t=%.0fs vmhost %s %lld/%lld: %s\n", t, tuner_mode_name(d.mode),
					(long long)d.pages_to_scan, (long long)d.sleep_millisecs, d.reason);
			prev_tune = now;
			next_tune += cfg.interval_seconds;
		}
		if (t >= o->duration)
			break;
		double wake = fmin(next_sample, p == P_VMHOST ? next_tune : next_sample);
		double left = wake - clock_monotonic_seconds();
		if (left > 0)
			sleep_for(left);
	}
out:
	for (unsigned i = 0; i < o->guests; i++)
		workload_stop(pids[i]);
	if (r < 0 || stop_requested())
		return r < 0 ? r : -EINTR;
	/* Steady window: the last --steady seconds. */
	struct series *s = &res->s;
	if (s->n >= 2) {
		res->final_saved = MAYBE((int64_t)s->saved[s->n - 1]);
		size_t a = 0;
		while (a + 1 < s->n && s->t[a] < s->t[s->n - 1] - o->steady)
			a++;
		double dt = s->t[s->n - 1] - s->t[a];
		if (dt > 0 && s->cpu_ns[a] >= 0 && s->cpu_ns[s->n - 1] >= 0)
			res->steady_cpu_percent = (double)(s->cpu_ns[s->n - 1] - s->cpu_ns[a]) / 1e9 / dt * 100;
	}
	return 0;
}

enum { B_POLICY, B_T95, B_CPU95, B_STEADY, B_SAVED, B_NOTE, B_NCOLS };
static const struct col bench_cols[B_NCOLS] = {
	[B_POLICY] = {"name", "POLICY", COL_STR, COL_LEFT, 0},
	[B_T95] = {"seconds_to_95pct", "TO 95%", COL_FLOAT, 0, 1},
	[B_CPU95] = {"ksmd_cpu_seconds_to_95pct", "KSMD CPU-S TO 95%", COL_FLOAT, 0, 2},
	[B_STEADY] = {"steady_ksmd_cpu_percent", "STEADY KSMD CPU %", COL_FLOAT, 0, 2},
	[B_SAVED] = {"saved_bytes", "SAVED", COL_BYTES, 0, 0},
	[B_NOTE] = {"note", "NOTE", COL_STR, COL_LEFT, 0},
};

static int parse_opts(struct ctx *ctx, int argc, char **argv, struct bench_opts *o, bool *help)
{
	static const struct option longopts[] = {
		{"quick", no_argument, NULL, 'q'},
		{"guests", required_argument, NULL, 'g'},
		{"guest-size", required_argument, NULL, 'm'},
		{"duration", required_argument, NULL, 'd'},
		{"steady", required_argument, NULL, 's'},
		{"repeat", required_argument, NULL, 'r'},
		{"policies", required_argument, NULL, 'p'},
		{"svg", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	bool quick = false;
	const char *guests = NULL, *size = NULL, *duration = NULL, *steady = NULL;
	char *policies = NULL;
	o->repeat = 1;
	args_reset();
	int c;
	while ((c = getopt_long(argc, argv, "+qg:m:d:s:r:p:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'q': quick = true; break;
		case 'g': guests = optarg; break;
		case 'm': size = optarg; break;
		case 'd': duration = optarg; break;
		case 's': steady = optarg; break;
		case 'r': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > MAX_REPEAT)
				return usage_error(ctx, "--repeat takes 1 to %d, not '%s'", MAX_REPEAT, optarg);
			o->repeat = (int)v;
			break;
		}
		case 'p': policies = optarg; break;
		case 'o': o->svg = optarg; break;
		case 'h': *help = true; return EXIT_OK;
		default: return usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	o->guests = 4;
	o->guest_bytes = (quick ? 128ull : 256ull) << 20;
	o->duration = quick ? 120 : 600;
	o->steady = quick ? 40 : 120;
	if (guests) {
		char *end;
		long v = strtol(guests, &end, 10);
		if (*end || end == guests || v < 2 || v > MAX_GUESTS)
			return usage_error(ctx, "--guests takes 2 to %d, not '%s'", MAX_GUESTS, guests);
		o->guests = (unsigned)v;
	}
	if (size && (arg_size(size, &o->guest_bytes) < 0 || o->guest_bytes < (4u << 20)))
		return usage_error(ctx, "--guest-size takes a size of at least 4M (e.g. 256M), not '%s'", size);
	if (duration && arg_seconds(duration, &o->duration) < 0)
		return usage_error(ctx, "--duration takes seconds, not '%s'", duration);
	if (steady && arg_seconds(steady, &o->steady) < 0)
		return usage_error(ctx, "--steady takes seconds, not '%s'", steady);
	if (o->steady >= o->duration)
		return usage_error(ctx, "--steady (%.0f s) must be shorter than --duration (%.0f s)", o->steady, o->duration);
	if (!policies) {
		for (int p = 0; p < P_N; p++)
			o->policy_on[p] = true;
		return EXIT_OK;
	}
	char *items[P_N * 2];
	int n = arg_list(policies, items, P_N * 2);
	if (n < 0)
		return usage_error(ctx, "--policies takes a comma-separated list of policy names");
	for (int i = 0; i < n; i++) {
		int hit = -1;
		for (int p = 0; p < P_N; p++)
			if (!strcmp(items[i], policy_names[p]))
				hit = p;
		if (hit < 0)
			return usage_error(ctx, "unknown policy '%s' (kernel-default, conservative, ksmtuned, kernel-advisor, vmhost)",
					   items[i]);
		o->policy_on[hit] = true;
	}
	return EXIT_OK;
}

/* Saved bytes over time, one line per policy, from the first run. */
static int write_svg(const char *path, struct run_result (*runs)[P_N], const struct bench_opts *o)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	double tmax = 0, ymax = 0;
	for (int p = 0; p < P_N; p++)
		for (size_t i = 0; o->policy_on[p] && runs[0][p].available && i < runs[0][p].s.n; i++) {
			tmax = fmax(tmax, runs[0][p].s.t[i]);
			ymax = fmax(ymax, runs[0][p].s.saved[i]);
		}
	struct svg *s = svg_begin(f, 900, 480);
	if (!s) {
		fclose(f);
		return -ENOMEM;
	}
	struct svg_plot plot;
	svg_plot_begin(s, &plot, &(struct svg_plot_spec){
		.x = {.min = 0, .max = tmax > 0 ? tmax : 1, .label = "seconds since start"},
		.y = {.min = 0, .max = ymax > 0 ? ymax * 1.05 : 1, .unit = SVG_BYTES, .label = "saved"},
		.title = "KSM savings over time per policy (first run)",
		.legend = SVG_LEGEND_RIGHT,
	});
	for (int p = 0; p < P_N; p++) {
		const struct run_result *res = &runs[0][p];
		if (o->policy_on[p] && res->available && res->s.n)
			svg_plot_series(&plot, policy_names[p], res->s.t, res->s.saved, res->s.n, SVG_LINES);
	}
	svg_plot_end(&plot);
	int r = svg_end(s);
	if (fclose(f) != 0 && !r)
		r = -errno;
	return r;
}

int cmd_bench_ksm(struct ctx *ctx, int argc, char **argv)
{
	struct bench_opts o = {0};
	bool help = false;
	int rc = parse_opts(ctx, argc, argv, &o, &help);
	if (rc != EXIT_OK)
		return rc;
	if (help) {
		bench_ksm_help();
		return EXIT_OK;
	}
	struct ksm_sampler sm;
	ksm_sampler_init(&sm, &ctx->root);
	struct ksm_sample s0;
	if (ksm_sample_take(&sm, &s0) == -ENOENT)
		return fail(ctx, EXIT_FAIL, "KSM", "this kernel has no KSM (%s/kernel/mm/ksm)", ctx->root.sys);
	if (geteuid() != 0)
		return fail(ctx, EXIT_NOPERM, "permission", "changing KSM settings needs root");
	if (!sm.ksmd_pid)
		warn(ctx, "ksmd not found: CPU figures will be n/a");
	bool has_advisor = s0.k.advisor_mode[0] != '\0';
	int r = ksm_take_control(ctx, stop_handler);
	if (r != EXIT_OK)
		return r;
	/* Leave the kernel's own defaults for everything the policies do not set. */
	r = ksm_guard_set_int("use_zero_pages", 0);
	if (!r && s0.k.smart_scan.known)
		r = ksm_guard_set_int("smart_scan", 1);

	struct run_result(*runs)[P_N] = calloc((size_t)o.repeat, sizeof(*runs));
	if (!runs) {
		ksm_guard_end();
		ksm_unlock();
		return fail(ctx, EXIT_FAIL, "memory", "%s", strerror(ENOMEM));
	}
	for (int k = 0; k < o.repeat && r >= 0 && !stop_requested(); k++)
		for (int p = 0; p < P_N && r >= 0 && !stop_requested(); p++)
			if (o.policy_on[p])
				r = run_policy(ctx, &o, (enum policy)p, &sm, has_advisor, &runs[k][p]);
	int rr = ksm_guard_end();
	ksm_unlock();
	if (stop_requested() || r < 0 || rr < 0) {
		for (int k = 0; k < o.repeat; k++)
			for (int p = 0; p < P_N; p++)
				series_free(&runs[k][p].s);
		free(runs);
		if (stop_requested())
			return fail(ctx, 128 + stop_requested(), "interrupted", "%s; every KSM setting restored",
				    strsignal(stop_requested()));
		return fail(ctx, r == -EACCES || r == -EPERM ? EXIT_NOPERM : EXIT_FAIL, "bench",
			    "%s (KSM settings restored)", strerror(-(r < 0 ? r : rr)));
	}

	/* Achievable: the most any policy saved in this run. */
	double achievable = 0;
	for (int k = 0; k < o.repeat; k++)
		for (int p = 0; p < P_N; p++)
			for (size_t i = 0; i < runs[k][p].s.n; i++)
				achievable = fmax(achievable, runs[k][p].s.saved[i]);
	uint64_t pages = o.guest_bytes / WORKLOAD_PAGE_BYTES, shared_pages = 0, zero_pages = 0;
	struct workload_spec spec = guest_spec(&o, 0);
	for (uint64_t i = 0; i < pages; i++) {
		enum page_class pc = workload_page_class(&spec, i);
		shared_pages += pc == PAGE_SHARED;
		zero_pages += pc == PAGE_ZERO;
	}
	int64_t mergeable = (int64_t)(shared_pages * (o.guests - 1) * WORKLOAD_PAGE_BYTES);

	double t95[P_N], cpu95[P_N], steady[P_N], saved[P_N];
	for (int p = 0; p < P_N; p++) {
		double vt[MAX_REPEAT], vc[MAX_REPEAT], vs[MAX_REPEAT], vf[MAX_REPEAT];
		for (int k = 0; k < o.repeat; k++) {
			const struct run_result *res = &runs[k][p];
			vt[k] = vc[k] = NAN;
			for (size_t i = 0; i < res->s.n && achievable > 0; i++)
				if (res->s.saved[i] >= 0.95 * achievable) {
					vt[k] = res->s.t[i];
					vc[k] = res->s.cpu_ns[i] >= 0 ? (double)res->s.cpu_ns[i] / 1e9 : NAN;
					break;
				}
			vs[k] = res->steady_cpu_percent;
			vf[k] = res->final_saved.known ? (double)res->final_saved.v : NAN;
		}
		t95[p] = median_nan_high(vt, (size_t)o.repeat);
		cpu95[p] = median_nan_high(vc, (size_t)o.repeat);
		steady[p] = median_nan_high(vs, (size_t)o.repeat);
		saved[p] = median_nan_high(vf, (size_t)o.repeat);
	}

	struct table *t = table_new(bench_cols, B_NCOLS);
	if (!t)
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	for (int p = 0; p < P_N; p++) {
		if (!o.policy_on[p])
			continue;
		table_add_row(t);
		table_set_str(t, B_POLICY, policy_names[p]);
		if (!runs[0][p].available) {
			table_set_str(t, B_NOTE, "this kernel has no advisor_mode");
			continue;
		}
		table_set_float(t, B_T95, t95[p]);
		table_set_float(t, B_CPU95, cpu95[p]);
		table_set_float(t, B_STEADY, steady[p]);
		if (isfinite(saved[p]))
			table_set_maybe(t, B_SAVED, MAYBE((int64_t)saved[p]));
		table_set_str(t, B_NOTE, isnan(t95[p]) ? "did not reach 95% within the run" : "");
	}
	/* The verdict: vmhost against the fastest static policy, conservative, and the advisor. */
	double fastest = NAN;
	int fastest_p = -1;
	for (int p = P_DEFAULT; p <= P_CONSERVATIVE; p++)
		if (o.policy_on[p] && isfinite(t95[p]) && (isnan(fastest) || t95[p] < fastest)) {
			fastest = t95[p];
			fastest_p = p;
		}
	double time_ratio = o.policy_on[P_VMHOST] ? t95[P_VMHOST] / fastest : NAN;
	bool cpu_ok = o.policy_on[P_VMHOST] && o.policy_on[P_CONSERVATIVE] && steady[P_VMHOST] <= steady[P_CONSERVATIVE];

	if (ctx->format == OUT_JSON) {
		struct json j;
		json_init(&j, stdout, false);
		json_object_begin(&j, NULL);
		json_object_begin(&j, "workload");
		json_int(&j, "guests", o.guests);
		json_int(&j, "guest_bytes", (int64_t)o.guest_bytes);
		json_int(&j, "mergeable_bytes", mergeable);
		json_int(&j, "zero_bytes", (int64_t)(zero_pages * o.guests * WORKLOAD_PAGE_BYTES));
		json_double(&j, "shared_fraction", spec.shared_fraction);
		json_double(&j, "zero_fraction", spec.zero_fraction);
		json_double(&j, "volatile_fraction", spec.volatile_fraction);
		json_object_end(&j);
		json_int(&j, "achievable_bytes", (int64_t)achievable);
		json_double(&j, "duration_seconds", o.duration);
		json_double(&j, "steady_seconds", o.steady);
		json_int(&j, "repeat", o.repeat);
		table_print_json(t, &j, "policies");
		json_object_begin(&j, "verdict");
		json_string(&j, "fastest_static_policy", fastest_p >= 0 ? policy_names[fastest_p] : NULL);
		json_double(&j, "vmhost_time_ratio_to_fastest_static", time_ratio);
		json_bool(&j, "vmhost_within_1_2x_of_fastest_static", time_ratio <= 1.2);
		json_bool(&j, "vmhost_steady_cpu_at_most_conservative", cpu_ok);
		json_double(&j, "vmhost_time_ratio_to_kernel_advisor", t95[P_VMHOST] / t95[P_ADVISOR]);
		json_double(&j, "vmhost_steady_cpu_ratio_to_kernel_advisor", steady[P_VMHOST] / steady[P_ADVISOR]);
		json_object_end(&j);
		json_object_end(&j);
		json_finish(&j);
	} else if (ctx->format == OUT_CSV) {
		table_print_csv(t, stdout);
	} else {
		char a[32], b[32];
		fmt_bytes(a, sizeof(a), (int64_t)achievable);
		fmt_bytes(b, sizeof(b), mergeable);
		printf("workload: %u guests x %llu MiB (50%% shared, 10%% zero, 10%% volatile); achievable %s "
		       "(identical content alone: %s); %.0f s per policy, steady = last %.0f s%s\n\n",
		       o.guests, (unsigned long long)(o.guest_bytes >> 20), a, b, o.duration, o.steady,
		       o.repeat > 1 ? ", medians of the runs" : "");
		table_print_human(t, stdout, ctx->raw_bytes);
		if (o.policy_on[P_VMHOST]) {
			if (isfinite(time_ratio))
				printf("\nvmhost: to 95%% in %.2fx the time of %s (goal <= 1.2x: %s)", time_ratio,
				       policy_names[fastest_p], time_ratio <= 1.2 ? "met" : "missed");
			else
				printf("\nvmhost: time to 95%% against the static policies n/a");
			if (o.policy_on[P_CONSERVATIVE])
				printf("; steady ksmd CPU %.2f%% vs conservative %.2f%% (%s)", steady[P_VMHOST],
				       steady[P_CONSERVATIVE], cpu_ok ? "met" : "missed");
			printf("\n");
			if (o.policy_on[P_ADVISOR] && runs[0][P_ADVISOR].available)
				printf("vs kernel-advisor: time to 95%%: %s; steady ksmd CPU %.2f%% vs %.2f%%\n",
				       isfinite(t95[P_ADVISOR]) && isfinite(t95[P_VMHOST])
					       ? (snprintf(a, sizeof(a), "%.2fx", t95[P_VMHOST] / t95[P_ADVISOR]), a)
					       : (isfinite(t95[P_VMHOST]) ? "the advisor did not reach 95% within the run" : "n/a"),
				       steady[P_VMHOST], steady[P_ADVISOR]);
		}
	}
	table_free(t);
	int svg_rc = 0;
	if (o.svg && (r = write_svg(o.svg, runs, &o)) < 0)
		svg_rc = fail(ctx, EXIT_FAIL, "writing SVG", "%s: %s", o.svg, strerror(-r));
	for (int k = 0; k < o.repeat; k++)
		for (int p = 0; p < P_N; p++)
			series_free(&runs[k][p].s);
	free(runs);
	return svg_rc;
}
