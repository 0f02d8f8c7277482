/* The report's chart series (store_series.h): rows read from the store, their figures derived by
 * core/sample/history.c, thinned for a chart. */
#include "store/store_series.h"

#include <math.h>
#include <stdlib.h>

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

int store_host_series(struct store *s, double since, double until, size_t max, struct series_set *ret,
		      int64_t *ret_page_size)
{
	struct history_host_point *p;
	size_t n;
	int r = store_host_points(s, since, until, &p, &n);
	if (r < 0)
		return r;
	struct series_set set;
	r = history_host_series(p, n, &set, ret_page_size);
	free(p);
	return r < 0 ? r : hand_over_thinned(&set, max, ret);
}

int store_vm_series(struct store *s, int64_t vm_id, double since, double until, int64_t page_size,
		    const struct growth_result *fit, size_t max, struct series_set *ret)
{
	struct history_vm_point *p;
	size_t n;
	int r = store_vm_points(s, vm_id, since, until, &p, &n);
	if (r < 0)
		return r;
	struct series_set set;
	r = history_vm_series(p, n, page_size, &set);
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

int store_disk_series(struct store *s, int64_t vm_id, double since, double until, size_t max,
		      struct history_disk_series *ret)
{
	struct history_disk_point *p;
	size_t n;
	int r = store_vm_disk_points(s, vm_id, since, until, &p, &n);
	if (r < 0)
		return r;
	struct history_disk_series d;
	r = history_disk_series(p, n, &d);
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
	struct series_set set;
	r = history_rate_series(t, v, n, &set);
	free(t);
	free(v);
	return r < 0 ? r : hand_over_thinned(&set, max, ret);
}
