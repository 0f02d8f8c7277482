/* libbpf, loaded by the KVM reader when it counts exit reasons rather than linked (like SQLite and
 * libmicrohttpd, src/io/dynlib.h): vmhost runs where libbpf1 is missing and counts by perf
 * filters then. The calls keep libbpf's own declarations; `libbpf.bpf_object__load(o)` is
 * bpf_object__load(o). Only in a build with eBPF (cmake/bpf.cmake: VMHOST_BPF=1). */
#ifndef VMHOST_CORE_KVM_LIBBPF_H
#define VMHOST_CORE_KVM_LIBBPF_H

#include <stddef.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "io/dynlib.h"

#define LIBBPF_CALLS(X, P)                                                                         \
	X(P, bpf_link__destroy)                                                                    \
	X(P, bpf_map__fd)                                                                          \
	X(P, bpf_map_delete_elem)                                                                  \
	X(P, bpf_map_get_next_key)                                                                 \
	X(P, bpf_map_lookup_elem)                                                                  \
	X(P, bpf_map_update_elem)                                                                  \
	X(P, bpf_object__close)                                                                    \
	X(P, bpf_object__find_map_by_name)                                                         \
	X(P, bpf_object__find_program_by_name)                                                     \
	X(P, bpf_object__load)                                                                     \
	X(P, bpf_object__open_mem)                                                                 \
	X(P, bpf_program__attach_perf_event)                                                       \
	X(P, bpf_program__section_name)                                                            \
	X(P, libbpf_num_possible_cpus)                                                             \
	X(P, libbpf_set_print)

/* Filled by libbpf_load(); not to be called before it has returned 0. */
extern DYNLIB_CALLS(libbpf_calls, , LIBBPF_CALLS) libbpf;

/* Loads the library once (later calls give the first answer). 0, or -ELIBACC with the reason
 * ("libbpf.so.1: cannot open shared object file...", and the package to install) in err. */
int libbpf_load(char *err, size_t cap);

#endif
