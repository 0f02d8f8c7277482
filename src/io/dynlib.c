#include "io/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int load(struct dynlib *lib)
{
	void *handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		snprintf(lib->reason, sizeof(lib->reason), "%s (%s)", dlerror(), lib->install_hint);
		return -ELIBACC;
	}
	void *found[64];
	if (lib->n > sizeof(found) / sizeof(*found)) {
		snprintf(lib->reason, sizeof(lib->reason), "%s: more calls than a wrapper may have", lib->soname);
		return -ELIBACC;
	}
	for (size_t i = 0; i < lib->n; i++) {
		if (!(found[i] = dlsym(handle, lib->names[i]))) {
			snprintf(lib->reason, sizeof(lib->reason), "%s has no %s: too old (%s)", lib->soname,
				 lib->names[i], lib->install_hint);
			dlclose(handle);
			return -ELIBACC;
		}
	}
	/* The calls are pointers in the order of the names (POSIX: dlsym's void * is a function's
	 * address). The library stays loaded: they are used until exit. */
	memcpy(lib->calls, found, lib->n * sizeof(*found));
	return 0;
}

int dynlib_get(struct dynlib *lib, char *err, size_t cap)
{
	pthread_mutex_lock(&lock);
	if (!lib->tried) {
		lib->result = load(lib);
		lib->tried = true;
	}
	pthread_mutex_unlock(&lock);
	if (lib->result < 0 && err && cap)
		snprintf(err, cap, "%s", lib->reason);
	return lib->result;
}
