/* What the store's files share and no one else sees: the struct behind `struct store` (the SQLite
 * handle, the writer's prepared statements and its caches), the one mapping of SQLite's result
 * codes to negative errno values (store.c), and the SQLite wrappers every file of the store uses
 * (store_sql.c): exec, prepare, step, a maybe_i64 bound or read as NULL, text and rows read back.
 * store.c opens and closes, store_write.c writes samples, store_read.c reads them back,
 * store_share.c keeps the sharing maps. */
#ifndef VMHOST_STORE_PRIVATE_H
#define VMHOST_STORE_PRIVATE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/maybe.h"
#include "store/sqlite.h"
#include "store/store.h"

/* The writer's statements, prepared once when it opens (store_write_prepare). */
enum store_stmt {
	ST_BEGIN, ST_COMMIT, ST_ROLLBACK, ST_INSERT_SAMPLE, ST_FIND_VM, ST_INSERT_VM, ST_INSERT_VM_SAMPLE,
	ST_INSERT_KVM_COUNTER, ST_FIND_KVM_COUNTER, ST_INSERT_KVM_SAMPLE, ST_SAMPLE_AT, ST_INSERT_DISK_SAMPLE, ST_COUNT
};

/* A VM series the writer has written to: its id by pid and start time. */
struct vm_key {
	pid_t pid;
	uint64_t start_ticks;
	int64_t id;
	bool seen; /* in the current snapshot */
};

/* The last KVM values written for one VM (vm_id 0: the host-wide sums), to write only changes. */
struct kvm_last {
	int64_t vm_id;
	maybe_i64 *values; /* [kvm_ncounters] */
	bool seen;
};

struct store {
	sqlite3 *db;
	int db_fd;   /* the writer's database file, opened by us (io_open_owned) and kept open: which
		      * file it is, whether it was deleted, its file system; -1 for readers */
	int lock_fd; /* the writers' lock (store.c's writers_lock); -1 for readers, share's side writer
		      * and where the lock is the database file itself */
	bool writer;
	char *path;  /* the writer's, to recreate the file when it is deleted under it */
	char *lock_path; /* lock_fd's, removed when the store closes */
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

/* Seconds as the whole milliseconds of the database's times. */
static inline int64_t store_ms(double seconds) { return (int64_t)llround(seconds * 1000.0); }

/* ---- store.c ---- */

/* SQLite's result code rc of a call on s's database as 0 or a negative errno (store_strerror's). */
int store_sqlite_errno(struct store *s, int rc);
/* A database file deleted under its writer (st_nlink 0) is closed and made anew at its path,
 * instead of recording into a file nobody can read: 1 when that happened, else 0 or a negative
 * errno (s->db is NULL when the new one could not be opened). */
int store_follow_path(struct store *s);

/* ---- store_write.c ---- */

/* Prepares the writer's statements (enum store_stmt); 0 or a negative errno. */
int store_write_prepare(struct store *s);
/* Forgets what the writer remembers of the database it wrote: series ids, KVM counter ids and
 * their last values, the last downsampling (its allocations kept for reuse or store_close). */
void store_write_forget(struct store *s);

/* ---- store_sql.c: the SQLite wrappers ---- */

/* Runs sql (one statement or several); 0 or a negative errno. */
int sql_exec(struct store *s, const char *sql);
/* Prepares sql for one use (sq.finalize it); 0 or a negative errno. */
int sql_prepare(struct store *s, const char *sql, sqlite3_stmt **ret);
/* Steps a bound statement once, then resets it and clears its bindings for the next use: 0 when it
 * ran (done, or gave a row that is not wanted), else a negative errno. */
int sql_step_done(struct store *s, sqlite3_stmt *st);
/* Binds v to parameter i, NULL when unknown. */
void sql_bind_maybe(sqlite3_stmt *st, int i, maybe_i64 v);
/* Column i as a maybe_i64: unknown when NULL. */
maybe_i64 sql_column_maybe(sqlite3_stmt *st, int i);
/* Columns first, first + 1, ... into the fields, in order. */
void sql_columns_maybe(sqlite3_stmt *st, int first, maybe_i64 *const *fields, size_t n);
/* Column i's text into buf ("" when NULL), cut to cap bytes. */
void sql_column_text(sqlite3_stmt *st, int i, char *buf, size_t cap);
/* Column i, a time in milliseconds, in seconds. */
double sql_column_seconds(sqlite3_stmt *st, int i);

/* Grows an array by one zeroed element of size bytes; returns it, or NULL (the array as it was). */
void *sql_grow(void **arr, size_t *n, size_t *cap, size_t size);
typedef void sql_fill_row(sqlite3_stmt *st, void *item);
/* Steps a prepared, bound statement to its end: one zeroed item of `size` bytes per row, filled
 * by fill; finalizes the statement. ret is the caller's `T **` (the array, to free) and is set,
 * with *ret_n, only on success. */
int sql_collect_rows(struct store *s, sqlite3_stmt *st, size_t size, sql_fill_row *fill, void *ret, size_t *ret_n);

#endif
