#include "store/sqlite.h"

#ifndef VMHOST_SQLITE_SONAME
#error "VMHOST_SQLITE_SONAME: the build names libsqlite3's soname (cmake/store.cmake)"
#endif

struct sqlite_calls sq;
DYNLIB_DEFINE(sq, sqlite3_, SQLITE_CALLS, VMHOST_SQLITE_SONAME, "Debian: apt install libsqlite3-0");

int sqlite_load(char *err, size_t cap) { return dynlib_get(&sq_lib, err, cap); }

const char *sqlite_load_error(void)
{
	return sq_lib.tried && sq_lib.result < 0 ? sq_lib.reason : NULL;
}
