#include "core/model/vm_memo.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/state.h"

#define MEMO_FILE "vms"
#define MAGIC "vmhost vms 3\n"
#define COST_FILE "pss"
#define COST_MAGIC "vmhost pss 1\n"
enum { BOOT_ID_LEN = 36, MEMO_MAX = 64 << 20, CMDLINE_MAX = 1 << 20, THREADS_MAX = 1 << 16, IFACE_LEN = 16,
       CGROUP_MAX = 4096, OTHERS_MAX = 1 << 22 };

/* Each VM: its header, then its command line, its vCPUs (tid, index), its named threads, its
 * taps' names (IFNAMSIZ bytes each, NUL-padded) and its cgroup paths (NUL-terminated). After the
 * VMs, the count of the other processes and their records. */
struct record {
	int32_t pid;
	uint32_t cmdline_len;
	uint64_t start_ticks;
	char comm[16];
	uint32_t nvcpus, nnamed;
	int64_t ifaces_fds; /* the VMM's fd count when its taps were listed; 0: not listed */
	uint32_t nifaces;
	uint32_t threads;   /* the VMM's thread count when its vCPUs were named; 0: unknown */
	uint32_t cgroup_len, cgroup_v1_len; /* with their NULs; 0: not known (cgroup), none (v1) */
	int32_t cgroup_version;
	uint32_t vm_scope;
};

struct other_record {
	int32_t pid;
	uint32_t reserved;
	uint64_t start_ticks;
	char comm[16];
	int64_t fds;
};

/* Each VM's PSS cost in the costs' file. */
struct cost_record {
	int32_t pid;
	uint32_t unused;
	uint64_t start_ticks;
	char comm[16];
	double exact_seconds, exact_at, sample_seconds;
	int64_t exact_merging;
};

struct out {
	char *p;
	size_t len, cap;
	bool failed;
};

static void put(struct out *o, const void *data, size_t len)
{
	if (o->failed)
		return;
	if (o->len + len > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < o->len + len)
			cap *= 2;
		char *bigger = realloc(o->p, cap);
		if (!bigger) {
			o->failed = true;
			return;
		}
		o->p = bigger;
		o->cap = cap;
	}
	if (len) /* data may be NULL then */
		memcpy(o->p + o->len, data, len);
	o->len += len;
}

/* The next len bytes of the file at *pos, or NULL when it is shorter. */
static const char *take(const char *file, size_t len, size_t *pos, size_t want)
{
	if (want > len - *pos)
		return NULL;
	const char *at = file + *pos;
	*pos += want;
	return at;
}

