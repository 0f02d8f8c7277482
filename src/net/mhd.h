/* libmicrohttpd, loaded when `vmhost serve` starts rather than linked. Linked, it made every
 * command load and initialise GnuTLS and nine libraries under it before main(): 190 page faults
 * and about 5 ms here, more than `vmhost mem` needs for 50 VMs. The calls keep libmicrohttpd's
 * own declarations (typeof); `mhd.start_daemon(...)` is MHD_start_daemon(...). */
#ifndef VMHOST_NET_MHD_H
#define VMHOST_NET_MHD_H

#include <stddef.h>
#include <microhttpd.h>

#include "io/dynlib.h"

#define MHD_CALLS(X, P)                                                                            \
	X(P, add_response_header)                                                                  \
	X(P, basic_auth_get_username_password)                                                     \
	X(P, create_response_from_buffer)                                                          \
	X(P, create_response_from_buffer_with_free_callback_cls)                                   \
	X(P, destroy_response)                                                                     \
	X(P, free)                                                                                 \
	X(P, get_connection_info)                                                                  \
	X(P, get_version)                                                                          \
	X(P, is_feature_supported)                                                                 \
	X(P, lookup_connection_value)                                                              \
	X(P, queue_basic_auth_fail_response)                                                       \
	X(P, queue_response)                                                                       \
	X(P, resume_connection)                                                                    \
	X(P, start_daemon)                                                                         \
	X(P, stop_daemon)                                                                          \
	X(P, suspend_connection)

/* Filled by mhd_load(); not to be called before it has returned 0. */
extern DYNLIB_CALLS(mhd_calls, MHD_, MHD_CALLS) mhd;

/* Loads the library once (later calls give the first answer). 0, or -ELIBACC with the
 * reason ("libmicrohttpd.so.12: cannot open shared object file...") in err. */
int mhd_load(char *err, size_t cap);

#endif
