/* The report's chart series from the database: the rows the store reads back (store.h), turned
 * into figures by core/sample/history.h and thinned to at most max points of equal time spans. */
#ifndef VMHOST_STORE_SERIES_H
#define VMHOST_STORE_SERIES_H

#include "core/sample/history.h"
#include "core/sample/series.h"
#include "core/sample/trend.h"
#include "store/store.h"

/* Host memory, KSM savings and ksmd CPU (enum series_host_row). *ret_page_size is set to the
 * recorded page size when a sample has one (left as it is otherwise). */
int store_host_series(struct store *s, double since, double until, size_t max, struct series_set *ret,
		      int64_t *ret_page_size);

/* One VM's memory stacked (enum series_vm_row), and when fit (may be NULL) is a flagged verdict,
 * its fitted line over the verdict's span (SERIES_VM_FIT). */
int store_vm_series(struct store *s, int64_t vm_id, double since, double until, int64_t page_size,
		    const struct growth_result *fit, size_t max, struct series_set *ret);

/* A VM's disks (record --io) in bytes a second (struct history_disk_series). -ENODATA when none of
 * its disks was recorded in [since, until]. */
int store_disk_series(struct store *s, int64_t vm_id, double since, double until, size_t max,
		      struct history_disk_series *ret);

/* A KVM counter per second (one row), between the rows where it changed, of one VM or (vm_id 0)
 * the host. -ENOENT when it was never recorded, -ENODATA with fewer than two values. */
int store_kvm_rate_series(struct store *s, int64_t vm_id, const char *counter, double since, double until,
			  size_t max, struct series_set *ret);

#endif
