#include "io/peer/tls_lib.h"

#include "io/dynlib.h"
#include "io/peer/tls.h"

#ifndef VMHOST_GNUTLS_SONAME
#error "VMHOST_GNUTLS_SONAME: the build names GnuTLS's soname (cmake/tls.cmake)"
#endif

static struct dynlib lib = {.soname = VMHOST_GNUTLS_SONAME, .install_hint = "Debian: apt install libgnutls30",
			    .names = io_tls_call_names, .calls = &io_tls_calls,
			    .n = IO_TLS_NCALLS};

int tls_lib_load(char *err, size_t cap)
{
	return dynlib_get(&lib, err, cap);
}
