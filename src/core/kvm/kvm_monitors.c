#include "core/kvm/kvm_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/stop.h"
#include "core/kvm/kvm_pace.h"
#include "core/kvm/kvm_qmp.h"
#include "core/model/proc.h"
#include "core/model/vm_visit.h"
#include "parse/virt_stats.h"

static void qmp_read_free(struct kvm_qmp_read *x)
{
	free(x->values);
	free(x->per);
	free(x->index);
	*x = (struct kvm_qmp_read){0};
}

void kvm_qmp_entry_free(struct kvm_qmp_entry *e)
{
	kvm_qmp_vm_free(e->q);
	qmp_read_free(&e->last);
	qmp_read_free(&e->before);
}

void kvm_reader_pace(struct kvm_reader *r, double seconds) { r->pace_seconds = seconds > 0 ? seconds : 0; }

const char *kvm_reader_pace_why(const struct kvm_reader *r) { return r->pace_why; }

void kvm_reader_select(struct kvm_reader *r, bool (*selects)(const struct kvm_vm_sample *vm, void *data), void *data)
{
	r->selects = selects;
	r->selects_data = data;
}

/* Whether the reader's selection (kvm_reader_select) takes the VM d. */
static bool selected(const struct kvm_reader *r, const struct vm *d)
{
	if (!r->selects)
		return true;
	struct kvm_vm_sample probe = {.pid = d->pid};
	snprintf(probe.name, sizeof(probe.name), "%s", d->cfg.name);
	return r->selects(&probe, r->selects_data);
}

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
	*e = (struct kvm_qmp_entry){.pid = d->pid, .start_ticks = d->start_ticks, .seen = true, .kvm_vm = -1,
				    .own_socket = -1};
	if (kvm_qmp_vm_new(path, d->pid, KVM_QMP_TIMEOUT_MS, &e->q) < 0)
		return NULL;
	r->nqmps++;
	return e;
}

