#include "core/bench/bench_ksm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/rate.h"
#include "core/base/stalls.h"
#include "core/base/stats.h"
#include "core/base/stop.h"
#include "core/model/account.h"
#include "core/model/host.h"
#include "core/model/ksm.h"
#include "core/model/proc.h"
#include "core/model/vm.h"
#include "core/tune/ksm_guard.h"
#include "core/tune/ksmtuned.h"
#include "core/tune/tuner_daemon.h"

static const char *const policy_names[BENCH_KSM_NPOLICIES] = {
	"kernel-default", "conservative", "ksmtuned", "ksmtuned-model", "kernel-advisor", "vmhost",
};
static const char *const scenario_names[BENCH_KSM_NSCENARIOS] = {"start", "late", "churn", "volatile"};

const char *bench_ksm_policy_name(enum bench_ksm_policy p)
{
	return p < BENCH_KSM_NPOLICIES ? policy_names[p] : "?";
}

int bench_ksm_policy_parse(const char *name)
{
	for (int p = 0; p < BENCH_KSM_NPOLICIES; p++)
		if (!strcmp(name, policy_names[p]))
			return p;
	return -EINVAL;
}

const char *bench_ksm_scenario_name(enum bench_ksm_scenario s)
{
	return s < BENCH_KSM_NSCENARIOS ? scenario_names[s] : "?";
}

int bench_ksm_scenario_parse(const char *name)
{
	for (int s = 0; s < BENCH_KSM_NSCENARIOS; s++)
		if (!strcmp(name, scenario_names[s]))
			return s;
	return -EINVAL;
}

struct workload_spec bench_ksm_guest_spec(const struct bench_ksm_config *c, unsigned i)
{
	bool hot = c->scenario == BENCH_KSM_VOLATILE;
	return (struct workload_spec){
		.guest_bytes = c->guest_bytes, .shared_fraction = hot ? 0.2 : 0.5, .zero_fraction = 0.1,
		.volatile_fraction = hot ? 0.6 : 0.1, .image_seed = 0x6b736d62656e6368ull, /* "ksmbench" */
		.guest_index = i, .thp = true, .mergeable = true, .rewrite_ms = 200,
	};
}

double bench_ksm_plan(const struct bench_ksm_config *c, struct bench_ksm_guest_plan plan[BENCH_KSM_MAX_GUESTS])
{
	unsigned g = c->guests < BENCH_KSM_MAX_GUESTS ? c->guests : BENCH_KSM_MAX_GUESTS;
	double d = c->duration_seconds, arrival = 0;
	for (unsigned i = 0; i < g; i++) {
		plan[i] = (struct bench_ksm_guest_plan){0, INFINITY};
		if (c->scenario == BENCH_KSM_LATE && i > 0)
			plan[i].start = d / 3;
		else if (c->scenario == BENCH_KSM_CHURN)
			plan[i].start = d / (2.0 * g) * i;
		arrival = fmax(arrival, plan[i].start);
	}
	if (c->scenario == BENCH_KSM_CHURN && g >= 3)
		arrival = plan[0].stop = d / 2;
	return arrival;
}

unsigned bench_ksm_plan_final_guests(const struct bench_ksm_config *c)
{
	struct bench_ksm_guest_plan plan[BENCH_KSM_MAX_GUESTS];
	bench_ksm_plan(c, plan);
	unsigned n = 0;
	for (unsigned i = 0; i < c->guests && i < BENCH_KSM_MAX_GUESTS; i++)
		n += isinf(plan[i].stop);
	return n;
}

int bench_ksm_series_add(struct bench_ksm_series *s, double t, double saved, int64_t cpu_ns)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		/* Each array keeps its old contents when a later one cannot grow: n stays valid. */
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
	s->cpu_ns[s->n] = cpu_ns;
	s->n++;
	return 0;
}

void bench_ksm_series_free(struct bench_ksm_series *s)
{
	if (!s)
		return;
	free(s->t);
	free(s->saved);
	free(s->cpu_ns);
	*s = (struct bench_ksm_series){0};
}

/* Each merged page of content shared by all G guests is G mappings for one page, so (G-1)/G of
 * the merged pages are saved; ksm_zero_pages are saved whole. */
