/* SQLite, loaded when a command opens a database (record, serve --db, report, doctor's history)
 * rather than linked: linked, every command mapped and relocated it before main(), 0.9 ms of
 * each start (src/io/dynlib.h). The calls keep SQLite's own declarations (typeof);
 * `sq.step(st)` is sqlite3_step(st). */
#ifndef VMHOST_STORE_SQLITE_H
#define VMHOST_STORE_SQLITE_H

#include <sqlite3.h>
#include <stddef.h>

#include "io/dynlib.h"

#define SQLITE_CALLS(X, P)                                                                         \
	X(P, bind_int)                                                                             \
	X(P, bind_int64)                                                                           \
	X(P, bind_null)                                                                            \
	X(P, bind_text)                                                                            \
	X(P, busy_timeout)                                                                         \
	X(P, clear_bindings)                                                                       \
	X(P, close_v2)                                                                             \
	X(P, column_double)                                                                        \
	X(P, column_int)                                                                           \
	X(P, column_int64)                                                                         \
	X(P, column_text)                                                                          \
	X(P, column_type)                                                                          \
	X(P, db_config)                                                                            \
	X(P, db_readonly)                                                                          \
	X(P, exec)                                                                                 \
	X(P, extended_result_codes)                                                                \
	X(P, finalize)                                                                             \
	X(P, get_autocommit)                                                                       \
	X(P, last_insert_rowid)                                                                    \
	X(P, open_v2)                                                                              \
	X(P, prepare_v2)                                                                           \
	X(P, prepare_v3)                                                                           \
	X(P, reset)                                                                                \
	X(P, step)                                                                                 \
	X(P, system_errno)

/* Filled by sqlite_load(); not to be called before it has returned 0. */
extern DYNLIB_CALLS(sqlite_calls, sqlite3_, SQLITE_CALLS) sq;

/* Loads the library once (later calls give the first answer). 0, or -ELIBACC with the reason
 * in err (sqlite_load_error() gives it later too). */
int sqlite_load(char *err, size_t cap);
const char *sqlite_load_error(void);

#endif
