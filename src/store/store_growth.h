/* The growth verdict (core/sample/trend.h) for every VM series in a database: what `vmhost growth`
 * prints and `vmhost report` charts. */
#ifndef VMHOST_STORE_GROWTH_H
#define VMHOST_STORE_GROWTH_H

#include "core/sample/trend.h"
#include "store/store.h"

struct growth_scan_opts {
	const char *db;
	double window_seconds; /* ending at the last sample in the database */
	struct growth_params params;
};
struct growth_scan_opts growth_scan_defaults(void); /* ./vmhost.db, 6 hours, growth_defaults */

struct growth_vm {
	struct store_vm vm;
	struct growth_result result;
	maybe_i64 last_overhead; /* the newest overhead figure in the window */
	maybe_i64 written_bytes; /* written to storage (io_write) over the judged span; unknown without a trend */
};

struct growth_scan {
	double since, until; /* the window */
	struct growth_vm *vms;
	size_t n;
};

/* Judges every VM with samples in the window, on an already open store. */
int growth_scan_store(struct store *s, const struct growth_scan_opts *o, struct growth_scan *ret);
/* Opens o->db read-only and scans; on error *what says which step failed. */
int growth_scan_run(const struct growth_scan_opts *o, struct growth_scan *ret, const char **what);
void growth_scan_free(struct growth_scan *g);

#endif
