#include "net/xcrypt.h"

#ifndef VMHOST_CRYPT_SONAME
#error "VMHOST_CRYPT_SONAME: the build names libcrypt's soname (cmake/web_config.cmake)"
#endif

struct xcrypt_calls xcrypt;
DYNLIB_DEFINE(xcrypt, crypt_, XCRYPT_CALLS, VMHOST_CRYPT_SONAME, "Debian: apt install libcrypt1");

int xcrypt_load(char *err, size_t cap) { return dynlib_get(&xcrypt_lib, err, cap); }
