#include "core/kvm/kvm.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kvm/kvm_host.h"
#include "core/kvm/kvm_qmp.h"
#include "core/kvm/kvm_bpf.h"
#include "core/kvm/kvm_trace.h"
#include "core/kvm/kvm_virt.h"
#include "core/model/snapshot.h"
#include "core/model/vm.h"

#define KVM_DIR "kernel/debug/kvm"
/* The counter set lives in arrays of this capacity, never moved, only appended to: a sample
 * carries the set's first ncounters entries (kvm_sample.counters) to serve's HTTP threads while
 * the sampler's thread adds the exit reasons after them. */
#define KVM_COUNTERS_MAX 512


struct kvm_counter {
	char name[64];
	enum kvm_stat_kind kind;
};

/* One VM directory with its counter files held open. */
struct kvm_vm_files {
	char dir[32];
	pid_t pid;
	int kvm_fd;
	char name[256];
	enum vmm_kind vmm;
	uint64_t start_ticks;
	int vcpus;
	int *fds; /* [ncounters]; -1 when the file is missing */
	unsigned denied; /* files it refused to open */
	bool listed; /* in the latest listing */
};

/* A VM read through QMP, kept across reads for its schema. */
struct kvm_qmp_entry {
	pid_t pid;
	uint64_t start_ticks;
	struct kvm_qmp_vm *q;
	int permanent; /* an error that will not change for this process (TCG, QEMU before 7.1) */
	bool seen;
};

/* A VM's exit reasons by tracepoints, kept open across reads. */
struct kvm_trace_entry {
	pid_t pid;
	uint64_t start_ticks;
	struct kvm_trace *t; /* NULL when opening failed */
	bool seen;
	bool followed;     /* kvm_reader_follow's: kept, known by pid alone */
	enum vmm_kind vmm; /* a followed command's */
};

struct kvm_reader {
	struct io_root root;
	unsigned flags;
	bool debugfs; /* <debugfs>/kvm is there */
	struct kvm_counter *counters;
	const char **names; /* [ncounters] the counters' names, for QMP */
	size_t ncounters;
	int *global_fds; /* [ncounters] */
	struct kvm_vm_files *vms; /* sorted by dir */
	size_t nvms, cap;
	unsigned denied;
	bool reopen; /* the files are not seekable: read each by its path */
	struct kvm_qmp_entry *qmps;
	size_t nqmps;
	struct kvm_trace_entry *traces;
	size_t ntraces;
	struct kvm_qmp_socket {
		pid_t pid;
		char path[sizeof(((struct vm_qmp *)0)->path)];
	} *sockets; /* given by the user (exits --qmp-socket) */
	size_t nsockets;
	int isa;               /* enum kvm_trace_isa of the vendor module, read once; -1 not yet */
	size_t reasons_first;  /* index of the first reason counter; ncounters when none yet */
	size_t nreasons;
	char reasons_why[256];
	struct kvm_libvirt {
		struct virt *conn;          /* NULL until a libvirt QEMU is read */
		char uri[256];              /* "" qemu:///system */
		int deadline_ms;
		bool asked;                 /* this read asked libvirt already */
		int result;                 /* and what it answered */
		struct virt_domains domains;
		char why[256];
	} libvirt;
	struct kvm_bpf *bpf;         /* the reasons counted in the kernel (core/kvm/kvm_bpf.h); NULL: perf */
	bool bpf_tried;
	char reasons_counter[320];   /* which counter counts the reasons, and why */
};

const char *kvm_source_name(enum kvm_source s)
{
	return s == KVM_SOURCE_DEBUGFS ? "debugfs" : s == KVM_SOURCE_QMP ? "qmp" : s == KVM_SOURCE_LIBVIRT ? "libvirt" : NULL;
}

bool kvm_reader_has_debugfs(const struct kvm_reader *r) { return r->debugfs; }
const char *kvm_reader_reasons_why(const struct kvm_reader *r) { return r->reasons_why; }
const char *kvm_reader_reasons_counter(const struct kvm_reader *r) { return r->reasons_counter; }

