/* The history database (SQLite): samples of the host, KSM and every VM, written by `record`
 * (and `serve --db`), read by `growth` and `report`. Schema and its bounds: docs/record.md.
 *
 * Writers: store_open() + store_write_snapshot() per sample + store_close(); in the program the
 * one caller of the write is core/sampler, through store_sink(). One writer per
 * database (a lock held until store_close; a second writer gets -EBUSY). Each snapshot is one
 * transaction: a crash loses at most the sample in flight. Old samples are downsampled by the
 * writer itself (raw -> 5-minute -> 1-hour means) so the file stays small.
 *
 * Functions return 0 or a negative errno; store_strerror() says what the vmhost-specific ones
 * mean. Nothing here prints. */
#ifndef VMHOST_STORE_H
#define VMHOST_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/kvm/kvm.h"
#include "core/sample/sampler.h"
#include "core/sample/snapshot.h"
#include "parse/maybe.h"

#define STORE_SCHEMA_VERSION 6

struct store;

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

void store_set_retention(struct store *s, const struct store_retention *r);

/* Writes one snapshot in one transaction (and downsamples, at most every 10 minutes).
 * -ENOSPC on a full disk: nothing of this sample is kept, earlier samples are intact, and a
 * later call may succeed. */
int store_write_snapshot(struct store *s, const struct snapshot *snap);

/* The same, with KVM's debugfs counters read at (nearly) the same time (rows NULL: none). VMs
 * are matched to the snapshot's by pid and start time; the others are skipped. The host row
 * (vm_id 0) takes rows->host for events and times (the global files for gauges, and for all
 * when rows->host is NULL). */
int store_write_sample(struct store *s, const struct snapshot *snap, const struct kvm_rows *rows);
/* Both return 1 instead of 0 when the file had been deleted (st_nlink 0): the sample went into a
 * new database created at the same path. -EAGAIN (locked by another program), like -ENOSPC,
 * keeps earlier samples and a later call may succeed; -EROFS when the file system went
 * read-only under the writer. A sample's time is its wall clock, moved on by a millisecond
 * while another sample has that time (the clock was set back): no sample is ever replaced. */

/* The sampler's sink for this store (core/sample/sampler.h): its writes are store_write_sample, its
 * warnings name path. The store must outlive the sampler's use of it. */
struct sample_sink store_sink(struct store *s, const char *path);

/* Applies retention now (store_write_snapshot does it by itself); now is Unix seconds. */
int store_downsample(struct store *s, double now_seconds);

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

struct store_vm_point {
	double t;           /* Unix seconds */
	int resolution;     /* 0 raw, else the seconds a mean covers */
	bool populated;     /* guest RAM was fully populated: the overhead estimate is exact */
	bool exact;         /* overhead and PSS from the exact sources */
	maybe_i64 rss, rss_anon, rss_file, rss_shmem, swap, ksm_merging_pages, ksm_zero_pages, ksm_profit,
		ksm_saved, pss, overhead;
	maybe_i64 cpu_ms, vcpu_delay_ms; /* cumulative: VMM + helpers, and the vCPUs' delay */
	maybe_i64 cgroup_memory, cgroup_limit, oom_kills;
	maybe_i64 hugetlb, memory_cost; /* huge pages (not in rss or pss), and pss plus them */
	/* counters: storage bytes of the VMM and its helpers, its taps' bytes and drops summed */
	maybe_i64 io_read, io_write, net_rx, net_tx, net_dropped;
};

/* One disk of a VM at one sample (record --io): QEMU's counters, cumulative, unknown where QEMU or
 * libvirt gave none. */
struct store_disk_point {
	double t;
	int resolution;
	char device[64];
	maybe_i64 read_bytes, write_bytes, read_ops, write_ops, flush_ops;
	maybe_i64 read_time_ns, write_time_ns, flush_time_ns; /* the time the operations took, summed */
};

struct store_host_point {
	double t;
	int resolution;
	double gather_seconds;
	maybe_i64 mem_total, mem_available, mem_free, swap_total, swap_free, page_size;
	maybe_i64 ksm_run, ksm_pages_shared, ksm_pages_sharing, ksm_pages_unshared, ksm_pages_volatile,
		ksm_zero_pages, ksm_full_scans, ksm_pages_scanned, ksm_general_profit, ksm_pages_to_scan,
		ksm_sleep_millisecs, ksmd_cpu_ns;
	maybe_i64 vm_count, skipped;
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
int store_vm_points(struct store *s, int64_t vm_id, double since, double until, struct store_vm_point **ret,
		    size_t *ret_n);
int store_host_points(struct store *s, double since, double until, struct store_host_point **ret,
		      size_t *ret_n);
/* A VM's disk samples in [since, until], by device, then oldest first (none: *ret_n 0). */
int store_vm_disk_points(struct store *s, int64_t vm_id, double since, double until, struct store_disk_point **ret,
			 size_t *ret_n);

#endif
