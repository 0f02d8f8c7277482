#include "store/store_series.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/host.h"
#include "core/model/ksm.h"

static double num(maybe_i64 v) { return v.known ? (double)v.v : NAN; }

static double difference(maybe_i64 a, maybe_i64 b) { return a.known && b.known ? (double)(a.v - b.v) : NAN; }

/* ksmd CPU over the interval before sample i, percent of one CPU; NaN across a restart. */
static double ksmd_cpu_percent(const struct store_host_point *p, size_t i)
{
	if (i == 0 || !p[i].ksmd_cpu_ns.known || !p[i - 1].ksmd_cpu_ns.known || p[i].t <= p[i - 1].t ||
	    p[i].ksmd_cpu_ns.v < p[i - 1].ksmd_cpu_ns.v)
		return NAN;
	return (double)(p[i].ksmd_cpu_ns.v - p[i - 1].ksmd_cpu_ns.v) / 1e9 / (p[i].t - p[i - 1].t) * 100;
}

/* Hands set over to *ret thinned to max points for a chart; frees it on failure. */
static int hand_over_thinned(struct series_set *set, size_t max, struct series_set *ret)
{
	int r = series_thin(set, max, SERIES_EQUAL_TIME);
	if (r < 0) {
		series_free(set);
		return r;
	}
	*ret = *set;
	return 0;
}

int host_series_from_points(const struct store_host_point *p, size_t n, struct series_set *ret,
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
		series_row(&s, SERIES_HOST_KSMD_CPU)[i] = ksmd_cpu_percent(p, i);
	}
	*ret = s;
	return 0;
}

int store_host_series(struct store *s, double since, double until, size_t max, struct series_set *ret,
		      int64_t *ret_page_size)
{
	struct store_host_point *p;
	size_t n;
	int r = store_host_points(s, since, until, &p, &n);
	if (r < 0)
		return r;
	struct series_set set;
	r = host_series_from_points(p, n, &set, ret_page_size);
	free(p);
	return r < 0 ? r : hand_over_thinned(&set, max, ret);
}

/* A counter's increase from (ta, va) to (tb, vb) per second; NaN when either is unknown or it went
 * down (a restarted process is a new series, so only a reset does that). */
static double rate_between(double ta, maybe_i64 va, double tb, maybe_i64 vb)
{
	double dt = tb - ta;
	if (!va.known || !vb.known || vb.v < va.v || !(dt > 0))
		return NAN;
	return (double)(vb.v - va.v) / dt;
}

static double counter_rate(const struct store_vm_point *a, const struct store_vm_point *b, maybe_i64 va,
			   maybe_i64 vb)
{
	return rate_between(a->t, va, b->t, vb);
}

/* A cumulative millisecond counter between two samples as percent of one CPU. */
static double counter_percent(const struct store_vm_point *a, const struct store_vm_point *b, maybe_i64 ms_a,
			      maybe_i64 ms_b)
{
	return counter_rate(a, b, ms_a, ms_b) / 1000.0 * 100.0;
}

/* The I/O rows of sample i: rates over the interval before it (NaN for the first). */
static void vm_io_series(struct series_set *s, const struct store_vm_point *p, size_t i)
{
	const struct store_vm_point *a = i ? &p[i - 1] : NULL, *b = &p[i];
	series_row(s, SERIES_VM_IO_READ)[i] = a ? counter_rate(a, b, a->io_read, b->io_read) : NAN;
	series_row(s, SERIES_VM_IO_WRITE)[i] = a ? counter_rate(a, b, a->io_write, b->io_write) : NAN;
	series_row(s, SERIES_VM_NET_RX)[i] = a ? counter_rate(a, b, a->net_rx, b->net_rx) : NAN;
	series_row(s, SERIES_VM_NET_TX)[i] = a ? counter_rate(a, b, a->net_tx, b->net_tx) : NAN;
}

int vm_series_from_points(const struct store_vm_point *p, size_t n, int64_t page_size, struct series_set *ret)
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
		series_row(&s, SERIES_VM_CPU)[i] = i ? counter_percent(&p[i - 1], &p[i], p[i - 1].cpu_ms, p[i].cpu_ms) : NAN;
		series_row(&s, SERIES_VM_HUGETLB)[i] = num(p[i].hugetlb);
		/* Recordings before schema 3 have PSS only: huge pages not counted there. */
		series_row(&s, SERIES_VM_COST)[i] = p[i].memory_cost.known ? num(p[i].memory_cost) : num(p[i].pss);
		series_row(&s, SERIES_VM_VCPU_DELAY)[i] =
			i ? counter_percent(&p[i - 1], &p[i], p[i - 1].vcpu_delay_ms, p[i].vcpu_delay_ms) : NAN;
		vm_io_series(&s, p, i);
	}
	*ret = s;
	return 0;
}

