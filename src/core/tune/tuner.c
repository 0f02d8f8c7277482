#include "core/tune/tuner.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/convert.h"
#include "parse/elements.h"

void tuner_config_default(struct tuner_config *c)
{
	*c = (struct tuner_config){
		.cpu_budget_percent = 20,
		.interval_seconds = 2,
		.fast_pages_to_scan = 1000,
		.fast_sleep_millisecs = 20,
		.min_pages_to_scan = 100,
		.max_pages_to_scan = 20000,
		.idle_pages_to_scan = 100,
		.idle_sleep_millisecs = 1000,
		.flat_scans = 2,
		.gain_pages = 256,
		.wake_pages = 4096,
		.pressure_available_percent = 10,
		.smart_scan = true,
	};
}

/* A refused value's message, "KEY must be ..., not 'VALUE'": -EINVAL. */
static int refused(const char *key, const char *value, const char *must, char *err, size_t cap)
{
	snprintf(err, cap, "%s must be %s, not '%s'", key, must, value);
	return -EINVAL;
}

/* The config file's keys: the field each sets, of which kind, within which bounds. */
enum key_kind { KEY_DOUBLE, KEY_I64, KEY_INT, KEY_BOOL };
static const struct config_key {
	const char *key;
	enum key_kind kind;
	size_t offset;
	double lo, hi;
} config_keys[] = {
	{"cpu_budget", KEY_DOUBLE, offsetof(struct tuner_config, cpu_budget_percent), 0.1, 100},
	{"interval", KEY_DOUBLE, offsetof(struct tuner_config, interval_seconds), 0.1, 3600},
	{"pressure_available_percent", KEY_DOUBLE, offsetof(struct tuner_config, pressure_available_percent), 0, 100},
	{"fast_pages_to_scan", KEY_I64, offsetof(struct tuner_config, fast_pages_to_scan), 1, 1000000},
	{"fast_sleep_millisecs", KEY_I64, offsetof(struct tuner_config, fast_sleep_millisecs), 1, 60000},
	{"min_pages_to_scan", KEY_I64, offsetof(struct tuner_config, min_pages_to_scan), 1, 1000000},
	{"max_pages_to_scan", KEY_I64, offsetof(struct tuner_config, max_pages_to_scan), 1, 1000000},
	{"idle_pages_to_scan", KEY_I64, offsetof(struct tuner_config, idle_pages_to_scan), 1, 1000000},
	{"idle_sleep_millisecs", KEY_I64, offsetof(struct tuner_config, idle_sleep_millisecs), 1, 600000},
	{"gain_pages", KEY_I64, offsetof(struct tuner_config, gain_pages), 1, 1000000000},
	{"wake_pages", KEY_I64, offsetof(struct tuner_config, wake_pages), 1, 1000000000},
	{"flat_scans", KEY_INT, offsetof(struct tuner_config, flat_scans), 1, 100},
	{"smart_scan", KEY_BOOL, offsetof(struct tuner_config, smart_scan), 0, 0},
};

int tuner_config_set(struct tuner_config *c, const char *key, const char *value, char *err, size_t cap)
{
	const struct config_key *k = NULL;
	for (size_t i = 0; !k && i < ELEMENTSOF(config_keys); i++)
		if (!strcmp(key, config_keys[i].key))
			k = &config_keys[i];
	if (!k) {
		snprintf(err, cap, "unknown option '%s'", key);
		return -EINVAL;
	}
	void *field = (char *)c + k->offset;
	char must[96];
	int64_t v;
	switch (k->kind) {
	case KEY_DOUBLE:
		snprintf(must, sizeof(must), "a number from %g to %g", k->lo, k->hi);
		return convert_number(value, k->lo, k->hi, field) < 0 ? refused(key, value, must, err, cap) : 0;
	case KEY_I64:
	case KEY_INT:
		snprintf(must, sizeof(must), "an integer from %lld to %lld", (long long)k->lo, (long long)k->hi);
		if (convert_whole(value, (int64_t)k->lo, (int64_t)k->hi, &v) < 0)
			return refused(key, value, must, err, cap);
		if (k->kind == KEY_INT)
			*(int *)field = (int)v;
		else
			*(int64_t *)field = v;
		return 0;
	case KEY_BOOL: return convert_bool(value, field) < 0 ? refused(key, value, "yes or no", err, cap) : 0;
	}
	return -EINVAL;
}