double bench_ksm_saved_bytes(int64_t merging_pages, int64_t zero_pages, unsigned guests, int64_t page_bytes)
{
	if (!guests)
		return 0;
	return ((double)merging_pages * (double)(guests - 1) / (double)guests + (double)zero_pages) * (double)page_bytes;
}

/* The series' ksmd CPU time at i (-1 there when unknown). */
static maybe_i64 series_cpu_ns(const struct bench_ksm_series *s, size_t i)
{
	return s->cpu_ns[i] >= 0 ? MAYBE(s->cpu_ns[i]) : UNKNOWN;
}

void bench_ksm_run_finish(struct bench_ksm_run *run, double steady_seconds)
{
	const struct bench_ksm_series *s = &run->s;
	if (s->n < 2)
		return;
	run->final_saved = MAYBE((int64_t)s->saved[s->n - 1]);
	size_t a = 0;
	while (a + 1 < s->n && s->t[a] < s->t[s->n - 1] - steady_seconds)
		a++;
	double dt = s->t[s->n - 1] - s->t[a];
	run->steady_cpu_percent = counter_percent_ns(series_cpu_ns(s, a), series_cpu_ns(s, s->n - 1), dt);
}

int bench_ksm_result_new(const struct bench_ksm_config *c, struct bench_ksm_result **ret)
{
	if (c->repeat < 1 || c->repeat > BENCH_KSM_MAX_REPEAT)
		return -EINVAL;
	struct bench_ksm_result *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cfg = *c;
	r->arrival = bench_ksm_plan(c, r->plan);
	r->runs = calloc((size_t)c->repeat, sizeof(*r->runs));
	if (!r->runs) {
		free(r);
		return -ENOMEM;
	}
	*ret = r;
	return 0;
}

void bench_ksm_result_free(struct bench_ksm_result *r)
{
	if (!r)
		return;
	for (int k = 0; k < r->cfg.repeat; k++)
		for (int p = 0; p < BENCH_KSM_NPOLICIES; p++)
			bench_ksm_series_free(&r->runs[k][p].s);
	free(r->runs);
	free(r);
}

/* One policy's run: what its steps share. */
struct policy_run {
	const struct io_root *root;
	const struct bench_ksm_config *c;
	const struct bench_ksm_guest_plan *plan;
	enum bench_ksm_policy p;
	struct ksm_sampler *sm;
	pid_t pids[BENCH_KSM_MAX_GUESTS]; /* 0: not started yet, or gone */
	bool gone[BENCH_KSM_MAX_GUESTS];
	struct ksmtuned *daemon;          /* the real ksmtuned while its policy runs */
	struct stall_reader *stalls;      /* delay accounting, read for the guests' copy stalls */
	double copies[BENCH_KSM_MAX_GUESTS]; /* each guest's copy stall seconds at its last reading */
	int64_t page_bytes;
	bench_ksm_event_fn on_event;
	void *arg;
};

static void tell(const struct policy_run *pr, enum bench_ksm_event_kind kind, double t, const struct tuner_decision *d)
{
	if (pr->on_event)
		pr->on_event(&(struct bench_ksm_event){.kind = kind, .policy = pr->p, .t = t, .decision = d}, pr->arg);
}

/* Bytes KSM saves on our running guests only (other processes on the host stay out of the
 * figure), and their resident memory (what ksmtuned counts as committed). */
static double workload_saved(const struct policy_run *pr, int64_t *ret_rss)
{
	int64_t merging = 0, zero = 0, rss = 0;
	unsigned denied = 0, running = 0;
	for (unsigned i = 0; i < pr->c->guests; i++) {
		struct mem_counters mc;
		if (!pr->pids[i])
			continue;
		running++;
		if (proc_read_counters(pr->root, pr->pids[i], &mc, &denied) < 0)
			continue;
		merging += mc.ksm_merging_pages.known ? mc.ksm_merging_pages.v : 0;
		zero += mc.ksm_zero_pages.known ? mc.ksm_zero_pages.v : 0;
		rss += mc.rss.known ? mc.rss.v : 0;
	}
	*ret_rss = rss;
	return bench_ksm_saved_bytes(merging, zero, running, pr->page_bytes);
}

