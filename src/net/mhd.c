#include "net/mhd.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#ifndef VMHOST_MHD_SONAME
#error "VMHOST_MHD_SONAME: the build names libmicrohttpd's soname (cmake/serve.cmake)"
#endif

struct mhd_calls mhd;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char reason[256];

static void load(void)
{
	void *lib = dlopen(VMHOST_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(reason, sizeof(reason), "%s (Debian: apt install libmicrohttpd12)", dlerror());
		return;
	}
	struct mhd_calls calls;
#define MHD_CALL_LOOKUP(name)                                                                         \
	if (!(*(void **)&calls.name = dlsym(lib, "MHD_" #name))) {                                     \
		snprintf(reason, sizeof(reason), "%s has no MHD_%s: too old", VMHOST_MHD_SONAME, #name); \
		return;                                                                                \
	}
	MHD_CALLS(MHD_CALL_LOOKUP)
#undef MHD_CALL_LOOKUP
	mhd = calls;
}

int mhd_load(char *err, size_t cap)
{
	pthread_once(&once, load);
	if (!mhd.start_daemon) {
		if (err && cap)
			snprintf(err, cap, "%s", reason);
		return -ENOENT;
	}
	return 0;
}
