/* Reading the history back (store.h's "reading"): the time range, the VM series, and the host's,
 * a VM's, its disks' and KVM counters' rows over a time range, oldest first. */
#include "store/store_private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows of a query over a time range: ?1 and ?2 are since and until (seconds), ?3 the VM's id when
 * vm_id >= 0. As collect_rows otherwise. */
static int query_rows(struct store *s, const char *sql, double since, double until, int64_t vm_id, size_t size,
		      sql_fill_row *fill, void *ret, size_t *ret_n)
{
	sqlite3_stmt *st;
	int r = sql_prepare(s, sql, &st);
	if (r < 0)
		return r;
	sq.bind_int64(st, 1, store_ms(since));
	sq.bind_int64(st, 2, store_ms(until));
	if (vm_id >= 0)
		sq.bind_int64(st, 3, vm_id);
	return sql_collect_rows(s, st, size, fill, ret, ret_n);
}

int store_kvm_points(struct store *s, int64_t vm_id, const char *counter, double since, double until,
		     double **ret_t, int64_t **ret_values, size_t *ret_n)
{
	sqlite3_stmt *st;
	int r = sql_prepare(s,
			"SELECT k.t_ms, k.value FROM kvm_samples k JOIN kvm_counters c ON c.id = k.counter_id"
			" WHERE c.name = ?1 AND k.vm_id = ?2 AND k.t_ms BETWEEN ?3 AND ?4 ORDER BY k.t_ms",
			&st);
	if (r < 0)
		return r;
	sq.bind_text(st, 1, counter, -1, SQLITE_STATIC);
	sq.bind_int64(st, 2, vm_id);
	sq.bind_int64(st, 3, store_ms(since));
	sq.bind_int64(st, 4, store_ms(until));
	double *t = NULL;
	int64_t *v = NULL;
	size_t n = 0, cap = 0, capv = 0, nv = 0;
	int rc;
	while ((rc = sq.step(st)) == SQLITE_ROW) {
		double *pt = sql_grow((void **)&t, &n, &cap, sizeof(*t));
		int64_t *pv = sql_grow((void **)&v, &nv, &capv, sizeof(*v));
		if (!pt || !pv) {
			r = -ENOMEM;
			break;
		}
		*pt = sql_column_seconds(st, 0);
		*pv = sq.column_int64(st, 1);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_sqlite_errno(s, rc);
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
	int r = sql_prepare(s, "SELECT MIN(t_ms), MAX(t_ms) FROM samples", &st);
	if (r < 0)
		return r;
	int rc = sq.step(st);
	if (rc == SQLITE_ROW && sq.column_type(st, 0) != SQLITE_NULL) {
		*ret_first = sql_column_seconds(st, 0);
		*ret_last = sql_column_seconds(st, 1);
		r = 0;
	} else {
		r = rc == SQLITE_ROW || rc == SQLITE_DONE ? -ENODATA : store_sqlite_errno(s, rc);
	}
	sq.finalize(st);
	return r;
}

static void fill_vm(sqlite3_stmt *st, void *item)
{
	struct store_vm *v = item;
	v->id = sq.column_int64(st, 0);
	v->pid = (pid_t)sq.column_int64(st, 1);
	v->start_ticks = (uint64_t)sq.column_int64(st, 2);
	sql_column_text(st, 3, v->name, sizeof(v->name));
	sql_column_text(st, 4, v->uuid, sizeof(v->uuid));
	sql_column_text(st, 5, v->vmm, sizeof(v->vmm));
	v->guest_ram_bytes = sql_column_maybe(st, 6);
	v->started_seconds = sq.column_type(st, 7) == SQLITE_NULL
				     ? NAN
				     : sql_column_seconds(st, 7);
	v->first_seconds = sql_column_seconds(st, 8);
	v->last_seconds = sql_column_seconds(st, 9);
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
	struct history_vm_point *p = item;
	p->t = sql_column_seconds(st, 0);
	p->resolution = sq.column_int(st, 1);
	p->populated = sq.column_int(st, 2) != 0;
	p->exact = sq.column_int(st, 3) != 0;
	maybe_i64 *fields[] = {&p->rss, &p->rss_anon, &p->rss_file, &p->rss_shmem, &p->swap,
			       &p->ksm_merging_pages, &p->ksm_zero_pages, &p->ksm_profit, &p->ksm_saved,
			       &p->pss, &p->overhead, &p->cpu_ms, &p->vcpu_delay_ms, &p->cgroup_memory,
			       &p->cgroup_limit, &p->oom_kills, &p->hugetlb, &p->memory_cost, &p->io_read,
			       &p->io_write, &p->net_rx, &p->net_tx, &p->net_dropped, &p->stall_us[STALL_WPCOPY],
			       &p->stall_us[STALL_SWAPIN], &p->stall_us[STALL_RECLAIM], &p->stall_us[STALL_THRASHING],
			       &p->stall_us[STALL_COMPACT], &p->stall_us[STALL_IRQ], &p->wpcopy_count};
	sql_columns_maybe(st, 4, fields, sizeof(fields) / sizeof(fields[0]));
}

int store_vm_points(struct store *s, int64_t vm_id, double since, double until, struct history_vm_point **ret,
		    size_t *ret_n)
{
	char sql[900];
	snprintf(sql, sizeof(sql),
		 "SELECT t_ms, resolution, populated, exact, rss, rss_anon, rss_file, rss_shmem, swap,"
		 " ksm_merging_pages, ksm_zero_pages, ksm_profit, ksm_saved, pss, overhead, cpu_ms, %s,"
		 " cgroup_memory, cgroup_limit, oom_kills, hugetlb, memory_cost, io_read, io_write, net_rx, net_tx,"
		 " net_dropped, %s FROM vm_samples"
		 " WHERE vm_id = ?3 AND t_ms BETWEEN ?1 AND ?2 ORDER BY t_ms",
		 s->version >= 6 ? "vcpu_delay_ms" : "vcpu_wait_ms",
		 /* schema 7's stalls: unknown in an older recording read as it is */
		 s->version >= 7 ? "stall_wpcopy_us, stall_swapin_us, stall_reclaim_us, stall_thrashing_us,"
				   " stall_compact_us, stall_irq_us, wpcopy_count"
				 : "NULL, NULL, NULL, NULL, NULL, NULL, NULL");
	return query_rows(s, sql, since, until, vm_id, sizeof(**ret), fill_vm_point, ret, ret_n);
}

static void fill_host_point(sqlite3_stmt *st, void *item)
{
	struct history_host_point *p = item;
	p->t = sql_column_seconds(st, 0);
	p->resolution = sq.column_int(st, 1);
	p->gather_seconds = sq.column_double(st, 2) / 1e6;
	maybe_i64 *fields[] = {&p->mem_total, &p->mem_available, &p->mem_free, &p->swap_total,
			       &p->swap_free, &p->page_size, &p->ksm_run, &p->ksm_pages_shared,
			       &p->ksm_pages_sharing, &p->ksm_pages_unshared, &p->ksm_pages_volatile,
			       &p->ksm_zero_pages, &p->ksm_full_scans, &p->ksm_pages_scanned,
			       &p->ksm_general_profit, &p->ksm_pages_to_scan, &p->ksm_sleep_millisecs,
			       &p->ksmd_cpu_ns, &p->vm_count, &p->skipped};
	sql_columns_maybe(st, 3, fields, sizeof(fields) / sizeof(fields[0]));
}

int store_host_points(struct store *s, double since, double until, struct history_host_point **ret,
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
	struct history_disk_point *p = item;
	p->t = sql_column_seconds(st, 0);
	p->resolution = sq.column_int(st, 1);
	sql_column_text(st, 2, p->device, sizeof(p->device));
	maybe_i64 *fields[] = {&p->read_bytes, &p->write_bytes, &p->read_ops, &p->write_ops, &p->flush_ops,
			       &p->read_time_ns, &p->write_time_ns, &p->flush_time_ns};
	sql_columns_maybe(st, 3, fields, sizeof(fields) / sizeof(fields[0]));
}

int store_vm_disk_points(struct store *s, int64_t vm_id, double since, double until, struct history_disk_point **ret,
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
