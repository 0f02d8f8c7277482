#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "io/file.h"
#include "store/sqlite.h"
#include "store/store_schema.h"

/* "vmhs": marks the file as a vmhost database (PRAGMA application_id). */
#define STORE_APPLICATION_ID 0x766d6873
#define DOWNSAMPLE_EVERY_SECONDS 600.0
/* A VM seen again with the same pid and start time belongs to the same series only when the
 * host's boot time (wall - monotonic clock) agrees within this: otherwise the host rebooted. */
#define BOOT_TOLERANCE_MS 300000
/* How long a writer waits for SQLite's lock held by another program before it drops the sample:
 * short, because serve's scrapes wait behind the recording of a sample. Readers wait 5 s. */
#define WRITER_BUSY_MS 500
#define READER_BUSY_MS 5000
/* The oldest schema a reader reads as it is (a writer migrates it): 5 has the vCPUs' delay as
 * vcpu_wait_ms and no disks. */
#define READ_OLDEST_VERSION 5

const struct store_retention store_retention_default = {
	.raw_seconds = 2 * 86400.0,
	.minute5_seconds = 30 * 86400.0,
	.hour_seconds = 5 * 365 * 86400.0,
};

struct vm_key {
	pid_t pid;
	uint64_t start_ticks;
	int64_t id;
	bool seen; /* in the current snapshot */
};

enum stmt_id {
	ST_BEGIN, ST_COMMIT, ST_ROLLBACK, ST_INSERT_SAMPLE, ST_FIND_VM, ST_INSERT_VM, ST_INSERT_VM_SAMPLE,
	ST_INSERT_KVM_COUNTER, ST_FIND_KVM_COUNTER, ST_INSERT_KVM_SAMPLE, ST_SAMPLE_AT, ST_INSERT_DISK_SAMPLE, ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_INSERT_SAMPLE] = "INSERT OR REPLACE INTO samples (t_ms, resolution, gather_us, mem_total, mem_available,"
			     " mem_free, swap_total, swap_free, page_size, ksm_run, ksm_pages_shared, ksm_pages_sharing,"
			     " ksm_pages_unshared, ksm_pages_volatile, ksm_zero_pages, ksm_full_scans, ksm_pages_scanned,"
			     " ksm_general_profit, ksm_pages_to_scan, ksm_sleep_millisecs, ksmd_cpu_ns, vm_count, skipped)"
			     " VALUES (?1, 0, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
			     " ?19, ?20, ?21, ?22)",
	[ST_FIND_VM] = "SELECT id, boot_ms FROM vms WHERE pid = ?1 AND start_ticks = ?2 AND IFNULL(uuid, '') = ?3"
		       " ORDER BY id DESC LIMIT 1",
	[ST_INSERT_VM] = "INSERT INTO vms (pid, start_ticks, boot_ms, started_ms, uuid, name, vmm, guest_ram_bytes)"
			 " VALUES (?1, ?2, ?3, ?4, NULLIF(?5, ''), NULLIF(?6, ''), ?7, ?8)",
	[ST_INSERT_VM_SAMPLE] = "INSERT OR REPLACE INTO vm_samples (vm_id, t_ms, resolution, populated, exact, rss,"
				" rss_anon, rss_file, rss_shmem, swap, ksm_merging_pages, ksm_zero_pages, ksm_profit, ksm_saved,"
				" pss, overhead, cpu_ms, vcpu_delay_ms, cgroup_memory, cgroup_limit, oom_kills, hugetlb,"
				" memory_cost, io_read, io_write, net_rx, net_tx, net_dropped)"
				" VALUES (?1, ?2, 0, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
				" ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
	[ST_INSERT_KVM_COUNTER] = "INSERT OR IGNORE INTO kvm_counters (name, kind) VALUES (?1, ?2)",
	[ST_FIND_KVM_COUNTER] = "SELECT id FROM kvm_counters WHERE name = ?1",
	[ST_INSERT_KVM_SAMPLE] = "INSERT OR REPLACE INTO kvm_samples (vm_id, counter_id, t_ms, value)"
				 " VALUES (?1, ?2, ?3, ?4)",
	[ST_SAMPLE_AT] = "SELECT 1 FROM samples WHERE t_ms = ?1",
	[ST_INSERT_DISK_SAMPLE] = "INSERT OR REPLACE INTO vm_disk_samples (vm_id, t_ms, device, read_bytes, write_bytes,"
				  " read_ops, write_ops, flush_ops, read_time_ns, write_time_ns, flush_time_ns)"
				  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
};

/* The last KVM values written for one VM (vm_id 0: the host-wide sums), to write only changes. */
struct kvm_last {
	int64_t vm_id;
	maybe_i64 *values; /* [kvm_ncounters] */
	bool seen;
};

struct store {
	sqlite3 *db;
	int lock_fd; /* flock()ed writer lock; -1 for readers */
	bool writer;
	char *path;  /* the writer's, to recreate the file when it is deleted under it */
	int64_t t_ms; /* the sample being written: its time, unique in samples */
	int64_t version; /* the schema's: a reader reads READ_OLDEST_VERSION on */
	sqlite3_stmt *stmt[ST_COUNT];
	struct vm_key *keys;
	size_t nkeys, capkeys;
	struct store_retention retention;
	double last_downsample;
	/* KVM: database ids of the reader's counters, and the values last written. */
	int64_t *kvm_ids;
	size_t kvm_ncounters;
	struct kvm_last *kvm_last;
	size_t nkvm_last, capkvm_last;
};

static int errno_from_sqlite(sqlite3 *db, int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK: return 0;
	case SQLITE_FULL: return -ENOSPC;
	case SQLITE_READONLY: return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH: return -EACCES;
	case SQLITE_BUSY:
	case SQLITE_LOCKED: return -EAGAIN; /* a non-vmhost program's lock: ours is the flock */
	case SQLITE_NOMEM: return -ENOMEM;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
	case SQLITE_FORMAT: return -EPROTO;
	case SQLITE_CANTOPEN: {
		int e = db ? sq.system_errno(db) : 0;
		return e > 0 ? -e : -EIO;
	}
	case SQLITE_IOERR: {
		int e = db ? sq.system_errno(db) : 0;
		if (e == ENOSPC || e == EDQUOT)
			return -ENOSPC;
		if (e == EROFS || e == EACCES || e == EPERM)
			return -e;
		return -EIO;
	}
	default: return -EIO;
	}
}

