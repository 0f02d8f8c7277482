/* The report's chart series from the database (rows: core/sample/series.h), each thinned to at most
 * max points of equal time spans. The *_from_points functions are the pure part. */
#ifndef VMHOST_STORE_SERIES_H
#define VMHOST_STORE_SERIES_H

#include "core/sample/series.h"
#include "core/sample/trend.h"
#include "store/store.h"

/* Host memory, KSM savings and ksmd CPU (enum series_host_row). *ret_page_size is set to the
 * recorded page size when a sample has one (left as it is otherwise). */
int store_host_series(struct store *s, double since, double until, size_t max, struct series_set *ret,
		      int64_t *ret_page_size);
int host_series_from_points(const struct store_host_point *p, size_t n, struct series_set *ret,
			    int64_t *ret_page_size);

/* One VM's memory stacked (enum series_vm_row), and when fit (may be NULL) is a flagged verdict,
 * its fitted line over the verdict's span (SERIES_VM_FIT). */
int store_vm_series(struct store *s, int64_t vm_id, double since, double until, int64_t page_size,
		    const struct growth_result *fit, size_t max, struct series_set *ret);
int vm_series_from_points(const struct store_vm_point *p, size_t n, int64_t page_size, struct series_set *ret);

#define STORE_DISKS_CHARTED 6 /* a VM's disks drawn in the report, by name: 12 lines */

/* A VM's disks (record --io) in bytes a second over the interval before each sample, on the times
 * of its disk rows: rows 2 d (read) and 2 d + 1 (written) of set for devices[d]; NaN where the disk
 * had no row or no rate (unknown, a reset). The first STORE_DISKS_CHARTED devices by name; more
 * says how many others it had. */
struct store_disk_series {
	struct series_set set;
	char devices[STORE_DISKS_CHARTED][64];
	size_t ndevices, more;
};
/* -ENODATA when none of its disks was recorded in [since, until]. */
int store_disk_series(struct store *s, int64_t vm_id, double since, double until, size_t max,
		      struct store_disk_series *ret);
/* p: ordered by device, then time (store_vm_disk_points' order); -ENODATA when n is 0. */
int disk_series_from_points(const struct store_disk_point *p, size_t n, struct store_disk_series *ret);

/* A KVM counter per second (one row), between the rows where it changed, of one VM or (vm_id 0)
 * the host. -ENOENT when it was never recorded, -ENODATA with fewer than two values. */
int store_kvm_rate_series(struct store *s, int64_t vm_id, const char *counter, double since, double until,
			  size_t max, struct series_set *ret);

#endif
