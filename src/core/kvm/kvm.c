#include "core/kvm/kvm_reader.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/stop.h"
#include "core/kvm/kvm_bpf.h"
#include "core/kvm/kvm_qmp.h"
#include "core/kvm/kvm_trace.h"

const char *kvm_source_name(enum kvm_source s)
{
	return s == KVM_SOURCE_DEBUGFS ? "debugfs" : s == KVM_SOURCE_QMP ? "qmp" : s == KVM_SOURCE_LIBVIRT ? "libvirt" : NULL;
}

bool kvm_reader_has_debugfs(const struct kvm_reader *r) { return r->debugfs; }
const char *kvm_reader_reasons_why(const struct kvm_reader *r) { return r->reasons_why; }
const char *kvm_reader_reasons_counter(const struct kvm_reader *r) { return r->reasons_counter; }

const char *kvm_reader_private_mounts(const struct kvm_reader *r)
{
	return r->root.debugfs && r->root.tracefs ? "debugfs and tracefs"
	       : r->root.debugfs                 ? "debugfs"
	       : r->root.tracefs                 ? "tracefs"
						 : "";
}

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

static int kvm_alloc_counters(struct kvm_reader *r)
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
int kvm_set_counters(struct kvm_reader *r, const char *const *names, const enum kvm_stat_kind *kinds, size_t n)
{
	size_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += kinds ? kinds[i] != KVM_STAT_IGNORED : counter_entry(names[i]);
	if (!count)
		return 0;
	if (kvm_alloc_counters(r) < 0)
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

void kvm_open_globals(struct kvm_reader *r)
{
	for (size_t i = 0; i < r->ncounters; i++) {
		int fd = io_open(&r->root, IO_SYS, O_RDONLY, KVM_DIR "/%s", r->counters[i].name);
		r->denied += kvm_is_denied(fd);
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
		if (kvm_is_denied(r) || kvm_is_denied(d))
			*ret_why = KVM_DENIED;
		else if (d < 0 || visible == 0)
			*ret_why = KVM_NO_DEBUGFS;
		else
			*ret_why = KVM_NO_KVM;
		if (flags & KVM_READ_QMP)
			return open_without_debugfs(root, flags, ret);
		return kvm_is_denied(r) || kvm_is_denied(d) ? -EACCES : -ENOENT;
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
	r = kvm_set_counters(k, (const char *const *)names, NULL, n);
	io_free_names(names, n);
	if (r < 0) {
		kvm_reader_close(k);
		return r;
	}
	kvm_open_globals(k);
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

void kvm_reader_close(struct kvm_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nvms; i++)
		kvm_debugfs_close_vm(r, &r->vms[i]);
	for (size_t i = 0; r->global_fds && i < r->ncounters; i++)
		io_close(r->global_fds[i]);
	for (size_t i = 0; i < r->nqmps; i++)
		kvm_qmp_entry_free(&r->qmps[i]);
	free(r->qmps);
	for (size_t i = 0; i < r->ntraces; i++)
		kvm_trace_close(r->traces[i].t);
	free(r->traces);
	virt_free(r->libvirt.conn);
	virt_domains_free(&r->libvirt.domains);
	virt_domains_free(&r->libvirt.before);
	kvm_bpf_close(r->bpf);
	free(r->sockets);
	free(r->names);
	free(r->vms);
	free(r->global_fds);
	free(r->counters);
	free(r);
}

static void kvm_free_vcpus(struct kvm_vm_sample *s)
{
	for (size_t c = 0; s->vcpu && c < s->nvcpu; c++) {
		free(s->vcpu[c].values);
		free(s->vcpu[c].before);
	}
	free(s->vcpu);
	s->vcpu = NULL;
	s->nvcpu = 0;
}

/* s's vCPUs from n rows of ncounters values (flat) and their indices. 0 or -ENOMEM. */
int kvm_set_vcpus(struct kvm_vm_sample *s, size_t n, const int *index, const maybe_i64 *flat, size_t ncounters)
{
	kvm_free_vcpus(s);
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

int kvm_cmp_sample_dir(const void *a, const void *b)
{
	return strcmp(((const struct kvm_vm_sample *)a)->dir, ((const struct kvm_vm_sample *)b)->dir);
}

/* Appends n counters (names copied) to the set: every array sized by ncounters grows with it,
 * the new entries unknown or closed. */
/* One array of a sample grown from old to nc entries, the new ones unknown. */
static int fit_values(maybe_i64 **values, size_t old, size_t nc)
{
	maybe_i64 *x = realloc(*values, nc * sizeof(*x));
	if (!x)
		return -ENOMEM;
	for (size_t i = old; i < nc; i++)
		x[i] = UNKNOWN;
	*values = x;
	return 0;
}

int kvm_sample_fit(struct kvm_sample *ret, size_t old, size_t nc)
{
	if (nc <= old)
		return 0;
	for (size_t v = 0; v < ret->nvms; v++) {
		if (fit_values(&ret->vms[v].values, old, nc) < 0)
			return -ENOMEM;
		for (size_t c = 0; c < ret->vms[v].nvcpu; c++)
			if (fit_values(&ret->vms[v].vcpu[c].values, old, nc) < 0)
				return -ENOMEM;
	}
	if (fit_values(&ret->total, old, nc) < 0)
		return -ENOMEM;
	ret->ncounters = nc;
	return 0;
}

int kvm_grow_counters(struct kvm_reader *r, struct kvm_sample *ret, const char *const *names, size_t n)
{
	size_t old = r->ncounters, nc = old + n;
	if (nc > KVM_COUNTERS_MAX)
		return -E2BIG;
	if (kvm_alloc_counters(r) < 0)
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
	if (kvm_sample_fit(ret, old, nc) < 0)
		return -ENOMEM;
	for (size_t i = old; i < nc; i++) {
		snprintf(r->counters[i].name, sizeof(r->counters[i].name), "%s", names[i - old]);
		r->counters[i].kind = KVM_STAT_REASON;
		r->global_fds[i] = -1;
		r->names[i] = r->counters[i].name;
	}
	r->ncounters = nc;
	return 0;
}

int kvm_reader_sample(struct kvm_reader *r, struct kvm_sample *ret)
{
	return kvm_reader_sample_vms(r, NULL, ret);
}

int kvm_reader_sample_vms(struct kvm_reader *r, const struct vm_list *vms, struct kvm_sample *ret)
{
	memset(ret, 0, sizeof(*ret));
	int e = r->debugfs ? kvm_debugfs_sync(r) : 0;
	if (e < 0)
		return e;
	ret->monotonic_seconds = clock_monotonic_seconds();
	ret->ncounters = r->ncounters;
	ret->total = malloc((r->ncounters ? r->ncounters : 1) * sizeof(*ret->total));
	ret->vms = calloc(r->nvms ? r->nvms : 1, sizeof(*ret->vms));
	e = ret->total && ret->vms ? kvm_debugfs_read(r, ret) : -ENOMEM;
	if (e == 0 && (r->flags & KVM_READ_QMP))
		e = kvm_monitors_pass(r, vms, ret);
	if (e == 0 && (r->flags & KVM_READ_REASONS))
		e = kvm_reasons_pass(r, ret);
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
		free(s->vms[i].times);
		free(s->vms[i].before);
		kvm_free_vcpus(&s->vms[i]);
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

void kvm_change_add(struct kvm_change *sum, const struct kvm_change *part)
{
	sum->total = sum->total.known && part->total.known ? MAYBE(sum->total.v + part->total.v) : UNKNOWN;
	sum->delta = sum->delta.known && part->delta.known ? MAYBE(sum->delta.v + part->delta.v) : UNKNOWN;
	sum->reset |= part->reset;
	sum->per_second = isnan(sum->per_second) || isnan(part->per_second) ? NAN : sum->per_second + part->per_second;
}

