/* What a VMM's command line says about its guest: which VMM, name, uuid, guest RAM. */
#ifndef VMHOST_PARSE_CMDLINE_VMCMD_H
#define VMHOST_PARSE_CMDLINE_VMCMD_H

#include <stddef.h>

#include "parse/maybe.h"

enum vmm_kind { VMM_NONE = 0, VMM_QEMU, VMM_CLOUD_HYPERVISOR, VMM_FIRECRACKER, VMM_CROSVM, VMM_PROCESS,
		VMM_KVM /* a process holding a KVM VM fd, its VMM not one of the above */ };

#define VM_MAX_RAM_BLOCKS 32

/* Where the VM's QMP monitor can be reached, from its command line. */
enum vm_qmp_kind {
	VM_QMP_NONE = 0, /* no QMP monitor on the command line */
	VM_QMP_UNIX,     /* a unix socket QEMU listens on: path */
	VM_QMP_FD,       /* an inherited file descriptor (libvirt owns the monitor): no path */
	VM_QMP_TCP,      /* a TCP listener (not used by vmhost) */
	VM_QMP_CLIENT,   /* QEMU connects out to a socket someone else listens on */
	VM_QMP_OTHER,    /* stdio, a pty, ...: nothing to connect to */
};

struct vm_qmp {
	enum vm_qmp_kind kind;
	char path[256]; /* VM_QMP_UNIX: the socket's path as QEMU sees it */
};

/* Whether a guest can run guests of its own: its CPU offers VMX/SVM. */
enum vm_nested {
	VM_NESTED_UNKNOWN = 0, /* a named CPU model, or another VMM */
	VM_NESTED_NO,          /* QEMU's default qemu64 on Intel, or -vmx / vmx=off */
	VM_NESTED_YES,         /* -cpu host or max, or +vmx / vmx=on (svm alike) */
};

struct vm_config {
	enum vmm_kind vmm;
	char name[256];   /* "" when the command line gives none */
	char uuid[64];    /* "" when unknown */
	char vmid[32];    /* Proxmox -id */
	maybe_i64 guest_ram_bytes;
	/* The RAM blocks that make up guest RAM (base RAM or its backends, then DIMMs): used to
	 * find guest RAM among the process's mappings. */
	size_t nblocks;
	uint64_t block_bytes[VM_MAX_RAM_BLOCKS];
	bool ram_shared; /* some guest RAM is shared memory (memfd, share=on, file backend) */
	bool ram_hugetlb; /* some guest RAM is on hugetlbfs (not counted in RSS) */
	bool mem_merge_off; /* QEMU -machine mem-merge=off: guest RAM is not offered to KSM */
	struct vm_qmp qmp; /* QEMU: the first QMP monitor (-qmp, or -chardev + -mon mode=control) */
	enum vm_nested cpu_nested; /* does the guest's CPU model offer VMX/SVM (QEMU -cpu) */
	unsigned max_vcpus;   /* QEMU -smp: the most vCPUs (maxcpus), 0 when it does not say */
	bool has_balloon;     /* a virtio-balloon device */
	char balloon_id[64];  /* its -device id ("" when it has none) */
	bool balloon_free_page_reporting; /* its free-page-reporting=on: the guest hands back what it frees */
};

/* The VMM's name as vmhost prints it: "qemu", "cloud-hypervisor", "firecracker", "crosvm",
 * "process", "kvm"; "none" for VMM_NONE. */
const char *vmm_kind_name(enum vmm_kind kind);

/* Why a VM's QMP cannot be used, in one line ("" for VM_QMP_UNIX). */
const char *vm_qmp_hint(enum vm_qmp_kind kind);

/* Recognises a VMM by argv[0] of a NUL-separated /proc/PID/cmdline. VMM_NONE when not one. */
enum vmm_kind parse_vmm_kind(const char *cmdline, size_t len);

/* Parses a NUL-separated command line. Returns 0 (the config may still lack a RAM size),
 * -ENOENT when argv[0] is not a VMM, -EINVAL on an empty buffer, -ENOMEM. */
int parse_vm_cmdline(const char *cmdline, size_t len, struct vm_config *ret);

/* a + b, or UINT64_MAX past it: sums of RAM sizes saturate rather than wrap. */
uint64_t vm_ram_add(uint64_t a, uint64_t b);
/* total as a guest RAM size: unknown when !ok or past INT64_MAX. */
maybe_i64 vm_ram_size(bool ok, uint64_t total);

/* A NUL-separated command line as argv (NULL-terminated; the last argument may lack its NUL),
 * in one allocation freed with cmdline_split_free. 0 or -ENOMEM. */
int cmdline_split(const char *cmdline, size_t len, const char ***ret_argv, size_t *ret_n);
void cmdline_split_free(const char **argv);

#endif