/* One VM of the file into vm; false when the file is damaged. */
static bool take_vm(const char *file, size_t len, size_t *pos, struct vm_memo_vm *vm)
{
	struct record rec;
	const char *at = take(file, len, pos, sizeof(rec));
	if (!at)
		return false;
	memcpy(&rec, at, sizeof(rec));
	if (rec.pid <= 0 || !rec.cmdline_len || rec.cmdline_len > CMDLINE_MAX || rec.nvcpus > THREADS_MAX ||
	    rec.nnamed > THREADS_MAX || rec.comm[sizeof(rec.comm) - 1] || rec.nifaces > VM_IO_IFACES_MAX ||
	    rec.ifaces_fds < 0 || rec.cgroup_len > CGROUP_MAX || rec.cgroup_v1_len > CGROUP_MAX ||
	    (rec.cgroup_v1_len && !rec.cgroup_len))
		return false;
	const char *cmd = take(file, len, pos, rec.cmdline_len);
	const char *vcpus = cmd ? take(file, len, pos, (size_t)rec.nvcpus * 2 * sizeof(int32_t)) : NULL;
	const char *named = vcpus ? take(file, len, pos, (size_t)rec.nnamed * sizeof(int32_t)) : NULL;
	const char *ifaces = named ? take(file, len, pos, (size_t)rec.nifaces * IFACE_LEN) : NULL;
	const char *cgroup = ifaces ? take(file, len, pos, rec.cgroup_len) : NULL;
	const char *v1 = cgroup ? take(file, len, pos, rec.cgroup_v1_len) : NULL;
	if (!v1 || (rec.cgroup_len && cgroup[rec.cgroup_len - 1]) || (rec.cgroup_v1_len && v1[rec.cgroup_v1_len - 1]))
		return false;
	for (size_t i = 0; i < rec.nifaces; i++)
		if (!ifaces[i * IFACE_LEN] || ifaces[(i + 1) * IFACE_LEN - 1])
			return false;
	*vm = (struct vm_memo_vm){.pid = rec.pid, .start_ticks = rec.start_ticks, .cmdline = cmd,
				  .cmdline_len = rec.cmdline_len, .ifaces_fds = (long)rec.ifaces_fds,
				  .ifaces = ifaces, .nifaces = rec.nifaces,
				  .cgroup = rec.cgroup_len ? cgroup : NULL, .cgroup_v1_memory = rec.cgroup_v1_len ? v1 : NULL,
				  .cgroup_version = rec.cgroup_version, .vm_scope = rec.vm_scope != 0,
				  .cpu = {.vcpus = malloc((rec.nvcpus ? rec.nvcpus : 1) * sizeof(struct vcpu)),
					  .named = malloc((rec.nnamed ? rec.nnamed : 1) * sizeof(pid_t)),
					  .nvcpus = rec.nvcpus, .nnamed = rec.nnamed, .vcpus_known = true,
					  .threads = (long)rec.threads,
					  .cpu_seconds = NAN, .vcpu_delay_seconds = NAN, .cpu_percent = NAN,
					  .vcpu_delay_percent = NAN}};
	memcpy(vm->comm, rec.comm, sizeof(vm->comm));
	if (!vm->cpu.vcpus || !vm->cpu.named)
		return false;
	for (size_t i = 0; i < rec.nvcpus; i++) {
		int32_t pair[2];
		memcpy(pair, vcpus + i * sizeof(pair), sizeof(pair));
		if (pair[0] <= 0 || pair[1] < 0 || (i && pair[1] < vm->cpu.vcpus[i - 1].index))
			return false; /* by index, as vcpus_read leaves them */
		vm->cpu.vcpus[i] = vcpu_unread(pair[1], pair[0]);
	}
	for (size_t i = 0; i < rec.nnamed; i++) {
		int32_t tid;
		memcpy(&tid, named + i * sizeof(tid), sizeof(tid));
		vm->cpu.named[i] = tid;
	}
	return true;
}

/* A file's magic and this boot's id, then how many records of record_size bytes follow: false when
 * it is another format's or another boot's, or too short for them. */
static bool take_header(const char *file, size_t len, size_t *pos, const char *magic, const char *boot_id,
			size_t record_size, uint32_t *ret_n)
{
	const char *m = take(file, len, pos, strlen(magic)), *id = m ? take(file, len, pos, BOOT_ID_LEN + 1) : NULL;
	const char *count = id ? take(file, len, pos, sizeof(uint32_t)) : NULL;
	if (!count || memcmp(m, magic, strlen(magic)) || memcmp(id, boot_id, BOOT_ID_LEN) || id[BOOT_ID_LEN] != '\n')
		return false;
	memcpy(ret_n, count, sizeof(*ret_n));
	return *ret_n <= (len - *pos) / record_size;
}

static void put_header(struct out *o, const char *magic, const char *boot_id, uint32_t n)
{
	put(o, magic, strlen(magic));
	put(o, boot_id, BOOT_ID_LEN);
	put(o, "\n", 1);
	put(o, &n, sizeof(n));
}

/* Writes what o holds as dir's file name, unless it is what the file already says (was). */
static int replace_if_changed(const char *dir, const char *name, struct out *o, const char *was, size_t was_len)
{
	int r = o->failed ? -ENOMEM : 0;
	if (r == 0 && !(was && was_len == o->len && !memcmp(was, o->p, o->len)))
		r = io_state_write(dir, name, o->p, o->len);
	free(o->p);
	return r;
}