int tuner_config_check(const struct tuner_config *c, char *err, size_t cap)
{
	if (c->min_pages_to_scan > c->max_pages_to_scan) {
		snprintf(err, cap, "min_pages_to_scan (%lld) is above max_pages_to_scan (%lld)",
			 (long long)c->min_pages_to_scan, (long long)c->max_pages_to_scan);
		return -EINVAL;
	}
	if (c->fast_pages_to_scan < c->min_pages_to_scan || c->fast_pages_to_scan > c->max_pages_to_scan) {
		snprintf(err, cap, "fast_pages_to_scan (%lld) is outside min_pages_to_scan..max_pages_to_scan",
			 (long long)c->fast_pages_to_scan);
		return -EINVAL;
	}
	return 0;
}

const char *tuner_mode_name(enum tuner_mode m) { return m == TUNER_FAST ? "fast" : "idle"; }

void tuner_init(struct tuner_state *s)
{
	memset(s, 0, sizeof(*s));
	s->pressure_armed = true;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* m is known and is v. */
static bool equals(maybe_i64 m, int64_t v) { return m.known && m.v == v; }
/* m is known and above 0. */
static bool positive(maybe_i64 m) { return m.known && m.v > 0; }

/* The law's factors, by name. */
#define FIT_MAX_FACTOR 2.0         /* the budget fit moves pages_to_scan at most x2 or /2 a step */
#define FIT_DEADBAND 10            /* ... and only when it would move it by a tenth or more */
#define FIT_MIN_CPU_PERCENT 0.05   /* below this ksmd's CPU says nothing: double the rate */
#define CEILING_RAISE 1.5          /* a raise by half or more ... */
#define CEILING_SAME_CPU 1.15      /* ... that left ksmd's CPU within 15% of before ... */
#define CEILING_UNDER_BUDGET 0.75  /* ... under 75% of the budget, bought nothing */
#define CEILING_LIFT_CPU 1.25      /* the ceiling goes when ksmd's CPU rises by a quarter */
#define REMEMBER_UNDER_LOAD 0.75   /* a fitted rate is kept for the next wake at this share of the budget */
#define PRESSURE_FACTOR 2          /* under memory pressure: twice the CPU, twice the patience */
#define PRESSURE_REARM 1.25        /* pressure wakes again once MemAvailable is a quarter above the line */
#define THRESHOLD_MIN_PAGES 16.0   /* the interval threshold's floor */
#define MAX_FLAT_PER_STEP 100      /* full scans one interval may count as flat */

/* Rescales pages_to_scan so ksmd's CPU meets the budget: proportional, at most x2 or /2 a step,
 * and only when the error is above 10% (no churn on noise). Returns the new value. */
static int64_t fit_budget(const struct tuner_config *c, int64_t pages, double cpu, double budget, char *why,
			  size_t cap)
{
	if (!(cpu >= 0)) {
		snprintf(why, cap, "; ksmd CPU unknown, rate kept");
		return pages;
	}
	double want = cpu > FIT_MIN_CPU_PERCENT ? (double)pages * budget / cpu : (double)pages * FIT_MAX_FACTOR;
	if (want > (double)pages * FIT_MAX_FACTOR)
		want = (double)pages * FIT_MAX_FACTOR;
	if (want < (double)pages / FIT_MAX_FACTOR)
		want = (double)pages / FIT_MAX_FACTOR;
	int64_t next = clamp64((int64_t)want, c->min_pages_to_scan, c->max_pages_to_scan);
	if (llabs(next - pages) * FIT_DEADBAND < pages) {
		snprintf(why, cap, "; ksmd at %.1f%% CPU, within budget %.0f%%", cpu, budget);
		return pages;
	}
	snprintf(why, cap, "; ksmd at %.1f%% CPU for budget %.0f%%: pages_to_scan %lld -> %lld", cpu, budget,
		 (long long)pages, (long long)next);
	return next;
}

/* Pages ksmd must meet (or merge) in one interval to count as news: gain_pages, or half of what
 * ksmd scanned when that is less, so the signal can fire at the idle rate too (100 pages/s scans
 * 200 pages in 2 s: 256 new pages could never be met). */
static int64_t interval_threshold(const struct tuner_config *c, const struct tuner_input *in)
{
	const struct ksm_sysfs *k = &in->ksm;
	double scanned = 0;
	if (in->interval_pages_scanned.known && in->interval_pages_scanned.v >= 0)
		scanned = (double)in->interval_pages_scanned.v;
	else if (equals(k->run, 1) && positive(k->pages_to_scan) && positive(k->sleep_millisecs))
		scanned = (double)k->pages_to_scan.v * in->interval_seconds * 1000.0 / (double)k->sleep_millisecs.v;
	double half = scanned / 2 < THRESHOLD_MIN_PAGES ? THRESHOLD_MIN_PAGES : scanned / 2;
	return half < (double)c->gain_pages ? (int64_t)half : c->gain_pages;
}

/* The last raise bought no CPU: ran is at least CEILING_RAISE times the last fitted rate, ksmd's
 * CPU barely moved and stays well under the budget. */
static bool raise_bought_nothing(const struct tuner_state *s, int64_t ran, double cpu, double budget)
{
	return s->last_fit_pages > 0 && (double)ran >= CEILING_RAISE * (double)s->last_fit_pages &&
	       cpu < CEILING_SAME_CPU * s->last_fit_cpu && cpu < CEILING_UNDER_BUDGET * budget;
}

/* The budget fit, held back where raising the rate stopped buying CPU time: ksmd starved by
 * busy cores (it runs at nice 5) or out of work. A rate raised by half or more that left ksmd's
 * CPU within 15% of before, under 75% of the budget, is taken back and becomes a ceiling, until
 * ksmd's CPU at or under it rises by a quarter (the cores freed up, or more memory to scan). Else
 * the rate would climb to max_pages_to_scan and, once the CPUs free up, overshoot the budget
 * several times over for the intervals the fit needs to come back down. */
static int64_t ceiling_fit(const struct tuner_config *c, struct tuner_state *s, int64_t ran, double cpu,
			   double budget, char *why, size_t cap)
{
	if (!(cpu >= 0))
		return fit_budget(c, ran, cpu, budget, why, cap);
	if (s->ceiling_pages && cpu >= CEILING_LIFT_CPU * s->ceiling_cpu)
		s->ceiling_pages = 0;
	int64_t next;
	if (raise_bought_nothing(s, ran, cpu, budget)) {
		s->ceiling_pages = s->last_fit_pages;
		s->ceiling_cpu = s->last_fit_cpu;
		next = s->last_fit_pages;
		snprintf(why, cap, "; ksmd at %.1f%% CPU at %lld pages as at %lld (busy cores or little to scan): "
			 "back to it", cpu, (long long)ran, (long long)next);
	} else {
		next = fit_budget(c, ran, cpu, budget, why, cap);
		if (s->ceiling_pages && next > s->ceiling_pages && ran <= s->ceiling_pages) {
			next = ran;
			snprintf(why, cap, "; ksmd at %.1f%% CPU for budget %.0f%%: held at %lld, more did not raise it",
				 cpu, budget, (long long)ran);
		}
	}
	s->last_fit_pages = ran;
	s->last_fit_cpu = cpu;
	return next;
}

maybe_i64 tuner_news_pages(const struct tuner_input *in)
{
	return maybe_add(maybe_add(in->unscanned_arrived_pages, in->unscanned_new_pages), in->unscanned_grown_pages);
}

/* The news as the law weighs it: none when unknown. */
static int64_t news_total(const struct tuner_input *in)
{
	maybe_i64 news = tuner_news_pages(in);
	return positive(news) ? news.v : 0;
}

static void news_reason(const struct tuner_input *in, char *buf, size_t cap)
{
	int64_t total = news_total(in);
	char rest[64] = "";
	if (total > in->news_pages)
		snprintf(rest, sizeof(rest), "; %lld such pages in all", (long long)total);
	switch (in->news_kind) {
	case TUNER_NEWS_ARRIVED:
		snprintf(buf, cap, "fast: process %d (%s) appeared with %lld resident mergeable pages ksmd has not "
			 "scanned (started preallocated or migrated in)%s", (int)in->news_pid, in->news_name,
			 (long long)in->news_pages, rest);
		break;
	case TUNER_NEWS_NEW:
		snprintf(buf, cap, "fast: new mergeable process %d (%s) holds %lld pages ksmd has not scanned "
			 "(a guest started)%s", (int)in->news_pid, in->news_name, (long long)in->news_pages, rest);
		break;
	default:
		snprintf(buf, cap, "fast: mergeable process %d (%s) grew by %lld pages ksmd has not scanned%s",
			 (int)in->news_pid, in->news_name, (long long)in->news_pages, rest);
		break;
	}
}

static void go_fast(const struct tuner_config *c, struct tuner_state *s)
{
	s->mode = TUNER_FAST;
	s->ceiling_pages = 0;
	s->last_fit_pages = 0;
	s->settled = false;
	s->flat = 0;
	s->pages_to_scan = s->fast_pages_to_scan;
	s->sleep_millisecs = c->fast_sleep_millisecs;
}

static void go_idle(const struct tuner_config *c, struct tuner_state *s)
{
	s->mode = TUNER_IDLE;
	s->pages_to_scan = c->idle_pages_to_scan;
	s->sleep_millisecs = c->idle_sleep_millisecs;
}

/* What one sample says before any decision. */
struct view {
	maybe_i64 saved;     /* pages KSM saves: sharing + zero pages (ksm_saved_pages) */
	maybe_i64 rmap;      /* pages ksmd holds an rmap item for (ksm_rmap_items) */
	int64_t news;        /* unscanned pages new since the last fast interval (0 unknown) */
	bool pressure;       /* MemAvailable under the line */
	bool no_mergeable;   /* no process has mergeable memory and ksmd holds none */
	double budget;       /* ksmd's CPU budget now */
	int flat_needed;     /* flat full scans before idling now */
};

/* How far ksmd got in the interval. */
struct progress {
	int64_t met;       /* new pages ksmd met (rmap items added) */
	int64_t merged;    /* pages merged */
	int64_t gained;    /* change in savings, signed */
	int64_t scan_gain; /* savings added by the last full scan that ended (0: none ended) */
	int64_t threshold; /* pages that make met or merged news (interval_threshold) */
};

/* MemTotal and MemAvailable were read. */
static bool memory_known(const struct tuner_input *in)
{
	return positive(in->mem_total_bytes) && in->mem_available_bytes.known && in->mem_available_bytes.v >= 0;
}

static bool under_memory_line(const struct tuner_input *in, double percent)
{
	return memory_known(in) &&
	       (double)in->mem_available_bytes.v * 100.0 < percent * (double)in->mem_total_bytes.v;
}

static void view_of(const struct tuner_config *c, const struct tuner_input *in, struct view *v)
{
	v->saved = ksm_saved_pages(&in->ksm);
	v->rmap = ksm_rmap_items(&in->ksm);
	v->news = news_total(in);
	v->pressure = under_memory_line(in, c->pressure_available_percent);
	v->no_mergeable = equals(in->mergeable_processes, 0) && equals(v->rmap, 0) && equals(in->ksm.pages_shared, 0);
	v->budget = c->cpu_budget_percent * (v->pressure ? PRESSURE_FACTOR : 1);
	v->flat_needed = c->flat_scans * (v->pressure ? PRESSURE_FACTOR : 1);
}

/* The first sample: fast, unless there is nothing mergeable at all. */
static void decide_first(const struct tuner_config *c, struct tuner_state *s, const struct tuner_input *in,
			 const struct view *v, char *reason, size_t cap)
{
	s->started = true;
	s->fast_pages_to_scan = c->fast_pages_to_scan;
	s->last_full_scans = in->ksm.full_scans;
	s->last_rmap_items = v->rmap;
	s->last_saved_pages = v->saved;
	s->saved_pages_at_scan_end = v->saved;
	if (v->pressure)
		s->pressure_armed = false;
	if (v->no_mergeable) {
		go_idle(c, s);
		snprintf(reason, cap, "idle: no mergeable memory on this host (no process has memory marked with "
			 "MADV_MERGEABLE or PR_SET_MEMORY_MERGE); scanning fast once some appears");
		return;
	}
	go_fast(c, s);
	snprintf(reason, cap, "start: scan fast until %d full scans in a row find under %lld pages to merge",
		 v->flat_needed, (long long)c->gain_pages);
}

/* How far a counter moved from the last known reading to now: 0 when either is unknown. */
static int64_t moved(maybe_i64 last, maybe_i64 now) { return last.known && now.known ? now.v - last.v : 0; }

/* A known reading replaces the last one; an unknown one leaves it, so the next known reading
 * counts the progress of both intervals. */
static void keep_known(maybe_i64 *last, maybe_i64 now)
{
	if (now.known)
		*last = now;
}

/* Counts the interval's progress and the flat full scans, and remembers the counters. A full
 * scan that ended while the savings were unknown counts neither flat nor gaining. */
static void track_progress(const struct tuner_config *c, struct tuner_state *s, const struct tuner_input *in,
			   const struct view *v, struct progress *p)
{
	int64_t new_pages = moved(s->last_rmap_items, v->rmap), scans = moved(s->last_full_scans, in->ksm.full_scans);
	p->gained = moved(s->last_saved_pages, v->saved);
	p->scan_gain = 0;
	p->threshold = interval_threshold(c, in);
	if (scans > 0 && v->saved.known && s->saved_pages_at_scan_end.known) {
		p->scan_gain = v->saved.v - s->saved_pages_at_scan_end.v;
		if (p->scan_gain >= c->gain_pages)
			s->flat = 0;
		else
			s->flat += (int)(scans > MAX_FLAT_PER_STEP ? MAX_FLAT_PER_STEP : scans);
	}
	if (scans > 0)
		keep_known(&s->saved_pages_at_scan_end, v->saved);
	keep_known(&s->last_full_scans, in->ksm.full_scans);
	keep_known(&s->last_rmap_items, v->rmap);
	keep_known(&s->last_saved_pages, v->saved);
	p->met = new_pages > 0 ? new_pages : 0;
	p->merged = p->gained > 0 ? p->gained : 0;
}

/* Idle: what wakes the tuner, the /proc signal first (it does not wait for ksmd's slow cursor to
 * reach the new memory), then memory pressure, then what ksmd itself met or merged. What it met
 * counts only where /proc cannot read every mergeable process: its rmap items also rise when it
 * meets pages of scanned memory again (zero pages made resident again, pages migrated under its
 * cursor), and where /proc reads them all, new memory shows there. */
static void decide_idle(const struct tuner_config *c, struct tuner_state *s, const struct tuner_input *in,
			const struct view *v, const struct progress *p, char *reason, size_t cap)
{
	bool met = p->met >= p->threshold && !in->mergeable_processes.known;
	if (v->news >= c->wake_pages) {
		go_fast(c, s);
		news_reason(in, reason, cap);
	} else if (v->pressure && s->pressure_armed) {
		s->pressure_armed = false;
		go_fast(c, s);
		snprintf(reason, cap, "fast: memory pressure (MemAvailable %.1f%% of MemTotal, under %g%%): scan again "
			 "with twice the CPU budget and twice the patience",
			 100.0 * (double)in->mem_available_bytes.v / (double)in->mem_total_bytes.v,
			 c->pressure_available_percent);
	} else if (met) {
		go_fast(c, s);
		snprintf(reason, cap, "fast: ksmd met %lld new pages in %.1fs (threshold %lld): new memory to scan",
			 (long long)p->met, in->interval_seconds, (long long)p->threshold);
	} else if (p->merged >= p->threshold) {
		go_fast(c, s);
		snprintf(reason, cap, "fast: %lld pages merged in %.1fs at the idle rate (threshold %lld): merging "
			 "under way", (long long)p->merged, in->interval_seconds, (long long)p->threshold);
	} else if (p->met >= p->threshold) {
		snprintf(reason, cap, "idle: ksmd met %lld pages in %.1fs, none new to /proc (%lld unscanned pages new "
			 "since idling): pages of scanned memory met again", (long long)p->met, in->interval_seconds,
			 (long long)v->news);
	} else if (positive(in->exited_processes)) {
		/* Savings fall when guests exit; there is nothing new to scan in that. */
		snprintf(reason, cap, "idle: %lld mergeable process%s exited (savings %+lld pages): nothing new to scan",
			 (long long)in->exited_processes.v, in->exited_processes.v == 1 ? "" : "es", (long long)p->gained);
	} else {
		snprintf(reason, cap, "idle: nothing new to merge (%lld new pages, +%lld merged, %lld unscanned pages "
			 "new since idling)%s", (long long)p->met, (long long)p->merged, (long long)v->news,
			 v->pressure ? ", memory pressure" : "");
	}
}

/* Fast: the budget fit, once the kernel ran the tuner's own fast setting for a whole interval. */
static void fit_fast_rate(const struct tuner_config *c, struct tuner_state *s, const struct tuner_input *in,
			  double budget, char *why, size_t cap)
{
	bool ran_ours = equals(in->ksm.run, 1) && equals(in->ksm.pages_to_scan, s->pages_to_scan) &&
			equals(in->ksm.sleep_millisecs, s->sleep_millisecs);
	if (s->settled && ran_ours) {
		s->pages_to_scan = ceiling_fit(c, s, s->pages_to_scan, in->ksmd_cpu_percent, budget, why, cap);
		/* Remembered for the next wake only when measured under load: a rate raised because
		 * ksmd ran out of work here (little memory, most of it skipped) could take a whole
		 * CPU on the next, bigger guest. Lower rates are always safe to remember. */
		if (in->ksmd_cpu_percent >= REMEMBER_UNDER_LOAD * budget || s->pages_to_scan < s->fast_pages_to_scan)
			s->fast_pages_to_scan = s->pages_to_scan;
	} else if (s->settled) {
		snprintf(why, cap, "; the kernel ran other settings, CPU budget not fitted");
	}
	s->settled = true;
}

/* Fast: stay while new memory is met, merging goes on or a process came or grew (ksmd may not
 * have reached it yet: worth more full scans); idle after enough flat full scans. */
static void decide_fast(const struct tuner_config *c, struct tuner_state *s, const struct tuner_input *in,
			const struct view *v, const struct progress *p, char *reason, size_t cap)
{
	if (v->pressure)
		s->pressure_armed = false;
	if (p->met >= p->threshold || p->merged >= p->threshold || v->news >= c->wake_pages) {
		s->flat = 0;
	} else if (s->flat >= v->flat_needed) {
		go_idle(c, s);
		char volatile_pages[24] = "unknown";
		if (in->ksm.pages_volatile.known)
			snprintf(volatile_pages, sizeof(volatile_pages), "%lld", (long long)in->ksm.pages_volatile.v);
		snprintf(reason, cap, "idle: %d full scans in a row merged under %lld pages (last +%lld), %s volatile "
			 "pages", s->flat, (long long)c->gain_pages, (long long)p->scan_gain, volatile_pages);
		return;
	}
	char why[160] = "", news_why[48] = "";
	fit_fast_rate(c, s, in, v->budget, why, sizeof(why));
	if (v->news > 0)
		snprintf(news_why, sizeof(news_why), ", %lld unscanned pages new", (long long)v->news);
	snprintf(reason, cap, "fast: %lld new pages, +%lld merged in %.1fs, %d flat scan%s%s%s%s", (long long)p->met,
		 (long long)p->merged, in->interval_seconds, s->flat, s->flat == 1 ? "" : "s", news_why,
		 v->pressure ? ", memory pressure" : "", why);
}

void tuner_step(const struct tuner_config *c, struct tuner_state *s, const struct tuner_input *in,
		struct tuner_decision *ret)
{
	int64_t prev_pages = s->pages_to_scan, prev_sleep = s->sleep_millisecs;
	enum tuner_mode prev_mode = s->mode;
	struct view v;
	view_of(c, in, &v);
	/* Re-armed once MemAvailable is back a quarter above the line: no flapping at the edge. */
	if (memory_known(in) && !under_memory_line(in, PRESSURE_REARM * c->pressure_available_percent))
		s->pressure_armed = true;
	memset(ret, 0, sizeof(*ret));
	char *reason = ret->reason;
	size_t cap = sizeof(ret->reason);
	if (!s->started) {
		decide_first(c, s, in, &v, reason, cap);
	} else {
		struct progress p;
		track_progress(c, s, in, &v, &p);
		if (v.no_mergeable) {
			if (s->mode != TUNER_IDLE)
				go_idle(c, s);
			snprintf(reason, cap, "idle: no mergeable memory on this host (no process has memory marked "
				 "with MADV_MERGEABLE or PR_SET_MEMORY_MERGE)");
		} else if (s->mode == TUNER_IDLE) {
			decide_idle(c, s, in, &v, &p, reason, cap);
		} else {
			decide_fast(c, s, in, &v, &p, reason, cap);
		}
	}
	ret->run = 1;
	ret->pages_to_scan = s->pages_to_scan;
	ret->sleep_millisecs = s->sleep_millisecs;
	ret->mode = s->mode;
	ret->pressure = v.pressure;
	ret->changed = s->pages_to_scan != prev_pages || s->sleep_millisecs != prev_sleep || s->mode != prev_mode;
}

/* ---- what is new in mergeable memory, from readings of /proc ---- */

void tuner_news_init(struct tuner_news *t) { memset(t, 0, sizeof(*t)); }

void tuner_news_free(struct tuner_news *t)
{
	free(t->e);
	tuner_news_init(t);
}

static const struct tuner_news_entry *news_find(const struct tuner_news *t, const struct tuner_proc *p)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].p.pid == p->pid && !strcmp(t->e[i].p.name, p->name))
			return &t->e[i];
	return NULL;
}

