/* The report's chart rows from a recorded history's rows (history.h): memory stacked, counters per
 * second and CPU time as percent of one CPU, by core/base/rate.h's one rule. */
#include "core/sample/history.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/rate.h"
#include "core/base/stats.h"
#include "core/model/host.h"
#include "core/model/ksm.h"

static double num(maybe_i64 v) { return v.known ? (double)v.v : NAN; }

static double difference(maybe_i64 a, maybe_i64 b) { return a.known && b.known ? (double)(a.v - b.v) : NAN; }

int history_host_series(const struct history_host_point *p, size_t n, struct series_set *ret,
			int64_t *ret_page_size)
{
	struct series_set s;
	if (series_alloc(&s, n, SERIES_HOST_NROWS) < 0) {
		series_free(&s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		s.t[i] = p[i].t;
		series_row(&s, SERIES_HOST_TOTAL)[i] = num(p[i].mem_total);
		series_row(&s, SERIES_HOST_USED)[i] = difference(p[i].mem_total, p[i].mem_available);
		series_row(&s, SERIES_HOST_SWAP)[i] = difference(p[i].swap_total, p[i].swap_free);
		if (p[i].page_size.known)
			*ret_page_size = p[i].page_size.v;
		/* A sample without its page size (none written so far) is taken to be of this host. */
		struct ksm_sysfs k = {.present = true, .pages_sharing = p[i].ksm_pages_sharing,
				      .ksm_zero_pages = p[i].ksm_zero_pages};
		int64_t page = p[i].page_size.known ? p[i].page_size.v : host_page_size();
		series_row(&s, SERIES_HOST_KSM_SAVED)[i] = num(ksm_saved_bytes(&k, page));
		series_row(&s, SERIES_HOST_KSM_PROFIT)[i] = num(p[i].ksm_general_profit);
		/* ksmd's CPU over the interval before the sample; NaN for the first and across a restart */
		series_row(&s, SERIES_HOST_KSMD_CPU)[i] =
			i ? counter_percent_ns(p[i - 1].ksmd_cpu_ns, p[i].ksmd_cpu_ns, p[i].t - p[i - 1].t) : NAN;
	}
	*ret = s;
	return 0;
}

/* A counter's rate between two of a VM's samples (a restarted process is a new series, so only a
 * reset makes it go down). */
static double vm_rate(const struct history_vm_point *a, const struct history_vm_point *b, maybe_i64 va,
		      maybe_i64 vb)
{
	return counter_rate(va, vb, b->t - a->t);
}

/* A cumulative millisecond counter between two samples as percent of one CPU. */
static double vm_percent(const struct history_vm_point *a, const struct history_vm_point *b, maybe_i64 ms_a,
			 maybe_i64 ms_b)
{
	return vm_rate(a, b, ms_a, ms_b) / 1000.0 * 100.0;
}

/* The memory stall time (every kind but IRQ, as core/base/stalls.h sums it) of a sample, in
 * microseconds: unknown unless delay accounting was read then; a kind never counted adds nothing. */
static maybe_i64 memory_stall_us(const struct history_vm_point *p)
{
	maybe_i64 sum = UNKNOWN;
	for (int k = 0; k < STALL_NKINDS; k++)
		if (k != STALL_IRQ && p->stall_us[k].known)
			sum = MAYBE((sum.known ? sum.v : 0) + p->stall_us[k].v);
	return sum;
}

/* The I/O rows of sample i: rates over the interval before it (NaN for the first). */
static void vm_io_series(struct series_set *s, const struct history_vm_point *p, size_t i)
{
	const struct history_vm_point *a = i ? &p[i - 1] : NULL, *b = &p[i];
	series_row(s, SERIES_VM_IO_READ)[i] = a ? vm_rate(a, b, a->io_read, b->io_read) : NAN;
	series_row(s, SERIES_VM_IO_WRITE)[i] = a ? vm_rate(a, b, a->io_write, b->io_write) : NAN;
	series_row(s, SERIES_VM_NET_RX)[i] = a ? vm_rate(a, b, a->net_rx, b->net_rx) : NAN;
	series_row(s, SERIES_VM_NET_TX)[i] = a ? vm_rate(a, b, a->net_tx, b->net_tx) : NAN;
}

int history_vm_series(const struct history_vm_point *p, size_t n, int64_t page_size, struct series_set *ret)
{
	struct series_set s;
	if (series_alloc(&s, n, SERIES_VM_NROWS) < 0) {
		series_free(&s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		s.t[i] = p[i].t;
		double rss = num(p[i].rss), over = num(p[i].overhead);
		double guest = rss - (isfinite(over) ? over : 0);
		double merged = p[i].ksm_merging_pages.known ? (double)p[i].ksm_merging_pages.v * (double)page_size : 0;
		if (merged > guest)
			merged = guest;
		series_row(&s, SERIES_VM_PRIVATE)[i] = guest - merged;
		series_row(&s, SERIES_VM_MERGED)[i] = isfinite(guest) ? merged : NAN;
		series_row(&s, SERIES_VM_OVERHEAD)[i] = over;
		series_row(&s, SERIES_VM_SAVED)[i] = num(p[i].ksm_saved);
		series_row(&s, SERIES_VM_FIT)[i] = NAN;
		series_row(&s, SERIES_VM_CPU)[i] = i ? vm_percent(&p[i - 1], &p[i], p[i - 1].cpu_ms, p[i].cpu_ms) : NAN;
		series_row(&s, SERIES_VM_HUGETLB)[i] = num(p[i].hugetlb);
		/* Recordings before schema 3 have PSS only: huge pages not counted there. */
		series_row(&s, SERIES_VM_COST)[i] = p[i].memory_cost.known ? num(p[i].memory_cost) : num(p[i].pss);
		series_row(&s, SERIES_VM_VCPU_DELAY)[i] =
			i ? vm_percent(&p[i - 1], &p[i], p[i - 1].vcpu_delay_ms, p[i].vcpu_delay_ms) : NAN;
		vm_io_series(&s, p, i);
		series_row(&s, SERIES_VM_STALL)[i] =
			i ? vm_rate(&p[i - 1], &p[i], memory_stall_us(&p[i - 1]), memory_stall_us(&p[i])) / 1e6 * 100.0 : NAN;
	}
	*ret = s;
	return 0;
}

int history_disk_series(const struct history_disk_point *p, size_t n, struct history_disk_series *ret)
{
	if (n == 0)
		return -ENODATA;
	struct history_disk_series d = {0};
	for (size_t i = 0; i < n; i++) /* devices come in runs, by name */
		if (i == 0 || strcmp(p[i].device, p[i - 1].device) != 0) {
			if (d.ndevices < HISTORY_DISKS_CHARTED)
				snprintf(d.devices[d.ndevices++], sizeof(d.devices[0]), "%s", p[i].device);
			else
				d.more++;
		}
	/* the chart's times: every time a disk has a row, once */
	double *t = malloc(n * sizeof(*t));
	for (size_t i = 0; t && i < n; i++)
		t[i] = p[i].t;
	size_t m = t ? sort_unique(t, n, sizeof(*t), cmp_double) : 0;
	if (!t || series_alloc(&d.set, m, 2 * d.ndevices) < 0) {
		free(t);
		series_free(&d.set);
		return -ENOMEM;
	}
	memcpy(d.set.t, t, m * sizeof(*t));
	free(t);
	for (size_t i = 0; i < m * d.set.k; i++)
		d.set.y[i] = NAN;
	size_t dev = 0;
	for (size_t i = 1; i < n && dev < d.ndevices; i++) {
		if (strcmp(p[i].device, p[i - 1].device) != 0) {
			dev++;
			continue;
		}
		const double *at = bsearch(&p[i].t, d.set.t, d.set.n, sizeof(double), cmp_double);
		size_t k = (size_t)(at - d.set.t);
		double dt = p[i].t - p[i - 1].t;
		series_row(&d.set, 2 * dev)[k] = counter_rate(p[i - 1].read_bytes, p[i].read_bytes, dt);
		series_row(&d.set, 2 * dev + 1)[k] = counter_rate(p[i - 1].write_bytes, p[i].write_bytes, dt);
	}
	*ret = d;
	return 0;
}

int history_rate_series(const double *t, const int64_t *v, size_t n, struct series_set *ret)
{
	if (n < 2)
		return -ENODATA;
	struct series_set s;
	if (series_alloc(&s, n - 1, 1) < 0) {
		series_free(&s);
		return -ENOMEM;
	}
	for (size_t i = 1; i < n; i++) {
		s.t[i - 1] = t[i];
		series_row(&s, 0)[i - 1] = counter_rate(MAYBE(v[i - 1]), MAYBE(v[i]), t[i] - t[i - 1]);
	}
	*ret = s;
	return 0;
}
