/* bench accounting's experiment: each way of getting a VM's memory timed and checked against the
 * exact PSS, on VM-like processes merged by real KSM. */
#include "core/bench/bench_accounting.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/base/stop.h"
#include "core/base/fatal_signal.h"
#include "io/file.h"
#include "core/model/host.h"
#include "core/model/ksm.h"
#include "core/model/proc.h"
#include "core/tune/ksm_guard.h"
#include "core/sample/sampler.h"
#include "core/base/stats.h"
#include "core/model/vm.h"
#include "core/model/vm_cost.h"

const char *bench_accounting_method_name(enum bench_accounting_method m)
{
	static const char *const names[BENCH_ACCOUNTING_NMETHODS] = {
		[BENCH_ACCOUNTING_STATUS] = "status-rss",
		[BENCH_ACCOUNTING_ESTIMATE] = "vmhost-estimate",
		[BENCH_ACCOUNTING_CALIBRATED] = "calibrated",
		[BENCH_ACCOUNTING_CGROUP] = "cgroup",
		[BENCH_ACCOUNTING_SMAPS] = "smaps_rollup",
	};
	return (unsigned)m < BENCH_ACCOUNTING_NMETHODS ? names[m] : "?";
}

void bench_accounting_scenario_init(struct bench_accounting_scenario *s, enum bench_accounting_kind kind,
				    const struct bench_accounting_config *cfg)
{
	/* Guests that share different fractions, and one full of zero pages on 4 KiB pages (its zero
	 * pages merge into 256-way KSM pages while the others' merge 2- to 4-way). */
	static const struct { const char *label; double shared, zero; bool thp; } mix[BENCH_ACCOUNTING_ASYMMETRIC_GUESTS] = {
		{"shares 80%", 0.8, 0.05, true},
		{"shares 50%", 0.5, 0.05, true},
		{"shares 20%", 0.2, 0.05, true},
		{"60% zero pages", 0.1, 0.6, false},
	};
	size_t n = cfg->guests > BENCH_ACCOUNTING_MAX_GUESTS ? BENCH_ACCOUNTING_MAX_GUESTS : cfg->guests;
	if (kind == BENCH_ACCOUNTING_ASYMMETRIC) {
		*s = (struct bench_accounting_scenario){.name = "asymmetric",
							.n = n < BENCH_ACCOUNTING_ASYMMETRIC_GUESTS ? n : BENCH_ACCOUNTING_ASYMMETRIC_GUESTS};
		for (size_t i = 0; i < s->n; i++) {
			s->g[i].label = mix[i].label;
			s->g[i].spec = (struct workload_spec){.guest_bytes = cfg->guest_bytes, .shared_fraction = mix[i].shared,
							      .zero_fraction = mix[i].zero, .image_seed = 1,
							      .guest_index = (unsigned)(100 + i), .thp = mix[i].thp,
							      .mergeable = true};
		}
		return;
	}
	/* One image booted N times: 70% of pages identical across guests, 10% zero, 20% unique. */
	*s = (struct bench_accounting_scenario){.name = "symmetric", .n = n};
	for (size_t i = 0; i < s->n; i++) {
		s->g[i].label = "one image";
		s->g[i].spec = (struct workload_spec){.guest_bytes = cfg->guest_bytes, .shared_fraction = 0.7,
						      .zero_fraction = 0.1, .image_seed = 1, .guest_index = (unsigned)i,
						      .thp = true, .mergeable = true};
	}
}

