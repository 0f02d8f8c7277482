#include "net/mhd.h"

#include "io/dynlib.h"

#ifndef VMHOST_MHD_SONAME
#error "VMHOST_MHD_SONAME: the build names libmicrohttpd's soname (cmake/serve.cmake)"
#endif

struct mhd_calls mhd;

static const char *const names[] = {
#define MHD_CALL_NAME(name) "MHD_" #name,
	MHD_CALLS(MHD_CALL_NAME)
#undef MHD_CALL_NAME
};
_Static_assert(sizeof(mhd) == sizeof(names) / sizeof(*names) * sizeof(void *), "a pointer for each name");

static struct dynlib lib = {.soname = VMHOST_MHD_SONAME, .install_hint = "Debian: apt install libmicrohttpd12",
			    .names = names, .calls = &mhd,
			    .n = sizeof(names) / sizeof(*names)};

int mhd_load(char *err, size_t cap)
{
	return dynlib_get(&lib, err, cap);
}