/* Guest i's copy stalls so far, kept for the run's sum (a guest's threads are its own: they
 * start with it, after --delayacct turned accounting on). */
static void note_copies(struct policy_run *pr, unsigned i)
{
	struct stalls s;
	if (pr->pids[i] && stall_read(pr->stalls, pr->pids[i], true, &s) == 0 && isfinite(s.seconds[STALL_WPCOPY]))
		pr->copies[i] = s.seconds[STALL_WPCOPY];
}

/* Starts and stops the guests whose time in the plan has come, t seconds after the start. */
static int follow_plan(struct policy_run *pr, double t)
{
	int r = 0;
	for (unsigned i = 0; i < pr->c->guests && r >= 0 && !stop_requested(); i++) {
		const struct bench_ksm_guest_plan *g = &pr->plan[i];
		note_copies(pr, i);
		if (pr->pids[i] && t >= g->stop) {
			workload_stop(pr->pids[i]);
			pr->pids[i] = 0;
			pr->gone[i] = true;
		} else if (!pr->pids[i] && !pr->gone[i] && t >= g->start) {
			struct workload_spec spec = bench_ksm_guest_spec(pr->c, i);
			r = workload_spawn(&spec, &pr->pids[i]);
		}
	}
	return r;
}

/* One of ksmtuned's adjustments, from free memory alone, written through the guard. */
static int ksmtuned_apply(const struct io_root *root, const struct ksmtuned_config *kc, int64_t committed_bytes,
			  int64_t *npages)
{
	char buf[4096];
	ssize_t l = io_read(root, IO_PROC, buf, sizeof(buf), "meminfo");
	struct meminfo m;
	if (l <= 0 || parse_meminfo(buf, (size_t)l, &m) < 0 || !m.mem_total.known || m.mem_total.v < 1024)
		return -EIO;
	int64_t free_kb = (m.mem_free.v + (m.buffers.known ? m.buffers.v : 0) + (m.cached.known ? m.cached.v : 0)) / 1024;
	if (stop_requested())
		return 0;
	struct ksmtuned_step step;
	ksmtuned_adjust(kc, m.mem_total.v / 1024, free_kb, committed_bytes / 1024, npages, &step);
	if (!step.run)
		return ksm_guard_set_int("run", 0);
	int r = ksm_guard_set_int("pages_to_scan", step.pages_to_scan);
	if (!r)
		r = ksm_guard_set_int("sleep_millisecs", step.sleep_millisecs);
	if (!r)
		r = ksm_guard_set_int("run", 1);
	return r;
}

/* One interval of vmhost's law, as 'vmhost ksm tune' runs it: sysfs and the /proc watch. */
static int vmhost_tune(const struct policy_run *pr, const struct tuner_config *cfg, struct tuner_state *ts,
		       struct tuner_watch *w, const struct ksm_sample *prev, const struct ksm_sample *now, double t)
{
	struct ksm_rates rates;
	struct tuner_decision d;
	ksm_rates_compute(prev, now, pr->page_bytes, NULL, &rates);
	int r = tuner_decide(cfg, ts, w, prev, now, &rates, &d, NULL);
	if (r < 0)
		return r;
	r = tuner_apply(cfg, &d, &now->k, stop_flag());
	if (r >= 0 && d.changed)
		tell(pr, BENCH_KSM_TUNED, t, &d);
	return r;
}

static int unmerge_all(struct ksm_sampler *sm, bool has_advisor)
{
	int r = has_advisor ? ksm_guard_set("advisor_mode", "none") : 0;
	return r < 0 ? r : ksm_unmerge_wait(sm, 180, 0.2, stop_flag());
}