/* The other processes, after the VMs; false when damaged. */
static bool take_others(const char *file, size_t len, size_t *pos, struct vm_memo *ret)
{
	const char *count = take(file, len, pos, sizeof(uint32_t));
	uint32_t n;
	if (!count)
		return false;
	memcpy(&n, count, sizeof(n));
	if (n > OTHERS_MAX || n > (len - *pos) / sizeof(struct other_record) ||
	    !(ret->others = malloc((n ? n : 1) * sizeof(*ret->others))))
		return false;
	for (ret->nothers = 0; ret->nothers < n; ret->nothers++) {
		struct other_record rec;
		const char *at = take(file, len, pos, sizeof(rec));
		if (!at)
			return false;
		memcpy(&rec, at, sizeof(rec));
		struct vm_other *o = &ret->others[ret->nothers];
		if (rec.pid <= 0 || rec.comm[sizeof(rec.comm) - 1] || rec.fds < -1 ||
		    (ret->nothers && rec.pid <= o[-1].pid))
			return false;
		*o = (struct vm_other){.pid = rec.pid, .start_ticks = rec.start_ticks, .fds = (long)rec.fds};
		memcpy(o->comm, rec.comm, sizeof(o->comm));
	}
	return true;
}

static bool parse_memo(const char *file, size_t len, const char *boot_id, struct vm_memo *ret)
{
	size_t pos = 0;
	uint32_t n;
	if (!take_header(file, len, &pos, MAGIC, boot_id, sizeof(struct record), &n))
		return false;
	ret->vms = calloc(n ? n : 1, sizeof(*ret->vms));
	if (!ret->vms)
		return false;
	for (ret->n = 0; ret->n < n; ret->n++) {
		struct vm_memo_vm *vm = &ret->vms[ret->n];
		if (!take_vm(file, len, &pos, vm) || (ret->n && vm->pid <= vm[-1].pid)) {
			ret->n++; /* freed with the rest */
			return false;
		}
	}
	ret->others_at = pos;
	return take_others(file, len, &pos, ret) && pos == len;
}

/* A cost as a damaged file cannot give: finite, not negative. */
static bool cost_sane(double seconds) { return isfinite(seconds) && seconds >= 0; }

static bool parse_costs(const char *file, size_t len, const char *boot_id, struct vm_memo *ret)
{
	size_t pos = 0;
	uint32_t n;
	if (!take_header(file, len, &pos, COST_MAGIC, boot_id, sizeof(struct cost_record), &n) ||
	    !(ret->costs = calloc(n ? n : 1, sizeof(*ret->costs))))
		return false;
	for (ret->ncosts = 0; ret->ncosts < n; ret->ncosts++) {
		struct cost_record rec;
		memcpy(&rec, take(file, len, &pos, sizeof(rec)), sizeof(rec)); /* the header said they fit */
		struct vm_memo_cost *c = &ret->costs[ret->ncosts];
		if (rec.pid <= 0 || (ret->ncosts && rec.pid <= c[-1].pid) || rec.comm[sizeof(rec.comm) - 1] ||
		    !cost_sane(rec.exact_seconds) || !cost_sane(rec.exact_at) || !cost_sane(rec.sample_seconds) ||
		    rec.exact_merging < 0)
			return false;
		*c = (struct vm_memo_cost){.pid = rec.pid, .start_ticks = rec.start_ticks,
					   .cost = {.exact_seconds = rec.exact_seconds, .exact_at = rec.exact_at,
						    .exact_merging = rec.exact_merging, .sample_seconds = rec.sample_seconds}};
		memcpy(c->comm, rec.comm, sizeof(c->comm));
	}
	return pos == len;
}

static void free_vms(struct vm_memo *m)
{
	for (size_t i = 0; i < m->n; i++)
		vm_cpu_free(&m->vms[i].cpu);
	free(m->vms);
	m->vms = NULL;
	m->n = 0;
	free(m->others);
	m->others = NULL;
	m->nothers = 0;
}

