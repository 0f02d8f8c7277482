/* Libraries loaded by the commands that use them rather than linked. A linked library is mapped
 * and relocated by every command before main(): measured here with an empty program, libsqlite3
 * costs 0.9 ms of each start and libcrypt 0.3 ms, a twentieth of `vmhost mem` with 100 VMs, for
 * a database that only record, serve and report open. A wrapper keeps the library's own
 * declarations (typeof) in a struct of pointers, one per name: see src/net/mhd.h. */
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

#endif
