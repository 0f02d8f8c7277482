#include "store/store_share.h"

#include <errno.h>
#include <stdlib.h>

#include "store/store_private.h"

static int insert_run(struct store *s, const struct share_run *r, int64_t *ret_id)
{
	sqlite3_stmt *st = NULL;
	int e = sql_prepare(s, "INSERT INTO share_runs (t_ms, sample_n, page_size, host_pages, zero_pages,"
			   " mergeable_savings, ksm_saved, vm_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &st);
	if (e < 0)
		return e;
	sq.bind_int64(st, 1, store_ms(r->t));
	sq.bind_int64(st, 2, r->sample_n);
	sq.bind_int64(st, 3, r->page_size);
	sq.bind_int64(st, 4, r->host_pages);
	sq.bind_int64(st, 5, r->zero_pages);
	sq.bind_int64(st, 6, r->mergeable_savings_bytes);
	sql_bind_maybe(st, 7, r->ksm_saved_bytes);
	sq.bind_int64(st, 8, (int64_t)r->n);
	e = sql_step_done(s, st);
	sq.finalize(st);
	if (e == 0)
		*ret_id = sq.last_insert_rowid(s->db);
	return e;
}

static int insert_vms(struct store *s, const struct share_run *r, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int e = sql_prepare(s, "INSERT INTO share_vms (run_id, vm, pid, name, pages, zero_pages, unique_pages,"
			   " error_bound_pages, sketch_bytes, partial_reason)"
			   " VALUES (?1, ?2, ?3, NULLIF(?4, ''), ?5, ?6, ?7, ?8, ?9, NULLIF(?10, ''))", &st);
	for (size_t i = 0; e == 0 && i < r->n; i++) {
		const struct share_run_vm *v = &r->vms[i];
		sq.bind_int64(st, 1, id);
		sq.bind_int64(st, 2, (int64_t)i);
		sq.bind_int64(st, 3, v->pid);
		sq.bind_text(st, 4, v->name, -1, SQLITE_STATIC);
		sq.bind_int64(st, 5, v->pages);
		sq.bind_int64(st, 6, v->zero_pages);
		sq.bind_int64(st, 7, v->unique_pages);
		sq.bind_int64(st, 8, v->error_bound_pages);
		sq.bind_int64(st, 9, v->sketch_bytes);
		sq.bind_text(st, 10, v->partial_reason, -1, SQLITE_STATIC);
		e = sql_step_done(s, st);
	}
	sq.finalize(st);
	return e;
}

static int insert_pairs(struct store *s, const struct share_run *r, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int e = sql_prepare(s, "INSERT INTO share_pairs (run_id, a, b, pages) VALUES (?1, ?2, ?3, ?4)", &st);
	for (size_t a = 0; e == 0 && a < r->n; a++)
		for (size_t b = 0; e == 0 && b < r->n; b++) {
			if (!r->pairs[a * r->n + b])
				continue;
			sq.bind_int64(st, 1, id);
			sq.bind_int64(st, 2, (int64_t)a);
			sq.bind_int64(st, 3, (int64_t)b);
			sq.bind_int64(st, 4, r->pairs[a * r->n + b]);
			e = sql_step_done(s, st);
		}
	sq.finalize(st);
	return e;
}

/* Pairs are most of a map (n x n rows): those of runs older than the 5-minute means' retention
 * go, the runs' own rows and their VMs' stay. */
static int forget_old_pairs(struct store *s, const struct share_run *r)
{
	sqlite3_stmt *st = NULL;
	int e = sql_prepare(s, "DELETE FROM share_pairs WHERE run_id IN (SELECT id FROM share_runs WHERE t_ms < ?1)", &st);
	if (e < 0)
		return e;
	sq.bind_int64(st, 1, store_ms(r->t - store_retention_default.minute5_seconds));
	e = sql_step_done(s, st);
	sq.finalize(st);
	return e;
}

int store_share_write(struct store *s, const struct share_run *r)
{
	int64_t id = 0;
	int e = sql_exec(s, "BEGIN IMMEDIATE");
	if (e < 0)
		return e;
	e = insert_run(s, r, &id);
	if (e == 0)
		e = insert_vms(s, r, id);
	if (e == 0)
		e = insert_pairs(s, r, id);
	if (e == 0)
		e = forget_old_pairs(s, r);
	if (e == 0)
		e = sql_exec(s, "COMMIT");
	if (e < 0)
		sql_exec(s, "ROLLBACK");
	return e;
}

/* The latest run's own row into r (its VMs and pairs not yet); its id. */
static int read_run(struct store *s, struct share_run *r, int64_t *ret_id)
{
	sqlite3_stmt *st = NULL;
	int e = sql_prepare(s, "SELECT id, t_ms, sample_n, page_size, host_pages, zero_pages, mergeable_savings,"
			   " ksm_saved, vm_count FROM share_runs ORDER BY t_ms DESC, id DESC LIMIT 1", &st);
	if (e < 0)
		return e;
	int rc = sq.step(st);
	if (rc == SQLITE_ROW) {
		int64_t n = sq.column_int64(st, 8);
		e = n < 0 || n > 1 << 16 ? -EPROTO : share_run_alloc((size_t)n, r);
		if (e == 0) {
			*ret_id = sq.column_int64(st, 0);
			r->t = sql_column_seconds(st, 1);
			r->sample_n = sq.column_int64(st, 2);
			r->page_size = sq.column_int64(st, 3);
			r->host_pages = sq.column_int64(st, 4);
			r->zero_pages = sq.column_int64(st, 5);
			r->mergeable_savings_bytes = sq.column_int64(st, 6);
			r->ksm_saved_bytes = sql_column_maybe(st, 7);
		}
	} else {
		e = rc == SQLITE_DONE ? -ENODATA : store_sqlite_errno(s, rc);
	}
	sq.finalize(st);
	return e;
}

static int read_vms(struct store *s, struct share_run *r, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int e = sql_prepare(s, "SELECT vm, pid, name, pages, zero_pages, unique_pages, error_bound_pages, sketch_bytes,"
			   " partial_reason FROM share_vms WHERE run_id = ?1", &st);
	if (e < 0)
		return e;
	sq.bind_int64(st, 1, id);
	int rc;
	while ((rc = sq.step(st)) == SQLITE_ROW) {
		int64_t i = sq.column_int64(st, 0);
		if (i < 0 || (size_t)i >= r->n)
			continue;
		struct share_run_vm *v = &r->vms[i];
		v->pid = (pid_t)sq.column_int64(st, 1);
		sql_column_text(st, 2, v->name, sizeof(v->name));
		v->pages = sq.column_int64(st, 3);
		v->zero_pages = sq.column_int64(st, 4);
		v->unique_pages = sq.column_int64(st, 5);
		v->error_bound_pages = sq.column_int64(st, 6);
		v->sketch_bytes = sq.column_int64(st, 7);
		sql_column_text(st, 8, v->partial_reason, sizeof(v->partial_reason));
	}
	sq.finalize(st);
	return rc == SQLITE_DONE ? 0 : store_sqlite_errno(s, rc);
}

static int read_pairs(struct store *s, struct share_run *r, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int e = sql_prepare(s, "SELECT a, b, pages FROM share_pairs WHERE run_id = ?1", &st);
	if (e < 0)
		return e;
	sq.bind_int64(st, 1, id);
	int rc;
	while ((rc = sq.step(st)) == SQLITE_ROW) {
		int64_t a = sq.column_int64(st, 0), b = sq.column_int64(st, 1);
		if (a >= 0 && b >= 0 && (size_t)a < r->n && (size_t)b < r->n)
			r->pairs[a * (int64_t)r->n + b] = sq.column_int64(st, 2);
	}
	sq.finalize(st);
	return rc == SQLITE_DONE ? 0 : store_sqlite_errno(s, rc);
}

int store_share_latest(struct store *s, struct share_run *ret)
{
	struct share_run r;
	int64_t id = 0;
	int e = read_run(s, &r, &id);
	if (e < 0)
		return e;
	e = read_vms(s, &r, id);
	if (e == 0)
		e = read_pairs(s, &r, id);
	if (e < 0) {
		share_run_free(&r);
		return e;
	}
	*ret = r;
	return 0;
}