void vm_memo_load(const struct io_root *root, const char *dir, struct vm_memo *ret)
{
	memset(ret, 0, sizeof(*ret));
	char id[64];
	ssize_t n = io_read(root, IO_PROC, id, sizeof(id), "sys/kernel/random/boot_id");
	if (n < BOOT_ID_LEN)
		return; /* no id for this boot: a memo could be another boot's */
	memcpy(ret->boot_id, id, BOOT_ID_LEN);
	ret->boot_id[BOOT_ID_LEN] = '\0';
	if (io_state_read(dir, MEMO_FILE, MEMO_MAX, &ret->file, &ret->len) == 0 &&
	    !parse_memo(ret->file, ret->len, ret->boot_id, ret))
		free_vms(ret); /* damaged: the run reads everything, and writes it anew */
	if (io_state_read(dir, COST_FILE, MEMO_MAX, &ret->cost_file, &ret->cost_len) == 0 &&
	    !parse_costs(ret->cost_file, ret->cost_len, ret->boot_id, ret)) {
		free(ret->costs); /* damaged: every VM's cost is learned again */
		ret->costs = NULL;
		ret->ncosts = 0;
	}
}

/* Every record (a VM, another process, a cost) begins with its pid, and they are kept in pid order. */
static int cmp_pid_first(const void *key, const void *record)
{
	pid_t a = *(const pid_t *)key, b = *(const pid_t *)record;
	return (a > b) - (a < b);
}

struct vm_memo_vm *vm_memo_find(const struct vm_memo *m, pid_t pid)
{
	return m && m->n ? bsearch(&pid, m->vms, m->n, sizeof(*m->vms), cmp_pid_first) : NULL;
}

const struct vm_other *vm_memo_find_other(const struct vm_memo *m, pid_t pid)
{
	return m && m->nothers ? bsearch(&pid, m->others, m->nothers, sizeof(*m->others), cmp_pid_first) : NULL;
}

const struct pss_cost *vm_memo_pss_cost(const struct vm_memo *m, const struct vm *vm)
{
	const struct vm_memo_cost *c = m && m->ncosts ? bsearch(&vm->pid, m->costs, m->ncosts, sizeof(*c), cmp_pid_first) : NULL;
	if (!c || !vm->stat_known || c->start_ticks != vm->start_ticks || strncmp(c->comm, vm->comm, sizeof(c->comm)) ||
	    !(c->cost.exact_seconds > 0))
		return NULL; /* none, or another process under the pid, or another program (exec) */
	return &c->cost;
}

/* The cost to remember for vm: this run's when it is news, else the memo's; NULL when none (or a
 * VM that cannot be told again: its start time or name unknown or too long). */
static const struct pss_cost *cost_to_keep(const struct vm_memo *m, const struct vm *vm)
{
	if (!vm->stat_known || strlen(vm->comm) >= sizeof(((struct cost_record *)0)->comm))
		return NULL;
	const struct pss_cost *was = vm_memo_pss_cost(m, vm);
	return pss_cost_news(was, &vm->pss_cost) ? &vm->pss_cost : was;
}

static int save_costs(const char *dir, const struct vm_memo *m, const struct vm_list *now)
{
	struct out o = {0};
	uint32_t n = 0;
	for (size_t i = 0; i < now->n; i++)
		n += cost_to_keep(m, &now->vms[i]) != NULL;
	put_header(&o, COST_MAGIC, m->boot_id, n);
	for (size_t i = 0; i < now->n; i++) {
		const struct vm *vm = &now->vms[i];
		const struct pss_cost *c = cost_to_keep(m, vm);
		if (!c)
			continue;
		struct cost_record rec = {.pid = vm->pid, .start_ticks = vm->start_ticks,
					  .exact_seconds = c->exact_seconds, .exact_at = c->exact_at,
					  .sample_seconds = c->sample_seconds, .exact_merging = c->exact_merging};
		memcpy(rec.comm, vm->comm, strlen(vm->comm)); /* NUL-padded: the file is the same when nothing changed */
		put(&o, &rec, sizeof(rec));
	}
	return replace_if_changed(dir, COST_FILE, &o, m->cost_file, m->cost_len);
}

/* A VM worth remembering: known by pid, start time and a name that fits, and a VMM (a plain
 * --pid process is not recognised by its command line). */
static bool remembered(const struct vm *vm)
{
	return vm->cmdline && vm->stat_known && strlen(vm->comm) < sizeof(((struct record *)0)->comm) &&
	       vm->cfg.vmm != VMM_PROCESS;
}

