#include "core/model/ksm.h"
#include "parse/parse.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/rate.h"
#include "core/base/stop.h"
#include "core/model/proc.h"
#include "parse/elements.h"

#define K(name) {#name, offsetof(struct ksm_sysfs, name)}
const struct ksm_file ksm_files[] = {
	K(run), K(pages_to_scan), K(sleep_millisecs), K(pages_shared), K(pages_sharing),
	K(pages_unshared), K(pages_volatile), K(full_scans), K(pages_scanned), K(pages_skipped),
	K(max_page_sharing), K(merge_across_nodes), K(use_zero_pages), K(ksm_zero_pages),
	K(general_profit), K(smart_scan), K(stable_node_chains), K(stable_node_dups),
	K(stable_node_chains_prune_millisecs), K(advisor_max_cpu), K(advisor_min_pages_to_scan),
	K(advisor_max_pages_to_scan), K(advisor_target_scan_time),
};
#undef K
const size_t ksm_nfiles = ELEMENTSOF(ksm_files);

const char *ksm_run_word(maybe_i64 run)
{
	if (!run.known)
		return "n/a";
	return run.v == 1 ? "running" : run.v == 2 ? "unmerging" : "stopped";
}

bool ksm_is_running(const struct ksm_sysfs *k) { return k->present && k->run.known && k->run.v == 1; }

bool ksm_is_off(const struct ksm_sysfs *k) { return k->present && k->run.known && k->run.v != 1; }

int ksm_read(const struct io_root *root, struct ksm_sysfs *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < ksm_nfiles; i++)
		*(maybe_i64 *)((char *)ret + ksm_files[i].offset) = UNKNOWN;
	if (!io_exists(root, IO_SYS, "kernel/mm/ksm"))
		return -ENOENT;
	ret->present = true;
	char buf[64];
	for (size_t i = 0; i < ksm_nfiles; i++) {
		int64_t v;
		if (io_read(root, IO_SYS, buf, sizeof(buf), "kernel/mm/ksm/%s", ksm_files[i].name) > 0 &&
		    parse_i64(buf, &v) == 0)
			*(maybe_i64 *)((char *)ret + ksm_files[i].offset) = MAYBE(v);
	}
	if (io_read(root, IO_SYS, buf, sizeof(buf), "kernel/mm/ksm/advisor_mode") > 0)
		parse_sysfs_choice(buf, ret->advisor_mode, sizeof(ret->advisor_mode));
	return 0;
}

maybe_i64 ksm_saved_pages(const struct ksm_sysfs *k)
{
	if (!k->present || !k->pages_sharing.known)
		return UNKNOWN;
	int64_t zero = k->ksm_zero_pages.known ? k->ksm_zero_pages.v : 0;
	return MAYBE(k->pages_sharing.v + zero);
}

maybe_i64 ksm_saved_bytes(const struct ksm_sysfs *k, int64_t page_size)
{
	maybe_i64 pages = ksm_saved_pages(k);
	return pages.known ? MAYBE(pages.v * page_size) : UNKNOWN;
}

maybe_i64 ksm_rmap_items(const struct ksm_sysfs *k)
{
	if (!k->pages_shared.known || !k->pages_sharing.known || !k->pages_unshared.known ||
	    !k->pages_volatile.known)
		return UNKNOWN;
	return MAYBE(k->pages_shared.v + k->pages_sharing.v + k->pages_unshared.v + k->pages_volatile.v);
}

int ksmd_find(const struct io_root *root, pid_t *ret)
{
	pid_t *pids;
	size_t n;
	int r = io_list_pids(root, &pids, &n);
	if (r < 0)
		return r;
	r = -ENOENT;
	char comm[32];
	/* Kernel threads have low pids: ksmd is found within the first few dozen reads. */
	for (size_t i = 0; i < n; i++) {
		ssize_t l = io_read(root, IO_PROC, comm, sizeof(comm), "%d/comm", pids[i]);
		if (l > 0 && !strcmp(comm, "ksmd\n")) {
			*ret = pids[i];
			r = 0;
			break;
		}
	}
	free(pids);
	return r;
}

int ksmd_cpu_ns(const struct io_root *root, pid_t pid, int64_t *ret)
{
	char buf[1024];
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/schedstat", pid);
	if (n > 0 && parse_schedstat_run(buf, (size_t)n, ret) == 0)
		return 0;
	struct proc_stat st;
	int r = proc_read_stat(root, pid, &st);
	if (r < 0)
		return r;
	*ret = (int64_t)(st.utime_ticks + st.stime_ticks) * (1000000000LL / ticks_per_second());
	return 0;
}

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
