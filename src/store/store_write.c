/* Writing the history (store.h's writers): one transaction per sample of the host's, every VM's
 * and its disks' rows, a VM's series found by pid and start time, KVM counters written only when
 * they changed; the sampler's sink; and retention, old samples replaced by 5-minute and 1-hour
 * means. */
#include "store/store_private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/kvm/kvm.h"
#include "core/sample/snapshot.h"
#include "core/sample/sampler.h"
#include "store/store_schema.h"

#define DOWNSAMPLE_EVERY_SECONDS 600.0
/* A VM seen again with the same pid and start time belongs to the same series only when the
 * host's boot time (wall - monotonic clock) agrees within this: otherwise the host rebooted. */
#define BOOT_TOLERANCE_MS 300000

const struct store_retention store_retention_default = {
	.raw_seconds = 2 * 86400.0,
	.minute5_seconds = 30 * 86400.0,
	.hour_seconds = 5 * 365 * 86400.0,
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
				" memory_cost, io_read, io_write, net_rx, net_tx, net_dropped, stall_wpcopy_us, stall_swapin_us,"
				" stall_reclaim_us, stall_thrashing_us, stall_compact_us, stall_irq_us, wpcopy_count)"
				" VALUES (?1, ?2, 0, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
				" ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34)",
	[ST_INSERT_KVM_COUNTER] = "INSERT OR IGNORE INTO kvm_counters (name, kind) VALUES (?1, ?2)",
	[ST_FIND_KVM_COUNTER] = "SELECT id FROM kvm_counters WHERE name = ?1",
	[ST_INSERT_KVM_SAMPLE] = "INSERT OR REPLACE INTO kvm_samples (vm_id, counter_id, t_ms, value)"
				 " VALUES (?1, ?2, ?3, ?4)",
	[ST_SAMPLE_AT] = "SELECT 1 FROM samples WHERE t_ms = ?1",
	[ST_INSERT_DISK_SAMPLE] = "INSERT OR REPLACE INTO vm_disk_samples (vm_id, t_ms, device, read_bytes, write_bytes,"
				  " read_ops, write_ops, flush_ops, read_time_ns, write_time_ns, flush_time_ns)"
				  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
};

int store_write_prepare(struct store *s)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < ST_COUNT; i++) {
		int rc = sq.prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[i], NULL);
		r = store_sqlite_errno(s, rc);
	}
	return r;
}

void store_set_retention(struct store *s, const struct store_retention *r) { s->retention = *r; }

static int insert_host(struct store *s, const struct snapshot *snap)
{
	sqlite3_stmt *st = s->stmt[ST_INSERT_SAMPLE];
	const struct host *h = &snap->host;
	const struct ksm_sysfs *k = &h->ksm;
	int i = 1;
	sq.bind_int64(st, i++, s->t_ms);
	sq.bind_int64(st, i++, llround(snap->gather_seconds * 1e6));
	if (h->mem_known) {
		sql_bind_maybe(st, i++, h->mem.mem_total);
		sql_bind_maybe(st, i++, h->mem.mem_available);
		sql_bind_maybe(st, i++, h->mem.mem_free);
		sql_bind_maybe(st, i++, h->mem.swap_total);
		sql_bind_maybe(st, i++, h->mem.swap_free);
	} else {
		i += 5;
	}
	sq.bind_int64(st, i++, h->page_size_bytes);
	const maybe_i64 ksm_values[] = {k->run, k->pages_shared, k->pages_sharing, k->pages_unshared,
					k->pages_volatile, k->ksm_zero_pages, k->full_scans, k->pages_scanned,
					k->general_profit, k->pages_to_scan, k->sleep_millisecs};
	for (size_t j = 0; j < sizeof(ksm_values) / sizeof(ksm_values[0]); j++)
		sql_bind_maybe(st, i++, k->present ? ksm_values[j] : UNKNOWN);
	sql_bind_maybe(st, i++, snap->ksmd_cpu_ns);
	sq.bind_int64(st, i++, (int64_t)snap->vms.n);
	sq.bind_int64(st, i++, snap->vms.skipped);
	return sql_step_done(s, st);
}

static int64_t boot_ms(const struct snapshot *snap)
{
	return store_ms(snap->wall_seconds - snap->monotonic_seconds);
}

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
	int r = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_sqlite_errno(s, rc);
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
		sql_bind_maybe(st, 8, vm->cfg.guest_ram_bytes);
		r = sql_step_done(s, st);
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
			sql_bind_maybe(st, 4 + (int)j, values[j]);
		int r = sql_step_done(s, st);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A VM's stall seconds by kind as whole microseconds, then its copy count, from column first on;
 * null where delay accounting was not read or the kernel does not count a kind. */