static void qmp_forget_unseen(struct kvm_reader *r)
{
	size_t w = 0;
	for (size_t i = 0; i < r->nqmps; i++) {
		if (!r->qmps[i].seen) {
			kvm_qmp_entry_free(&r->qmps[i]);
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
		e = kvm_set_counters(r, names, kinds, n);
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

const char *kvm_reader_libvirt_why(const struct kvm_reader *r, char *buf, size_t cap)
{
	const struct kvm_libvirt *l = &r->libvirt;
	char name[80], more[48] = "";
	if (l->first_name[0]) {
		snprintf(name, sizeof(name), "%s", l->first_name);
		for (char *c = name; *c; c++) /* a name from a command line, into a log line */
			if ((unsigned char)*c < ' ' || *c == 0x7f)
				*c = '?';
	} else
		snprintf(name, sizeof(name), "pid %d", (int)l->first_pid);
	if (l->unread > 1)
		snprintf(more, sizeof(more), " and %zu more", l->unread - 1);
	if (l->unread)
		snprintf(buf, cap, "VM %s%s: %s", name, more, l->why);
	else if (cap)
		buf[0] = '\0';
	return buf;
}

/* One VM's read through QMP: 0 or why not (rc), its values [ncounters], with KVM_READ_VCPUS its
 * vCPUs' (per, index); whatever a sample does not take is freed after. */
struct qmp_got {
	int rc;
	maybe_i64 *values, *per;
	int vcpus, *index;
	enum kvm_source source; /* where the figures came from: QMP, or libvirt holding the monitor */
	char why[320];
	const struct kvm_qmp_entry *paced; /* a paced VM's entry, with its last reads; else NULL */
	bool held;                         /* its last read reused, not read now */
	struct kvm_qmp_entry libvirt;      /* a paced libvirt VM's last reads (paced points here) */
};

/* The QEMU version libvirt reports (major*1000000 + minor*1000 + micro) as QMP's greeting has it. */
static unsigned libvirt_qemu_version(const struct virt_domains *d)
{
	unsigned long v = d->hypervisor_version;
	return (unsigned)(v / 1000000 * 10000 + v / 1000 % 1000 * 100 + v % 1000);
}

/* libvirt's statistics of every running domain, asked once per read; when its QEMU is one that
 * interrupts every vCPU for them, at most every pace_seconds (the last answer held between). */
static int libvirt_domains(struct kvm_reader *r)
{
	struct kvm_libvirt *l = &r->libvirt;
	if (l->asked)
		return l->result;
	l->asked = true;
	double now = clock_monotonic_seconds();
	l->held = l->result == 0 && !kvm_pace_due(libvirt_qemu_version(&l->domains), r->pace_seconds, l->reads,
						   l->read_seconds, now);
	if (l->held)
		return 0;
	virt_domains_free(&l->before);
	l->before = l->domains; /* the read before, for a held VM's last figures */
	l->before_seconds = l->read_seconds;
	l->domains = (struct virt_domains){0};
	if (r->root.proc && strcmp(r->root.proc, "/proc")) { /* a tree's VMs are not libvirtd's */
		snprintf(l->why, sizeof(l->why), "libvirt: not asked about the VMs of a --proc-root tree");
		return l->result = -ENOENT;
	}
	if (!l->conn && virt_new(l->uri[0] ? l->uri : NULL, l->deadline_ms > 0 ? l->deadline_ms : 750, &l->conn) < 0)
		return l->result = -ENOMEM;
	l->result = virt_domain_stats(l->conn, VIRT_STATS_VM | VIRT_STATS_VCPU, &l->domains, l->why, sizeof(l->why));
	l->unreachable = l->result < 0;
	if (l->result == 0) {
		l->reads++;
		l->read_seconds = now;
	}
	return l->result;
}

/* A libvirt VM whose QEMU is paced: its last read and the one before (for its last figures) in
 * g->libvirt, the same shape as a QMP VM's entry. 0 or -ENOMEM. */
static int libvirt_pace(struct kvm_reader *r, const struct virt_domain *dom, struct qmp_got *g)
{
	const struct kvm_libvirt *l = &r->libvirt;
	unsigned version = libvirt_qemu_version(&l->domains);
	if (!(r->pace_seconds > 0) || !kvm_pace_interrupts(version))
		return 0;
	kvm_pace_why(r->pace_why, sizeof(r->pace_why), version, r->pace_seconds);
	g->paced = &g->libvirt;
	g->held = l->held;
	g->libvirt.last.seconds = l->read_seconds;
	const struct virt_domain *was = virt_domain_find(&l->before, dom->uuid);
	if (!was || !(l->before_seconds > 0))
		return 0;
	struct kvm_qmp_read *b = &g->libvirt.before;
	struct qmp_got per = {0};
	*b = (struct kvm_qmp_read){.seconds = l->before_seconds, .n = r->ncounters,
				   .values = malloc((r->ncounters ? r->ncounters : 1) * sizeof(maybe_i64))};
	if (!b->values || ((r->flags & KVM_READ_VCPUS) && kvm_virt_vcpus(was, r->names, r->ncounters, &per.vcpus, &per.per, &per.index) < 0)) {
		free(per.per);
		free(per.index);
		return -ENOMEM;
	}
	kvm_virt_values(was, r->names, r->ncounters, b->values);
	b->per = per.per;
	b->index = per.index;
	b->vcpus = per.vcpus;
	return 0;
}

/* A QEMU whose monitor libvirt holds: its counters from libvirt's statistics, by its uuid (and,
 * with KVM_READ_VCPUS, each vCPU's). */
static int libvirt_read(struct kvm_reader *r, const struct vm *d, struct qmp_got *g)
{
	maybe_i64 **values = &g->values;
	char *why = g->why;
	size_t cap = sizeof(g->why);
	int e = libvirt_domains(r);
	if (e < 0) {
		snprintf(why, cap, "%s", r->libvirt.why);
		if (r->libvirt.unreachable && !r->libvirt.unread++) {
			r->libvirt.first_pid = d->pid;
			snprintf(r->libvirt.first_name, sizeof(r->libvirt.first_name), "%.63s", d->cfg.name);
		}
		return e;
	}
	const struct virt_domain *dom = virt_domain_of_pid(&r->libvirt.domains, d->pid);
	if (!dom) {
		snprintf(why, cap, VM_LIBVIRT_NO_DOMAIN);
		return -ENOENT;
	}
	if (!r->ncounters) { /* no debugfs: the domain's statistics fix the counter set */
		char (*names)[64] = calloc(KVM_COUNTERS_MAX, sizeof(*names));
		enum kvm_stat_kind *kinds = calloc(KVM_COUNTERS_MAX, sizeof(*kinds));
		const char **ptrs = calloc(KVM_COUNTERS_MAX, sizeof(*ptrs));
		size_t n = names && kinds && ptrs ? kvm_virt_counters(dom, names, kinds, KVM_COUNTERS_MAX / 2) : 0;
		for (size_t i = 0; i < n; i++)
			ptrs[i] = names[i];
		e = names && kinds && ptrs ? kvm_set_counters(r, ptrs, kinds, n) : -ENOMEM;
		free(names);
		free(kinds);
		free(ptrs);
		maybe_i64 *v = e == 0 ? realloc(*values, (r->ncounters ? r->ncounters : 1) * sizeof(*v)) : NULL;
		if (!v)
			return e < 0 ? e : -ENOMEM;
		*values = v;
	}
	kvm_virt_values(dom, r->names, r->ncounters, *values);
	if ((r->flags & KVM_READ_VCPUS) && kvm_virt_vcpus(dom, r->names, r->ncounters, &g->vcpus, &g->per, &g->index) < 0)
		return -ENOMEM;
	return libvirt_pace(r, dom, g);
}

/* One visit to a VM's QMP socket into g; the first read without debugfs fixes the counter set. */
static int qmp_visit(struct kvm_reader *r, struct kvm_qmp_entry *e, struct qmp_got *g)
{
	bool want = r->flags & KVM_READ_VCPUS;
	int rc = e->permanent ? e->permanent
			      : kvm_qmp_vm_read(e->q, r->names, r->ncounters, g->values, &g->vcpus, want ? &g->per : NULL,
						&g->index);
	if (rc == -ENODATA || rc == -EOPNOTSUPP)
		e->permanent = rc; /* not asked again: the reason stays */
	if (rc == 0 && !r->ncounters) {
		if ((rc = counters_from_qmp(r, e->q)) < 0)
			return rc;
		maybe_i64 *v = realloc(g->values, (r->ncounters ? r->ncounters : 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		g->values = v;
		if (want) {
			free(g->per);
			free(g->index);
			g->per = NULL;
			g->index = NULL;
		}
		rc = kvm_qmp_vm_read(e->q, r->names, r->ncounters, g->values, &g->vcpus, want ? &g->per : NULL,
				     &g->index);
	}
	return rc;
}

/* x = a copy of n values, or of vcpus rows of them (stride n) as rows of stride `stride`, the
 * counters past n unknown. 0 or -ENOMEM. */
static int copy_rows(maybe_i64 **ret, const maybe_i64 *from, size_t n, size_t rows, size_t stride)
{
	maybe_i64 *x = malloc((rows * stride > 0 ? rows * stride : 1) * sizeof(*x));
	if (!x)
		return -ENOMEM;
	for (size_t c = 0; c < rows; c++)
		for (size_t i = 0; i < stride; i++)
			x[c * stride + i] = i < n ? from[c * n + i] : UNKNOWN;
	free(*ret);
	*ret = x;
	return 0;
}

/* A paced VM read just now: its read becomes the last, the last the one before. */
static int pace_keep(struct kvm_reader *r, struct kvm_qmp_entry *e, const struct qmp_got *g, double now)
{
	struct kvm_qmp_read x = {.seconds = now, .n = r->ncounters, .vcpus = g->vcpus};
	size_t nv = g->per && g->vcpus > 0 ? (size_t)g->vcpus : 0;
	int err = copy_rows(&x.values, g->values, x.n, 1, x.n);
	if (!err && nv) {
		err = copy_rows(&x.per, g->per, x.n, nv, x.n);
		x.index = malloc(nv * sizeof(*x.index));
		if (!err && x.index)
			memcpy(x.index, g->index, nv * sizeof(*x.index));
		else
			err = -ENOMEM;
	}
	if (err) {
		qmp_read_free(&x);
		return err;
	}
	qmp_read_free(&e->before);
	e->before = e->last;
	e->last = x;
	return 0;
}

/* A paced VM between reads: its last read again. */
static int pace_hold(struct kvm_reader *r, const struct kvm_qmp_entry *e, struct qmp_got *g)
{
	const struct kvm_qmp_read *x = &e->last;
	g->held = true;
	g->vcpus = x->vcpus;
	if (copy_rows(&g->values, x->values, x->n, 1, r->ncounters) < 0)
		return -ENOMEM;
	if (!(r->flags & KVM_READ_VCPUS) || !x->per)
		return 0;
	g->index = malloc((size_t)x->vcpus * sizeof(*g->index));
	if (!g->index || copy_rows(&g->per, x->per, x->n, (size_t)x->vcpus, r->ncounters) < 0)
		return -ENOMEM;
	memcpy(g->index, x->index, (size_t)x->vcpus * sizeof(*g->index));
	return 0;
}

/* Reads one VM through QMP into g (values [ncounters]); 0, or a negative errno with why set. A
 * QEMU whose vCPU statistics interrupt its vCPUs is read at the reader's pace, held between. */
/* Whether the process runs a KVM VM, so that its monitor has KVM counters to give: debugfs lists
 * every KVM VM of the host (listed: this one is among them); without debugfs, a KVM VM file
 * descriptor among its fds says so (asked once for good, or again after KVM_VM_RECHECK_S when it
 * had none). A QEMU under TCG, or any process that only calls itself QEMU, is never visited:
 * its monitor has nothing to say of KVM, and a forged one would be listened to for nothing. */
#define KVM_VM_RECHECK_S 10.0
static bool runs_kvm_vm(struct kvm_reader *r, struct kvm_qmp_entry *e, bool listed, double now, char *why, size_t cap)
{
	if (listed)
		return true;
	if (r->debugfs) {
		snprintf(why, cap, "no KVM VM: debugfs lists every KVM VM and not this process (a TCG guest?): "
				   "its monitor is not asked");
		return false;
	}
	if (e->kvm_vm != 1 && (e->kvm_vm < 0 || now - e->kvm_vm_asked >= KVM_VM_RECHECK_S)) {
		e->kvm_vm = io_proc_fd_links_to(&r->root, e->pid, "anon_inode:kvm-vm") == 1;
		e->kvm_vm_asked = now;
	}
	if (!e->kvm_vm)
		snprintf(why, cap, "no KVM VM: the process holds no KVM VM file descriptor (a TCG guest?): "
				   "its monitor is not asked");
	return e->kvm_vm;
}

/* Whether the VM itself listens on the socket it names (proc_listens_on), asked before any connect:
 * a socket another process serves is never connected to on the VM's behalf. Kept once seen; asked
 * again after KVM_VM_RECHECK_S when not. */
static bool listens_itself(struct kvm_reader *r, struct kvm_qmp_entry *e, const char *path, double now, char *why,
			   size_t cap)
{
	if (e->own_socket != 1 && (e->own_socket < 0 || now - e->own_socket_asked >= KVM_VM_RECHECK_S)) {
		int l = proc_listens_on(&r->root, e->pid, path);
		e->own_socket = l < 0 ? -1 : l;
		e->own_socket_asked = now;
	}
	if (e->own_socket == 0)
		snprintf(why, cap, "QMP %.100s: " VM_NOT_ITS_SOCKET, path);
	return e->own_socket != 0;
}

static int qmp_read(struct kvm_reader *r, const struct vm *d, const struct vm_qmp *qmp, bool listed, struct qmp_got *g)
{
	if (qmp->kind == VM_QMP_FD)
		return libvirt_read(r, d, g);
	if (qmp->kind != VM_QMP_UNIX) {
		snprintf(g->why, sizeof(g->why), "%s", vm_qmp_hint(qmp->kind));
		return -ENOENT;
	}
	struct kvm_qmp_entry *e = qmp_entry(r, d, qmp->path);
	if (!e)
		return -ENOMEM;
	double now = clock_monotonic_seconds();
	if (!runs_kvm_vm(r, e, listed, now, g->why, sizeof(g->why)) ||
	    !listens_itself(r, e, qmp->path, now, g->why, sizeof(g->why)))
		return -ENOENT;
	if (!e->permanent && !kvm_pace_due(kvm_qmp_vm_version(e->q), r->pace_seconds, e->reads, e->last.seconds, now)) {
		kvm_pace_why(r->pace_why, sizeof(r->pace_why), kvm_qmp_vm_version(e->q), r->pace_seconds);
		g->paced = e;
		return pace_hold(r, e, g);
	}
	int rc = qmp_visit(r, e, g);
	if (rc < 0) {
		snprintf(g->why, sizeof(g->why), "QMP %.100s: %.200s", qmp->path, kvm_qmp_vm_reason(e->q));
		return rc;
	}
	e->reads++;
	unsigned version = kvm_qmp_vm_version(e->q);
	if (!(r->pace_seconds > 0) || !kvm_pace_interrupts(version))
		return 0;
	kvm_pace_why(r->pace_why, sizeof(r->pace_why), version, r->pace_seconds);
	g->paced = e;
	return pace_keep(r, e, g, now);
}

/* A paced VM's sample: when its figures were read, and the read before for its last figures. */
static int pace_mark(struct kvm_vm_sample *s, const struct qmp_got *g)
{
	const struct kvm_qmp_read *last = &g->paced->last, *before = &g->paced->before;
	s->read_seconds = last->seconds;
	s->held = g->held;
	if (!before->values)
		return 0;
	if (copy_rows(&s->before, before->values, before->n, 1, before->n) < 0)
		return -ENOMEM;
	s->nbefore = before->n;
	s->before_seconds = before->seconds;
	for (size_t c = 0; c < s->nvcpu && before->per; c++)
		for (int k = 0; k < before->vcpus; k++)
			if (before->index[k] == s->vcpu[c].index &&
			    copy_rows(&s->vcpu[c].before, before->per + (size_t)k * before->n, before->n, 1, before->n) < 0)
				return -ENOMEM;
	return 0;
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
	if (g->per && kvm_set_vcpus(s, (size_t)g->vcpus, g->index, g->per, r->ncounters) < 0)
		return -ENOMEM;
	return g->paced ? pace_mark(s, g) : 0;
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
	if (g->per && kvm_set_vcpus(s, (size_t)g->vcpus, g->index, g->per, r->ncounters) < 0)
		return -ENOMEM;
	return g->paced ? pace_mark(s, g) : 0;
}

/* The VMs debugfs gave (ret's before the pass) by pid: the pass looks each VM up among them (those
 * it adds are other VMs'), by a binary search, not a walk of a sample that grows to thousands. */
struct by_pid {
	pid_t pid;
	size_t i; /* in ret->vms */
};

static int cmp_by_pid(const void *a, const void *b)
{
	const struct by_pid *x = a, *y = b;
	return x->pid != y->pid ? (x->pid > y->pid) - (x->pid < y->pid) : (x->i > y->i) - (x->i < y->i);
}

/* The first of debugfs' samples of pid, or NULL. */
static struct kvm_vm_sample *debugfs_sample(struct kvm_sample *ret, const struct by_pid *pre, size_t npre, pid_t pid)
{
	size_t lo = 0, hi = npre;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pre[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < npre && pre[lo].pid == pid ? &ret->vms[pre[lo].i] : NULL;
}

/* One discovered VM: through QMP when it is QEMU and debugfs lacks or denies its counters, unless
 * the read's visits are past their deadline. *via_qmp is set when QMP read it. 0 or -ENOMEM. */
static int qmp_vm(struct kvm_reader *r, struct kvm_sample *ret, const struct by_pid *pre, size_t npre,
		  const struct vm *d, double deadline, bool *via_qmp)
{
	if (!selected(r, d))
		return 0; /* a VM the reader does not watch: no visit on its behalf */
	struct kvm_vm_sample *s = debugfs_sample(ret, pre, npre, d->pid);
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
	if (clock_monotonic_seconds() >= deadline) { /* slow monitors must not hold up the read */
		snprintf(g.why, sizeof(g.why), "not read: this read's visits to monitors used their %.0f s",
			 KVM_MONITORS_BUDGET_S);
		g.rc = -ETIME;
	} else {
		g.rc = qmp_read(r, d, &qmp, s != NULL, &g);
	}
	/* The first VM read may have just fixed the counter set: the VMs listed before it follow. */
	if (g.rc != -ENOMEM && kvm_sample_fit(ret, ret->ncounters, r->ncounters) < 0)
		g.rc = -ENOMEM;
	int err = g.rc == -ENOMEM ? -ENOMEM : s ? qmp_fill_denied(r, ret, s, &g) : qmp_append(r, ret, d, &g);
	*via_qmp |= g.rc == 0;
	free(g.values);
	free(g.per);
	free(g.index);
	qmp_read_free(&g.libvirt.last);
	qmp_read_free(&g.libvirt.before);
	return err;
}

/* Every QEMU VM whose debugfs counters are missing or denied: through QMP, or listed with the
 * reason it cannot be read. */
int kvm_monitors_pass(struct kvm_reader *r, const struct vm_list *given, struct kvm_sample *ret)
{
	struct vm_list found = {0};
	const struct vm_list *list = given;
	if (!list) {
		if (vm_discover(&r->root, NULL, 0, &found) < 0)
			return 0; /* debugfs' figures stand */
		list = &found;
	}
	size_t npre = ret->nvms;
	struct by_pid *pre = malloc((npre ? npre : 1) * sizeof(*pre));
	if (!pre) {
		vm_list_free(&found);
		return -ENOMEM;
	}
	for (size_t i = 0; i < npre; i++)
		pre[i] = (struct by_pid){ret->vms[i].pid, i};
	qsort(pre, npre, sizeof(*pre), cmp_by_pid);
	int err = 0;
	bool via_qmp = false;
	r->libvirt.asked = false; /* libvirt is asked again at this read, if a VM needs it */
	r->libvirt.unreachable = false;
	r->libvirt.unread = 0;
	r->pace_why[0] = '\0';
	/* When the last read ran out of time, this one starts where it stopped: every VM gets read. */
	double deadline = clock_monotonic_seconds() + KVM_MONITORS_BUDGET_S;
	size_t first = list->n ? r->monitors_resume % list->n : 0;
	r->monitors_resume = 0;
	for (size_t k = 0; k < list->n && !err; k++) {
		size_t i = (first + k) % list->n;
		if (!r->monitors_resume && clock_monotonic_seconds() >= deadline)
			r->monitors_resume = i;
		err = qmp_vm(r, ret, pre, npre, &list->vms[i], deadline, &via_qmp);
	}
	free(pre);
	vm_list_free(&found);
	qmp_forget_unseen(r);
	/* Closed global files do not matter once the VMs' own counters are summed instead. */
	if (via_qmp && ret->denied >= r->denied)
		ret->denied -= r->denied;
	if (ret->nvms)
		qsort(ret->vms, ret->nvms, sizeof(*ret->vms), kvm_cmp_sample_dir);
	return err;
}