/* The policy's settings at its start; vmhost's law and ksmtuned write theirs as they go. */
static int policy_start(struct policy_run *pr)
{
	enum bench_ksm_policy p = pr->p;
	struct ksmtuned_config kc;
	char err[256];
	int r = 0;
	switch (p) {
	case BENCH_KSM_DEFAULT:
	case BENCH_KSM_CONSERVATIVE:
		r = ksm_guard_set_int("pages_to_scan", 100);
		if (!r)
			r = ksm_guard_set_int("sleep_millisecs", p == BENCH_KSM_DEFAULT ? 20 : 120);
		if (!r)
			r = ksm_guard_set_int("run", 1);
		break;
	case BENCH_KSM_ADVISOR:
		r = ksm_guard_set_int("sleep_millisecs", 20);
		if (!r)
			r = ksm_guard_set("advisor_mode", "scan-time");
		if (!r)
			r = ksm_guard_set_int("run", 1);
		break;
	case BENCH_KSM_KSMTUNED:
		ksmtuned_config_default(&kc);
		r = ksm_guard_set_int("run", 0);
		if (!r)
			r = ksmtuned_start(pr->root, &kc, &pr->daemon, err, sizeof(err));
		break;
	case BENCH_KSM_KSMTUNED_MODEL: /* the daemon sleeps its interval before its first adjustment */
		r = ksm_guard_set_int("run", 0);
		break;
	case BENCH_KSM_VMHOST:
	case BENCH_KSM_NPOLICIES:
		break;
	}
	return r;
}

/* Samples every BENCH_KSM_SAMPLE_SECONDS until the duration is over, starting and stopping
 * guests as planned and driving ksmtuned's model or vmhost's law (w: its /proc watch) on their
 * own cadence. */
static int policy_samples(struct policy_run *pr, struct tuner_watch *w, struct bench_ksm_series *s)
{
	struct tuner_config cfg;
	tuner_config_default(&cfg);
	struct tuner_state ts;
	tuner_init(&ts);
	struct ksmtuned_config kc;
	ksmtuned_config_default(&kc);
	int64_t npages = 0;
	bool vmhost = pr->p == BENCH_KSM_VMHOST;
	struct ksm_sample first, prev_tune, now;
	if (ksm_sample_take(pr->sm, &first) < 0)
		return -ENOENT;
	prev_tune = first;
	double next_tune = first.t, next_tuned = first.t + kc.monitor_interval_seconds, next_sample = first.t;
	int r;
	while (!stop_requested()) {
		if (ksm_sample_take(pr->sm, &now) < 0)
			return -ENOENT;
		double t = now.t - first.t;
		if (now.t >= next_sample - 0.01) {
			if ((r = follow_plan(pr, t)) < 0)
				return r;
			int64_t rss = 0;
			double saved = workload_saved(pr, &rss);
			int64_t cpu = now.ksmd_cpu_ns.known && first.ksmd_cpu_ns.known ? now.ksmd_cpu_ns.v - first.ksmd_cpu_ns.v : -1;
			if ((r = bench_ksm_series_add(s, t, saved, cpu)) < 0)
				return r;
			next_sample += BENCH_KSM_SAMPLE_SECONDS;
			if (pr->p == BENCH_KSM_KSMTUNED_MODEL && now.t >= next_tuned) {
				next_tuned += kc.monitor_interval_seconds;
				if ((r = ksmtuned_apply(pr->root, &kc, rss, &npages)) < 0)
					return r;
			}
		}
		if (vmhost && now.t >= next_tune - 0.01) {
			if ((r = vmhost_tune(pr, &cfg, &ts, w, &prev_tune, &now, t)) < 0)
				return r;
			prev_tune = now;
			next_tune += cfg.interval_seconds;
		}
		if (t >= pr->c->duration_seconds)
			break;
		double left = fmin(next_sample, vmhost ? next_tune : next_sample) - clock_monotonic_seconds();
		if (left > 0)
			sleep_for(left);
	}
	return 0;
}

static int policy_loop(struct policy_run *pr, struct bench_ksm_series *s)
{
	struct tuner_watch *w = NULL;
	int r;
	if (pr->p == BENCH_KSM_VMHOST && (r = tuner_watch_new(pr->root, pr->page_bytes, &w)) < 0)
		return r;
	r = policy_samples(pr, w, s);
	tuner_watch_free(w);
	return r;
}

