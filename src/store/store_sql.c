/* The SQLite wrappers of the store's files (store_private.h): one way to run, step, bind and read
 * back, each mapping SQLite's result codes through store_sqlite_errno. */
#include "store/store_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sql_exec(struct store *s, const char *sql)
{
	return store_sqlite_errno(s, sq.exec(s->db, sql, NULL, NULL, NULL));
}

int sql_prepare(struct store *s, const char *sql, sqlite3_stmt **ret)
{
	return store_sqlite_errno(s, sq.prepare_v2(s->db, sql, -1, ret, NULL));
}

int sql_step_done(struct store *s, sqlite3_stmt *st)
{
	int rc = sq.step(st);
	sq.reset(st);
	sq.clear_bindings(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : store_sqlite_errno(s, rc);
}

void sql_bind_maybe(sqlite3_stmt *st, int i, maybe_i64 v)
{
	if (v.known)
		sq.bind_int64(st, i, v.v);
	else
		sq.bind_null(st, i);
}

maybe_i64 sql_column_maybe(sqlite3_stmt *st, int i)
{
	if (sq.column_type(st, i) == SQLITE_NULL)
		return UNKNOWN;
	return MAYBE(sq.column_int64(st, i));
}

void sql_columns_maybe(sqlite3_stmt *st, int first, maybe_i64 *const *fields, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*fields[i] = sql_column_maybe(st, first + (int)i);
}

void sql_column_text(sqlite3_stmt *st, int i, char *buf, size_t cap)
{
	const unsigned char *t = sq.column_text(st, i);
	snprintf(buf, cap, "%s", t ? (const char *)t : "");
}

double sql_column_seconds(sqlite3_stmt *st, int i) { return (double)sq.column_int64(st, i) / 1000.0; }

void *sql_grow(void **arr, size_t *n, size_t *cap, size_t size)
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

int sql_collect_rows(struct store *s, sqlite3_stmt *st, size_t size, sql_fill_row *fill, void *ret, size_t *ret_n)
{
	void *arr = NULL;
	size_t n = 0, cap = 0;
	int r = 0, rc;
	while ((rc = sq.step(st)) == SQLITE_ROW) {
		void *item = sql_grow(&arr, &n, &cap, size);
		if (!item) {
			r = -ENOMEM;
			break;
		}
		fill(st, item);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_sqlite_errno(s, rc);
	sq.finalize(st);
	if (r < 0) {
		free(arr);
		return r;
	}
	memcpy(ret, &arr, sizeof(arr)); /* T ** as void *: every object pointer has one representation here */
	*ret_n = n;
	return 0;
}