/* Pages of the process ksmd has not met: signed, since ksmd's rmap items may outnumber resident
 * pages a little (pages it met that were freed since); only its growth counts. */
static int64_t unscanned(const struct tuner_proc *p) { return p->mergeable_pages - p->rmap_items; }

int tuner_news_update(struct tuner_news *t, const struct tuner_proc *procs, size_t n, bool denied,
		      struct tuner_input *in)
{
	struct tuner_news_entry *e = calloc(n ? n : 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	int64_t arrived = 0, fresh_new = 0, grown = 0, top = 0, exited = 0;
	enum tuner_news_kind kind = TUNER_NEWS_NONE;
	const struct tuner_news_entry *top_e = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct tuner_news_entry *old = news_find(t, &procs[i]);
		e[i].p = procs[i];
		e[i].fresh = t->have_reading && !old;
		e[i].in_base = old && old->in_base;
		e[i].base_unscanned = e[i].in_base ? old->base_unscanned : 0;
		int64_t u = unscanned(&procs[i]), add;
		enum tuner_news_kind k;
		if (e[i].in_base) {
			add = u - e[i].base_unscanned;
			k = TUNER_NEWS_GROWN;
			if (add > 0)
				grown += add;
		} else {
			add = u;
			k = e[i].fresh ? TUNER_NEWS_ARRIVED : TUNER_NEWS_NEW;
			if (add > 0)
				*(e[i].fresh ? &arrived : &fresh_new) += add;
		}
		if (add > top) {
			top = add;
			kind = k;
			top_e = &e[i];
		}
	}
	for (size_t i = 0; i < t->n; i++) {
		bool still = false;
		for (size_t j = 0; j < n && !still; j++)
			still = t->e[i].p.pid == procs[j].pid && !strcmp(t->e[i].p.name, procs[j].name);
		exited += !still;
	}
	in->mergeable_processes = denied ? UNKNOWN : MAYBE((int64_t)n);
	in->exited_processes = MAYBE(exited);
	in->unscanned_arrived_pages = MAYBE(arrived);
	in->unscanned_new_pages = MAYBE(fresh_new);
	in->unscanned_grown_pages = MAYBE(grown);
	in->news_kind = kind;
	in->news_pid = top_e ? top_e->p.pid : 0;
	in->news_pages = top;
	snprintf(in->news_name, sizeof(in->news_name), "%s", top_e ? top_e->p.name : "");
	free(t->e);
	t->e = e;
	t->n = n;
	t->have_reading = true;
	return 0;
}

void tuner_news_rebase(struct tuner_news *t)
{
	for (size_t i = 0; i < t->n; i++) {
		t->e[i].in_base = true;
		t->e[i].base_unscanned = unscanned(&t->e[i].p);
	}
}
