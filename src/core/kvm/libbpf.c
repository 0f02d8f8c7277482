#if VMHOST_BPF
#include "core/kvm/libbpf.h"

#include "io/dynlib.h"

struct libbpf_calls libbpf;

static const char *const names[] = {
#define LIBBPF_CALL_NAME(name) #name,
	LIBBPF_CALLS(LIBBPF_CALL_NAME)
#undef LIBBPF_CALL_NAME
};
_Static_assert(sizeof(libbpf) == sizeof(names) / sizeof(*names) * sizeof(void *), "a pointer for each name");

static struct dynlib lib = {.soname = VMHOST_LIBBPF_SONAME, .install_hint = "Debian: apt install libbpf1",
			    .names = names, .calls = &libbpf, .n = sizeof(names) / sizeof(*names)};

int libbpf_load(char *err, size_t cap)
{
	return dynlib_get(&lib, err, cap);
}
#else
typedef int vmhost_built_without_libbpf; /* ISO C wants a declaration in every file */
#endif