static void put_others(struct out *o, const struct vm_list *now)
{
	uint32_t n = now->nothers <= OTHERS_MAX ? (uint32_t)now->nothers : 0;
	put(o, &n, sizeof(n));
	for (size_t i = 0; i < n; i++) {
		const struct vm_other *x = &now->others[i];
		struct other_record rec = {.pid = x->pid, .start_ticks = x->start_ticks, .fds = x->fds};
		memcpy(rec.comm, x->comm, sizeof(rec.comm));
		put(o, &rec, sizeof(rec));
	}
}

/* At most 16 (and a sixteenth of them) of now's other processes are not m's (pid and start time). */
static bool few_new_others(const struct vm_memo *m, const struct vm_list *now)
{
	size_t fresh = 0;
	for (size_t i = 0; i < now->nothers; i++) {
		const struct vm_other *was = vm_memo_find_other(m, now->others[i].pid);
		fresh += !was || was->start_ticks != now->others[i].start_ticks;
	}
	return fresh <= 16 + now->nothers / 16;
}

int vm_memo_save(const char *dir, const struct vm_memo *m, const struct vm_list *now)
{
	if (strlen(m->boot_id) != BOOT_ID_LEN)
		return -ENOENT;
	struct out o = {0};
	uint32_t n = 0;
	for (size_t i = 0; i < now->n; i++)
		n += remembered(&now->vms[i]);
	put_header(&o, MAGIC, m->boot_id, n);
	for (size_t i = 0; i < now->n; i++) {
		const struct vm *vm = &now->vms[i];
		if (!remembered(vm))
			continue;
		bool taps = vm->io.ifaces_known && vm->io.ifaces_fds > 0;
		size_t cg = vm->cgroup && strlen(vm->cgroup) < CGROUP_MAX ? strlen(vm->cgroup) + 1 : 0;
		size_t v1 = cg && vm->cgroup_v1_memory && strlen(vm->cgroup_v1_memory) < CGROUP_MAX
				    ? strlen(vm->cgroup_v1_memory) + 1 : 0;
		struct record rec = {.pid = vm->pid, .cmdline_len = (uint32_t)vm->cmdline_len,
				     .start_ticks = vm->start_ticks, .nvcpus = (uint32_t)vm->cpu.nvcpus,
				     .nnamed = (uint32_t)vm->cpu.nnamed, .ifaces_fds = taps ? vm->io.ifaces_fds : 0,
				     .nifaces = taps ? (uint32_t)vm->io.nifaces : 0,
				     .threads = vm->cpu.threads > 0 && vm->cpu.threads <= UINT32_MAX ? (uint32_t)vm->cpu.threads : 0,
				     .cgroup_len = (uint32_t)cg, .cgroup_v1_len = (uint32_t)v1,
				     .cgroup_version = cg ? vm->cgroup_version : 0, .vm_scope = cg && vm->vm_scope};
		strncpy(rec.comm, vm->comm, sizeof(rec.comm)); /* NUL-padded: the file is the same when nothing changed */
		put(&o, &rec, sizeof(rec));
		put(&o, vm->cmdline, vm->cmdline_len);
		for (size_t k = 0; k < vm->cpu.nvcpus; k++) {
			int32_t pair[2] = {vm->cpu.vcpus[k].tid, vm->cpu.vcpus[k].index};
			put(&o, pair, sizeof(pair));
		}
		for (size_t k = 0; k < vm->cpu.nnamed; k++) {
			int32_t tid = vm->cpu.named[k];
			put(&o, &tid, sizeof(tid));
		}
		for (size_t k = 0; k < rec.nifaces; k++) {
			char name[IFACE_LEN] = {0};
			strncpy(name, vm->io.ifaces[k].name, sizeof(name) - 1);
			put(&o, name, sizeof(name));
		}
		put(&o, vm->cgroup, cg);
		put(&o, vm->cgroup_v1_memory, v1);
	}
	size_t vms_len = o.len;
	put_others(&o, now);
	bool vms_same = m->file && m->others_at == vms_len && !memcmp(m->file, o.p, vms_len);
	int r = o.failed ? -ENOMEM : 0;
	if (r == 0 && !(vms_same && few_new_others(m, now)))
		r = io_state_write(dir, MEMO_FILE, o.p, o.len);
	free(o.p);
	int rc = save_costs(dir, m, now);
	return r < 0 ? r : rc;
}

