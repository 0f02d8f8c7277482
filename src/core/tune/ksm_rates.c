#include "core/tune/ksm_rates.h"
#include "parse/parse.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "core/base/rate.h"
#include "core/base/stop.h"
#include "core/tune/ksm_guard.h"

void ksm_sampler_init(struct ksm_sampler *s, const struct io_root *root)
{
	s->root = *root;
	s->ksmd_pid = 0;
	pid_t pid;
	if (ksmd_find(root, &pid) == 0)
		s->ksmd_pid = pid;
}

int ksm_sample_take(struct ksm_sampler *s, struct ksm_sample *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->ksmd_cpu_ns = UNKNOWN;
	ret->mem_total = ret->mem_available = ret->mem_anon = UNKNOWN;
	char buf[4096];
	ssize_t n = io_read(&s->root, IO_PROC, buf, sizeof(buf), "meminfo");
	if (n > 0) {
		struct meminfo m;
		parse_meminfo(buf, (size_t)n, &m);
		ret->mem_total = m.mem_total;
		ret->mem_available = m.mem_available;
		ret->mem_anon = m.anon_pages;
	}
	int r = ksm_read(&s->root, &ret->k);
	int64_t ns;
	if (s->ksmd_pid > 0 && ksmd_cpu_ns(&s->root, s->ksmd_pid, &ns) == 0)
		ret->ksmd_cpu_ns = MAYBE(ns);
	ret->t = clock_monotonic_seconds();
	return r;
}

void ksm_scan_clock_init(struct ksm_scan_clock *c)
{
	memset(c, 0, sizeof(*c));
	c->last_end_t = -1;
	c->last_scan_seconds = -1;
}

bool ksm_scan_clock_feed(struct ksm_scan_clock *c, const struct ksm_sample *s)
{
	if (!s->k.full_scans.known)
		return false;
	bool ended = false;
	if (c->have_prev && s->k.full_scans.v > c->prev_full_scans) {
		/* The end happened somewhere in (prev_t, t]: take the middle. */
		double end = (c->prev_t + s->t) / 2;
		int64_t scans = s->k.full_scans.v - c->prev_full_scans;
		if (c->last_end_t >= 0)
			c->last_scan_seconds = (end - c->last_end_t) / (double)scans;
		c->last_end_t = end;
		ended = true;
	}
	c->have_prev = true;
	c->prev_full_scans = s->k.full_scans.v;
	c->prev_t = s->t;
	return ended;
}

maybe_i64 ksm_general_profit(const struct ksm_sysfs *k, int64_t page_size, bool *ret_computed)
{
	*ret_computed = false;
	if (k->general_profit.known)
		return k->general_profit;
	maybe_i64 saved = ksm_saved_bytes(k, page_size), rmap = ksm_rmap_items(k);
	if (!saved.known || !rmap.known)
		return UNKNOWN;
	*ret_computed = true;
	return MAYBE(saved.v - rmap.v * 64); /* an rmap_item is 64 bytes on 64-bit kernels */
}

static double ksm_sharing_ratio(const struct ksm_sysfs *k)
{
	if (!k->pages_shared.known || !k->pages_sharing.known || k->pages_shared.v <= 0)
		return NAN;
	return (double)k->pages_sharing.v / (double)k->pages_shared.v;
}

void ksm_rates_compute(const struct ksm_sample *a, const struct ksm_sample *b, int64_t page_size,
		       const struct ksm_scan_clock *clock, struct ksm_rates *ret)
{
	const struct ksm_sysfs *k = &b->k;
	double dt = b->t - a->t;
	ret->interval_seconds = dt;
	ret->saved_bytes = ksm_saved_bytes(k, page_size);
	ret->sharing_ratio = ksm_sharing_ratio(k);
	ret->general_profit = ksm_general_profit(k, page_size, &ret->general_profit_computed);
	ret->rmap_items = ksm_rmap_items(k);
	ret->ksmd_cpu_percent = counter_percent_ns(a->ksmd_cpu_ns, b->ksmd_cpu_ns, dt);
	ret->pages_scanned_per_second = counter_rate(a->k.pages_scanned, k->pages_scanned, dt);

	ret->full_scan_seconds = NAN;
	ret->full_scan_measured = false;
	if (!ksm_is_running(k))
		return; /* KSM is off: no scan time */
	if (clock && clock->last_scan_seconds > 0) {
		ret->full_scan_seconds = clock->last_scan_seconds;
		ret->full_scan_measured = true;
		return;
	}
	/* Estimate: the pages one scan visits (rmap items, zero pages included) at the measured
	 * rate, else at the nominal rate of the settings. */
	if (!ret->rmap_items.known)
		return;
	double pages = (double)ret->rmap_items.v + (k->ksm_zero_pages.known ? (double)k->ksm_zero_pages.v : 0);
	double rate = ret->pages_scanned_per_second;
	if (!(rate > 0) && k->pages_to_scan.known && k->sleep_millisecs.known)
		rate = (double)k->pages_to_scan.v * 1000.0 / (double)(k->sleep_millisecs.v > 0 ? k->sleep_millisecs.v : 1);
	if (rate > 0 && pages > 0)
		ret->full_scan_seconds = pages / rate;
}

int ksm_unmerge_wait(struct ksm_sampler *sm, double timeout_seconds, double poll_seconds,
		     volatile sig_atomic_t *stop)
{
	int r = ksm_guard_set_int("run", 2);
	if (r < 0)
		return r;
	double until = clock_monotonic_seconds() + timeout_seconds;
	struct ksm_sample s;
	while (!*stop && clock_monotonic_seconds() < until) {
		if (ksm_sample_take(sm, &s) < 0)
			return -ENOENT;
		if (s.k.pages_shared.v == 0 && s.k.pages_sharing.v == 0)
			return 0;
		sleep_for(poll_seconds);
	}
	return *stop ? -EINTR : -ETIMEDOUT;
}
