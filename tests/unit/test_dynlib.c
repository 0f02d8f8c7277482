/* Libraries loaded when used (core/dynlib): SQLite as the store loads it, and what an operator
 * reads when a library is missing or too old. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "io/dynlib.h"
#include "store/sqlite.h"

static void test_sqlite_loads_and_works(void **state)
{
	(void)state;
	char err[256] = "";
	assert_int_equal(sqlite_load(err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_null(sqlite_load_error());
	sqlite3 *db;
	assert_int_equal(sq.open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sq.prepare_v2(db, "SELECT 6 * 7", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sq.step(st), SQLITE_ROW);
	assert_int_equal(sq.column_int64(st, 0), 42);
	sq.finalize(st);
	sq.close_v2(db);
}

static void test_missing_library_says_what_to_install(void **state)
{
	(void)state;
	static const char *const names[] = {"strlen"};
	void *calls[1] = {NULL};
	struct dynlib lib = {.soname = "libvmhost-absent.so.9", .install_hint = "Debian: apt install vmhost-absent9",
			     .names = names, .calls = calls, .n = 1};
	char err[256];
	assert_int_equal(dynlib_get(&lib, err, sizeof(err)), -ELIBACC);
	assert_non_null(strstr(err, "libvmhost-absent.so.9"));
	assert_non_null(strstr(err, "apt install vmhost-absent9"));
	assert_null(calls[0]);
	/* The answer is kept: asked again, the same (no second dlopen). */
	char again[256];
	assert_int_equal(dynlib_get(&lib, again, sizeof(again)), -ELIBACC);
	assert_string_equal(again, err);
}

static void test_library_without_a_call_is_too_old(void **state)
{
	(void)state;
	static const char *const names[] = {"strlen", "vmhost_no_such_call"};
	void *calls[2] = {NULL, NULL};
	struct dynlib lib = {.soname = "libc.so.6", .install_hint = "upgrade libc", .names = names, .calls = calls, .n = 2};
	char err[256];
	assert_int_equal(dynlib_get(&lib, err, sizeof(err)), -ELIBACC);
	assert_non_null(strstr(err, "has no vmhost_no_such_call: too old"));
	assert_null(calls[0]); /* all or none: no half-filled calls */
	static const char *const good[] = {"strlen"};
	struct dynlib libc = {.soname = "libc.so.6", .install_hint = "", .names = good, .calls = calls, .n = 1};
	assert_int_equal(dynlib_get(&libc, NULL, 0), 0);
	/* libc's own strlen (under ASan, not the one this program calls by name: compare by use) */
	size_t (*len)(const char *);
	memcpy(&len, &calls[0], sizeof(len));
	assert_int_equal(len("vmhost"), 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sqlite_loads_and_works),
		cmocka_unit_test(test_missing_library_says_what_to_install),
		cmocka_unit_test(test_library_without_a_call_is_too_old),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