static void bind_stalls(sqlite3_stmt *st, int first, const struct stalls *stalls)
{
	for (int k = 0; k < STALL_NKINDS; k++) {
		double us = stalls->seconds[k] * 1e6;
		sql_bind_maybe(st, first + k, stalls->known && isfinite(us) ? MAYBE(llround(us)) : UNKNOWN);
	}
	int64_t copies = stalls->count[STALL_WPCOPY];
	sql_bind_maybe(st, first + STALL_NKINDS, stalls->known && copies >= 0 ? MAYBE(copies) : UNKNOWN);
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
	sql_bind_maybe(st, 3, guest_ram_populated(vm, snap->host.page_size_bytes));
	sq.bind_int(st, 4, vm->overhead_method == METHOD_EXACT);
	sql_bind_maybe(st, 5, m->rss);
	sql_bind_maybe(st, 6, m->rss_anon);
	sql_bind_maybe(st, 7, m->rss_file);
	sql_bind_maybe(st, 8, m->rss_shmem);
	sql_bind_maybe(st, 9, m->swap);
	sql_bind_maybe(st, 10, m->ksm_merging_pages);
	sql_bind_maybe(st, 11, m->ksm_zero_pages);
	sql_bind_maybe(st, 12, m->ksm_profit);
	sql_bind_maybe(st, 13, vm->ksm_saved_bytes);
	sql_bind_maybe(st, 14, vm->pss_bytes);
	sql_bind_maybe(st, 15, vm->overhead_bytes);
	sql_bind_maybe(st, 16, ms_of(vm->cpu.cpu_seconds));
	sql_bind_maybe(st, 17, ms_of(vm->cpu.vcpu_delay_seconds));
	sql_bind_maybe(st, 18, vm->cg.memory_bytes);
	sql_bind_maybe(st, 19, vm->cg.limit_bytes);
	sql_bind_maybe(st, 20, vm->cg.oom_kills);
	sql_bind_maybe(st, 21, vm->mem.hugetlb);
	sql_bind_maybe(st, 22, vm_memory_cost(vm));
	sql_bind_maybe(st, 23, vm->io.read_bytes);
	sql_bind_maybe(st, 24, vm->io.write_bytes);
	struct vm_io_totals net = vm_io_net_totals(&vm->io);
	sql_bind_maybe(st, 25, net.rx_bytes);
	sql_bind_maybe(st, 26, net.tx_bytes);
	sql_bind_maybe(st, 27, net.dropped);
	bind_stalls(st, 28, &vm->stalls.all);
	r = sql_step_done(s, st);
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

void store_write_forget(struct store *s)
{
	s->nkeys = 0;
	kvm_forget(s);
	free(s->kvm_ids);
	s->kvm_ids = NULL;
	s->kvm_ncounters = 0;
	s->last_downsample = 0;
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
		int r = sql_step_done(s, st);
		if (r < 0)
			return r;
		st = s->stmt[ST_FIND_KVM_COUNTER];
		sq.bind_text(st, 1, name, -1, SQLITE_STATIC);
		int rc = sq.step(st);
		s->kvm_ids[i] = rc == SQLITE_ROW ? sq.column_int64(st, 0) : -1;
		sq.reset(st);
		sq.clear_bindings(st);
		if (rc != SQLITE_ROW)
			return rc == SQLITE_DONE ? -EIO : store_sqlite_errno(s, rc);
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
		int r = sql_step_done(s, st);
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

/* The sample's time: its wall clock, moved on by a millisecond while a sample already has that
 * time (the clock was set back), so that no recorded sample is replaced. */
static int sample_time(struct store *s, double wall_seconds)
{
	sqlite3_stmt *st = s->stmt[ST_SAMPLE_AT];
	for (s->t_ms = store_ms(wall_seconds);; s->t_ms++) {
		sq.bind_int64(st, 1, s->t_ms);
		int rc = sq.step(st);
		sq.reset(st);
		if (rc == SQLITE_DONE)
			return 0;
		if (rc != SQLITE_ROW)
			return store_sqlite_errno(s, rc);
	}
}

/* An I/O error on a file system that went read-only under the writer (ext4 errors=remount-ro:
 * statvfs does not say so, fsync does) is the read-only error: SQLite's errno for it is lost. */
static int write_error(struct store *s, int r)
{
	struct statvfs vfs;
	if (r != -EIO || s->db_fd < 0)
		return r;
	if ((fstatvfs(s->db_fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) || (fsync(s->db_fd) < 0 && errno == EROFS))
		return -EROFS;
	return r;
}

int store_write_sample(struct store *s, const struct snapshot *snap, const struct kvm_rows *rows)
{
	if (!s->writer || !s->db)
		return -EBADF;
	int reopened = store_follow_path(s);
	if (reopened < 0)
		return s->db ? write_error(s, reopened) : reopened;
	int r = sql_step_done(s, s->stmt[ST_BEGIN]);
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
		r = sql_step_done(s, s->stmt[ST_COMMIT]);
	if (r < 0) {
		if (!sq.get_autocommit(s->db))
			sql_step_done(s, s->stmt[ST_ROLLBACK]);
		s->nkeys = 0; /* series created in the rolled-back transaction are gone */
		kvm_forget(s); /* the next sample writes every KVM value again */
		if (r == -ENOSPC) /* the WAL may hold what the database file has room for */
			sql_exec(s, "PRAGMA wal_checkpoint(TRUNCATE)");
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
		int r = sql_exec(s, sql);
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
	int64_t now = store_ms(now_seconds);
	int64_t raw_cut = (now - store_ms(k->raw_seconds)) / 300000 * 300000;
	int64_t m5_cut = (now - store_ms(k->minute5_seconds)) / 3600000 * 3600000;
	int64_t h_cut = now - store_ms(k->hour_seconds);
	int r = sql_exec(s, "BEGIN IMMEDIATE");
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
		r = sql_exec(s, sql);
	}
	if (r == 0)
		r = sql_exec(s, "COMMIT");
	if (r < 0) {
		if (!sq.get_autocommit(s->db))
			sql_exec(s, "ROLLBACK");
		return r;
	}
	s->last_downsample = now_seconds;
	/* Series deleted above may be cached. */
	s->nkeys = 0;
	return 0;
}