const char *store_strerror(int err)
{
	switch (err) {
	case -EBUSY: return "another recorder is writing to this database (one writer at a time)";
	case -EAGAIN: return "the database is locked by another program (a sqlite3 shell in a transaction?)";
	case -EROFS: return "the database is read-only";
	case -EACCES: return "permission denied";
	case -ENOSPC: return "disk full (no space left on device)";
	case -EPROTO: return "not a vmhost database, or it is damaged";
	case -EPROTONOSUPPORT: return "written by a newer vmhost (unknown schema version)";
	case -ESTALE: return "written by an older vmhost: 'vmhost record' into it once migrates it";
	case -ENODATA: return "no samples recorded yet";
	case -ELIBACC: return sqlite_load_error() ? sqlite_load_error() : strerror(-err);
	default: return strerror(-err);
	}
}

static int exec_sql(struct store *s, const char *sql)
{
	int rc = sq.exec(s->db, sql, NULL, NULL, NULL);
	return errno_from_sqlite(s->db, rc);
}

static int query_int(struct store *s, const char *sql, int64_t *ret)
{
	sqlite3_stmt *st;
	int rc = sq.prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return errno_from_sqlite(s->db, rc);
	rc = sq.step(st);
	int r = 0;
	if (rc == SQLITE_ROW)
		*ret = sq.column_int64(st, 0);
	else
		r = rc == SQLITE_DONE ? -ENODATA : errno_from_sqlite(s->db, rc);
	sq.finalize(st);
	return r;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->db) { /* statements only with a database: SQLite may not even be loaded */
		for (size_t i = 0; i < ST_COUNT; i++)
			sq.finalize(s->stmt[i]);
		sq.close_v2(s->db);
	}
	/* Only now: closing any fd of the file drops SQLite's POSIX locks on it. */
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s->keys);
	free(s->kvm_ids);
	for (size_t i = 0; i < s->nkvm_last; i++)
		free(s->kvm_last[i].values);
	free(s->kvm_last);
	free(s->path);
	free(s);
}

/* Checks the file is ours (or empty) and returns its schema version. */
static int check_identity(struct store *s, int64_t *ret_version)
{
	int64_t app = 0, version = 0, tables = 0;
	int r = query_int(s, "PRAGMA application_id", &app);
	if (r == 0)
		r = query_int(s, "PRAGMA user_version", &version);
	if (r == 0)
		r = query_int(s, "SELECT count(*) FROM sqlite_master", &tables);
	if (r < 0)
		return r;
	if (app != STORE_APPLICATION_ID && (app != 0 || tables > 0))
		return -EPROTO;
	if (version > STORE_SCHEMA_VERSION)
		return -EPROTONOSUPPORT;
	*ret_version = version;
	return 0;
}

static int migrate(struct store *s, int64_t version)
{
	for (int64_t v = version; v < STORE_SCHEMA_VERSION; v++) {
		int r = exec_sql(s, "BEGIN IMMEDIATE");
		if (r < 0)
			return r;
		/* Another writer (a recorder beside `share`) may have migrated it meanwhile. */
		int64_t now = v;
		r = query_int(s, "PRAGMA user_version", &now);
		if (r == 0 && now > v) {
			v = now - 1;
			r = exec_sql(s, "COMMIT");
			if (r < 0)
				return r;
			continue;
		}
		if (r == 0)
			r = exec_sql(s, store_migrations[v]);
		if (r == 0) {
			char sql[96];
			snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %lld",
				 STORE_APPLICATION_ID, (long long)(v + 1));
			r = exec_sql(s, sql);
		}
		if (r == 0)
			r = exec_sql(s, "COMMIT");
		if (r < 0) {
			exec_sql(s, "ROLLBACK");
			return r;
		}
	}
	return 0;
}

static int store_new(struct store **ret)
{
	struct store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lock_fd = -1;
	s->retention = store_retention_default;
	*ret = s;
	return 0;
}

/* Opens the database at path (a file name, or a URI with SQLITE_OPEN_URI) with flags, refusing a
 * read-write open that SQLite could only make read-only, and checks the file is ours. */
static int open_db(struct store *s, const char *path, int flags, int64_t *ret_version)
{
	int rc = sq.open_v2(path, &s->db, flags, NULL);
	if (rc != SQLITE_OK)
		return errno_from_sqlite(s->db, rc);
	sq.extended_result_codes(s->db, 1);
	sq.busy_timeout(s->db, (flags & SQLITE_OPEN_READWRITE) ? WRITER_BUSY_MS : READER_BUSY_MS);
	if ((flags & SQLITE_OPEN_READWRITE) && sq.db_readonly(s->db, "main") == 1)
		return -EROFS;
	return check_identity(s, ret_version);
}

/* The -wal and -shm files at path, left by a database deleted under its writer: removed only
 * while we hold the lock of the file now at the path and it is still empty (ours, just made), so
 * a writer that made a new database there meanwhile keeps its WAL (it holds the lock: -EBUSY
 * came first). Else SQLite would replay the old WAL into the new file. */
static void remove_stale_sides(const struct store *s)
{
	struct stat st;
	if (fstat(s->lock_fd, &st) < 0 || st.st_size != 0)
		return;
	char side[4200];
	snprintf(side, sizeof(side), "%s-wal", s->path);
	io_remove(side);
	snprintf(side, sizeof(side), "%s-shm", s->path);
	io_remove(side);
}

/* store_open's work; after_delete: the database at path was deleted under us (follow_path);
 * side: store_open_side, without the recorders' lock. */
static int open_writer(const char *path, bool after_delete, bool side, struct store **ret)
{
	/* SQLite first: without it, no file is made. */
	int r = sqlite_load(NULL, 0);
	if (r < 0)
		return r;
	struct store *s;
	r = store_new(&s);
	if (r < 0)
		return r;
	s->writer = true;
	s->path = strdup(path);
	if (!s->path) {
		r = -ENOMEM;
		goto fail;
	}
	s->lock_fd = side ? -1 : io_lock(path, 0); /* the writers' lock: the database file itself */
	if (!side && s->lock_fd < 0) {
		r = s->lock_fd;
		goto fail;
	}
	if (after_delete)
		remove_stale_sides(s);
	int64_t version;
	r = open_db(s, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &version);
	if (r < 0)
		goto fail;
	if (side) /* one transaction now and then: it may wait for a recorder's sample */
		sq.busy_timeout(s->db, READER_BUSY_MS);
	/* WAL: readers never block the recorder; NORMAL sync: a crash loses at most the last commits
	 * (power loss), never consistency. */
	r = exec_sql(s, "PRAGMA journal_mode = WAL");
	if (r == 0)
		r = exec_sql(s, "PRAGMA synchronous = NORMAL");
	if (r == 0)
		r = migrate(s, version);
	s->version = STORE_SCHEMA_VERSION;
	for (size_t i = 0; r == 0 && i < ST_COUNT; i++) {
		int rc = sq.prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[i], NULL);
		r = errno_from_sqlite(s->db, rc);
	}
	if (r < 0)
		goto fail;
	*ret = s;
	return 0;
