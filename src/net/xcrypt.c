#include "net/xcrypt.h"

#include "io/dynlib.h"

#ifndef VMHOST_CRYPT_SONAME
#error "VMHOST_CRYPT_SONAME: the build names libcrypt's soname (cmake/web_config.cmake)"
#endif

struct xcrypt_calls xcrypt;

static const char *const names[] = {
#define XCRYPT_CALL_NAME(name) "crypt_" #name,
	XCRYPT_CALLS(XCRYPT_CALL_NAME)
#undef XCRYPT_CALL_NAME
};
_Static_assert(sizeof(xcrypt) == sizeof(names) / sizeof(*names) * sizeof(void *), "a pointer for each name");

static struct dynlib lib = {.soname = VMHOST_CRYPT_SONAME, .install_hint = "Debian: apt install libcrypt1",
			    .names = names, .calls = &xcrypt, .n = sizeof(names) / sizeof(*names)};

int xcrypt_load(char *err, size_t cap)
{
	return dynlib_get(&lib, err, cap);
}
