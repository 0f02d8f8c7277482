/* What a QEMU command line says about its guest: name, uuid, guest RAM from -m or the memory
 * backends NUMA nodes and the machine name, DIMMs and virtio-mem, the CPU model's VMX/SVM, -smp's
 * most vCPUs, the QMP monitor and the balloon; and whether it has a tap network backend. */
#include "parse/cmdline/qemu_cmdline.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/cmdline/qemu_opts.h"
#include "parse/parse.h"

#define MIB (1ull << 20)

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
	struct vm_config *cfg; /* what the options fill in as they come */
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
	bool balloon_reporting;
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
	b->shared = !strcmp(type, "memory-backend-memfd") || flag_on(arg, "share");
	if (!strcmp(type, "memory-backend-file")) {
		b->shared = true;
		b->hugetlb = qemu_opt_get(arg, NULL, "mem-path", buf, sizeof(buf)) >= 0 && strstr(buf, "huge");
	}
	if (!strcmp(type, "memory-backend-memfd"))
		b->hugetlb = flag_on(arg, "hugetlb");
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
		s->balloon_reporting = qemu_opt_bool(arg, "free-page-reporting") == 1; /* QEMU's default: off */
	} else if (!strncmp(driver, "virtio-mem", 10)) {
		uint64_t bytes;
		if (qemu_opt_get(arg, NULL, "requested-size", size, sizeof(size)) >= 0 &&
		    parse_qemu_size(size, strlen(size), 1, &bytes) == 0)
			s->virtio_mem_bytes = vm_ram_add(s->virtio_mem_bytes, bytes);
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
		*sum = vm_ram_add(*sum, b->size_bytes);
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
			int on = qemu_opt_bool(flag, "vmx");
			if (on < 0)
				on = qemu_opt_bool(flag, "svm"); /* vmx, vmx=on, svm=off ... */
			if (!strcmp(flag, "+vmx") || !strcmp(flag, "+svm") || on == 1)
				n = VM_NESTED_YES;
			else if (!strcmp(flag, "-vmx") || !strcmp(flag, "-svm") || on == 0)
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

/* One option and its argument (a qemu_option_fn): what it says of the guest. */
static void scan_option(void *ctx, const char *name, const char *arg)
{
	struct qemu_scan *s = ctx;
	struct vm_config *c = s->cfg;
	char buf[256];
	if (!strcmp(name, "name")) {
		if (qemu_opt_get(arg, "guest", "guest", buf, sizeof(buf)) >= 0)
			snprintf(c->name, sizeof(c->name), "%s", buf);
	} else if (!strcmp(name, "id")) {
		snprintf(c->vmid, sizeof(c->vmid), "%s", arg);
	} else if (!strcmp(name, "uuid")) {
		snprintf(c->uuid, sizeof(c->uuid), "%s", arg);
	} else if (!strcmp(name, "smbios")) {
		if (!c->uuid[0] && qemu_opt_get(arg, NULL, "type", buf, sizeof(buf)) >= 0 && !strcmp(buf, "1") &&
		    qemu_opt_get(arg, NULL, "uuid", buf, sizeof(buf)) >= 0)
			snprintf(c->uuid, sizeof(c->uuid), "%.63s", buf);
	} else if (!strcmp(name, "m")) {
		s->has_m = true;
		s->m_bad = qemu_opt_get(arg, "size", "size", buf, sizeof(buf)) < 0 ||
			   parse_qemu_size(buf, strlen(buf), MIB, &s->m_bytes) < 0;
	} else if (!strcmp(name, "object")) {
		scan_object(s, arg);
	} else if (!strcmp(name, "cpu")) {
		c->cpu_nested = cpu_nested(arg);
	} else if (!strcmp(name, "smp")) {
		c->max_vcpus = smp_max_vcpus(arg);
	} else if (!strcmp(name, "machine") || !strcmp(name, "M")) {
		if (qemu_opt_get(arg, "type", "memory-backend", buf, sizeof(buf)) >= 0)
			add_ref(s->base_memdevs, &s->nbase, buf);
		int merge = qemu_opt_bool(arg, "mem-merge");
		if (merge >= 0)
			c->mem_merge_off = merge == 0;
	} else if (!strcmp(name, "numa")) {
		if (qemu_opt_get(arg, "type", "type", buf, sizeof(buf)) >= 0 && !strcmp(buf, "node") &&
		    qemu_opt_get(arg, NULL, "memdev", buf, sizeof(buf)) >= 0)
			add_ref(s->base_memdevs, &s->nbase, buf);
	} else if (!strcmp(name, "device")) {
		scan_device(s, arg);
	} else if (!strcmp(name, "chardev")) {
		scan_chardev(s, arg);
	} else if (!strcmp(name, "mon")) {
		scan_mon(s, arg);
	} else if (!strcmp(name, "qmp") || !strcmp(name, "qmp-pretty")) {
		if (s->qmp_option.kind != VM_QMP_UNIX) {
			struct vm_qmp q = legacy_chardev(arg);
			if (s->qmp_option.kind == VM_QMP_NONE || q.kind == VM_QMP_UNIX)
				s->qmp_option = q;
		}
	}
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
	total = vm_ram_add(total, s->virtio_mem_bytes);
	c->guest_ram_bytes = vm_ram_size(ok, total);
}

int qemu_cmdline_config(const char *const *argv, size_t argc, struct vm_config *c)
{
	struct qemu_scan *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = c;
	c->cpu_nested = VM_NESTED_NO; /* QEMU's default model, qemu64, has no VMX */
	qemu_options_each(argv, argc, scan_option, s);
	qemu_ram(s, c);
	if (!c->name[0] && c->vmid[0])
		snprintf(c->name, sizeof(c->name), "%s", c->vmid);
	c->qmp = resolve_qmp(s);
	c->has_balloon = s->balloon;
	snprintf(c->balloon_id, sizeof(c->balloon_id), "%s", s->balloon_id);
	c->balloon_free_page_reporting = s->balloon_reporting;
	free(s);
	return 0;
}