fail:
	store_close(s);
	return r;
}

int store_open(const char *path, struct store **ret) { return open_writer(path, false, false, ret); }

int store_open_side(const char *path, struct store **ret) { return open_writer(path, false, true, ret); }

sqlite3 *store_sqlite(struct store *s) { return s->db; }

int store_sqlite_errno(struct store *s, int rc) { return errno_from_sqlite(s->db, rc); }

/* A file: URI for path (percent-escaping what URIs reserve), with query. */
static int file_uri(const char *path, const char *query, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "file:");
	for (const char *p = path; *p && n + 4 < cap; p++) {
		if (*p == '%' || *p == '?' || *p == '#')
			n += (size_t)snprintf(buf + n, cap - n, "%%%02X", (unsigned char)*p);
		else
			buf[n++] = *p;
	}
	int w = snprintf(buf + n, cap - n, "?%s", query);
	return w < 0 || (size_t)w >= cap - n ? -ENAMETOOLONG : 0;
}

static int open_read_uri(const char *uri, struct store **ret)
{
	struct store *s;
	int r = store_new(&s);
	if (r < 0)
		return r;
	int64_t version;
	r = open_db(s, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, &version);
	if (r == 0 && version < READ_OLDEST_VERSION)
		r = version == 0 ? -ENODATA : -ESTALE; /* old schema: a writer migrates it */
	s->version = version;
	if (r < 0) {
		store_close(s);
		return r;
	}
	*ret = s;
	return 0;
}

int store_open_read(const char *path, struct store **ret)
{
	int r = sqlite_load(NULL, 0);
	if (r < 0)
		return r;
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	char uri[4200];
	r = file_uri(path, "mode=ro", uri, sizeof(uri));
	if (r < 0)
		return r;
	r = open_read_uri(uri, ret);
	/* A WAL database on read-only media (no -shm can be made): nobody can be writing it, so
	 * it may be read as immutable. */
	if (r == -ENOENT || r == -EROFS || r == -EACCES || r == -EIO) {
		if (file_uri(path, "mode=ro&immutable=1", uri, sizeof(uri)) == 0 && open_read_uri(uri, ret) == 0)
			return 0;
	}
	return r;
}

void store_set_retention(struct store *s, const struct store_retention *r) { s->retention = *r; }

/* ---- writing ---- */

static int64_t ms(double seconds) { return (int64_t)llround(seconds * 1000.0); }

static void bind_maybe(sqlite3_stmt *st, int i, maybe_i64 v)
{
	if (v.known)
		sq.bind_int64(st, i, v.v);
	else
		sq.bind_null(st, i);
}

static maybe_i64 column_maybe(sqlite3_stmt *st, int i)
{
	if (sq.column_type(st, i) == SQLITE_NULL)
		return UNKNOWN;
	return MAYBE(sq.column_int64(st, i));
}

/* Columns first, first + 1, ... into the fields, in order. */
static void columns_maybe(sqlite3_stmt *st, int first, maybe_i64 *const *fields, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*fields[i] = column_maybe(st, first + (int)i);
}

