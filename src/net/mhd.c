#include "net/mhd.h"

#ifndef VMHOST_MHD_SONAME
#error "VMHOST_MHD_SONAME: the build names libmicrohttpd's soname (cmake/serve.cmake)"
#endif

struct mhd_calls mhd;
DYNLIB_DEFINE(mhd, MHD_, MHD_CALLS, VMHOST_MHD_SONAME, "Debian: apt install libmicrohttpd12");

int mhd_load(char *err, size_t cap) { return dynlib_get(&mhd_lib, err, cap); }