static int run_policy(struct policy_run *pr, bool has_advisor, struct bench_ksm_run *res)
{
	memset(res, 0, sizeof(*res));
	res->available = true;
	res->steady_cpu_percent = res->copy_stall_seconds = NAN;
	if (pr->p == BENCH_KSM_ADVISOR && !has_advisor) {
		res->available = false;
		res->note = "this kernel has no advisor_mode";
		return 0;
	}
	memset(pr->pids, 0, sizeof(pr->pids));
	memset(pr->gone, 0, sizeof(pr->gone));
	memset(pr->copies, 0, sizeof(pr->copies));
	/* Fresh guests for every policy: splitting huge pages on a merge is not undone by run=2. */
	int r = follow_plan(pr, 0);
	if (r >= 0)
		r = unmerge_all(pr->sm, has_advisor);
	if (r >= 0) {
		tell(pr, BENCH_KSM_READY, 0, NULL);
		r = policy_start(pr);
	}
	if (r >= 0)
		r = policy_loop(pr, &res->s);
	bool no_daemon = pr->p == BENCH_KSM_KSMTUNED && !pr->daemon;
	int rd = ksmtuned_stop(pr->daemon);
	pr->daemon = NULL;
	res->copy_stall_seconds = pr->stalls->open ? 0 : NAN;
	for (unsigned i = 0; i < pr->c->guests; i++) {
		note_copies(pr, i);
		res->copy_stall_seconds += pr->copies[i];
		if (pr->pids[i])
			workload_stop(pr->pids[i]);
	}
	if (r == -ENOENT && no_daemon) {
		res->available = false;
		res->note = "ksmtuned is not installed (package ksmtuned)";
		return 0;
	}
	if (r >= 0 && rd < 0)
		r = rd;
	if (r < 0 || stop_requested())
		return r < 0 ? r : -EINTR;
	bench_ksm_run_finish(res, pr->c->steady_seconds);
	return 0;
}

int bench_ksm_run(const struct io_root *root, const struct bench_ksm_config *c, bench_ksm_event_fn on_event,
		  void *arg, struct bench_ksm_result **ret)
{
	if (c->guests < 2 || c->guests > BENCH_KSM_MAX_GUESTS)
		return -EINVAL;
	struct ksm_sampler sm;
	ksm_sampler_init(&sm, root);
	struct ksm_sample s0;
	int r = ksm_sample_take(&sm, &s0);
	if (r < 0)
		return r;
	struct bench_ksm_result *res;
	if ((r = bench_ksm_result_new(c, &res)) < 0)
		return r;
	/* Leave the kernel's own defaults for everything the policies do not set. */
	r = ksm_guard_set_int("use_zero_pages", 0);
	if (!r && s0.k.smart_scan.known)
		r = ksm_guard_set_int("smart_scan", 1);
	struct stall_reader stalls;
	stall_reader_open(root, delayacct_read(root), &stalls);
	snprintf(res->copy_stall_why, sizeof(res->copy_stall_why), "%s", stalls.open ? "" : stalls.why);
	struct policy_run pr = {.root = root, .c = c, .plan = res->plan, .sm = &sm, .page_bytes = host_page_size(),
				.on_event = on_event, .arg = arg, .stalls = &stalls};
	bool has_advisor = s0.k.advisor_mode[0] != '\0';
	for (int k = 0; k < c->repeat && r >= 0 && !stop_requested(); k++)
		for (int p = 0; p < BENCH_KSM_NPOLICIES && r >= 0 && !stop_requested(); p++)
			if (c->policy_on[p]) {
				pr.p = (enum bench_ksm_policy)p;
				r = run_policy(&pr, has_advisor, &res->runs[k][p]);
			}
	stall_reader_close(&stalls);
	if (r >= 0 && stop_requested())
		r = -EINTR;
	if (r < 0) {
		bench_ksm_result_free(res);
		return r;
	}
	*ret = res;
	return 0;
}

/* The first sample at or after the arrival (the series' length when none is). */
static size_t arrival_index(const struct bench_ksm_series *s, double arrival)
{
	size_t i = 0;
	while (i < s->n && s->t[i] < arrival - 0.01)
		i++;
	return i;
}

/* Time and ksmd CPU seconds from the arrival to the first sample after it at or above 95% of the
 * achievable savings. */
static void to_95pct(const struct bench_ksm_series *s, double arrival, double achievable, double *ret_t,
		     double *ret_cpu)
{
	*ret_t = *ret_cpu = NAN;
	size_t a = arrival_index(s, arrival);
	for (size_t i = a; i < s->n && achievable > 0; i++)
		if (s->saved[i] >= 0.95 * achievable) {
			*ret_t = s->t[i] - s->t[a];
			*ret_cpu = s->cpu_ns[i] >= 0 && s->cpu_ns[a] >= 0 ? (double)(s->cpu_ns[i] - s->cpu_ns[a]) / 1e9 : NAN;
			return;
		}
}