double bench_accounting_time(const struct io_root *root, const struct bench_accounting_scenario *s, int read,
			     unsigned repeat)
{
	size_t n = s->n * repeat, k = 0;
	double *t = calloc(n, sizeof(*t));
	if (!t)
		return NAN;
	char buf[4096];
	for (unsigned r = 0; r < repeat; r++) {
		/* The estimate also needs the host's KSM counters, read once per sample for all VMs:
		 * timed on their own (BENCH_ACCOUNTING_HOST_KSM), not spread over a handful of guests. */
		struct ksm_sysfs k_now;
		if (read == BENCH_ACCOUNTING_ESTIMATE || read == BENCH_ACCOUNTING_CALIBRATED)
			ksm_read(root, &k_now);
		if (read == BENCH_ACCOUNTING_HOST_KSM) {
			double t0 = clock_monotonic_seconds();
			ksm_read(root, &k_now);
			t[k++] = clock_monotonic_seconds() - t0;
			continue;
		}
		for (size_t i = 0; i < s->n; i++) {
			const struct bench_accounting_guest *g = &s->g[i];
			double t0 = clock_monotonic_seconds();
			if (read == BENCH_ACCOUNTING_STATUS) {
				io_read(root, IO_PROC, buf, sizeof(buf), "%d/status", g->pid);
			} else if (read == BENCH_ACCOUNTING_CGROUP) {
				if (s->cgroup_version)
					(void)cgroup_memory_without_cache(root, s->cgroup_version, g->cgroup_scope);
			} else if (read == BENCH_ACCOUNTING_ESTIMATE || read == BENCH_ACCOUNTING_CALIBRATED) {
				struct mem_counters mc;
				unsigned denied = 0;
				proc_read_counters(root, g->pid, &mc, &denied);
				(void)pss_estimate(&mc, &k_now, host_page_size(),
						   read == BENCH_ACCOUNTING_CALIBRATED && g->cal.valid ? &g->cal : NULL);
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

/* Until pages_sharing stays put over a full scan, at least three scans in; with calibrate_mid_merge,
 * also until every VM had its exact read. */
static int wait_settled(const struct io_root *root, struct bench_accounting_scenario *s, double timeout,
			bool calibrate_mid_merge)
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
			struct bench_accounting_guest *g = &s->g[turn++ % s->n];
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

/* Every guest's counters, exact PSS and estimates against the same KSM counters. */
static void measure_errors(const struct io_root *root, struct bench_accounting_scenario *s)
{
	struct ksm_sysfs k;
	ksm_read(root, &k);
	s->pages_shared = k.pages_shared.v;
	s->pages_sharing = k.pages_sharing.v;
	for (size_t i = 0; i < s->n; i++) {
		struct bench_accounting_guest *g = &s->g[i];
		unsigned denied = 0;
		proc_read_counters(root, g->pid, &g->mem, &denied);
		proc_read_smaps_rollup(root, g->pid, &g->exact);
		g->estimate = pss_estimate(&g->mem, &k, host_page_size(), NULL);
		g->bound = pss_estimate_bound(&g->mem, &k, host_page_size());
		g->calibrated = g->cal.valid ? pss_estimate(&g->mem, &k, host_page_size(), &g->cal) : UNKNOWN;
		g->cgroup_bytes = s->cgroup_version ? cgroup_memory_without_cache(root, s->cgroup_version, g->cgroup_scope)
						    : UNKNOWN;
	}
}

/* ---- the guests' cgroups ---- */

/* The running scenario's guests and cgroups, for bench_accounting_on_signal (absolute paths:
 * nothing is formatted in a signal handler). */
static struct {
	pid_t pid[BENCH_ACCOUNTING_MAX_GUESTS];
	char dir[BENCH_ACCOUNTING_MAX_GUESTS][PATH_MAX];
	volatile sig_atomic_t n;
} live;

/* Kills every task in a cgroup (a guest caught between fork and its pid being noted). Only
 * async-signal-safe calls: io_read_small, kill, waitpid. */
static void kill_cgroup_tasks(const char *dir)
{
	char path[PATH_MAX + 16], buf[512];
	size_t n = strlen(dir);
	if (n + sizeof("/cgroup.procs") > sizeof(path))
		return;
	memcpy(path, dir, n);
	memcpy(path + n, "/cgroup.procs", sizeof("/cgroup.procs"));
	ssize_t len = io_read_small(path, buf, sizeof(buf));
	long pid = 0;
	for (ssize_t i = 0; i < len; i++) {
		if (buf[i] >= '0' && buf[i] <= '9') {
			pid = pid * 10 + (buf[i] - '0');
			continue;
		}
		if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
			waitpid((pid_t)pid, NULL, 0);
		pid = 0;
	}
}

void bench_accounting_on_signal(int sig)
{
	for (sig_atomic_t i = 0; i < live.n; i++) {
		if (live.pid[i] > 0) {
			kill(live.pid[i], SIGKILL);
			waitpid(live.pid[i], NULL, 0);
		}
		for (int tries = 0; live.dir[i][0] && tries < 50 && io_remove_dir(live.dir[i]) < 0 && io_remove_dir(live.dir[i]) != -ENOENT; tries++) {
			kill_cgroup_tasks(live.dir[i]);
			struct timespec pause = {0, 10 * 1000 * 1000};
			nanosleep(&pause, NULL);
		}
	}
	fatal_signal_reraise(sig);
}

/* Each guest in a memory cgroup of its own, as a VM in its scope: under the v1 memory controller
 * where the host has one (hybrid hosts), else under cgroup v2 when its root delegates memory. */
static void cgroups_make(const struct io_root *root, struct bench_accounting_scenario *s)
{
	char ctl[256];
	ssize_t n;
	if (io_exists(root, IO_SYS, "fs/cgroup/memory/cgroup.procs"))
		s->cgroup_version = 1;
	else if ((n = io_read(root, IO_SYS, ctl, sizeof(ctl), "fs/cgroup/cgroup.subtree_control")) > 0 &&
		 strstr(ctl, "memory"))
		s->cgroup_version = 2;
	else {
		snprintf(s->cgroup_why, sizeof(s->cgroup_why), "no memory cgroup controller to put the guests in");
		return;
	}
	const char *base = s->cgroup_version == 1 ? "fs/cgroup/memory" : "fs/cgroup";
	for (size_t i = 0; i < s->n; i++) {
		struct bench_accounting_guest *g = &s->g[i];
		snprintf(g->cgroup, sizeof(g->cgroup), "%s/vmhost-bench-%d-%s-%zu", base, (int)getpid(), s->name, i);
		g->cgroup_scope = g->cgroup + strlen(base);
		/* Known to the signal handler before it exists: a signal in between leaves nothing behind. */
		io_path(root, IO_SYS, live.dir[i], sizeof(live.dir[i]), "%s", g->cgroup);
		live.pid[i] = 0;
		live.n = (sig_atomic_t)(i + 1);
		int r = io_mkdir(root, IO_SYS, "%s", g->cgroup);
		if (r < 0 && r != -EEXIST) {
			snprintf(s->cgroup_why, sizeof(s->cgroup_why), "cannot create %.70s: %.40s", g->cgroup, strerror(-r));
			g->cgroup[0] = '\0';
			s->cgroup_version = 0;
			return; /* the ones made so far are removed with the guests */
		}
		g->spec.cgroup = g->cgroup;
		g->spec.root = root;
	}
}

static void cgroups_remove(const struct io_root *root, struct bench_accounting_scenario *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct bench_accounting_guest *g = &s->g[i];
		/* The last task leaves as the guest is reaped; a moment later the cgroup is empty. */
		for (int tries = 0; g->cgroup[0] && tries < 50 && io_rmdir(root, IO_SYS, "%s", g->cgroup) == -EBUSY; tries++)
			sleep_for(0.02);
		g->spec.cgroup = NULL;
	}
	live.n = 0;
}

__attribute__((format(printf, 5, 6))) static int set_error(struct bench_accounting_error *err, int r,
							   const char *what, bool need_root, const char *fmt, ...)
{
	err->what = what;
	err->need_root = need_root;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->why, sizeof(err->why), fmt, ap);
	va_end(ap);
	return r;
}

/* One scenario: everything unmerged, its guests started, smaps_rollup timed, KSM run until it
 * settles (calibrating one VM per full scan), then frozen while the errors and every read are
 * measured; the guests stopped and KSM unmerged again. The caller holds the KSM lock and has begun
 * the KSM guard. 0 or a negative errno (-ETIMEDOUT: KSM did not settle). */
static int bench_accounting_run_scenario(const struct io_root *root, const struct bench_accounting_config *cfg,
					 struct bench_accounting_scenario *s, bench_accounting_step_fn on_step, void *arg,
					 struct bench_accounting_error *err)
{
	int r;
	if ((r = ksm_guard_set("run", "2")) < 0) /* unmerge everything: start from nothing merged */
		return set_error(err, r, "KSM", r == -EACCES, "cannot write run: %s", strerror(-r));
	if (on_step)
		on_step(arg, BENCH_ACCOUNTING_STARTING, s);
	cgroups_make(root, s);
	for (size_t i = 0; i < s->n; i++) {
		if ((r = workload_spawn(&s->g[i].spec, &s->g[i].pid)) < 0) {
			for (size_t j = 0; j < i; j++)
				workload_stop(s->g[j].pid);
			cgroups_remove(root, s);
			return set_error(err, r, "starting guests", false, "%s", strerror(-r));
		}
		live.pid[i] = s->g[i].pid;
	}
	s->smaps_unmerged_seconds = bench_accounting_time(root, s, BENCH_ACCOUNTING_SMAPS, cfg->repeat);
	ksm_guard_set("pages_to_scan", "10000");
	ksm_guard_set("sleep_millisecs", "10");
	ksm_guard_set("run", "1");
	if (on_step)
		on_step(arg, BENCH_ACCOUNTING_MERGING, s);
	r = wait_settled(root, s, BENCH_ACCOUNTING_SETTLE_SECONDS, true);
	ksm_guard_set("run", "0"); /* freeze the merged state while measuring */
	if (r == 0) {
		measure_errors(root, s);
		for (int m = 0; m < BENCH_ACCOUNTING_NREADS; m++)
			s->read_seconds[m] = bench_accounting_time(root, s, m, cfg->repeat);
	}
	for (size_t i = 0; i < s->n; i++)
		workload_stop(s->g[i].pid);
	cgroups_remove(root, s);
	ksm_guard_set("run", "2");
	if (r < 0)
		return set_error(err, r, "KSM", false, "merging did not settle within %d s",
				 BENCH_ACCOUNTING_SETTLE_SECONDS);
	return 0;
}

int bench_accounting_run(const struct io_root *root, const struct bench_accounting_config *cfg,
			 bench_accounting_step_fn on_step, void *arg, struct bench_accounting_result **ret,
			 struct bench_accounting_error *err)
{
	if (cfg->guests < 2 || cfg->guests > BENCH_ACCOUNTING_MAX_GUESTS)
		return set_error(err, -EINVAL, "guests", false, "%u guests (2 to %d)", cfg->guests,
				 BENCH_ACCOUNTING_MAX_GUESTS);
	struct ksm_sysfs k;
	int r;
	if (ksm_read(root, &k) == 0 && k.advisor_mode[0] && (r = ksm_guard_set("advisor_mode", "none")) < 0)
		return set_error(err, r, "KSM", true, "cannot change KSM settings (need root)");
	ksm_guard_set("use_zero_pages", "0");
	ksm_guard_set("smart_scan", "0");
	struct bench_accounting_result *res = calloc(1, sizeof(*res));
	if (!res)
		return set_error(err, -ENOMEM, "memory", false, "%s", strerror(ENOMEM));
	res->cfg = *cfg;
	for (int i = 0; i < BENCH_ACCOUNTING_NSCENARIOS; i++)
		bench_accounting_scenario_init(&res->scenarios[i], (enum bench_accounting_kind)i, cfg);
	for (int i = 0; i < BENCH_ACCOUNTING_NSCENARIOS; i++)
		if ((r = bench_accounting_run_scenario(root, cfg, &res->scenarios[i], on_step, arg, err)) < 0) {
			free(res);
			return r;
		}
	*ret = res;
	return 0;
}

void bench_accounting_result_free(struct bench_accounting_result *r)
{
	free(r);
}

double bench_accounting_cost(const struct bench_accounting_scenario *s, enum bench_accounting_method m)
{
	if (m != BENCH_ACCOUNTING_CALIBRATED)
		return s->read_seconds[m];
	/* Applying the weights, plus the VM's share of the exact reads that keep them fresh: record
	 * and serve spend SAMPLER_CALIBRATION_BUDGET_SECONDS per sample on them, and at least one read. */
	double n = (double)s->n, smaps = s->read_seconds[BENCH_ACCOUNTING_SMAPS];
	double exact = fmax(smaps, fmin(SAMPLER_CALIBRATION_BUDGET_SECONDS, n * smaps));
	return s->read_seconds[BENCH_ACCOUNTING_CALIBRATED] + exact / n;
}

maybe_i64 bench_accounting_value(const struct bench_accounting_guest *g, enum bench_accounting_method m)
{
	switch (m) {
	case BENCH_ACCOUNTING_STATUS: return g->mem.rss;
	case BENCH_ACCOUNTING_ESTIMATE: return g->estimate;
	case BENCH_ACCOUNTING_CALIBRATED: return g->calibrated;
	case BENCH_ACCOUNTING_CGROUP: return g->cgroup_bytes;
	case BENCH_ACCOUNTING_SMAPS: return g->exact.pss;
	default: return UNKNOWN;
	}
}

double bench_accounting_error_pct(maybe_i64 v, const struct bench_accounting_guest *g)
{
	if (!v.known || !g->mem.rss.known || !g->exact.pss.known || g->mem.rss.v == 0)
		return NAN;
	return 100.0 * fabs((double)(v.v - g->exact.pss.v)) / (double)g->mem.rss.v;
}

double bench_accounting_bound_pct(const struct bench_accounting_guest *g)
{
	if (!g->bound.known || !g->mem.rss.v)
		return NAN;
	return 100.0 * (double)g->bound.v / (double)g->mem.rss.v;
}

void bench_accounting_summarize(const struct bench_accounting_scenario *s, enum bench_accounting_method m,
				struct bench_accounting_summary *ret)
{
	double maxe = 0, sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		double e = bench_accounting_error_pct(bench_accounting_value(&s->g[i], m), &s->g[i]);
		if (isnan(e))
			continue;
		maxe = fmax(maxe, e);
		sum += e;
		n++;
	}
	double cost = bench_accounting_cost(s, m);
	*ret = (struct bench_accounting_summary){
		.cost_seconds = cost,
		.vs_smaps = s->read_seconds[BENCH_ACCOUNTING_SMAPS] / cost,
		.max_error_pct = n ? maxe : NAN,
		.mean_error_pct = n ? sum / (double)n : NAN,
	};
}
