/* SQLite, loaded when a command opens a database (record, serve --db, report, doctor's history)
 * rather than linked: linked, every command mapped and relocated it before main(), 0.9 ms of
 * each start (src/io/dynlib.h). The calls keep SQLite's own declarations (typeof);
 * `sq.step(st)` is sqlite3_step(st). */
#ifndef VMHOST_STORE_SQLITE_H
#define VMHOST_STORE_SQLITE_H

#include <sqlite3.h>
#include <stddef.h>

#define SQLITE_CALLS(X)                                                                                \
	X(bind_int)                                                                                    \
	X(bind_int64)                                                                                  \
	X(bind_null)                                                                                   \
	X(bind_text)                                                                                   \
	X(busy_timeout)                                                                                \
	X(clear_bindings)                                                                              \
	X(close_v2)                                                                                    \
	X(column_double)                                                                               \
	X(column_int)                                                                                  \
	X(column_int64)                                                                                \
	X(column_text)                                                                                 \
	X(column_type)                                                                                 \
	X(db_config)                                                                                   \
	X(db_readonly)                                                                                 \
	X(exec)                                                                                        \
	X(extended_result_codes)                                                                       \
	X(finalize)                                                                                    \
	X(get_autocommit)                                                                              \
	X(last_insert_rowid)                                                                           \
	X(open_v2)                                                                                     \
	X(prepare_v2)                                                                                  \
	X(prepare_v3)                                                                                  \
	X(reset)                                                                                       \
	X(step)                                                                                        \
	X(system_errno)

struct sqlite_calls {
#define SQLITE_CALL_POINTER(name) __typeof__(sqlite3_##name) *name;
	SQLITE_CALLS(SQLITE_CALL_POINTER)
#undef SQLITE_CALL_POINTER
};

/* Filled by sqlite_load(); not to be called before it has returned 0. */
extern struct sqlite_calls sq;

/* Loads the library once (later calls give the first answer). 0, or -ELIBACC with the reason
 * in err (sqlite_load_error() gives it later too). */
int sqlite_load(char *err, size_t cap);
const char *sqlite_load_error(void);

#endif
