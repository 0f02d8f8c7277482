#include "core/tuner.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		.pressure_available_percent = 10,
		.smart_scan = true,
	};
}

static int set_i64(const char *value, int64_t lo, int64_t hi, int64_t *ret, const char *key, char *err, size_t cap)
{
	char *end;
	errno = 0;
	long long v = strtoll(value, &end, 10);
	if (errno || end == value || *end || v < lo || v > hi) {
		snprintf(err, cap, "%s must be an integer from %lld to %lld, not '%s'", key, (long long)lo,
			 (long long)hi, value);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

static int set_double(const char *value, double lo, double hi, double *ret, const char *key, char *err, size_t cap)
{
	char *end;
	errno = 0;
	double v = strtod(value, &end);
	if (errno || end == value || *end || !isfinite(v) || v < lo || v > hi) {
		snprintf(err, cap, "%s must be a number from %g to %g, not '%s'", key, lo, hi, value);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

int tuner_config_set(struct tuner_config *c, const char *key, const char *value, char *err, size_t cap)
{
	int64_t i;
	int r;
	if (!strcmp(key, "cpu_budget"))
		return set_double(value, 0.1, 100, &c->cpu_budget_percent, key, err, cap);
	if (!strcmp(key, "interval"))
		return set_double(value, 0.1, 3600, &c->interval_seconds, key, err, cap);
	if (!strcmp(key, "pressure_available_percent"))
		return set_double(value, 0, 100, &c->pressure_available_percent, key, err, cap);
	struct { const char *key; int64_t *field; int64_t lo, hi; } ints[] = {
		{"fast_pages_to_scan", &c->fast_pages_to_scan, 1, 1000000},
		{"fast_sleep_millisecs", &c->fast_sleep_millisecs, 1, 60000},
		{"min_pages_to_scan", &c->min_pages_to_scan, 1, 1000000},
		{"max_pages_to_scan", &c->max_pages_to_scan, 1, 1000000},
		{"idle_pages_to_scan", &c->idle_pages_to_scan, 1, 1000000},
		{"idle_sleep_millisecs", &c->idle_sleep_millisecs, 1, 600000},
		{"gain_pages", &c->gain_pages, 1, 1000000000},
	};
	for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++)
		if (!strcmp(key, ints[k].key))
			return set_i64(value, ints[k].lo, ints[k].hi, ints[k].field, key, err, cap);
	if (!strcmp(key, "flat_scans")) {
		if ((r = set_i64(value, 1, 100, &i, key, err, cap)) < 0)
			return r;
		c->flat_scans = (int)i;
		return 0;
	}
	if (!strcmp(key, "smart_scan")) {
		if (!strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "on") || !strcmp(value, "1"))
			c->smart_scan = true;
		else if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "off") || !strcmp(value, "0"))
			c->smart_scan = false;
		else {
			snprintf(err, cap, "smart_scan must be yes or no, not '%s'", value);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(err, cap, "unknown option '%s'", key);
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

void tuner_init(struct tuner_state *s) { memset(s, 0, sizeof(*s)); }

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Rescales pages_to_scan so ksmd's CPU meets the budget: proportional, at most x2 or /2 a step,
 * and only when the error is above 10% (no churn on noise). Returns the new value. */
static int64_t fit_budget(const struct tuner_config *c, int64_t pages, double cpu, double budget, char *why,
			  size_t cap)
{
	if (!(cpu >= 0)) {
		snprintf(why, cap, "; ksmd CPU unknown, rate kept");
		return pages;
	}
	double want = cpu > 0.05 ? (double)pages * budget / cpu : (double)pages * 2;
	if (want > (double)pages * 2)
		want = (double)pages * 2;
	if (want < (double)pages / 2)
		want = (double)pages / 2;
	int64_t next = clamp64((int64_t)want, c->min_pages_to_scan, c->max_pages_to_scan);
	if (llabs(next - pages) * 10 < pages) {
		snprintf(why, cap, "; ksmd at %.1f%% CPU, within budget %.0f%%", cpu, budget);
		return pages;
	}
	snprintf(why, cap, "; ksmd at %.1f%% CPU for budget %.0f%%: pages_to_scan %lld -> %lld", cpu, budget,
		 (long long)pages, (long long)next);
	return next;
}

void tuner_step(const struct tuner_config *c, struct tuner_state *s, const struct tuner_input *in,
		struct tuner_decision *ret)
{
	int64_t zero = in->ksm_zero_pages > 0 ? in->ksm_zero_pages : 0;
	int64_t saved = in->pages_sharing + zero;
	int64_t rmap = in->pages_shared + in->pages_sharing + in->pages_unshared + in->pages_volatile;
	int64_t prev_pages = s->pages_to_scan, prev_sleep = s->sleep_millisecs;
	enum tuner_mode prev_mode = s->mode;
	bool pressure = in->mem_total_bytes > 0 && in->mem_available_bytes >= 0 &&
			(double)in->mem_available_bytes * 100.0 < c->pressure_available_percent * (double)in->mem_total_bytes;
	/* Under memory pressure a merged page is worth more: twice the CPU, twice the patience. */
	double budget = c->cpu_budget_percent * (pressure ? 2 : 1);
	int flat_needed = c->flat_scans * (pressure ? 2 : 1);
	char why[128] = "";
	memset(ret, 0, sizeof(*ret));

	if (!s->started) {
		s->started = true;
		s->mode = TUNER_FAST;
		s->fast_pages_to_scan = c->fast_pages_to_scan;
		s->pages_to_scan = c->fast_pages_to_scan;
		s->sleep_millisecs = c->fast_sleep_millisecs;
		s->settled = false;
		s->flat = 0;
		s->last_full_scans = in->full_scans;
		s->last_rmap_items = rmap;
		s->last_saved_pages = saved;
		s->saved_pages_at_scan_end = saved;
		snprintf(ret->reason, sizeof(ret->reason),
			 "start: scan fast until %d full scans in a row find under %lld pages to merge",
			 flat_needed, (long long)c->gain_pages);
		goto out;
	}

	int64_t new_pages = rmap - s->last_rmap_items, gained = saved - s->last_saved_pages;
	int64_t scans = in->full_scans - s->last_full_scans;
	int64_t scan_gain = 0;
	if (scans > 0) {
		scan_gain = saved - s->saved_pages_at_scan_end;
		s->saved_pages_at_scan_end = saved;
		if (scan_gain >= c->gain_pages)
			s->flat = 0;
		else
			s->flat += (int)(scans > 100 ? 100 : scans);
	}
	s->last_full_scans = in->full_scans;
	s->last_rmap_items = rmap;
	s->last_saved_pages = saved;

	if (new_pages >= c->gain_pages || gained >= c->gain_pages) {
		/* New memory met for the first time, or merging under way: worth scanning fast. */
		s->flat = 0;
		if (s->mode != TUNER_FAST) {
			s->mode = TUNER_FAST;
			s->settled = false;
			s->pages_to_scan = s->fast_pages_to_scan;
			s->sleep_millisecs = c->fast_sleep_millisecs;
			snprintf(ret->reason, sizeof(ret->reason), "fast: %lld new pages to scan, %lld pages merged in %.1fs",
				 (long long)(new_pages > 0 ? new_pages : 0), (long long)(gained > 0 ? gained : 0),
				 in->interval_seconds);
			goto out;
		}
	} else if (s->mode == TUNER_FAST && s->flat >= flat_needed) {
		s->mode = TUNER_IDLE;
		s->pages_to_scan = c->idle_pages_to_scan;
		s->sleep_millisecs = c->idle_sleep_millisecs;
		snprintf(ret->reason, sizeof(ret->reason),
			 "idle: %d full scans in a row merged under %lld pages (last +%lld), %lld volatile pages",
			 s->flat, (long long)c->gain_pages, (long long)scan_gain, (long long)in->pages_volatile);
		goto out;
	}

	if (s->mode == TUNER_FAST) {
		bool ran_ours = in->run == 1 && in->pages_to_scan == s->pages_to_scan &&
				in->sleep_millisecs == s->sleep_millisecs;
		if (s->settled && ran_ours) {
			s->pages_to_scan = fit_budget(c, s->pages_to_scan, in->ksmd_cpu_percent, budget, why, sizeof(why));
			s->fast_pages_to_scan = s->pages_to_scan;
		} else if (s->settled)
			snprintf(why, sizeof(why), "; the kernel ran other settings, CPU budget not fitted");
		s->settled = true;
		snprintf(ret->reason, sizeof(ret->reason), "fast: %lld new pages, +%lld merged in %.1fs, %d flat scan%s%s%s",
			 (long long)(new_pages > 0 ? new_pages : 0), (long long)(gained > 0 ? gained : 0),
			 in->interval_seconds, s->flat, s->flat == 1 ? "" : "s", pressure ? ", memory pressure" : "", why);
	} else {
		snprintf(ret->reason, sizeof(ret->reason), "idle: nothing new to merge (%lld new pages, +%lld merged)%s",
			 (long long)(new_pages > 0 ? new_pages : 0), (long long)(gained > 0 ? gained : 0),
			 pressure ? ", memory pressure" : "");
	}
out:
	ret->run = 1;
	ret->pages_to_scan = s->pages_to_scan;
	ret->sleep_millisecs = s->sleep_millisecs;
	ret->mode = s->mode;
	ret->pressure = pressure;
	ret->changed = s->pages_to_scan != prev_pages || s->sleep_millisecs != prev_sleep || s->mode != prev_mode;
}