void vm_memo_taps(const struct vm_memo *m, struct vm_list *vms)
{
	for (size_t i = 0; m && i < vms->n; i++) {
		struct vm *vm = &vms->vms[i];
		const struct vm_memo_vm *was = vm_memo_find(m, vm->pid);
		if (!was || !vm->stat_known || was->start_ticks != vm->start_ticks || !was->ifaces_fds)
			continue;
		vm->io.ifaces_known = true;
		vm->io.ifaces_fds = was->ifaces_fds;
		vm->io.nifaces = was->nifaces;
		for (size_t k = 0; k < was->nifaces; k++)
			snprintf(vm->io.ifaces[k].name, sizeof(vm->io.ifaces[k].name), "%s", was->ifaces + k * IFACE_LEN);
	}
}

/* One VM of a list into the memo (its vCPUs copied). */
static int memo_vm_of(const struct vm *vm, struct vm_memo_vm *ret)
{
	const struct vm_cpu *c = &vm->cpu;
	*ret = (struct vm_memo_vm){.pid = vm->pid, .start_ticks = vm->start_ticks, .cmdline = vm->cmdline,
				   .cmdline_len = vm->cmdline_len, .cgroup = vm->cgroup,
				   .cgroup_v1_memory = vm->cgroup ? vm->cgroup_v1_memory : NULL,
				   .cgroup_version = vm->cgroup_version, .vm_scope = vm->vm_scope, .vm = vm,
				   .cpu = {.vcpus = malloc((c->nvcpus ? c->nvcpus : 1) * sizeof(*c->vcpus)),
					   .named = malloc((c->nnamed ? c->nnamed : 1) * sizeof(*c->named)),
					   .nvcpus = c->nvcpus, .nnamed = c->nnamed, .vcpus_known = c->vcpus_known,
					   .threads = c->threads, .cpu_seconds = NAN, .vcpu_delay_seconds = NAN,
					   .cpu_percent = NAN, .vcpu_delay_percent = NAN}};
	snprintf(ret->comm, sizeof(ret->comm), "%.15s", vm->comm); /* a VM's is TASK_COMM_LEN's */
	if (!ret->cpu.vcpus || !ret->cpu.named) {
		vm_cpu_free(&ret->cpu);
		return -ENOMEM;
	}
	for (size_t k = 0; k < c->nvcpus; k++)
		ret->cpu.vcpus[k] = vcpu_unread(c->vcpus[k].index, c->vcpus[k].tid);
	if (c->nnamed) /* c->named may be NULL then */
		memcpy(ret->cpu.named, c->named, c->nnamed * sizeof(*c->named));
	return 0;
}

int vm_memo_of_list(const struct vm_list *l, struct vm_memo *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->vms = calloc(l->n ? l->n : 1, sizeof(*ret->vms));
	ret->others = malloc((l->nothers ? l->nothers : 1) * sizeof(*ret->others));
	if (!ret->vms || !ret->others) {
		free_vms(ret);
		return -ENOMEM;
	}
	if (l->nothers) /* l->others may be NULL then */
		memcpy(ret->others, l->others, l->nothers * sizeof(*l->others));
	ret->nothers = l->nothers;
	for (size_t i = 0; i < l->n; i++) {
		/* In pid order, as discovery keeps them; a VM without its command line is no memo's. */
		if (!remembered(&l->vms[i]) || (ret->n && l->vms[i].pid <= ret->vms[ret->n - 1].pid))
			continue;
		if (memo_vm_of(&l->vms[i], &ret->vms[ret->n]) < 0) {
			free_vms(ret);
			return -ENOMEM;
		}
		ret->n++;
	}
	return 0;
}

void vm_memo_free(struct vm_memo *m)
{
	free_vms(m);
	free(m->costs);
	m->costs = NULL;
	m->ncosts = 0;
	free(m->file);
	free(m->cost_file);
	m->file = m->cost_file = NULL;
	m->len = m->cost_len = 0;
}