void bench_ksm_summarize(const struct bench_ksm_result *r, struct bench_ksm_summary *ret)
{
	const struct bench_ksm_config *c = &r->cfg;
	struct bench_ksm_summary s = {.fastest_static = -1};
	for (int k = 0; k < c->repeat; k++)
		for (int p = 0; p < BENCH_KSM_NPOLICIES; p++)
			for (size_t i = arrival_index(&r->runs[k][p].s, r->arrival); i < r->runs[k][p].s.n; i++)
				s.achievable_bytes = fmax(s.achievable_bytes, r->runs[k][p].s.saved[i]);
	uint64_t pages = c->guest_bytes / WORKLOAD_PAGE_BYTES, shared_pages = 0, zero_pages = 0;
	struct workload_spec spec = bench_ksm_guest_spec(c, 0);
	unsigned guests = bench_ksm_plan_final_guests(c);
	for (uint64_t i = 0; i < pages; i++) {
		enum page_class pc = workload_page_class(&spec, i);
		shared_pages += pc == PAGE_SHARED;
		zero_pages += pc == PAGE_ZERO;
	}
	s.mergeable_bytes = guests ? (int64_t)(shared_pages * (guests - 1) * WORKLOAD_PAGE_BYTES) : 0;
	s.zero_bytes = (int64_t)(zero_pages * guests * WORKLOAD_PAGE_BYTES);

	for (int p = 0; p < BENCH_KSM_NPOLICIES; p++) {
		double vt[BENCH_KSM_MAX_REPEAT], vc[BENCH_KSM_MAX_REPEAT], vs[BENCH_KSM_MAX_REPEAT], vf[BENCH_KSM_MAX_REPEAT],
			vw[BENCH_KSM_MAX_REPEAT];
		for (int k = 0; k < c->repeat; k++) {
			const struct bench_ksm_run *run = &r->runs[k][p];
			to_95pct(&run->s, r->arrival, s.achievable_bytes, &vt[k], &vc[k]);
			vs[k] = run->steady_cpu_percent;
			vf[k] = run->final_saved.known ? (double)run->final_saved.v : NAN;
			vw[k] = run->copy_stall_seconds;
		}
		s.seconds_to_95pct[p] = median_nan_high(vt, (size_t)c->repeat);
		s.ksmd_cpu_seconds_to_95pct[p] = median_nan_high(vc, (size_t)c->repeat);
		s.steady_cpu_percent[p] = median_nan_high(vs, (size_t)c->repeat);
		s.saved_bytes[p] = median_nan_high(vf, (size_t)c->repeat);
		s.copy_stall_seconds[p] = median_nan_high(vw, (size_t)c->repeat);
	}

	/* The verdict: vmhost against the fastest static policy, conservative, and the advisor. */
	const double *t95 = s.seconds_to_95pct, *steady = s.steady_cpu_percent;
	double fastest = NAN;
	for (int p = BENCH_KSM_DEFAULT; p <= BENCH_KSM_CONSERVATIVE; p++)
		if (c->policy_on[p] && isfinite(t95[p]) && (isnan(fastest) || t95[p] < fastest)) {
			fastest = t95[p];
			s.fastest_static = p;
		}
	s.vmhost_time_ratio = c->policy_on[BENCH_KSM_VMHOST] ? t95[BENCH_KSM_VMHOST] / fastest : NAN;
	s.vmhost_cpu_ok = c->policy_on[BENCH_KSM_VMHOST] && c->policy_on[BENCH_KSM_CONSERVATIVE] &&
			  steady[BENCH_KSM_VMHOST] <= steady[BENCH_KSM_CONSERVATIVE];
	s.vmhost_time_ratio_advisor = t95[BENCH_KSM_VMHOST] / t95[BENCH_KSM_ADVISOR];
	s.vmhost_cpu_ratio_advisor = steady[BENCH_KSM_VMHOST] / steady[BENCH_KSM_ADVISOR];
	*ret = s;
}
