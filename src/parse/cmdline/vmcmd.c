#include "parse/cmdline/vmcmd.h"
#include "parse/parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/cmdline/qemu_cmdline.h"
#include "parse/cmdline/qemu_opts.h"

#define MIB (1ull << 20)

const char *vmm_kind_name(enum vmm_kind kind)
{
	switch (kind) {
	case VMM_QEMU: return "qemu";
	case VMM_CLOUD_HYPERVISOR: return "cloud-hypervisor";
	case VMM_FIRECRACKER: return "firecracker";
	case VMM_CROSVM: return "crosvm";
	case VMM_PROCESS: return "process";
	case VMM_KVM: return "kvm";
	case VMM_NONE: break;
	}
	return "none";
}

const char *vm_qmp_hint(enum vm_qmp_kind kind)
{
	switch (kind) {
	case VM_QMP_UNIX: return "";
	case VM_QMP_FD: return "the QMP monitor is a file descriptor its manager holds (libvirt: use virsh domstats)";
	case VM_QMP_TCP: return "the QMP monitor listens on TCP, not a unix socket";
	case VM_QMP_CLIENT: return "QEMU connects out to its QMP peer: there is no socket to connect to";
	case VM_QMP_OTHER: return "the QMP monitor is not on a socket (stdio or a terminal)";
	case VM_QMP_NONE: break;
	}
	return "no QMP socket on the command line (give one with --qmp-socket PID=PATH)";
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

enum vmm_kind parse_vmm_kind(const char *cmdline, size_t len)
{
	if (!len || !memchr(cmdline, '\0', len))
		return VMM_NONE;
	const char *b = base_name(cmdline);
	if (!strncmp(b, "qemu-system-", 12) || !strcmp(b, "qemu-kvm") || !strcmp(b, "kvm"))
		return VMM_QEMU;
	if (!strcmp(b, "cloud-hypervisor"))
		return VMM_CLOUD_HYPERVISOR;
	if (!strcmp(b, "firecracker"))
		return VMM_FIRECRACKER;
	if (!strcmp(b, "crosvm"))
		return VMM_CROSVM;
	return VMM_NONE;
}

uint64_t vm_ram_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

maybe_i64 vm_ram_size(bool ok, uint64_t total)
{
	return ok && total <= INT64_MAX ? MAYBE((int64_t)total) : UNKNOWN;
}

/* ---- other VMMs (QEMU's: parse/cmdline/qemu_cmdline.c) ---- */

static void parse_cloud_hypervisor(const char *const *argv, size_t argc, struct vm_config *c)
{
	char buf[128];
	uint64_t memory = 512 * MIB, zones_total = 0; /* 512 MiB: cloud-hypervisor's default */
	bool zones = false, memory_ok = true, zones_ok = true;
	for (size_t i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--memory")) {
			if (qemu_opt_get(argv[i + 1], NULL, "size", buf, sizeof(buf)) >= 0)
				memory_ok = parse_qemu_size(buf, strlen(buf), 1, &memory) == 0;
			if (qemu_opt_bool(argv[i + 1], "shared") == 1)
				c->ram_shared = true;
			if (qemu_opt_bool(argv[i + 1], "hugepages") == 1)
				c->ram_hugetlb = true;
		} else if (!strcmp(argv[i], "--memory-zone")) {
			/* Zones replace --memory size (which is then 0, before or after them); each
			 * argument may list several. */
			for (size_t j = i + 1; j < argc && argv[j][0] != '-'; j++) {
				uint64_t z;
				zones = true;
				if (qemu_opt_get(argv[j], NULL, "size", buf, sizeof(buf)) < 0 ||
				    parse_qemu_size(buf, strlen(buf), 1, &z) < 0) {
					zones_ok = false;
					continue;
				}
				zones_total = vm_ram_add(zones_total, z);
				if (c->nblocks < VM_MAX_RAM_BLOCKS)
					c->block_bytes[c->nblocks++] = z;
			}
		}
	}
	if (!zones)
		c->block_bytes[c->nblocks++] = memory;
	c->guest_ram_bytes = zones ? vm_ram_size(zones_ok, zones_total) : vm_ram_size(memory_ok, memory);
}

static void parse_firecracker(const char *const *argv, size_t argc, struct vm_config *c)
{
	/* Firecracker takes its RAM size from its API or config file, not the command line. */
	for (size_t i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--id"))
			snprintf(c->name, sizeof(c->name), "%s", argv[i + 1]);
	c->guest_ram_bytes = UNKNOWN;
}

static void parse_crosvm(const char *const *argv, size_t argc, struct vm_config *c)
{
	char buf[128];
	uint64_t total = 256 * MIB; /* crosvm's default */
	bool ok = true;
	for (size_t i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--mem") || !strcmp(argv[i], "-m")) {
			const char *v = argv[i + 1];
			if (qemu_opt_get(v, "size", "size", buf, sizeof(buf)) >= 0)
				ok = parse_qemu_size(buf, strlen(buf), MIB, &total) == 0;
		} else if (!strcmp(argv[i], "--name")) {
			snprintf(c->name, sizeof(c->name), "%s", argv[i + 1]);
		}
	}
	c->block_bytes[c->nblocks++] = total;
	c->guest_ram_bytes = vm_ram_size(ok, total);
}

int cmdline_split(const char *cmdline, size_t len, const char ***ret_argv, size_t *ret_n)
{
	/* A cmdline may lack its final NUL when truncated. */
	size_t argc = 0;
	for (size_t i = 0; i < len; i++)
		argc += cmdline[i] == '\0';
	if (len && cmdline[len - 1] != '\0')
		argc++;
	/* The pointers, then the copy they point into: one block. */
	const char **argv = malloc((argc + 1) * sizeof(*argv) + len + 1);
	if (!argv)
		return -ENOMEM;
	char *copy = (char *)(argv + argc + 1);
	memcpy(copy, cmdline, len);
	copy[len] = '\0';
	size_t n = 0;
	for (char *p = copy; p < copy + len && n < argc; p += strlen(p) + 1)
		argv[n++] = p;
	argv[n] = NULL;
	*ret_argv = argv;
	*ret_n = n;
	return 0;
}

void cmdline_split_free(const char **argv) { free((void *)argv); }

int parse_vm_cmdline(const char *cmdline, size_t len, struct vm_config *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->guest_ram_bytes = UNKNOWN;
	if (!len)
		return -EINVAL;
	enum vmm_kind kind = parse_vmm_kind(cmdline, len);
	if (kind == VMM_NONE)
		return -ENOENT;
	const char **argv;
	size_t n;
	if (cmdline_split(cmdline, len, &argv, &n) < 0)
		return -ENOMEM;
	ret->vmm = kind;
	int r = 0;
	switch (kind) {
	case VMM_QEMU: r = qemu_cmdline_config(argv, n, ret); break;
	case VMM_CLOUD_HYPERVISOR: parse_cloud_hypervisor(argv, n, ret); break;
	case VMM_FIRECRACKER: parse_firecracker(argv, n, ret); break;
	case VMM_CROSVM: parse_crosvm(argv, n, ret); break;
	default: break;
	}
	cmdline_split_free(argv);
	return r;
}
