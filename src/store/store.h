/* The history database (SQLite): samples of the host, KSM and every VM, written by `record`
 * (and `serve --db`), read by `growth` and `report`. Schema and its bounds: docs/record.md.
 *
 * Writers: store_open() + store_write_sample() per sample + store_close(); in the program the
 * one caller of the write is the sampler (its record step in core/sample/sampler.c), through
 * store_sink(). One writer per database (a lock held until store_close; a second writer gets
 * -EBUSY). Each sample is one transaction: a crash loses at most the sample in flight. Old
 * samples are downsampled by the writer itself (raw -> 5-minute -> 1-hour means) so the file
 * stays small. Readers get the rows back as core/sample/history.h has them.
 *
 * Functions return 0 or a negative errno; store_strerror() says what the vmhost-specific ones
 * mean. Nothing here prints. */
#ifndef VMHOST_STORE_H
#define VMHOST_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/sample/history.h"
#include "parse/maybe.h"

#define STORE_SCHEMA_VERSION 7

struct store;
struct kvm_rows;    /* core/sample/sampler.h */
struct sample_sink; /* core/sample/sampler.h */
struct snapshot;    /* core/sample/snapshot.h */

/* How long each resolution is kept (seconds). Raw samples older than raw_seconds become 5-minute
 * means, those older than minute5_seconds become 1-hour means, dropped after hour_seconds. */
struct store_retention {
	double raw_seconds, minute5_seconds, hour_seconds;
};
extern const struct store_retention store_retention_default; /* 2 days, 30 days, 5 years */

/* Opens (creating or migrating) a database for writing and takes the writer lock.
 * Errors: -EBUSY another writer holds it, -EAGAIN another program (a sqlite3 shell) holds
 * SQLite's lock beyond a 0.5 s wait, -EROFS/-EACCES not writable, -ENOSPC disk full,
 * -EPROTO not a vmhost database (or corrupt), -EPROTONOSUPPORT written by a newer vmhost,
 * -ELIBACC no SQLite library (nothing created; store_strerror names it). */
int store_open(const char *path, struct store **ret);
/* Opens (creating or migrating) a database for a writer of its own rows beside a recorder: the
 * sharing maps (store_share.h). No writer lock: SQLite's lock, waited for up to 5 s, puts its
 * transactions between a recorder's samples. Errors as store_open's, never -EBUSY. */
int store_open_side(const char *path, struct store **ret);
/* Opens an existing database for reading only (no lock; safe while a writer runs); one of schema 5
 * is read as it is. -ENOENT when it does not exist, -ESTALE of an older schema (a writer migrates
 * it), -ELIBACC without SQLite. */
int store_open_read(const char *path, struct store **ret);
void store_close(struct store *s); /* NULL is fine */

/* Writes one snapshot in one transaction (and downsamples, at most every 10 minutes), with KVM's
 * debugfs counters read at (nearly) the same time (rows NULL: none). VMs are matched to the
 * snapshot's by pid and start time; the others are skipped. The host row (vm_id 0) takes
 * rows->host for events and times (the global files for gauges, and for all when rows->host is
 * NULL). Returns 1 instead of 0 when the file had been deleted (st_nlink 0): the sample went into
 * a new database created at the same path. -ENOSPC on a full disk: nothing of this sample is
 * kept, earlier samples are intact, and a later call may succeed; so with -EAGAIN (locked by
 * another program); -EROFS when the file system went read-only under the writer. A sample's time
 * is its wall clock, moved on by a millisecond while another sample has that time (the clock was
 * set back): no sample is ever replaced. */
int store_write_sample(struct store *s, const struct snapshot *snap, const struct kvm_rows *rows);

/* The sampler's sink for this store (core/sample/sampler.h): its writes are store_write_sample, its
 * warnings name path. The store must outlive the sampler's use of it. */
struct sample_sink store_sink(struct store *s, const char *path);

/* How long each resolution is kept from now on (store_retention_default until set). */
void store_set_retention(struct store *s, const struct store_retention *r);

/* Text for the errors above ("another recorder is writing to this database", ...). */
const char *store_strerror(int err);

/* ---- reading ---- */

/* One VM series: a VM process from its start to its end (a restarted VM is a new series). */
struct store_vm {
	int64_t id;
	pid_t pid;
	uint64_t start_ticks;
	char name[256];          /* "" when unknown */
	char uuid[64];           /* "" when unknown */
	char vmm[24];
	maybe_i64 guest_ram_bytes;
	double started_seconds;  /* when the VM process started, Unix seconds; NaN unknown */
	double first_seconds, last_seconds; /* first and last sample in the database */
	size_t samples;          /* rows in the asked time range */
};

/* A KVM counter's values in [since, until] (vm_id 0: the host-wide running total), oldest first. Rows
 * exist only where the value changed. -ENOENT when the counter was never recorded. */
int store_kvm_points(struct store *s, int64_t vm_id, const char *counter, double since, double until,
		     double **ret_t, int64_t **ret_values, size_t *ret_n);

/* First and last sample time; -ENODATA when there is none. */
int store_time_range(struct store *s, double *ret_first, double *ret_last);
/* VM series with samples in [since, until], ordered by first sample. */
int store_vms(struct store *s, double since, double until, struct store_vm **ret, size_t *ret_n);
/* A VM's samples in [since, until], oldest first (every resolution). */
int store_vm_points(struct store *s, int64_t vm_id, double since, double until, struct history_vm_point **ret,
		    size_t *ret_n);
/* The host's samples in [since, until], oldest first (every resolution). */
int store_host_points(struct store *s, double since, double until, struct history_host_point **ret,
		      size_t *ret_n);
/* A VM's disk samples in [since, until], by device, then oldest first (none: *ret_n 0). */
int store_vm_disk_points(struct store *s, int64_t vm_id, double since, double until, struct history_disk_point **ret,
			 size_t *ret_n);

/* ---- for tests: the program never calls these ---- */

/* Applies retention now (store_write_sample does it by itself, at most every 10 minutes); now is
 * Unix seconds. */
int store_downsample(struct store *s, double now_seconds);

#endif
