#if VMHOST_BPF
#include "core/kvm/libbpf.h"

struct libbpf_calls libbpf;
DYNLIB_DEFINE(libbpf, , LIBBPF_CALLS, VMHOST_LIBBPF_SONAME, "Debian: apt install libbpf1");

int libbpf_load(char *err, size_t cap) { return dynlib_get(&libbpf_lib, err, cap); }
#else
typedef int vmhost_built_without_libbpf; /* ISO C wants a declaration in every file */
#endif
