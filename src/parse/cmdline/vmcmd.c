#include "parse/cmdline/vmcmd.h"
#include "parse/parse.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *vm_qmp_kind_name(enum vm_qmp_kind kind)
{
	switch (kind) {
	case VM_QMP_UNIX: return "unix";
	case VM_QMP_FD: return "fd";
	case VM_QMP_TCP: return "tcp";
	case VM_QMP_CLIENT: return "client";
	case VM_QMP_OTHER: return "other";
	case VM_QMP_NONE: break;
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

/* ---- QEMU ---- */

/* Sums of sizes saturate: a sum past INT64_MAX is no guest RAM size (ram_size says unknown). */
static uint64_t add_bytes(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static maybe_i64 ram_size(bool ok, uint64_t total)
{
	return ok && total <= INT64_MAX ? MAYBE((int64_t)total) : UNKNOWN;
}

struct backend {
	char id[128];
	uint64_t size_bytes;
	bool sized, shared, hugetlb;
};

#define VM_MAX_CHARDEVS 16

/* A -chardev or -qmp backend, as far as QMP cares. */
struct chardev {
	char id[64];
	struct vm_qmp where;
};

static bool flag_on(const char *arg, const char *key) { return qemu_opt_bool(arg, key) == 1; }

/* The socket options of a chardev ("path=...,server=on" or "host=..,port=.."); implied_key "path"
 * for the legacy "unix:PATH,..." form. */
static struct vm_qmp socket_backend(const char *opts, const char *implied_key)
{
	struct vm_qmp q = {.kind = VM_QMP_OTHER};
	char v[16];
	bool server = flag_on(opts, "server") || flag_on(opts, "listen");
	if (qemu_opt_get(opts, NULL, "fd", v, sizeof(v)) >= 0) {
		q.kind = VM_QMP_FD;
	} else if (qemu_opt_get(opts, implied_key, "path", q.path, sizeof(q.path)) >= 0 && q.path[0] != '\0') {
		q.kind = server ? VM_QMP_UNIX : VM_QMP_CLIENT;
	} else if (qemu_opt_get(opts, NULL, "host", v, sizeof(v)) >= 0 || qemu_opt_get(opts, NULL, "port", v, sizeof(v)) >= 0) {
		q.kind = server ? VM_QMP_TCP : VM_QMP_CLIENT;
	}
	if (q.kind != VM_QMP_UNIX)
		q.path[0] = '\0';
	return q;
}

/* A -qmp/-qmp-pretty argument: QEMU's legacy chardev syntax ("unix:PATH,server=on,wait=off",
 * "unix:PATH,server,nowait", "tcp:HOST:PORT,server", "stdio"). */
static struct vm_qmp legacy_chardev(const char *arg)
{
	if (!strncmp(arg, "unix:", 5))
		return socket_backend(arg + 5, "path");
	if (!strncmp(arg, "tcp:", 4))
		return (struct vm_qmp){.kind = flag_on(arg + 4, "server") ? VM_QMP_TCP : VM_QMP_CLIENT};
	return (struct vm_qmp){.kind = VM_QMP_OTHER};
}

struct qemu_scan {
	struct backend backends[VM_MAX_RAM_BLOCKS];
	size_t nbackends;
	char base_memdevs[VM_MAX_RAM_BLOCKS][128]; /* -numa memdev= and -machine memory-backend= */
	size_t nbase;
	char dimm_memdevs[VM_MAX_RAM_BLOCKS][128];
	size_t ndimms;
	uint64_t virtio_mem_bytes;
	bool has_m, m_bad;
	uint64_t m_bytes;
	struct chardev chardevs[VM_MAX_CHARDEVS];
	size_t nchardevs;
	char control_mons[VM_MAX_CHARDEVS][64]; /* -mon chardev=ID,mode=control, in order */
	size_t nmons;
	struct vm_qmp qmp_option; /* the first -qmp */
	bool balloon;
	char balloon_id[64];
};

static void scan_object(struct qemu_scan *s, const char *arg)
{
	char type[64], buf[128];
	if (qemu_opt_get(arg, "qom-type", "qom-type", type, sizeof(type)) < 0 ||
	    strncmp(type, "memory-backend-", 15) || s->nbackends == VM_MAX_RAM_BLOCKS)
		return;
	struct backend *b = &s->backends[s->nbackends];
	memset(b, 0, sizeof(*b));
	if (qemu_opt_get(arg, NULL, "id", b->id, sizeof(b->id)) < 0)
		return;
	if (qemu_opt_get(arg, NULL, "size", buf, sizeof(buf)) >= 0)
		b->sized = parse_qemu_size(buf, strlen(buf), 1, &b->size_bytes) == 0;
	b->shared = !strcmp(type, "memory-backend-memfd") ||
		    (qemu_opt_get(arg, NULL, "share", buf, sizeof(buf)) >= 0 &&
		     (!strcmp(buf, "on") || !strcmp(buf, "true") || !strcmp(buf, "yes")));
	if (!strcmp(type, "memory-backend-file")) {
		b->shared = true;
		b->hugetlb = qemu_opt_get(arg, NULL, "mem-path", buf, sizeof(buf)) >= 0 && strstr(buf, "huge");
	}
	if (!strcmp(type, "memory-backend-memfd"))
		b->hugetlb = qemu_opt_get(arg, NULL, "hugetlb", buf, sizeof(buf)) >= 0 &&
			     (!strcmp(buf, "on") || !strcmp(buf, "true"));
	s->nbackends++;
}

static void add_ref(char (*list)[128], size_t *n, const char *id)
{
	if (*n < VM_MAX_RAM_BLOCKS)
		snprintf(list[(*n)++], 128, "%.127s", id);
}

static void scan_chardev(struct qemu_scan *s, const char *arg)
{
	char backend[32];
	if (s->nchardevs == VM_MAX_CHARDEVS || qemu_opt_get(arg, "backend", "backend", backend, sizeof(backend)) < 0)
		return;
	struct chardev *c = &s->chardevs[s->nchardevs];
	if (qemu_opt_get(arg, NULL, "id", c->id, sizeof(c->id)) < 0)
		return;
	c->where = !strcmp(backend, "socket") ? socket_backend(arg, NULL) : (struct vm_qmp){.kind = VM_QMP_OTHER};
	s->nchardevs++;
}

static void scan_mon(struct qemu_scan *s, const char *arg)
{
	char mode[32];
	if (s->nmons == VM_MAX_CHARDEVS || qemu_opt_get(arg, NULL, "mode", mode, sizeof(mode)) < 0 ||
	    strcmp(mode, "control") || qemu_opt_get(arg, "chardev", "chardev", s->control_mons[s->nmons], 64) < 0)
		return;
	s->nmons++;
}

/* The VM's QMP: the first unix socket among -qmp options and control monitors, else the
 * first of any other kind. */
static struct vm_qmp resolve_qmp(const struct qemu_scan *s)
{
	struct vm_qmp best = s->qmp_option;
	for (size_t m = 0; m < s->nmons && best.kind != VM_QMP_UNIX; m++)
		for (size_t c = 0; c < s->nchardevs; c++)
			if (!strcmp(s->chardevs[c].id, s->control_mons[m]) &&
			    (best.kind == VM_QMP_NONE || s->chardevs[c].where.kind == VM_QMP_UNIX))
				best = s->chardevs[c].where;
	return best;
}

static void scan_device(struct qemu_scan *s, const char *arg)
{
	char driver[64], memdev[128], size[64];
	if (qemu_opt_get(arg, "driver", "driver", driver, sizeof(driver)) < 0)
		return;
	if (!strcmp(driver, "pc-dimm") || !strcmp(driver, "nvdimm")) {
		if (qemu_opt_get(arg, NULL, "memdev", memdev, sizeof(memdev)) >= 0)
			add_ref(s->dimm_memdevs, &s->ndimms, memdev);
	} else if (!strncmp(driver, "virtio-balloon", 14)) {
		s->balloon = true;
		if (qemu_opt_get(arg, NULL, "id", s->balloon_id, sizeof(s->balloon_id)) < 0)
			s->balloon_id[0] = '\0';
	} else if (!strncmp(driver, "virtio-mem", 10)) {
		uint64_t bytes;
		if (qemu_opt_get(arg, NULL, "requested-size", size, sizeof(size)) >= 0 &&
		    parse_qemu_size(size, strlen(size), 1, &bytes) == 0)
			s->virtio_mem_bytes = add_bytes(s->virtio_mem_bytes, bytes);
	}
}

static const struct backend *find_backend(const struct qemu_scan *s, const char *id)
{
	for (size_t i = 0; i < s->nbackends; i++)
		if (!strcmp(s->backends[i].id, id))
			return &s->backends[i];
	return NULL;
}

/* Adds the named backends' sizes to the config; false when one is unknown or unsized. */
static bool add_backends(const struct qemu_scan *s, const char (*ids)[128], size_t n, struct vm_config *c, uint64_t *sum)
{
	for (size_t i = 0; i < n; i++) {
		const struct backend *b = find_backend(s, ids[i]);
		if (!b || !b->sized)
			return false;
		*sum = add_bytes(*sum, b->size_bytes);
		c->ram_shared |= b->shared;
		c->ram_hugetlb |= b->hugetlb;
		if (c->nblocks < VM_MAX_RAM_BLOCKS)
			c->block_bytes[c->nblocks++] = b->size_bytes;
	}
	return true;
}

/* -cpu MODEL[,+flag|-flag|flag=on|off...]: host and max pass the host's VMX/SVM on; a flag decides
 * (the last one wins); any other model is not known here. */
static enum vm_nested cpu_nested(const char *arg)
{
	size_t model = strcspn(arg, ",");
	enum vm_nested n = (model == 4 && !strncmp(arg, "host", 4)) || (model == 3 && !strncmp(arg, "max", 3))
				   ? VM_NESTED_YES
				   : VM_NESTED_UNKNOWN;
	for (const char *p = arg + model; *p == ',';) {
		p++;
		size_t l = strcspn(p, ",");
		char flag[32];
		if (l < sizeof(flag)) {
			memcpy(flag, p, l);
			flag[l] = '\0';
			if (!strcmp(flag, "+vmx") || !strcmp(flag, "+svm") || !strcmp(flag, "vmx=on") ||
			    !strcmp(flag, "svm=on") || !strcmp(flag, "vmx") || !strcmp(flag, "svm"))
				n = VM_NESTED_YES;
			else if (!strcmp(flag, "-vmx") || !strcmp(flag, "-svm") || !strcmp(flag, "vmx=off") ||
				 !strcmp(flag, "svm=off"))
				n = VM_NESTED_NO;
		}
		p += l;
	}
	return n;
}

/* A count in an -smp option: a decimal from 1 to 4096 (QEMU's most vCPUs); false otherwise. */
static bool smp_count(const char *arg, const char *key, unsigned long *ret)
{
	char buf[32], *end;
	if (qemu_opt_get(arg, "cpus", key, buf, sizeof(buf)) < 0)
		return false;
	errno = 0;
	unsigned long v = strtoul(buf, &end, 10);
	if (errno || end == buf || *end || !isdigit((unsigned char)buf[0]) || v < 1 || v > 4096)
		return false;
	*ret = v;
	return true;
}

/* -smp: the most vCPUs the VM can have, maxcpus. Without it, QEMU takes the product of the
 * topology when sockets, cores and threads are all given (it refuses a topology that does not
 * multiply out to maxcpus), and cpus when no topology is given; 0 when the option leaves it to
 * QEMU's rules for partial topologies. */
static unsigned smp_max_vcpus(const char *arg)
{
	static const char *const topology[] = {"drawers", "books", "sockets", "dies", "clusters", "modules", "cores", "threads"};
	unsigned long v, product = 1;
	if (smp_count(arg, "maxcpus", &v))
		return (unsigned)v;
	size_t given = 0, needed = 0;
	for (size_t i = 0; i < sizeof(topology) / sizeof(topology[0]); i++) {
		char buf[32];
		if (qemu_opt_get(arg, NULL, topology[i], buf, sizeof(buf)) < 0)
			continue;
		given++;
		if (!smp_count(arg, topology[i], &v))
			return 0;
		product = product * v > 4096 ? 0 : product * v;
		needed += !strcmp(topology[i], "sockets") || !strcmp(topology[i], "cores") || !strcmp(topology[i], "threads");
	}
	if (!given)
		return smp_count(arg, "cpus", &v) ? (unsigned)v : 0;
	return needed == 3 ? (unsigned)product : 0;
}

/* One option and its argument; false when the option is none parse_qemu reads. */
static bool scan_option(struct qemu_scan *s, struct vm_config *c, const char *opt, const char *arg)
{
	char buf[256];
	if (qemu_option_is(opt, "name")) {
		if (qemu_opt_get(arg, "guest", "guest", buf, sizeof(buf)) >= 0)
			snprintf(c->name, sizeof(c->name), "%s", buf);
	} else if (qemu_option_is(opt, "id")) {
		snprintf(c->vmid, sizeof(c->vmid), "%s", arg);
	} else if (qemu_option_is(opt, "uuid")) {
		snprintf(c->uuid, sizeof(c->uuid), "%s", arg);
	} else if (qemu_option_is(opt, "smbios")) {
		if (!c->uuid[0] && qemu_opt_get(arg, NULL, "type", buf, sizeof(buf)) >= 0 && !strcmp(buf, "1") &&
		    qemu_opt_get(arg, NULL, "uuid", buf, sizeof(buf)) >= 0)
			snprintf(c->uuid, sizeof(c->uuid), "%.63s", buf);
	} else if (qemu_option_is(opt, "m")) {
		s->has_m = true;
		s->m_bad = qemu_opt_get(arg, "size", "size", buf, sizeof(buf)) < 0 ||
			   parse_qemu_size(buf, strlen(buf), MIB, &s->m_bytes) < 0;
	} else if (qemu_option_is(opt, "object")) {
		scan_object(s, arg);
	} else if (qemu_option_is(opt, "cpu")) {
		c->cpu_nested = cpu_nested(arg);
	} else if (qemu_option_is(opt, "smp")) {
		c->max_vcpus = smp_max_vcpus(arg);
	} else if (qemu_option_is(opt, "machine") || qemu_option_is(opt, "M")) {
		if (qemu_opt_get(arg, "type", "memory-backend", buf, sizeof(buf)) >= 0)
			add_ref(s->base_memdevs, &s->nbase, buf);
		if (qemu_opt_get(arg, "type", "mem-merge", buf, sizeof(buf)) >= 0)
			c->mem_merge_off = !strcmp(buf, "off") || !strcmp(buf, "false") || !strcmp(buf, "no");
	} else if (qemu_option_is(opt, "numa")) {
		if (qemu_opt_get(arg, "type", "type", buf, sizeof(buf)) >= 0 && !strcmp(buf, "node") &&
		    qemu_opt_get(arg, NULL, "memdev", buf, sizeof(buf)) >= 0)
			add_ref(s->base_memdevs, &s->nbase, buf);
	} else if (qemu_option_is(opt, "device")) {
		scan_device(s, arg);
	} else if (qemu_option_is(opt, "chardev")) {
		scan_chardev(s, arg);
	} else if (qemu_option_is(opt, "mon")) {
		scan_mon(s, arg);
	} else if (qemu_option_is(opt, "qmp") || qemu_option_is(opt, "qmp-pretty")) {
		if (s->qmp_option.kind != VM_QMP_UNIX) {
			struct vm_qmp q = legacy_chardev(arg);
			if (s->qmp_option.kind == VM_QMP_NONE || q.kind == VM_QMP_UNIX)
				s->qmp_option = q;
		}
	} else {
		return false;
	}
	return true;
}

/* Guest RAM from what the options said: the NUMA or machine backends, else -m, else QEMU's
 * default; then DIMMs and virtio-mem. */
static void qemu_ram(const struct qemu_scan *s, struct vm_config *c)
{
	uint64_t total = 0;
	bool ok = true;
	if (s->nbase) {
		/* -machine memory-backend= and -numa memdev= name the same backend only once each. */
		char uniq[VM_MAX_RAM_BLOCKS][128];
		size_t nu = 0;
		for (size_t i = 0; i < s->nbase; i++) {
			size_t j = 0;
			while (j < nu && strcmp(uniq[j], s->base_memdevs[i]))
				j++;
			if (j == nu)
				memcpy(uniq[nu++], s->base_memdevs[i], 128);
		}
		ok = add_backends(s, uniq, nu, c, &total);
	} else if (s->has_m) {
		ok = !s->m_bad;
		total = s->m_bytes;
		c->block_bytes[c->nblocks++] = total;
	} else {
		total = 128 * MIB; /* QEMU's default RAM size */
		c->block_bytes[c->nblocks++] = total;
	}
	ok = ok && add_backends(s, s->dimm_memdevs, s->ndimms, c, &total);
	total = add_bytes(total, s->virtio_mem_bytes);
	c->guest_ram_bytes = ram_size(ok, total);
}

static int parse_qemu(const char *const *argv, size_t argc, struct vm_config *c)
{
	struct qemu_scan *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	c->cpu_nested = VM_NESTED_NO; /* QEMU's default model, qemu64, has no VMX */
	for (size_t i = 1; i + 1 < argc; i++)
		if (scan_option(s, c, argv[i], argv[i + 1]))
			i++; /* consumed the argument */
	qemu_ram(s, c);
	if (!c->name[0] && c->vmid[0])
		snprintf(c->name, sizeof(c->name), "%s", c->vmid);
	c->qmp = resolve_qmp(s);
	c->has_balloon = s->balloon;
	snprintf(c->balloon_id, sizeof(c->balloon_id), "%s", s->balloon_id);
	free(s);
	return 0;
}

/* ---- other VMMs ---- */

static void parse_cloud_hypervisor(const char *const *argv, size_t argc, struct vm_config *c)
{
	char buf[128];
	uint64_t memory = 512 * MIB, zones_total = 0; /* 512 MiB: cloud-hypervisor's default */
	bool zones = false, memory_ok = true, zones_ok = true;
	for (size_t i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--memory")) {
			if (qemu_opt_get(argv[i + 1], NULL, "size", buf, sizeof(buf)) >= 0)
				memory_ok = parse_qemu_size(buf, strlen(buf), 1, &memory) == 0;
			if (qemu_opt_get(argv[i + 1], NULL, "shared", buf, sizeof(buf)) >= 0 && !strcmp(buf, "on"))
				c->ram_shared = true;
			if (qemu_opt_get(argv[i + 1], NULL, "hugepages", buf, sizeof(buf)) >= 0 && !strcmp(buf, "on"))
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
				zones_total = add_bytes(zones_total, z);
				if (c->nblocks < VM_MAX_RAM_BLOCKS)
					c->block_bytes[c->nblocks++] = z;
			}
		}
	}
	if (!zones)
		c->block_bytes[c->nblocks++] = memory;
	c->guest_ram_bytes = zones ? ram_size(zones_ok, zones_total) : ram_size(memory_ok, memory);
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
	c->guest_ram_bytes = ram_size(ok, total);
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
	case VMM_QEMU: r = parse_qemu(argv, n, ret); break;
	case VMM_CLOUD_HYPERVISOR: parse_cloud_hypervisor(argv, n, ret); break;
	case VMM_FIRECRACKER: parse_firecracker(argv, n, ret); break;
	case VMM_CROSVM: parse_crosvm(argv, n, ret); break;
	default: break;
	}
	cmdline_split_free(argv);
	return r;
}
