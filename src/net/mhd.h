/* libmicrohttpd, loaded when `vmhost serve` starts rather than linked. Linked, it made every
 * command load and initialise GnuTLS and nine libraries under it before main(): 190 page faults
 * and about 5 ms here, more than `vmhost mem` needs for 50 VMs. The calls keep libmicrohttpd's
 * own declarations (typeof); `mhd.start_daemon(...)` is MHD_start_daemon(...). */
#ifndef VMHOST_NET_MHD_H
#define VMHOST_NET_MHD_H

#include <stddef.h>
#include <microhttpd.h>

#define MHD_CALLS(X)                                                                                   \
	X(add_response_header)                                                                         \
	X(basic_auth_get_username_password)                                                            \
	X(create_response_from_buffer)                                                                 \
	X(create_response_from_buffer_with_free_callback_cls)                                          \
	X(destroy_response)                                                                            \
	X(free)                                                                                        \
	X(get_connection_info)                                                                         \
	X(get_version)                                                                                 \
	X(is_feature_supported)                                                                        \
	X(lookup_connection_value)                                                                     \
	X(queue_basic_auth_fail_response)                                                              \
	X(queue_response)                                                                              \
	X(start_daemon)                                                                                \
	X(stop_daemon)

struct mhd_calls {
#define MHD_CALL_POINTER(name) __typeof__(MHD_##name) *name;
	MHD_CALLS(MHD_CALL_POINTER)
#undef MHD_CALL_POINTER
};

/* Filled by mhd_load(); not to be called before it has returned 0. */
extern struct mhd_calls mhd;

/* Loads the library once (later calls give the first answer). 0, or -ELIBACC with the
 * reason ("libmicrohttpd.so.12: cannot open shared object file...") in err. */
int mhd_load(char *err, size_t cap);

#endif