static int step_done(struct store *s, sqlite3_stmt *st)
{
	int rc = sq.step(st);
	sq.reset(st);
	sq.clear_bindings(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : errno_from_sqlite(s->db, rc);
}

static int insert_host(struct store *s, const struct snapshot *snap)
{
	sqlite3_stmt *st = s->stmt[ST_INSERT_SAMPLE];
	const struct host *h = &snap->host;
	const struct ksm_sysfs *k = &h->ksm;
	int i = 1;
	sq.bind_int64(st, i++, s->t_ms);
	sq.bind_int64(st, i++, llround(snap->gather_seconds * 1e6));
	if (h->mem_known) {
		bind_maybe(st, i++, h->mem.mem_total);
		bind_maybe(st, i++, h->mem.mem_available);
		bind_maybe(st, i++, h->mem.mem_free);
		bind_maybe(st, i++, h->mem.swap_total);
		bind_maybe(st, i++, h->mem.swap_free);
	} else {
		i += 5;
	}
	sq.bind_int64(st, i++, h->page_size_bytes);
	const maybe_i64 ksm_values[] = {k->run, k->pages_shared, k->pages_sharing, k->pages_unshared,
					k->pages_volatile, k->ksm_zero_pages, k->full_scans, k->pages_scanned,
					k->general_profit, k->pages_to_scan, k->sleep_millisecs};
	for (size_t j = 0; j < sizeof(ksm_values) / sizeof(ksm_values[0]); j++)
		bind_maybe(st, i++, k->present ? ksm_values[j] : UNKNOWN);
	bind_maybe(st, i++, snap->ksmd_cpu_ns);
	sq.bind_int64(st, i++, (int64_t)snap->vms.n);
	sq.bind_int64(st, i++, snap->vms.skipped);
	return step_done(s, st);
}

static int64_t boot_ms(const struct snapshot *snap) { return ms(snap->wall_seconds - snap->monotonic_seconds); }

/* The series id of a VM: from the cache of the previous samples, the database, or a new row. */
static int vm_series_id(struct store *s, const struct snapshot *snap, const struct vm *vm, int64_t *ret)
{
	for (size_t i = 0; i < s->nkeys; i++) {
		if (s->keys[i].pid == vm->pid && s->keys[i].start_ticks == vm->start_ticks) {
			s->keys[i].seen = true;
			*ret = s->keys[i].id;
			return 0;
		}
	}
	int64_t boot = boot_ms(snap), id = -1;
	sqlite3_stmt *st = s->stmt[ST_FIND_VM];
	sq.bind_int64(st, 1, vm->pid);
	sq.bind_int64(st, 2, (int64_t)vm->start_ticks);
	sq.bind_text(st, 3, vm->cfg.uuid, -1, SQLITE_STATIC);
	int rc = sq.step(st);
	if (rc == SQLITE_ROW && llabs(sq.column_int64(st, 1) - boot) <= BOOT_TOLERANCE_MS)
		id = sq.column_int64(st, 0);
	int r = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : errno_from_sqlite(s->db, rc);
	sq.reset(st);
	sq.clear_bindings(st);
	if (r < 0)
		return r;
	if (id < 0) {
		st = s->stmt[ST_INSERT_VM];
		sq.bind_int64(st, 1, vm->pid);
		sq.bind_int64(st, 2, (int64_t)vm->start_ticks);
		sq.bind_int64(st, 3, boot);
		long hz = snap->host.clock_ticks_per_second;
		if (hz > 0)
			sq.bind_int64(st, 4, boot + (int64_t)(vm->start_ticks * 1000 / (uint64_t)hz));
		else
			sq.bind_null(st, 4);
		sq.bind_text(st, 5, vm->cfg.uuid, -1, SQLITE_STATIC);
		sq.bind_text(st, 6, vm->cfg.name, -1, SQLITE_STATIC);
		sq.bind_text(st, 7, vmm_kind_name(vm->cfg.vmm), -1, SQLITE_STATIC);
		bind_maybe(st, 8, vm->cfg.guest_ram_bytes);
		r = step_done(s, st);
		if (r < 0)
			return r;
		id = sq.last_insert_rowid(s->db);
	}
	if (s->nkeys == s->capkeys) {
		size_t cap = s->capkeys ? s->capkeys * 2 : 32;
		struct vm_key *k = realloc(s->keys, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		s->keys = k;
		s->capkeys = cap;
	}
	s->keys[s->nkeys++] = (struct vm_key){.pid = vm->pid, .start_ticks = vm->start_ticks, .id = id, .seen = true};
	*ret = id;
	return 0;
}

/* Whether guest RAM is (nearly) fully populated, so the cheap overhead estimate is no longer a
 * lower bound: 1 or 0, unknown (NULL, read back as not populated) when guest RAM or its resident
 * part is. A guest that touched all its RAM still shows a little less than guest RAM in RSS
 * (untouched holes, pages the kernel reclaimed): 1/32 of slack. */
static maybe_i64 guest_ram_populated(const struct vm *vm, int64_t page_size)
{
	if (vm->overhead_method == METHOD_EXACT || ram_on_hugetlb(&vm->cfg, &vm->mem))
		return MAYBE(1);
	const struct mem_counters *m = &vm->mem;
	maybe_i64 resident = vm->cfg.ram_shared ? m->rss_shmem : m->rss_anon;
	if (!vm->cfg.guest_ram_bytes.known || !resident.known)
		return UNKNOWN;
	int64_t gone = (m->swap.known ? m->swap.v : 0) +
		       (m->ksm_zero_pages.known ? m->ksm_zero_pages.v * page_size : 0);
	return MAYBE(resident.v + gone + vm->cfg.guest_ram_bytes.v / 32 >= vm->cfg.guest_ram_bytes.v);
}

/* Seconds as whole milliseconds; unknown for NaN. */
static maybe_i64 ms_of(double seconds)
{
	return isfinite(seconds) ? MAYBE(llround(seconds * 1000)) : UNKNOWN;
}

/* Seconds as whole nanoseconds (QEMU's unit); unknown for NaN. */
static maybe_i64 ns_of(double seconds)
{
	return isfinite(seconds) ? MAYBE(llround(seconds * 1e9)) : UNKNOWN;
}

/* A row per disk of the VM, when its disks were read (record --io). */
static int insert_disks(struct store *s, int64_t vm_id, const struct vm_disks *d)
{
	sqlite3_stmt *st = s->stmt[ST_INSERT_DISK_SAMPLE];
	for (size_t i = 0; d && d->known && i < d->n; i++) {
		const struct vm_disk *k = &d->d[i];
		sq.bind_int64(st, 1, vm_id);
		sq.bind_int64(st, 2, s->t_ms);
		sq.bind_text(st, 3, k->device, -1, SQLITE_STATIC);
		const maybe_i64 values[] = {k->read_bytes, k->write_bytes, k->read_ops, k->write_ops, k->flush_ops,
					    ns_of(k->read_seconds), ns_of(k->write_seconds), ns_of(k->flush_seconds)};
		for (size_t j = 0; j < sizeof(values) / sizeof(values[0]); j++)
			bind_maybe(st, 4 + (int)j, values[j]);
		int r = step_done(s, st);
		if (r < 0)
			return r;
	}
	return 0;
}

static int insert_vm(struct store *s, const struct snapshot *snap, const struct vm *vm)
{
	int64_t id;
	int r = vm_series_id(s, snap, vm, &id);
	if (r < 0)
		return r;
	sqlite3_stmt *st = s->stmt[ST_INSERT_VM_SAMPLE];
	const struct mem_counters *m = &vm->mem;
	sq.bind_int64(st, 1, id);
	sq.bind_int64(st, 2, s->t_ms);
	bind_maybe(st, 3, guest_ram_populated(vm, snap->host.page_size_bytes));
	sq.bind_int(st, 4, vm->overhead_method == METHOD_EXACT);
	bind_maybe(st, 5, m->rss);
	bind_maybe(st, 6, m->rss_anon);
	bind_maybe(st, 7, m->rss_file);
	bind_maybe(st, 8, m->rss_shmem);
	bind_maybe(st, 9, m->swap);
	bind_maybe(st, 10, m->ksm_merging_pages);
	bind_maybe(st, 11, m->ksm_zero_pages);
	bind_maybe(st, 12, m->ksm_profit);
	bind_maybe(st, 13, vm->ksm_saved_bytes);
	bind_maybe(st, 14, vm->pss_bytes);
	bind_maybe(st, 15, vm->overhead_bytes);
	bind_maybe(st, 16, ms_of(vm->cpu.cpu_seconds));
	bind_maybe(st, 17, ms_of(vm->cpu.vcpu_delay_seconds));
	bind_maybe(st, 18, vm->cg.memory_bytes);
	bind_maybe(st, 19, vm->cg.limit_bytes);
	bind_maybe(st, 20, vm->cg.oom_kills);
	bind_maybe(st, 21, vm->mem.hugetlb);
	bind_maybe(st, 22, vm_memory_cost(vm));
	bind_maybe(st, 23, vm->io.read_bytes);
	bind_maybe(st, 24, vm->io.write_bytes);
	struct vm_io_totals net = vm_io_net_totals(&vm->io);
	bind_maybe(st, 25, net.rx_bytes);
	bind_maybe(st, 26, net.tx_bytes);
	bind_maybe(st, 27, net.dropped);
	r = step_done(s, st);
	return r < 0 ? r : insert_disks(s, id, vm->disks);
}

/* Forgets cached VMs that were not in this snapshot (they ended). */
static void prune_keys(struct store *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nkeys; i++) {
		if (s->keys[i].seen) {
			s->keys[i].seen = false;
			s->keys[n++] = s->keys[i];
		}
	}
	s->nkeys = n;
}

/* ---- KVM counters ---- */

static void kvm_forget(struct store *s)
{
	for (size_t i = 0; i < s->nkvm_last; i++)
		free(s->kvm_last[i].values);
	s->nkvm_last = 0;
}

/* Database ids for the reader's counters (its set is fixed once found). */
static int kvm_counter_ids(struct store *s, const struct kvm_reader *kvm)
{
	size_t n = kvm_reader_ncounters(kvm);
	if (s->kvm_ids && s->kvm_ncounters == n)
		return 0;
	kvm_forget(s);
	free(s->kvm_ids);
	s->kvm_ncounters = 0;
	s->kvm_ids = calloc(n ? n : 1, sizeof(*s->kvm_ids));
	if (!s->kvm_ids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *name = kvm_counter_name(kvm, i);
		sqlite3_stmt *st = s->stmt[ST_INSERT_KVM_COUNTER];
		sq.bind_text(st, 1, name, -1, SQLITE_STATIC);
		sq.bind_text(st, 2, kvm_stat_kind_name(kvm_counter_kind(kvm, i)), -1, SQLITE_STATIC);
		int r = step_done(s, st);
		if (r < 0)
			return r;
		st = s->stmt[ST_FIND_KVM_COUNTER];
		sq.bind_text(st, 1, name, -1, SQLITE_STATIC);
		int rc = sq.step(st);
		s->kvm_ids[i] = rc == SQLITE_ROW ? sq.column_int64(st, 0) : -1;
		sq.reset(st);
		sq.clear_bindings(st);
		if (rc != SQLITE_ROW)
			return rc == SQLITE_DONE ? -EIO : errno_from_sqlite(s->db, rc);
	}
	s->kvm_ncounters = n;
	return 0;
}

static struct kvm_last *kvm_last_for(struct store *s, int64_t vm_id)
{
	for (size_t i = 0; i < s->nkvm_last; i++)
		if (s->kvm_last[i].vm_id == vm_id)
			return &s->kvm_last[i];
	if (s->nkvm_last == s->capkvm_last) {
		size_t cap = s->capkvm_last ? s->capkvm_last * 2 : 16;
		struct kvm_last *p = realloc(s->kvm_last, cap * sizeof(*p));
		if (!p)
			return NULL;
		s->kvm_last = p;
		s->capkvm_last = cap;
	}
	maybe_i64 *v = calloc(s->kvm_ncounters ? s->kvm_ncounters : 1, sizeof(*v));
	if (!v)
		return NULL;
	struct kvm_last *l = &s->kvm_last[s->nkvm_last++];
	*l = (struct kvm_last){.vm_id = vm_id, .values = v};
	return l;
}

/* Writes the values of one VM (or the sums) that changed since the last sample. */
static int kvm_write_values(struct store *s, int64_t vm_id, int64_t t_ms, const maybe_i64 *values)
{
	struct kvm_last *last = kvm_last_for(s, vm_id);
	if (!last)
		return -ENOMEM;
	last->seen = true;
	for (size_t i = 0; i < s->kvm_ncounters; i++) {
		if (!values[i].known || (last->values[i].known && last->values[i].v == values[i].v))
			continue;
		sqlite3_stmt *st = s->stmt[ST_INSERT_KVM_SAMPLE];
		sq.bind_int64(st, 1, vm_id);
		sq.bind_int64(st, 2, s->kvm_ids[i]);
		sq.bind_int64(st, 3, t_ms);
		sq.bind_int64(st, 4, values[i].v);
		int r = step_done(s, st);
		if (r < 0)
			return r;
		last->values[i] = values[i];
	}
	return 0;
}

/* The host row: the running totals for events and times, the global files for gauges. */
static int insert_kvm_host(struct store *s, int64_t t, const struct kvm_rows *rows)
{
	const struct kvm_sample *ks = rows->ks;
	if (!rows->host)
		return kvm_write_values(s, 0, t, ks->total);
	maybe_i64 *v = malloc((ks->ncounters ? ks->ncounters : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < ks->ncounters; i++)
		v[i] = kvm_counter_kind(rows->kvm, i) == KVM_STAT_GAUGE ? ks->total[i] : rows->host[i];
	int r = kvm_write_values(s, 0, t, v);
	free(v);
	return r;
}

static int insert_kvm(struct store *s, const struct kvm_rows *rows)
{
	const struct kvm_sample *ks = rows->ks;
	int r = kvm_counter_ids(s, rows->kvm);
	if (r < 0)
		return r;
	if (ks->ncounters != s->kvm_ncounters)
		return -EINVAL;
	int64_t t = s->t_ms;
	r = insert_kvm_host(s, t, rows);
	for (size_t i = 0; r == 0 && i < ks->nvms; i++) {
		const struct kvm_vm_sample *v = &ks->vms[i];
		for (size_t k = 0; k < s->nkeys; k++) {
			/* s->keys holds exactly this snapshot's VMs now */
			if (s->keys[k].pid == v->pid && (v->start_ticks == 0 || s->keys[k].start_ticks == v->start_ticks)) {
				r = kvm_write_values(s, s->keys[k].id, t, v->values);
				break;
			}
		}
	}
	/* VMs that ended: forget their last values. */
	size_t n = 0;
	for (size_t i = 0; i < s->nkvm_last; i++) {
		if (s->kvm_last[i].seen) {
			s->kvm_last[i].seen = false;
			s->kvm_last[n++] = s->kvm_last[i];
		} else {
			free(s->kvm_last[i].values);
		}
	}
	s->nkvm_last = n;
	return r;
}

int store_write_snapshot(struct store *s, const struct snapshot *snap)
{
	return store_write_sample(s, snap, NULL);
}

/* The sample's time: its wall clock, moved on by a millisecond while a sample already has that
 * time (the clock was set back), so that no recorded sample is replaced. */
static int sample_time(struct store *s, double wall_seconds)
{
	sqlite3_stmt *st = s->stmt[ST_SAMPLE_AT];
	for (s->t_ms = ms(wall_seconds);; s->t_ms++) {
		sq.bind_int64(st, 1, s->t_ms);
		int rc = sq.step(st);
		sq.reset(st);
		if (rc == SQLITE_DONE)
			return 0;
		if (rc != SQLITE_ROW)
			return errno_from_sqlite(s->db, rc);
	}
}

/* A deleted database file (st_nlink 0) is closed and created anew at its path, instead of
 * recording into a file nobody can read; 1 when that happened. */
static int follow_path(struct store *s)
{
	struct stat st;
	if (fstat(s->lock_fd, &st) < 0)
		return -errno;
	if (st.st_nlink > 0)
		return 0;
	struct store *fresh;
	for (size_t i = 0; i < ST_COUNT; i++) {
		sq.finalize(s->stmt[i]);
		s->stmt[i] = NULL;
	}
	sq.close_v2(s->db);
	s->db = NULL;
	close(s->lock_fd);
	s->lock_fd = -1;
	int r = open_writer(s->path, true, false, &fresh);
	if (r < 0)
		return r;
	/* fresh's handles into s, which the caller keeps using; its caches start empty too */
	s->db = fresh->db;
	s->lock_fd = fresh->lock_fd;
	memcpy(s->stmt, fresh->stmt, sizeof(s->stmt));
	fresh->db = NULL;
	fresh->lock_fd = -1;
	memset(fresh->stmt, 0, sizeof(fresh->stmt));
	store_close(fresh);
	s->nkeys = 0;
	kvm_forget(s);
	free(s->kvm_ids);
	s->kvm_ids = NULL;
	s->kvm_ncounters = 0;
	s->last_downsample = 0;
	return 1;
}

/* An I/O error on a file system that went read-only under the writer (ext4 errors=remount-ro:
 * statvfs does not say so, fsync does) is the read-only error: SQLite's errno for it is lost. */
static int write_error(struct store *s, int r)
{
	struct statvfs vfs;
	if (r != -EIO || s->lock_fd < 0)
		return r;
	if ((fstatvfs(s->lock_fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) || (fsync(s->lock_fd) < 0 && errno == EROFS))
		return -EROFS;
	return r;
}

int store_write_sample(struct store *s, const struct snapshot *snap, const struct kvm_rows *rows)
{
	if (!s->writer || !s->db)
		return -EBADF;
	int reopened = follow_path(s);
	if (reopened < 0)
		return s->db ? write_error(s, reopened) : reopened;
	int r = step_done(s, s->stmt[ST_BEGIN]);
	if (r < 0)
		return write_error(s, r);
	r = sample_time(s, snap->wall_seconds);
	if (r == 0)
		r = insert_host(s, snap);
	for (size_t i = 0; r == 0 && i < snap->vms.n; i++)
		r = insert_vm(s, snap, &snap->vms.vms[i]);
	if (r == 0)
		prune_keys(s); /* the cache now holds this snapshot's VMs only */
	if (r == 0 && rows)
		r = insert_kvm(s, rows);
	if (r == 0)
		r = step_done(s, s->stmt[ST_COMMIT]);
	if (r < 0) {
		if (!sq.get_autocommit(s->db))
			step_done(s, s->stmt[ST_ROLLBACK]);
		s->nkeys = 0; /* series created in the rolled-back transaction are gone */
		kvm_forget(s); /* the next sample writes every KVM value again */
		if (r == -ENOSPC) /* the WAL may hold what the database file has room for */
			exec_sql(s, "PRAGMA wal_checkpoint(TRUNCATE)");
		return write_error(s, r);
	}
	if (snap->wall_seconds - s->last_downsample >= DOWNSAMPLE_EVERY_SECONDS ||
	    snap->wall_seconds < s->last_downsample) {
		r = store_downsample(s, snap->wall_seconds);
		/* The sample is in; downsampling on a full disk is retried with the next one. */
		if (r < 0 && r != -ENOSPC)
			return write_error(s, r);
	}
	return reopened;
}

static int sink_write(void *cls, const struct snapshot *snap, const struct kvm_rows *rows)
{
	return store_write_sample(cls, snap, rows);
}

struct sample_sink store_sink(struct store *s, const char *path)
{
	return (struct sample_sink){.write = sink_write, .strerror = store_strerror, .name = path, .cls = s};
}

/* ---- retention ---- */

/* Replaces the rows of one resolution older than cutoff_ms by means over width_ms buckets, in
 * every sampled table. */
static int downsample_tier(struct store *s, int from, int64_t width_ms, int64_t cutoff_ms)
{
	long long w = (long long)width_ms, cut = (long long)cutoff_ms;
	for (size_t i = 0; i < sizeof(store_sampled_tables) / sizeof(store_sampled_tables[0]); i++) {
		const struct store_sampled_table *k = &store_sampled_tables[i];
		char sql[4096];
		int n = snprintf(sql, sizeof(sql),
				 "INSERT OR REPLACE INTO %s (%st_ms, resolution, %s)"
				 " SELECT %s(t_ms / %lld) * %lld + %lld, %lld, %s FROM %s"
				 " WHERE resolution = %d AND t_ms < %lld GROUP BY %st_ms / %lld;"
				 "DELETE FROM %s WHERE resolution = %d AND t_ms < %lld;",
				 k->table, k->keys, k->columns, k->keys, w, w, w / 2, w / 1000, k->means, k->table, from,
				 cut, k->keys, w, k->table, from, cut);
		if (n < 0 || (size_t)n >= sizeof(sql))
			return -ENAMETOOLONG;
		int r = exec_sql(s, sql);
		if (r < 0)
			return r;
	}
	return 0;
}

int store_downsample(struct store *s, double now_seconds)
{
	if (!s->writer)
		return -EBADF;
	const struct store_retention *k = &s->retention;
	int64_t now = ms(now_seconds);
	int64_t raw_cut = (now - ms(k->raw_seconds)) / 300000 * 300000;
	int64_t m5_cut = (now - ms(k->minute5_seconds)) / 3600000 * 3600000;
	int64_t h_cut = now - ms(k->hour_seconds);
	int r = exec_sql(s, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = downsample_tier(s, 0, 300000, raw_cut);
	if (r == 0)
		r = downsample_tier(s, 300, 3600000, m5_cut);
	if (r == 0) {
		/* A VM's disk rows have its samples' times (one transaction, the same tiers): they go with
		 * them, and no series is removed while it has any. */
		char sql[512];
		snprintf(sql, sizeof(sql),
			 "DELETE FROM samples WHERE t_ms < %lld; DELETE FROM vm_samples WHERE t_ms < %lld;"
			 "DELETE FROM kvm_samples WHERE t_ms < %lld; DELETE FROM vm_disk_samples WHERE t_ms < %lld;"
			 "DELETE FROM vms WHERE NOT EXISTS (SELECT 1 FROM vm_samples WHERE vm_id = vms.id);"
			 "DELETE FROM kvm_samples WHERE vm_id != 0 AND vm_id NOT IN (SELECT id FROM vms);",
			 (long long)h_cut, (long long)h_cut, (long long)h_cut, (long long)h_cut);
		r = exec_sql(s, sql);
	}
	if (r == 0)
		r = exec_sql(s, "COMMIT");
	if (r < 0) {
		if (!sq.get_autocommit(s->db))
			exec_sql(s, "ROLLBACK");
		return r;
	}
	s->last_downsample = now_seconds;
	/* Series deleted above may be cached. */
	s->nkeys = 0;
	return 0;
}

/* ---- reading ---- */

static int prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sq.prepare_v2(s->db, sql, -1, st, NULL);
	return errno_from_sqlite(s->db, rc);
}

/* Grows an array by one element; returns it or NULL. */
static void *grow(void **arr, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *p = realloc(*arr, c * size);
		if (!p)
			return NULL;
		*arr = p;
		*cap = c;
	}
	char *item = (char *)*arr + (*n)++ * size;
	memset(item, 0, size);
	return item;
}

typedef void fill_row(sqlite3_stmt *st, void *item);

/* Steps a prepared, bound statement to its end: one zeroed item of `size` bytes per row, filled
 * by fill; finalizes the statement. ret is the caller's `T **` (the array, to free) and is set,
 * with *ret_n, only on success. */
static int collect_rows(struct store *s, sqlite3_stmt *st, size_t size, fill_row *fill, void *ret, size_t *ret_n)
{
	void *arr = NULL;
	size_t n = 0, cap = 0;
	int r = 0, rc;
	while ((rc = sq.step(st)) == SQLITE_ROW) {
		void *item = grow(&arr, &n, &cap, size);
		if (!item) {
			r = -ENOMEM;
			break;
		}
		fill(st, item);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = errno_from_sqlite(s->db, rc);
	sq.finalize(st);
	if (r < 0) {
		free(arr);
		return r;
	}
	memcpy(ret, &arr, sizeof(arr)); /* T ** as void *: every object pointer has one representation here */
	*ret_n = n;
	return 0;
}

/* Rows of a query over a time range: ?1 and ?2 are since and until (seconds), ?3 the VM's id when
 * vm_id >= 0. As collect_rows otherwise. */
static int query_rows(struct store *s, const char *sql, double since, double until, int64_t vm_id, size_t size,
		      fill_row *fill, void *ret, size_t *ret_n)
{
	sqlite3_stmt *st;
	int r = prepare(s, sql, &st);
	if (r < 0)
		return r;
	sq.bind_int64(st, 1, ms(since));
	sq.bind_int64(st, 2, ms(until));
	if (vm_id >= 0)
		sq.bind_int64(st, 3, vm_id);
	return collect_rows(s, st, size, fill, ret, ret_n);
}

int store_kvm_points(struct store *s, int64_t vm_id, const char *counter, double since, double until,
		     double **ret_t, int64_t **ret_values, size_t *ret_n)
{
	sqlite3_stmt *st;
	int r = prepare(s,
			"SELECT k.t_ms, k.value FROM kvm_samples k JOIN kvm_counters c ON c.id = k.counter_id"
			" WHERE c.name = ?1 AND k.vm_id = ?2 AND k.t_ms BETWEEN ?3 AND ?4 ORDER BY k.t_ms",
			&st);
	if (r < 0)
		return r;
	sq.bind_text(st, 1, counter, -1, SQLITE_STATIC);
	sq.bind_int64(st, 2, vm_id);
	sq.bind_int64(st, 3, ms(since));
	sq.bind_int64(st, 4, ms(until));
	double *t = NULL;
	int64_t *v = NULL;
	size_t n = 0, cap = 0, capv = 0, nv = 0;
	int rc;
	while ((rc = sq.step(st)) == SQLITE_ROW) {
		double *pt = grow((void **)&t, &n, &cap, sizeof(*t));
		int64_t *pv = grow((void **)&v, &nv, &capv, sizeof(*v));
		if (!pt || !pv) {
			r = -ENOMEM;
			break;
		}
		*pt = (double)sq.column_int64(st, 0) / 1000.0;
		*pv = sq.column_int64(st, 1);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = errno_from_sqlite(s->db, rc);
	sq.finalize(st);
	if (r == 0 && n == 0)
		r = -ENOENT;
	if (r < 0) {
		free(t);
		free(v);
		return r;
	}
	*ret_t = t;
	*ret_values = v;
	*ret_n = n;
	return 0;
}

int store_time_range(struct store *s, double *ret_first, double *ret_last)
{
	sqlite3_stmt *st;
	int r = prepare(s, "SELECT MIN(t_ms), MAX(t_ms) FROM samples", &st);
	if (r < 0)
		return r;
	int rc = sq.step(st);
	if (rc == SQLITE_ROW && sq.column_type(st, 0) != SQLITE_NULL) {
		*ret_first = (double)sq.column_int64(st, 0) / 1000.0;
		*ret_last = (double)sq.column_int64(st, 1) / 1000.0;
		r = 0;
	} else {
		r = rc == SQLITE_ROW || rc == SQLITE_DONE ? -ENODATA : errno_from_sqlite(s->db, rc);
	}
	sq.finalize(st);
	return r;
}

static void column_text(sqlite3_stmt *st, int i, char *buf, size_t cap)
{
	const unsigned char *t = sq.column_text(st, i);
	snprintf(buf, cap, "%s", t ? (const char *)t : "");
}

static void fill_vm(sqlite3_stmt *st, void *item)
{
	struct store_vm *v = item;
	v->id = sq.column_int64(st, 0);
	v->pid = (pid_t)sq.column_int64(st, 1);
	v->start_ticks = (uint64_t)sq.column_int64(st, 2);
	column_text(st, 3, v->name, sizeof(v->name));
	column_text(st, 4, v->uuid, sizeof(v->uuid));
	column_text(st, 5, v->vmm, sizeof(v->vmm));
	v->guest_ram_bytes = column_maybe(st, 6);
	v->started_seconds = sq.column_type(st, 7) == SQLITE_NULL
				     ? NAN
				     : (double)sq.column_int64(st, 7) / 1000.0;
	v->first_seconds = (double)sq.column_int64(st, 8) / 1000.0;
	v->last_seconds = (double)sq.column_int64(st, 9) / 1000.0;
	v->samples = (size_t)sq.column_int64(st, 10);
}

int store_vms(struct store *s, double since, double until, struct store_vm **ret, size_t *ret_n)
{
	return query_rows(s,
			"SELECT v.id, v.pid, v.start_ticks, v.name, v.uuid, v.vmm, v.guest_ram_bytes, v.started_ms,"
			" MIN(x.t_ms), MAX(x.t_ms), COUNT(*) FROM vms v JOIN vm_samples x ON x.vm_id = v.id"
			" WHERE x.t_ms BETWEEN ?1 AND ?2 GROUP BY v.id ORDER BY MIN(x.t_ms), v.id",
			since, until, -1, sizeof(**ret), fill_vm, ret, ret_n);
}

static void fill_vm_point(sqlite3_stmt *st, void *item)
{
	struct store_vm_point *p = item;
	p->t = (double)sq.column_int64(st, 0) / 1000.0;
	p->resolution = sq.column_int(st, 1);
	p->populated = sq.column_int(st, 2) != 0;
	p->exact = sq.column_int(st, 3) != 0;
	maybe_i64 *fields[] = {&p->rss, &p->rss_anon, &p->rss_file, &p->rss_shmem, &p->swap,
			       &p->ksm_merging_pages, &p->ksm_zero_pages, &p->ksm_profit, &p->ksm_saved,
			       &p->pss, &p->overhead, &p->cpu_ms, &p->vcpu_delay_ms, &p->cgroup_memory,
			       &p->cgroup_limit, &p->oom_kills, &p->hugetlb, &p->memory_cost, &p->io_read,
			       &p->io_write, &p->net_rx, &p->net_tx, &p->net_dropped};
	columns_maybe(st, 4, fields, sizeof(fields) / sizeof(fields[0]));
}

int store_vm_points(struct store *s, int64_t vm_id, double since, double until, struct store_vm_point **ret,
		    size_t *ret_n)
{
	char sql[640];
	snprintf(sql, sizeof(sql),
		 "SELECT t_ms, resolution, populated, exact, rss, rss_anon, rss_file, rss_shmem, swap,"
		 " ksm_merging_pages, ksm_zero_pages, ksm_profit, ksm_saved, pss, overhead, cpu_ms, %s,"
		 " cgroup_memory, cgroup_limit, oom_kills, hugetlb, memory_cost, io_read, io_write, net_rx, net_tx,"
		 " net_dropped FROM vm_samples"
		 " WHERE vm_id = ?3 AND t_ms BETWEEN ?1 AND ?2 ORDER BY t_ms",
		 s->version >= 6 ? "vcpu_delay_ms" : "vcpu_wait_ms");
	return query_rows(s, sql, since, until, vm_id, sizeof(**ret), fill_vm_point, ret, ret_n);
}

static void fill_host_point(sqlite3_stmt *st, void *item)
{
	struct store_host_point *p = item;
	p->t = (double)sq.column_int64(st, 0) / 1000.0;
	p->resolution = sq.column_int(st, 1);
	p->gather_seconds = sq.column_double(st, 2) / 1e6;
	maybe_i64 *fields[] = {&p->mem_total, &p->mem_available, &p->mem_free, &p->swap_total,
			       &p->swap_free, &p->page_size, &p->ksm_run, &p->ksm_pages_shared,
			       &p->ksm_pages_sharing, &p->ksm_pages_unshared, &p->ksm_pages_volatile,
			       &p->ksm_zero_pages, &p->ksm_full_scans, &p->ksm_pages_scanned,
			       &p->ksm_general_profit, &p->ksm_pages_to_scan, &p->ksm_sleep_millisecs,
			       &p->ksmd_cpu_ns, &p->vm_count, &p->skipped};
	columns_maybe(st, 3, fields, sizeof(fields) / sizeof(fields[0]));
}

int store_host_points(struct store *s, double since, double until, struct store_host_point **ret,
		      size_t *ret_n)
{
	return query_rows(s,
			"SELECT t_ms, resolution, gather_us, mem_total, mem_available, mem_free, swap_total,"
			" swap_free, page_size, ksm_run, ksm_pages_shared, ksm_pages_sharing, ksm_pages_unshared,"
			" ksm_pages_volatile, ksm_zero_pages, ksm_full_scans, ksm_pages_scanned, ksm_general_profit,"
			" ksm_pages_to_scan, ksm_sleep_millisecs, ksmd_cpu_ns, vm_count, skipped FROM samples"
			" WHERE t_ms BETWEEN ?1 AND ?2 ORDER BY t_ms",
			since, until, -1, sizeof(**ret), fill_host_point, ret, ret_n);
}

static void fill_disk_point(sqlite3_stmt *st, void *item)
{
	struct store_disk_point *p = item;
	p->t = (double)sq.column_int64(st, 0) / 1000.0;
	p->resolution = sq.column_int(st, 1);
	column_text(st, 2, p->device, sizeof(p->device));
	maybe_i64 *fields[] = {&p->read_bytes, &p->write_bytes, &p->read_ops, &p->write_ops, &p->flush_ops,
			       &p->read_time_ns, &p->write_time_ns, &p->flush_time_ns};
	columns_maybe(st, 3, fields, sizeof(fields) / sizeof(fields[0]));
}

int store_vm_disk_points(struct store *s, int64_t vm_id, double since, double until, struct store_disk_point **ret,
			 size_t *ret_n)
{
	if (s->version < 6) { /* no disks recorded before */
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	return query_rows(s,
			"SELECT t_ms, resolution, device, read_bytes, write_bytes, read_ops, write_ops, flush_ops,"
			" read_time_ns, write_time_ns, flush_time_ns FROM vm_disk_samples"
			" WHERE vm_id = ?3 AND t_ms BETWEEN ?1 AND ?2 ORDER BY device, t_ms",
			since, until, vm_id, sizeof(**ret), fill_disk_point, ret, ret_n);
}