int store_vm_series(struct store *s, int64_t vm_id, double since, double until, int64_t page_size,
		    const struct growth_result *fit, size_t max, struct series_set *ret)
{
	struct store_vm_point *p;
	size_t n;
	int r = store_vm_points(s, vm_id, since, until, &p, &n);
	if (r < 0)
		return r;
	struct series_set set;
	r = vm_series_from_points(p, n, page_size, &set);
	free(p);
	if (r == 0)
		r = hand_over_thinned(&set, max, &set);
	if (r < 0)
		return r;
	/* The line growth fitted, drawn on the chart's (thinned) times of its span. */
	if (fit && fit->flagged && isfinite(fit->bytes_per_hour) && isfinite(fit->anchor_bytes))
		series_line(set.t, set.n, fit->first_t, fit->last_t, fit->bytes_per_hour / 3600, fit->anchor_bytes,
			    series_row(&set, SERIES_VM_FIT));
	*ret = set;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The distinct times of the points, ascending, into t (room for n); their number. */
static size_t disk_times(const struct store_disk_point *p, size_t n, double *t)
{
	for (size_t i = 0; i < n; i++)
		t[i] = p[i].t;
	qsort(t, n, sizeof(*t), cmp_double);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || t[i] != t[m - 1])
			t[m++] = t[i];
	return m;
}

int disk_series_from_points(const struct store_disk_point *p, size_t n, struct store_disk_series *ret)
{
	if (n == 0)
		return -ENODATA;
	struct store_disk_series d = {0};
	for (size_t i = 0; i < n; i++) /* devices come in runs, by name */
		if (i == 0 || strcmp(p[i].device, p[i - 1].device) != 0) {
			if (d.ndevices < STORE_DISKS_CHARTED)
				snprintf(d.devices[d.ndevices++], sizeof(d.devices[0]), "%s", p[i].device);
			else
				d.more++;
		}
	double *t = malloc(n * sizeof(*t));
	size_t m = t ? disk_times(p, n, t) : 0;
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
		series_row(&d.set, 2 * dev)[k] = rate_between(p[i - 1].t, p[i - 1].read_bytes, p[i].t, p[i].read_bytes);
		series_row(&d.set, 2 * dev + 1)[k] =
			rate_between(p[i - 1].t, p[i - 1].write_bytes, p[i].t, p[i].write_bytes);
	}
	*ret = d;
	return 0;
}

int store_disk_series(struct store *s, int64_t vm_id, double since, double until, size_t max,
		      struct store_disk_series *ret)
{
	struct store_disk_point *p;
	size_t n;
	int r = store_vm_disk_points(s, vm_id, since, until, &p, &n);
	if (r < 0)
		return r;
	struct store_disk_series d;
	r = disk_series_from_points(p, n, &d);
	free(p);
	if (r == 0)
		r = hand_over_thinned(&d.set, max, &d.set);
	if (r == 0)
		*ret = d;
	return r;
}

int store_kvm_rate_series(struct store *s, int64_t vm_id, const char *counter, double since, double until,
			  size_t max, struct series_set *ret)
{
	double *t;
	int64_t *v;
	size_t n;
	/* Host-wide (vm_id 0) the recorder's running totals drop only when a recorder restarts with
	 * fewer VMs than it left (or with an older database's global files): a gap, as a VM's reset. */
	int r = store_kvm_points(s, vm_id, counter, since, until, &t, &v, &n);
	if (r < 0)
		return r;
	struct series_set set = {0};
	if (n < 2)
		r = -ENODATA;
	else
		r = series_alloc(&set, n - 1, 1);
	/* Rows exist only where the counter changed, so a rate spans the time since the previous row. */
	for (size_t i = 1; r == 0 && i < n; i++) {
		set.t[i - 1] = t[i];
		series_row(&set, 0)[i - 1] = v[i] >= v[i - 1] && t[i] > t[i - 1]
						     ? (double)(v[i] - v[i - 1]) / (t[i] - t[i - 1])
						     : NAN; /* reset */
	}
	free(t);
	free(v);
	if (r < 0) {
		series_free(&set);
		return r;
	}
	return hand_over_thinned(&set, max, ret);
}
