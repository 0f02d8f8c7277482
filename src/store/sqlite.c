#include "store/sqlite.h"

#include "io/dynlib.h"

#ifndef VMHOST_SQLITE_SONAME
#error "VMHOST_SQLITE_SONAME: the build names libsqlite3's soname (cmake/store.cmake)"
#endif

struct sqlite_calls sq;

static const char *const names[] = {
#define SQLITE_CALL_NAME(name) "sqlite3_" #name,
	SQLITE_CALLS(SQLITE_CALL_NAME)
#undef SQLITE_CALL_NAME
};
_Static_assert(sizeof(sq) == sizeof(names) / sizeof(*names) * sizeof(void *), "a pointer for each name");

static struct dynlib lib = {.soname = VMHOST_SQLITE_SONAME, .install_hint = "Debian: apt install libsqlite3-0",
			    .names = names, .calls = &sq,
			    .n = sizeof(names) / sizeof(*names)};

int sqlite_load(char *err, size_t cap)
{
	return dynlib_get(&lib, err, cap);
}

const char *sqlite_load_error(void)
{
	return lib.tried && lib.result < 0 ? lib.reason : NULL;
}