int kvm_reader_qmp_socket(struct kvm_reader *r, pid_t pid, const char *path)
{
	struct kvm_qmp_socket *s = realloc(r->sockets, (r->nsockets + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	r->sockets = s;
	s[r->nsockets].pid = pid;
	snprintf(s[r->nsockets].path, sizeof(s->path), "%s", path);
	r->nsockets++;
	return 0;
}

const char *kvm_avail_hint(enum kvm_avail why)
{
	switch (why) {
	case KVM_AVAILABLE: return "";
	case KVM_NO_DEBUGFS: return "debugfs is not mounted; as root: mount -t debugfs none /sys/kernel/debug";
	case KVM_NO_KVM: return "no KVM on this host (no kvm directory in debugfs): load kvm_intel or kvm_amd, or this is not a KVM host";
	case KVM_DENIED: return "permission denied: KVM counters in debugfs need root (or the kernel is locked down)";
	}
	return "";
}

size_t kvm_reader_ncounters(const struct kvm_reader *r) { return r->ncounters; }
const char *kvm_counter_name(const struct kvm_reader *r, size_t i) { return r->counters[i].name; }
enum kvm_stat_kind kvm_counter_kind(const struct kvm_reader *r, size_t i) { return r->counters[i].kind; }

int kvm_counter_index(const struct kvm_reader *r, const char *name)
{
	for (size_t i = 0; i < r->ncounters; i++)
		if (!strcmp(r->counters[i].name, name))
			return (int)i;
	return -1;
}

static bool is_denied(int err) { return err == -EACCES || err == -EPERM; }

static int alloc_counters(struct kvm_reader *r)
{
	if (!r->counters)
		r->counters = calloc(KVM_COUNTERS_MAX, sizeof(*r->counters));
	if (!r->names)
		r->names = calloc(KVM_COUNTERS_MAX, sizeof(*r->names));
	return r->counters && r->names ? 0 : -ENOMEM;
}

/* Counter files among a directory's entries; the directories (VMs, vCPUs) are told apart by name. */
static bool counter_entry(const char *name)
{
	pid_t pid;
	int n;
	return kvm_counter_name_ok(name) && parse_kvm_vm_dir(name, &pid, &n) < 0 &&
	       parse_kvm_vcpu_dir(name, &n) < 0 && kvm_stat_kind(name) != KVM_STAT_IGNORED;
}

/* Fixes the counter set: n names (kinds NULL: by name, as debugfs files), unused ones skipped. */
static int set_counters(struct kvm_reader *r, const char *const *names, const enum kvm_stat_kind *kinds, size_t n)
{
	size_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += kinds ? kinds[i] != KVM_STAT_IGNORED : counter_entry(names[i]);
	if (!count)
		return 0;
	if (alloc_counters(r) < 0)
		return -ENOMEM;
	free(r->global_fds);
	r->global_fds = malloc(count * sizeof(*r->global_fds));
	if (!r->global_fds)
		return -ENOMEM;
	for (size_t i = 0; i < n && r->ncounters < KVM_COUNTERS_MAX; i++) {
		if (kinds ? kinds[i] == KVM_STAT_IGNORED : !counter_entry(names[i]))
			continue;
		struct kvm_counter *c = &r->counters[r->ncounters];
		snprintf(c->name, sizeof(c->name), "%s", names[i]);
		c->kind = kinds ? kinds[i] : kvm_stat_kind(names[i]);
		r->names[r->ncounters] = c->name;
		r->global_fds[r->ncounters++] = -1;
	}
	return 0;
}

static void open_globals(struct kvm_reader *r)
{
	for (size_t i = 0; i < r->ncounters; i++) {
		int fd = io_open(&r->root, IO_SYS, O_RDONLY, KVM_DIR "/%s", r->counters[i].name);
		r->denied += is_denied(fd);
		r->global_fds[i] = fd < 0 ? -1 : fd;
	}
}

/* A reader without debugfs, for QMP only. */
static int open_without_debugfs(const struct io_root *root, unsigned flags, struct kvm_reader **ret)
{
	struct kvm_reader *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->root = *root;
	k->flags = flags;
	k->isa = -1;
	*ret = k;
	return 0;
}

int kvm_reader_open(const struct io_root *root, struct kvm_reader **ret, enum kvm_avail *ret_why)
{
	return kvm_reader_open_with(root, 0, ret, ret_why);
}

int kvm_reader_open_with(const struct io_root *root, unsigned flags, struct kvm_reader **ret,
			 enum kvm_avail *ret_why)
{
	char **names = NULL;
	size_t n = 0;
	int r = io_list_dir(root, IO_SYS, &names, &n, KVM_DIR);
	if (r < 0) {
		char **dbg = NULL;
		size_t ndbg = 0;
		int d = io_list_dir(root, IO_SYS, &dbg, &ndbg, "kernel/debug");
		size_t visible = 0; /* an unmounted mount point may still hold dot files */
		for (size_t i = 0; d == 0 && i < ndbg; i++)
			visible += dbg[i][0] != '.';
		io_free_names(dbg, ndbg);
		if (is_denied(r) || is_denied(d))
			*ret_why = KVM_DENIED;
		else if (d < 0 || visible == 0)
			*ret_why = KVM_NO_DEBUGFS;
		else
			*ret_why = KVM_NO_KVM;
		if (flags & KVM_READ_QMP)
			return open_without_debugfs(root, flags, ret);
		return is_denied(r) || is_denied(d) ? -EACCES : -ENOENT;
	}
	struct kvm_reader *k = calloc(1, sizeof(*k));
	if (!k) {
		io_free_names(names, n);
		return -ENOMEM;
	}
	k->root = *root;
	k->flags = flags;
	k->isa = -1;
	k->debugfs = true;
	r = set_counters(k, (const char *const *)names, NULL, n);
	io_free_names(names, n);
	if (r < 0) {
		kvm_reader_close(k);
		return r;
	}
	open_globals(k);
	/* Every global file refused: reading any of them needs a privilege we lack. */
	if (k->ncounters && k->denied == k->ncounters) {
		kvm_reader_close(k);
		*ret_why = KVM_DENIED;
		if (flags & KVM_READ_QMP)
			return open_without_debugfs(root, flags, ret);
		return -EACCES;
	}
	*ret_why = KVM_AVAILABLE;
	*ret = k;
	return 0;
}

static void close_vm(struct kvm_reader *r, struct kvm_vm_files *vm)
{
	for (size_t i = 0; vm->fds && i < r->ncounters; i++)
		io_close(vm->fds[i]);
	free(vm->fds);
	vm->fds = NULL;
}

void kvm_reader_close(struct kvm_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nvms; i++)
		close_vm(r, &r->vms[i]);
	for (size_t i = 0; r->global_fds && i < r->ncounters; i++)
		io_close(r->global_fds[i]);
	for (size_t i = 0; i < r->nqmps; i++)
		kvm_qmp_vm_free(r->qmps[i].q);
	free(r->qmps);
	for (size_t i = 0; i < r->ntraces; i++)
		kvm_trace_close(r->traces[i].t);
	free(r->traces);
	virt_free(r->libvirt.conn);
	virt_domains_free(&r->libvirt.domains);
	kvm_bpf_close(r->bpf);
	free(r->sockets);
	free(r->names);
	free(r->vms);
	free(r->global_fds);
	free(r->counters);
	free(r);
}

static int cmp_vm_dir(const void *a, const void *b)
{
	return strcmp(((const struct kvm_vm_files *)a)->dir, ((const struct kvm_vm_files *)b)->dir);
}

/* Opens a new VM directory's files and counts its vCPUs. */
static int open_vm(struct kvm_reader *r, struct kvm_vm_files *vm)
{
	char **names = NULL;
	size_t n = 0;
	int e = io_list_dir(&r->root, IO_SYS, &names, &n, KVM_DIR "/%s", vm->dir);
	if (e < 0)
		return e;
	if (!r->ncounters) { /* no global files: take the set from the first VM */
		e = set_counters(r, (const char *const *)names, NULL, n);
		if (e == 0)
			open_globals(r);
	}
	vm->vcpus = -1;
	for (size_t i = 0; i < n; i++) {
		int id;
		if (parse_kvm_vcpu_dir(names[i], &id) == 0)
			vm->vcpus = vm->vcpus < 0 ? 1 : vm->vcpus + 1;
	}
	io_free_names(names, n);
	if (e < 0)
		return e;
	vm->fds = malloc((r->ncounters ? r->ncounters : 1) * sizeof(*vm->fds));
	if (!vm->fds)
		return -ENOMEM;
	size_t opened = 0;
	for (size_t i = 0; i < r->ncounters; i++) {
		int fd = io_open(&r->root, IO_SYS, O_RDONLY, KVM_DIR "/%s/%s", vm->dir, r->counters[i].name);
		vm->denied += is_denied(fd);
		vm->fds[i] = fd < 0 ? -1 : fd;
		opened += fd >= 0;
	}
	if (r->ncounters && !opened) {
		close_vm(r, vm);
		return -ENOENT;
	}
	return 0;
}

/* Names the VMs that just appeared: one discovery pass, matched by exact pid. */
static void name_new_vms(struct kvm_reader *r, const pid_t *pids, size_t npids)
{
	struct vm_list list;
	if (!npids || vm_discover(&r->root, pids, npids, &list) < 0)
		return;
	for (size_t v = 0; v < r->nvms; v++) {
		struct kvm_vm_files *vm = &r->vms[v];
		if (vm->start_ticks || vm->name[0])
			continue;
		for (size_t i = 0; i < list.n; i++) {
			const struct vm *d = &list.vms[i];
			if (d->pid != vm->pid)
				continue;
			vm->start_ticks = d->start_ticks;
			if (d->cfg.vmm != VMM_PROCESS)
				snprintf(vm->name, sizeof(vm->name), "%s", d->cfg.name);
			vm->vmm = d->cfg.vmm == VMM_PROCESS ? VMM_NONE : d->cfg.vmm;
			break;
		}
	}
	vm_list_free(&list);
}

/* Brings the open VM directories in line with a fresh listing. */
static int sync_vms(struct kvm_reader *r, char **names, size_t n)
{
	for (size_t i = 0; i < r->nvms; i++)
		r->vms[i].listed = false;
	pid_t *fresh = malloc((n ? n : 1) * sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	size_t nfresh = 0, before = r->nvms;
	int err = 0;
	for (size_t i = 0; i < n; i++) {
		pid_t pid;
		int fd;
		if (parse_kvm_vm_dir(names[i], &pid, &fd) < 0 || strlen(names[i]) >= sizeof(r->vms->dir))
			continue;
		struct kvm_vm_files key;
		snprintf(key.dir, sizeof(key.dir), "%s", names[i]);
		struct kvm_vm_files *hit = before ? bsearch(&key, r->vms, before, sizeof(*r->vms), cmp_vm_dir) : NULL;
		if (hit) {
			hit->listed = true;
			continue;
		}
		if (r->nvms == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 16;
			struct kvm_vm_files *v = realloc(r->vms, cap * sizeof(*v));
			if (!v) {
				err = -ENOMEM;
				break;
			}
			r->vms = v;
			r->cap = cap;
		}
		struct kvm_vm_files *vm = &r->vms[r->nvms];
		*vm = (struct kvm_vm_files){.pid = pid, .kvm_fd = fd, .listed = true, .vcpus = -1};
		snprintf(vm->dir, sizeof(vm->dir), "%s", names[i]);
		if (open_vm(r, vm) < 0)
			continue; /* went away already, or nothing readable */
		r->nvms++;
		fresh[nfresh++] = pid;
	}
	/* Drop the VMs that are gone, keep the rest sorted. */
	size_t w = 0;
	for (size_t i = 0; i < r->nvms; i++) {
		if (!r->vms[i].listed) {
			close_vm(r, &r->vms[i]);
			continue;
		}
		r->vms[w++] = r->vms[i];
	}
	r->nvms = w;
	if (r->nvms)
		qsort(r->vms, r->nvms, sizeof(*r->vms), cmp_vm_dir);
	if (!err)
		name_new_vms(r, fresh, nfresh);
	free(fresh);
	return err;
}

/* One pread of a counter file (dir NULL: a global one). -ENOENT style errors mean the VM went
 * away. Real debugfs KVM files are not seekable (pread gives ESPIPE, seen on 6.18): those are
 * opened, read and closed each time instead. */
static int read_counter(struct kvm_reader *r, int fd, const char *dir, const char *name, maybe_i64 *ret)
{
	*ret = UNKNOWN;
	if (fd < 0)
		return 0;
	char buf[32];
	ssize_t n = r->reopen ? -ESPIPE : io_reread(fd, buf, sizeof(buf));
	if (n == -ESPIPE) {
		r->reopen = true;
		n = dir ? io_read(&r->root, IO_SYS, buf, sizeof(buf), KVM_DIR "/%s/%s", dir, name)
			: io_read(&r->root, IO_SYS, buf, sizeof(buf), KVM_DIR "/%s", name);
	}
	if (n < 0)
		return (int)n;
	uint64_t v;
	if (parse_kvm_counter(buf, (size_t)n, &v) == 0 && v <= INT64_MAX)
		*ret = MAYBE((int64_t)v);
	return 0;
}

/* ---- per vCPU ---- */

static void free_vcpus(struct kvm_vm_sample *s)
{
	for (size_t c = 0; s->vcpu && c < s->nvcpu; c++)
		free(s->vcpu[c].values);
	free(s->vcpu);
	s->vcpu = NULL;
	s->nvcpu = 0;
}

/* s's vCPUs from n rows of ncounters values (flat) and their indices. 0 or -ENOMEM. */
static int set_vcpus(struct kvm_vm_sample *s, size_t n, const int *index, const maybe_i64 *flat, size_t ncounters)
{
	free_vcpus(s);
	s->vcpu = calloc(n ? n : 1, sizeof(*s->vcpu));
	if (!s->vcpu)
		return -ENOMEM;
	for (size_t c = 0; c < n; c++) {
		s->vcpu[c].index = index[c];
		s->vcpu[c].values = malloc((ncounters ? ncounters : 1) * sizeof(maybe_i64));
		if (!s->vcpu[c].values) {
			s->nvcpu = c;
			return -ENOMEM;
		}
		memcpy(s->vcpu[c].values, flat + c * ncounters, ncounters * sizeof(maybe_i64));
	}
	s->nvcpu = n;
	return 0;
}

/* A debugfs VM's vcpuN/ files, read by path (opened only with KVM_READ_VCPUS). */
static int debugfs_vcpus(struct kvm_reader *r, const struct kvm_vm_files *vm, struct kvm_vm_sample *s)
{
	size_t n = vm->vcpus > 0 ? (size_t)vm->vcpus : 0, nc = r->ncounters;
	maybe_i64 *flat = malloc((n * nc > 0 ? n * nc : 1) * sizeof(*flat));
	int *index = malloc((n ? n : 1) * sizeof(*index));
	int e = flat && index ? 0 : -ENOMEM;
	for (size_t c = 0; e == 0 && c < n; c++) {
		index[c] = (int)c;
		for (size_t i = 0; i < nc; i++) {
			char buf[32];
			uint64_t v;
			ssize_t len = r->counters[i].kind == KVM_STAT_REASON ? -ENOENT
				: io_read(&r->root, IO_SYS, buf, sizeof(buf), KVM_DIR "/%s/vcpu%zu/%s", vm->dir, c, r->counters[i].name);
			flat[c * nc + i] = len >= 0 && parse_kvm_counter(buf, (size_t)len, &v) == 0 && v <= INT64_MAX
				? MAYBE((int64_t)v) : UNKNOWN;
		}
	}
	if (e == 0)
		e = set_vcpus(s, n, index, flat, nc);
	free(flat);
	free(index);
	return e;
}

/* ---- QMP: the VMs debugfs cannot give ---- */

static struct kvm_qmp_entry *qmp_entry(struct kvm_reader *r, const struct vm *d, const char *path)
{
	for (size_t i = 0; i < r->nqmps; i++)
		if (r->qmps[i].pid == d->pid && r->qmps[i].start_ticks == d->start_ticks) {
			r->qmps[i].seen = true;
			return &r->qmps[i];
		}
	struct kvm_qmp_entry *e = realloc(r->qmps, (r->nqmps + 1) * sizeof(*e));
	if (!e)
		return NULL;
	r->qmps = e;
	e = &r->qmps[r->nqmps];
	*e = (struct kvm_qmp_entry){.pid = d->pid, .start_ticks = d->start_ticks, .seen = true};
	if (kvm_qmp_vm_new(path, &e->q) < 0)
		return NULL;
	r->nqmps++;
	return e;
}

static void qmp_forget_unseen(struct kvm_reader *r)
{
	size_t w = 0;
	for (size_t i = 0; i < r->nqmps; i++) {
		if (!r->qmps[i].seen) {
			kvm_qmp_vm_free(r->qmps[i].q);
			continue;
		}
		r->qmps[i].seen = false;
		r->qmps[w++] = r->qmps[i];
	}
	r->nqmps = w;
}

/* The first QMP VM read without debugfs fixes the counter set from its schema. */
static int counters_from_qmp(struct kvm_reader *r, struct kvm_qmp_vm *q)
{
	size_t n = kvm_qmp_vm_counters(q, 0, NULL, NULL);
	const char **names = calloc(n ? n : 1, sizeof(*names));
	enum kvm_stat_kind *kinds = calloc(n ? n : 1, sizeof(*kinds));
	int e = names && kinds ? 0 : -ENOMEM;
	if (e == 0) {
		kvm_qmp_vm_counters(q, n, names, kinds);
		e = set_counters(r, names, kinds, n);
	}
	free(names);
	free(kinds);
	return e;
}

int kvm_reader_libvirt(struct kvm_reader *r, const char *uri, int deadline_ms)
{
	snprintf(r->libvirt.uri, sizeof(r->libvirt.uri), "%s", uri ? uri : "");
	r->libvirt.deadline_ms = deadline_ms;
	return 0;
}

/* libvirt's statistics of every running domain, asked once per read. */
static int libvirt_domains(struct kvm_reader *r)
{
	struct kvm_libvirt *l = &r->libvirt;
	if (l->asked)
		return l->result;
	l->asked = true;
	virt_domains_free(&l->domains);
	if (r->root.proc && strcmp(r->root.proc, "/proc")) { /* a tree's VMs are not libvirtd's */
		snprintf(l->why, sizeof(l->why), "libvirt: not asked about the VMs of a --proc-root tree");
		return l->result = -ENOENT;
	}
	if (!l->conn && virt_new(l->uri[0] ? l->uri : NULL, l->deadline_ms > 0 ? l->deadline_ms : 750, &l->conn) < 0)
		return l->result = -ENOMEM;
	return l->result = virt_domain_stats(l->conn, VIRT_STATS_VM | VIRT_STATS_VCPU, &l->domains, l->why, sizeof(l->why));
}

/* A QEMU whose monitor libvirt holds: its counters from libvirt's statistics, by its uuid. */
static int libvirt_read(struct kvm_reader *r, const struct vm *d, maybe_i64 **values, char *why, size_t cap)
{
	int e = libvirt_domains(r);
	if (e < 0) {
		snprintf(why, cap, "%s", r->libvirt.why);
		return e;
	}
	const struct virt_domain *dom = kvm_virt_find(&r->libvirt.domains, d->cfg.uuid);
	if (!dom) {
		snprintf(why, cap, "libvirt holds its monitor and has no running domain with its uuid (%.40s)",
			 d->cfg.uuid[0] ? d->cfg.uuid : "none on its command line");
		return -ENOENT;
	}
	if (!r->ncounters) { /* no debugfs: the domain's statistics fix the counter set */
		char (*names)[64] = calloc(KVM_COUNTERS_MAX, sizeof(*names));
		enum kvm_stat_kind *kinds = calloc(KVM_COUNTERS_MAX, sizeof(*kinds));
		const char **ptrs = calloc(KVM_COUNTERS_MAX, sizeof(*ptrs));
		size_t n = names && kinds && ptrs ? kvm_virt_counters(dom, names, kinds, KVM_COUNTERS_MAX / 2) : 0;
		for (size_t i = 0; i < n; i++)
			ptrs[i] = names[i];
		e = names && kinds && ptrs ? set_counters(r, ptrs, kinds, n) : -ENOMEM;
		free(names);
		free(kinds);
		free(ptrs);
		maybe_i64 *v = e == 0 ? realloc(*values, (r->ncounters ? r->ncounters : 1) * sizeof(*v)) : NULL;
		if (!v)
			return e < 0 ? e : -ENOMEM;
		*values = v;
	}
	kvm_virt_values(dom, r->names, r->ncounters, *values);
	return 0;
}

/* Reads one VM through QMP into values ([ncounters]); 0, or a negative errno with why set. */
static int qmp_read(struct kvm_reader *r, const struct vm *d, const struct vm_qmp *qmp, maybe_i64 **values,
		    int *vcpus, maybe_i64 **per,
		    int **index, char *why, size_t cap)
{
	if (qmp->kind == VM_QMP_FD)
		return libvirt_read(r, d, values, why, cap);
	if (qmp->kind != VM_QMP_UNIX) {
		snprintf(why, cap, "%s", vm_qmp_hint(qmp->kind));
		return -ENOENT;
	}
	struct kvm_qmp_entry *e = qmp_entry(r, d, qmp->path);
	if (!e)
		return -ENOMEM;
	bool want = r->flags & KVM_READ_VCPUS;
	int rc = e->permanent ? e->permanent
			      : kvm_qmp_vm_read(e->q, r->names, r->ncounters, *values, vcpus, want ? per : NULL, index);
	if (rc == -ENODATA || rc == -EOPNOTSUPP)
		e->permanent = rc; /* not asked again: the reason stays */
	if (rc == 0 && !r->ncounters) {
		if ((rc = counters_from_qmp(r, e->q)) < 0)
			return rc;
		maybe_i64 *v = realloc(*values, (r->ncounters ? r->ncounters : 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		*values = v;
		if (want) {
			free(*per);
			free(*index);
			*per = NULL;
			*index = NULL;
		}
		rc = kvm_qmp_vm_read(e->q, r->names, r->ncounters, *values, vcpus, want ? per : NULL, index);
	}
	if (rc < 0)
		snprintf(why, cap, "QMP %.100s: %.200s", qmp->path, kvm_qmp_vm_reason(e->q));
	return rc;
}

static struct kvm_vm_sample *sample_of_pid(struct kvm_sample *s, pid_t pid)
{
	for (size_t i = 0; i < s->nvms; i++)
		if (s->vms[i].pid == pid)
			return &s->vms[i];
	return NULL;
}

static int cmp_sample_dir(const void *a, const void *b)
{
	return strcmp(((const struct kvm_vm_sample *)a)->dir, ((const struct kvm_vm_sample *)b)->dir);
}

/* A VM of another VMM that debugfs does not list (debugfs closed): listed with why, its counters
 * unknown (exit reasons may still come from tracepoints), so that it is seen and not summed. */
static int list_unread(struct kvm_reader *r, const struct vm *d, struct kvm_sample *ret)
{
	maybe_i64 *values = malloc((r->ncounters ? r->ncounters : 1) * sizeof(*values));
	struct kvm_vm_sample *v = values ? realloc(ret->vms, (ret->nvms + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(values);
		return -ENOMEM;
	}
	for (size_t c = 0; c < r->ncounters; c++)
		values[c] = UNKNOWN;
	ret->vms = v;
	struct kvm_vm_sample *s = &ret->vms[ret->nvms++];
	*s = (struct kvm_vm_sample){.pid = d->pid, .kvm_fd = -1, .start_ticks = d->start_ticks, .vcpus = -1,
				    .vmm = d->cfg.vmm, .values = values};
	snprintf(s->dir, sizeof(s->dir), "%d-none", (int)d->pid);
	snprintf(s->name, sizeof(s->name), "%s", d->cfg.name);
	snprintf(s->unavailable, sizeof(s->unavailable),
		 "%s: KVM's counters of a %s VM come from debugfs alone (mount -t debugfs none /sys/kernel/debug)",
		 r->debugfs ? "not in debugfs" : "no debugfs", vmm_kind_name(d->cfg.vmm));
	return 0;
}

/* The QMP socket of a VM: the one given for its pid (exits --qmp-socket), else its command line's. */
static struct vm_qmp qmp_socket_of(const struct kvm_reader *r, const struct vm *d)
{
	struct vm_qmp qmp = d->cfg.qmp;
	for (size_t k = 0; k < r->nsockets; k++)
		if (r->sockets[k].pid == d->pid) {
			qmp.kind = VM_QMP_UNIX;
			memcpy(qmp.path, r->sockets[k].path, sizeof(qmp.path));
		}
	return qmp;
}

/* One VM's read through QMP: 0 or why not (rc), its values [ncounters], with KVM_READ_VCPUS its
 * vCPUs' (per, index); whatever a sample does not take is freed after. */
struct qmp_got {
	int rc;
	maybe_i64 *values, *per;
	int vcpus, *index;
	enum kvm_source source; /* where the figures came from: QMP, or libvirt holding the monitor */
	char why[320];
};

/* A VM in debugfs whose files are partly denied: QMP's figures replace its own, or it says why not. */
static int qmp_fill_denied(struct kvm_reader *r, struct kvm_sample *ret, struct kvm_vm_sample *s, struct qmp_got *g)
{
	if (g->rc < 0) {
		snprintf(s->unavailable, sizeof(s->unavailable), "debugfs: %u files denied; %.280s", s->denied, g->why);
		return 0;
	}
	free(s->values);
	s->values = g->values;
	g->values = NULL;
	s->source = g->source;
	s->vcpus = g->vcpus;
	s->unavailable[0] = '\0';
	ret->denied -= s->denied;
	s->denied = 0;
	return g->per && set_vcpus(s, (size_t)g->vcpus, g->index, g->per, r->ncounters) < 0 ? -ENOMEM : 0;
}

/* A QEMU VM without a debugfs directory: a sample of its own, read through QMP or saying why not. */
static int qmp_append(struct kvm_reader *r, struct kvm_sample *ret, const struct vm *d, struct qmp_got *g)
{
	struct kvm_vm_sample *v = realloc(ret->vms, (ret->nvms + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ret->vms = v;
	struct kvm_vm_sample *s = &ret->vms[ret->nvms++];
	*s = (struct kvm_vm_sample){.pid = d->pid, .kvm_fd = -1, .start_ticks = d->start_ticks, .vcpus = g->vcpus,
				    .vmm = d->cfg.vmm, .values = g->values, .source = g->rc == 0 ? g->source : KVM_SOURCE_NONE};
	g->values = NULL;
	snprintf(s->dir, sizeof(s->dir), "%d-qmp", (int)d->pid);
	snprintf(s->name, sizeof(s->name), "%s", d->cfg.name);
	if (g->rc < 0) {
		for (size_t c = 0; c < r->ncounters; c++)
			s->values[c] = UNKNOWN;
		snprintf(s->unavailable, sizeof(s->unavailable), "%s%.300s", r->debugfs ? "" : "no debugfs; ", g->why);
		return 0;
	}
	return g->per && set_vcpus(s, (size_t)g->vcpus, g->index, g->per, r->ncounters) < 0 ? -ENOMEM : 0;
}

/* One discovered VM: through QMP when it is QEMU and debugfs lacks or denies its counters.
 * *via_qmp is set when QMP read it. 0 or -ENOMEM. */
static int qmp_vm(struct kvm_reader *r, struct kvm_sample *ret, const struct vm *d, bool *via_qmp)
{
	struct kvm_vm_sample *s = sample_of_pid(ret, d->pid);
	if (d->cfg.vmm != VMM_QEMU && d->cfg.vmm != VMM_PROCESS && !s)
		return list_unread(r, d, ret);
	if (d->cfg.vmm != VMM_QEMU || (s && !s->denied))
		return 0;
	struct qmp_got g = {.vcpus = -1};
	g.values = malloc((r->ncounters ? r->ncounters : 1) * sizeof(*g.values));
	if (!g.values)
		return -ENOMEM;
	struct vm_qmp qmp = qmp_socket_of(r, d);
	g.source = qmp.kind == VM_QMP_FD ? KVM_SOURCE_LIBVIRT : KVM_SOURCE_QMP;
	g.rc = qmp_read(r, d, &qmp, &g.values, &g.vcpus, &g.per, &g.index, g.why, sizeof(g.why));
	int err = g.rc == -ENOMEM ? -ENOMEM : s ? qmp_fill_denied(r, ret, s, &g) : qmp_append(r, ret, d, &g);
	*via_qmp |= g.rc == 0;
	free(g.values);
	free(g.per);
	free(g.index);
	return err;
}

/* Every QEMU VM whose debugfs counters are missing or denied: through QMP, or listed with the
 * reason it cannot be read. */
static int qmp_pass(struct kvm_reader *r, const struct vm_list *given, struct kvm_sample *ret)
{
	struct vm_list found = {0};
	const struct vm_list *list = given;
	if (!list) {
		if (vm_discover(&r->root, NULL, 0, &found) < 0)
			return 0; /* debugfs' figures stand */
		list = &found;
	}
	int err = 0;
	bool via_qmp = false;
	r->libvirt.asked = false; /* libvirt is asked again at this read, if a VM needs it */
	for (size_t i = 0; i < list->n && !err; i++)
		err = qmp_vm(r, ret, &list->vms[i], &via_qmp);
	vm_list_free(&found);
	qmp_forget_unseen(r);
	/* Closed global files do not matter once the VMs' own counters are summed instead. */
	if (via_qmp && ret->denied >= r->denied)
		ret->denied -= r->denied;
	/* The counter set may have just been fixed: the global totals follow it. */
	if (!err && ret->ncounters != r->ncounters) {
		maybe_i64 *t = realloc(ret->total, (r->ncounters ? r->ncounters : 1) * sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = ret->ncounters; i < r->ncounters; i++)
			t[i] = UNKNOWN;
		ret->total = t;
		ret->ncounters = r->ncounters;
	}
	if (ret->nvms)
		qsort(ret->vms, ret->nvms, sizeof(*ret->vms), cmp_sample_dir);
	return err;
}

/* ---- exit reasons by tracepoints ---- */

/* Appends n counters (names copied) to the set: every array sized by ncounters grows with it,
 * the new entries unknown or closed. */
static int grow_counters(struct kvm_reader *r, struct kvm_sample *ret, const char *const *names, size_t n)
{
	size_t old = r->ncounters, nc = old + n;
	if (nc > KVM_COUNTERS_MAX)
		return -E2BIG;
	if (alloc_counters(r) < 0)
		return -ENOMEM;
	int *g = realloc(r->global_fds, nc * sizeof(*g));
	if (!g)
		return -ENOMEM;
	r->global_fds = g;
	for (size_t v = 0; v < r->nvms; v++) {
		int *fds = realloc(r->vms[v].fds, nc * sizeof(*fds));
		if (!fds)
			return -ENOMEM;
		r->vms[v].fds = fds;
		for (size_t i = old; i < nc; i++)
			fds[i] = -1;
	}
	for (size_t v = 0; v < ret->nvms; v++) {
		maybe_i64 *x = realloc(ret->vms[v].values, nc * sizeof(*x));
		if (!x)
			return -ENOMEM;
		ret->vms[v].values = x;
		for (size_t i = old; i < nc; i++)
			x[i] = UNKNOWN;
		for (size_t c = 0; c < ret->vms[v].nvcpu; c++) {
			maybe_i64 *y = realloc(ret->vms[v].vcpu[c].values, nc * sizeof(*y));
			if (!y)
				return -ENOMEM;
			ret->vms[v].vcpu[c].values = y;
			for (size_t i = old; i < nc; i++)
				y[i] = UNKNOWN;
		}
	}
	maybe_i64 *t = realloc(ret->total, nc * sizeof(*t));
	if (!t)
		return -ENOMEM;
	ret->total = t;
	for (size_t i = old; i < nc; i++) {
		snprintf(r->counters[i].name, sizeof(r->counters[i].name), "%s", names[i - old]);
		r->counters[i].kind = KVM_STAT_REASON;
		r->global_fds[i] = -1;
		ret->total[i] = UNKNOWN;
	}
	for (size_t i = old; i < nc; i++)
		r->names[i] = r->counters[i].name;
	r->ncounters = ret->ncounters = nc;
	return 0;
}

/* eBPF where it loads, the perf filters where it does not: said in one line. */
static void kvm_reasons_counter_choose(struct kvm_reader *r)
{
	char why[256];
	r->bpf_tried = true;
	if (kvm_bpf_open(&r->root, &r->bpf, why, sizeof(why)) == 0)
		snprintf(r->reasons_counter, sizeof(r->reasons_counter), "eBPF (counted in the kernel)");
	else
		snprintf(r->reasons_counter, sizeof(r->reasons_counter), "perf tracepoint filters: %s", why);
}

/* A new entry for pid, its events opened (inherited: a followed command's). NULL without memory. */
static struct kvm_trace_entry *open_trace_entry(struct kvm_reader *r, pid_t pid, uint64_t start_ticks, bool inherit)
{
	struct kvm_trace_entry *e = realloc(r->traces, (r->ntraces + 1) * sizeof(*e));
	if (!e)
		return NULL;
	r->traces = e;
	e = &r->traces[r->ntraces++];
	*e = (struct kvm_trace_entry){.pid = pid, .start_ticks = start_ticks, .seen = !inherit, .followed = inherit};
	if (r->isa < 0) {
		struct kvm_host h;
		kvm_host_read(&r->root, &h);
		r->isa = h.vendor == KVM_VENDOR_INTEL ? KVM_TRACE_VMX
			 : h.vendor == KVM_VENDOR_AMD ? KVM_TRACE_SVM : KVM_TRACE_ISA_UNKNOWN;
		kvm_host_free(&h);
	}
	if (!r->bpf_tried)
		kvm_reasons_counter_choose(r);
	struct kvm_trace_config c = {.pid = pid, .isa = (enum kvm_trace_isa)r->isa, .inherit = inherit, .bpf = r->bpf};
	int rc = kvm_trace_open(&r->root, &c, &e->t);
	if (rc < 0) {
		e->t = NULL;
		if (rc != -ESRCH)
			kvm_trace_explain(&r->root, rc, r->reasons_why, sizeof(r->reasons_why));
	}
	return e;
}

static struct kvm_trace_entry *trace_entry(struct kvm_reader *r, const struct kvm_vm_sample *s)
{
	for (size_t i = 0; i < r->ntraces; i++)
		if (r->traces[i].pid == s->pid && (r->traces[i].followed || r->traces[i].start_ticks == s->start_ticks)) {
			r->traces[i].seen = true;
			return &r->traces[i];
		}
	return open_trace_entry(r, s->pid, s->start_ticks, false);
}

int kvm_reader_follow(struct kvm_reader *r, pid_t pid, const char *argv0)
{
	if (!(r->flags & KVM_READ_REASONS))
		return 0;
	struct kvm_trace_entry *e = open_trace_entry(r, pid, 0, true);
	if (!e)
		return -ENOMEM;
	enum vmm_kind vmm = parse_vmm_kind(argv0, strlen(argv0) + 1);
	e->vmm = vmm == VMM_NONE ? VMM_KVM : vmm;
	return e->t ? 0 : -ENODEV;
}

/* The first open trace fixes the reason counters ("<event>/<reason>", the same for every VM). */
static int reason_counters(struct kvm_reader *r, struct kvm_sample *ret, const struct kvm_trace *t)
{
	size_t n = kvm_trace_ncounters(t);
	char (*buf)[64] = calloc(n ? n : 1, sizeof(*buf));
	const char **names = calloc(n ? n : 1, sizeof(*names));
	int e = buf && names ? 0 : -ENOMEM;
	for (size_t i = 0; e == 0 && i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%s/%s", kvm_trace_event_name(kvm_trace_counter_event(t, i)),
			 kvm_trace_counter_reason(t, i));
		names[i] = buf[i];
	}
	if (e == 0) {
		r->reasons_first = r->ncounters;
		r->nreasons = n;
		e = grow_counters(r, ret, names, n);
	}
	free(buf);
	free(names);
	return e;
}

/* A followed command that no read lists (its VM came and went between two reads, or debugfs and
 * QMP show none): a VM of its own once its events counted anything, with only those counters. */
static int add_followed(struct kvm_reader *r, struct kvm_sample *ret, const struct kvm_trace_entry *e)
{
	size_t n = kvm_trace_ncounters(e->t);
	maybe_i64 *v_tr = malloc((n ? n : 1) * sizeof(*v_tr));
	if (!v_tr)
		return -ENOMEM;
	kvm_trace_sample(e->t, v_tr);
	int64_t events = 0;
	for (size_t i = 0; i < n; i++)
		events += v_tr[i].known ? v_tr[i].v : 0;
	int err = events > 0 && !r->nreasons ? reason_counters(r, ret, e->t) : 0;
	maybe_i64 *values = events > 0 && !err ? malloc((r->ncounters ? r->ncounters : 1) * sizeof(*values)) : NULL;
	struct kvm_vm_sample *v = values ? realloc(ret->vms, (ret->nvms + 1) * sizeof(*v)) : NULL;
	if (events > 0 && !err && !v)
		err = -ENOMEM;
	if (!v) {
		free(values);
		free(v_tr);
		return err;
	}
	for (size_t c = 0; c < r->ncounters; c++)
		values[c] = c >= r->reasons_first && c - r->reasons_first < n ? v_tr[c - r->reasons_first] : UNKNOWN;
	free(v_tr);
	ret->vms = v;
	struct kvm_vm_sample *s = &ret->vms[ret->nvms++];
	*s = (struct kvm_vm_sample){.pid = e->pid, .kvm_fd = -1, .vcpus = -1, .vmm = e->vmm, .values = values};
	snprintf(s->dir, sizeof(s->dir), "%d-run", (int)e->pid);
	snprintf(s->unavailable, sizeof(s->unavailable),
		 "the command's VM was in no read of debugfs or QMP (it came and went between them): exit reasons only");
	qsort(ret->vms, ret->nvms, sizeof(*ret->vms), cmp_sample_dir);
	return 0;
}

static int reasons_pass(struct kvm_reader *r, struct kvm_sample *ret)
{
	int err = r->bpf ? kvm_bpf_refresh(r->bpf) : 0; /* one read of the map for every VM */
	uint64_t lost = r->bpf ? kvm_bpf_lost(r->bpf) : 0;
	if (lost) /* the counts are short: said where the counter is named */
		snprintf(r->reasons_counter, sizeof(r->reasons_counter),
			 "eBPF (counted in the kernel; %llu exits not counted: its map is full)", (unsigned long long)lost);
	for (size_t v = 0; v < ret->nvms && !err; v++) {
		struct kvm_vm_sample *s = &ret->vms[v];
		struct kvm_trace_entry *e = trace_entry(r, s);
		if (!e) {
			err = -ENOMEM;
			break;
		}
		if (!e->t)
			continue;
		if (!r->nreasons && (err = reason_counters(r, ret, e->t)) < 0)
			break;
		size_t n = kvm_trace_ncounters(e->t);
		maybe_i64 *v_tr = malloc((n ? n : 1) * sizeof(*v_tr));
		if (!v_tr) {
			err = -ENOMEM;
			break;
		}
		kvm_trace_sample(e->t, v_tr); /* a process that just exited keeps its last counts */
		for (size_t i = 0; i < n && i < r->nreasons; i++)
			s->values[r->reasons_first + i] = v_tr[i];
		free(v_tr);
	}
	for (size_t i = 0; i < r->ntraces && !err; i++)
		if (r->traces[i].followed && !r->traces[i].seen && r->traces[i].t)
			err = add_followed(r, ret, &r->traces[i]);
	size_t w = 0;
	for (size_t i = 0; i < r->ntraces; i++) {
		if (!r->traces[i].seen && !r->traces[i].followed) {
			kvm_trace_close(r->traces[i].t);
			continue;
		}
		r->traces[i].seen = false;
		r->traces[w++] = r->traces[i];
	}
	r->ntraces = w;
	if (r->nreasons)
		r->reasons_why[0] = '\0';
	return err;
}

int kvm_reader_sample(struct kvm_reader *r, struct kvm_sample *ret)
{
	return kvm_reader_sample_vms(r, NULL, ret);
}

int kvm_reader_sample_vms(struct kvm_reader *r, const struct vm_list *vms, struct kvm_sample *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (r->debugfs) {
		char **names = NULL;
		size_t n = 0;
		int e = io_list_dir(&r->root, IO_SYS, &names, &n, KVM_DIR);
		if (e < 0)
			return e;
		e = sync_vms(r, names, n);
		io_free_names(names, n);
		if (e < 0)
			return e;
	}

	ret->monotonic_seconds = clock_monotonic_seconds();
	ret->ncounters = r->ncounters;
	size_t nc = r->ncounters ? r->ncounters : 1;
	ret->total = malloc(nc * sizeof(*ret->total));
	ret->vms = calloc(r->nvms ? r->nvms : 1, sizeof(*ret->vms));
	if (!ret->total || !ret->vms) {
		kvm_sample_free(ret);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->ncounters; i++)
		if (read_counter(r, r->global_fds[i], NULL, r->counters[i].name, &ret->total[i]) < 0)
			ret->total[i] = UNKNOWN;
	for (size_t v = 0; v < r->nvms; v++) {
		struct kvm_vm_files *vm = &r->vms[v];
		struct kvm_vm_sample *s = &ret->vms[ret->nvms];
		*s = (struct kvm_vm_sample){0}; /* a VM that vanished may have left its reason here */
		s->values = malloc(nc * sizeof(*s->values));
		if (!s->values) {
			kvm_sample_free(ret);
			return -ENOMEM;
		}
		bool gone = false;
		s->denied = vm->denied;
		for (size_t i = 0; i < r->ncounters && !gone; i++) {
			int rr = read_counter(r, vm->fds[i], vm->dir, r->counters[i].name, &s->values[i]);
			gone = rr < 0 && !is_denied(rr);
			s->denied += is_denied(rr);
		}
		ret->denied += s->denied;
		if (s->denied)
			snprintf(s->unavailable, sizeof(s->unavailable),
				 "debugfs: %u counter files denied (even root is refused on a locked-down or nested KVM)",
				 s->denied);
		if (gone) { /* removed under us: the next listing drops it */
			free(s->values);
			s->values = NULL;
			ret->vanished++;
			continue;
		}
		snprintf(s->dir, sizeof(s->dir), "%s", vm->dir);
		snprintf(s->name, sizeof(s->name), "%s", vm->name);
		s->pid = vm->pid;
		s->kvm_fd = vm->kvm_fd;
		s->start_ticks = vm->start_ticks;
		s->vmm = vm->vmm;
		s->vcpus = vm->vcpus;
		s->source = KVM_SOURCE_DEBUGFS;
		ret->nvms++;
		if ((r->flags & KVM_READ_VCPUS) && debugfs_vcpus(r, vm, s) < 0) {
			kvm_sample_free(ret);
			return -ENOMEM;
		}
	}
	ret->denied += r->denied;
	int e = r->flags & KVM_READ_QMP ? qmp_pass(r, vms, ret) : 0;
	if (e == 0 && (r->flags & KVM_READ_REASONS))
		e = reasons_pass(r, ret);
	if (e < 0) {
		kvm_sample_free(ret);
		return e;
	}
	ret->counters = r->counters; /* the passes may have just made or grown the set */
	return 0;
}

int kvm_reader_probe(struct kvm_reader *r, bool (*keep)(const struct kvm_vm_sample *vm, void *data), void *data,
		     char *why, size_t cap)
{
	struct kvm_sample s;
	int e = kvm_reader_sample(r, &s);
	if (e < 0)
		return e;
	e = -ENOENT;
	why[0] = '\0';
	for (size_t i = 0; i < s.nvms; i++) {
		if (keep && !keep(&s.vms[i], data))
			continue;
		if (s.vms[i].source != KVM_SOURCE_NONE)
			e = 0;
		else if (!why[0])
			snprintf(why, cap, ": VM %.64s: %.250s", s.vms[i].name[0] ? s.vms[i].name : "?", s.vms[i].unavailable);
	}
	kvm_sample_free(&s);
	return e;
}

void kvm_sample_free(struct kvm_sample *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->vms && i < s->nvms; i++) {
		free(s->vms[i].values);
		free_vcpus(&s->vms[i]);
	}
	free(s->vms);
	free(s->total);
	s->vms = NULL;
	s->total = NULL;
	s->nvms = 0;
}

const char *kvm_sample_counter_name(const struct kvm_sample *s, size_t i) { return s->counters[i].name; }
enum kvm_stat_kind kvm_sample_counter_kind(const struct kvm_sample *s, size_t i) { return s->counters[i].kind; }

bool kvm_sample_reasons_counted(const struct kvm_sample *s)
{
	for (size_t i = 0; i < s->ncounters; i++)
		if (s->counters[i].kind == KVM_STAT_REASON)
			return true;
	return false;
}

const struct kvm_vm_sample *kvm_sample_find(const struct kvm_sample *s, const char *dir)
{
	for (size_t i = 0; i < s->nvms; i++)
		if (!strcmp(s->vms[i].dir, dir))
			return &s->vms[i];
	return NULL;
}

struct kvm_change kvm_change(enum kvm_stat_kind kind, maybe_i64 before, maybe_i64 after, double seconds,
			     bool appeared)
{
	struct kvm_change c = {.total = after, .delta = UNKNOWN, .per_second = NAN};
	if (!after.known)
		return c;
	if (kind == KVM_STAT_GAUGE) {
		if (before.known && !appeared)
			c.delta = MAYBE(after.v - before.v);
		return c;
	}
	if (appeared)
		before = MAYBE(0);
	if (!before.known)
		return c;
	if (after.v < before.v) {
		c.reset = true;
		return c;
	}
	c.delta = MAYBE(after.v - before.v);
	if (seconds > 0)
		c.per_second = (double)c.delta.v / seconds;
	return c;
}

struct kvm_change kvm_change_zero(void)
{
	return (struct kvm_change){.total = MAYBE(0), .delta = MAYBE(0), .per_second = 0};
}

void kvm_change_add(struct kvm_change *sum, const struct kvm_change *part, double seconds)
{
	sum->total = sum->total.known && part->total.known ? MAYBE(sum->total.v + part->total.v) : UNKNOWN;
	sum->delta = sum->delta.known && part->delta.known ? MAYBE(sum->delta.v + part->delta.v) : UNKNOWN;
	sum->reset |= part->reset;
	sum->per_second = sum->delta.known && seconds > 0 && !isnan(part->per_second) ? (double)sum->delta.v / seconds
										 : NAN;
}
