/* Libraries loaded by the commands that use them rather than linked. A linked library is mapped
 * and relocated by every command before main(): measured here with an empty program, libsqlite3
 * costs 0.9 ms of each start and libcrypt 0.3 ms, a twentieth of `vmhost mem` with 100 VMs, for
 * a database that only record, serve and report open. A wrapper keeps the library's own
 * declarations (typeof) in a struct of pointers, one per name of a list, and loads them on use:
 *
 *   header:  #define MHD_CALLS(X, P) X(P, start_daemon) X(P, stop_daemon)
 *            extern DYNLIB_CALLS(mhd_calls, MHD_, MHD_CALLS) mhd;   mhd.start_daemon is MHD_start_daemon
 *   source:  struct mhd_calls mhd;
 *            DYNLIB_DEFINE(mhd, MHD_, MHD_CALLS, VMHOST_MHD_SONAME, "Debian: apt install libmicrohttpd12");
 *            int mhd_load(char *err, size_t cap) { return dynlib_get(&mhd_lib, err, cap); } */
#ifndef VMHOST_IO_DYNLIB_H
#define VMHOST_IO_DYNLIB_H

#include <stdbool.h>
#include <stddef.h>

struct dynlib {
	const char *soname;       /* "libsqlite3.so.0": the build's (cmake/lib/loaded_library.cmake) */
	const char *install_hint; /* "Debian: apt install libsqlite3-0" */
	const char *const *names; /* the symbols, in the order of calls' pointers */
	void *calls;              /* the wrapper's struct: one pointer per name */
	size_t n;
	/* dynlib_get's own */
	bool tried;
	int result;
	char reason[256];
};

/* Loads the library once (dlopen, then dlsym of each name into calls); later calls give the first
 * answer. 0, or -ELIBACC with the reason in err: the loader's message and the install hint, or
 * the first name missing (an older library). Thread-safe; calls are filled before it returns 0. */
int dynlib_get(struct dynlib *lib, char *err, size_t cap);

/* The struct tag of the library's calls: a pointer of the library's own type (prefix##name) for
 * each X(P, name) of the list CALLS(X, P), named name. */
#define DYNLIB_CALLS(tag, prefix, CALLS)                                                           \
	struct tag {                                                                               \
		CALLS(DYNLIB_POINTER_, prefix)                                                     \
	}
#define DYNLIB_POINTER_(prefix, name) __typeof__(prefix##name) *name;
#define DYNLIB_NAME_(prefix, name) #prefix #name,

/* For the calls var (a DYNLIB_CALLS struct defined before it): its symbols' names, and
 * struct dynlib var##_lib loading them from the library path (a soname), saying hint when it is missing. */
#define DYNLIB_DEFINE(var, prefix, CALLS, path, hint)                                              \
	static const char *const var##_names[] = {CALLS(DYNLIB_NAME_, prefix)};                    \
	_Static_assert(sizeof(var) == sizeof(var##_names) / sizeof(*var##_names) * sizeof(void *), \
		       "a pointer for each name");                                                 \
	static struct dynlib var##_lib = {.soname = (path), .install_hint = (hint), .names = var##_names, \
					  .calls = &var, .n = sizeof(var##_names) / sizeof(*var##_names)}

#endif
