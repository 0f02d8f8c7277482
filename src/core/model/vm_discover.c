/* Finding the VMs: every process's command line (VM or not), any other process holding a KVM
 * VM, each VM's stat and cgroup, the helpers sharing a VM's scope, and the VMs a memo remembers;
 * shared out between a few threads for the hundreds of processes of a host. See vm.h. */
#include "core/model/vm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/parallel.h"
#include "core/base/prefault.h"
#include "core/model/proc.h"
#include "core/model/vm_memo.h"
#include "parse/cpu_cgroup.h"
#include "parse/kvm_debugfs.h"
#include "parse/parse.h"

static int read_cgroup(const struct io_root *root, pid_t pid, char *ret, size_t cap)
{
	char buf[2048];
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/cgroup", pid);
	if (n < 0)
		return (int)n;
	return parse_cgroup(buf, (size_t)n, ret, cap);
}

void vm_free(struct vm *vm)
{
	vm_cpu_free(&vm->cpu);
	free(vm->guest);
	free(vm->disks);
	free(vm->cmdline);
	free(vm->cgroup);
	free(vm->cgroup_v1_memory);
}

/* A copy of n bytes of p (NULL when p is); *ok false when memory ran out. */
static void *dup_or_null(const void *p, size_t n, bool *ok)
{
	void *d = p ? malloc(n ? n : 1) : NULL;
	if (p && !d)
		*ok = false;
	else if (d && n)
		memcpy(d, p, n);
	return d;
}

int vm_copy(const struct vm *from, struct vm *ret)
{
	struct vm c = *from;
	bool ok = true;
	c.guest = NULL;
	c.disks = NULL;
	c.cmdline = dup_or_null(from->cmdline, from->cmdline_len, &ok);
	c.cgroup = dup_or_null(from->cgroup, from->cgroup ? strlen(from->cgroup) + 1 : 0, &ok);
	c.cgroup_v1_memory = dup_or_null(from->cgroup_v1_memory,
					 from->cgroup_v1_memory ? strlen(from->cgroup_v1_memory) + 1 : 0, &ok);
	c.cpu.vcpus = dup_or_null(from->cpu.vcpus, from->cpu.nvcpus * sizeof(*c.cpu.vcpus), &ok);
	c.cpu.named = dup_or_null(from->cpu.named, from->cpu.nnamed * sizeof(*c.cpu.named), &ok);
	if (!ok) {
		vm_free(&c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

/* The VM's cgroup: its per-VM scope in the unified tree, else in the v1 memory controller's
 * (libvirt on a hybrid host without systemd), else its unified path. */
static int read_vm_cgroup(const struct io_root *root, struct vm *vm)
{
	char buf[2048], cgroup[VM_CGROUP_MAX], path[VM_CGROUP_MAX], scope[VM_CGROUP_MAX], v1[VM_CGROUP_MAX] = "";
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/cgroup", vm->pid);
	if (n < 0)
		return (int)n;
	int r = parse_cgroup(buf, (size_t)n, cgroup, sizeof(cgroup));
	if (r < 0)
		return r;
	/* A hybrid host charges memory in the v1 controller even when the unified tree has the scope. */
	if (parse_cgroup_controller(buf, (size_t)n, "memory", path, sizeof(path)) == 0)
		parse_cgroup_vm_scope(path, v1, sizeof(v1));
	if ((vm->vm_scope = parse_cgroup_vm_scope(cgroup, scope, sizeof(scope)))) {
		memcpy(cgroup, scope, sizeof(scope));
		vm->cgroup_version = 2;
	} else if (v1[0]) {
		memcpy(cgroup, v1, sizeof(v1));
		vm->vm_scope = true;
		vm->cgroup_version = 1;
	}
	vm->cgroup = strdup(cgroup);
	vm->cgroup_v1_memory = v1[0] ? strdup(v1) : NULL;
	return vm->cgroup && (vm->cgroup_v1_memory || !v1[0]) ? 0 : -ENOMEM;
}

static bool is_extra(pid_t pid, const pid_t *extra, size_t nextra)
{
	for (size_t i = 0; i < nextra; i++)
		if (extra[i] == pid)
			return true;
	return false;
}

static void take_stat(struct vm *vm, const struct proc_stat *st)
{
	vm->start_ticks = st->start_ticks;
	vm->cpu_ticks = st->utime_ticks + st->stime_ticks;
	vm->stat_known = true;
	snprintf(vm->comm, sizeof(vm->comm), "%s", st->comm);
}

/* Fills start time and CPU (unless discovery read them) and cgroup; -ESRCH style errors when the
 * process is gone. */
static int identify(const struct io_root *root, struct vm *vm)
{
	struct proc_stat st;
	int r = vm->stat_known ? 0 : proc_read_stat(root, vm->pid, &st);
	if (r < 0 && r != -EINVAL)
		return r;
	if (r == 0 && !vm->stat_known)
		take_stat(vm, &st);
	if (!vm->cgroup)
		read_vm_cgroup(root, vm);
	return 0;
}

/* A process's command line, most in one read into buf: procfs gives it whole when it fits (Linux
 * 4.2 on), so a read shorter than buf is the end. A longer one, or one that stops at a page
 * boundary (a command line the process rewrote comes a page a read), is read again to its end
 * into *heap, to be freed. Returns its length or a negative errno; *text is buf or *heap. */
static ssize_t read_cmdline(const struct io_root *root, pid_t pid, char *buf, size_t cap, char **text, char **heap)
{
	*heap = NULL;
	*text = buf;
	ssize_t n = io_read(root, IO_PROC, buf, cap, "%d/cmdline", pid);
	if (n != -EFBIG && !(n > 0 && n % 4096 == 0))
		return n;
	/* Longer: read up to VM_CMDLINE_MAX (any process may make its command line as long as it
	 * likes; QEMU's, libvirt's long JSON options and all, is a few KiB). Cut there, it has no
	 * final NUL, and a VM's RAM is then unknown, as for any cut command line. */
	if (!(*heap = malloc(VM_CMDLINE_MAX + 1)))
		return -ENOMEM;
	n = io_read_head(root, IO_PROC, *heap, VM_CMDLINE_MAX + 1, "%d/cmdline", pid);
	if (n < 0) {
		free(*heap);
		*heap = NULL;
		return n;
	}
	*text = *heap;
	return n;
}

/* Discovery in two rounds over the process list, each shared out between threads (reading
 * cmdline, stat and cgroup of hundreds of processes is most of a survey). First every process's
 * command line: VM or not (argv[0] says). Then, on the calling thread, the VMs in pid order into
 * the array they stay in (each record, 1.7 KiB, written once: a process starts with no memory,
 * and each page it touches is a fault, about 12 us in a nested VM), and then each VM's command
 * line parsed, its stat and cgroup. With a memo, a VM it remembers is known by its stat alone. */
enum proc_kind { PROC_GONE, PROC_OTHER, PROC_VM };

/* What the first round found of a VM (small: one per process, touched only for VMs). */
struct found {
	char *cmdline; /* owned until the VM's record takes it */
	size_t cmdline_len;
	bool kvm;      /* no VMM vmhost knows, but it holds a KVM VM */
	struct vm_memo_vm *was; /* remembered, and its stat below says it is the same process */
	struct proc_stat st;
	const struct vm *carry; /* not due (vm_memo.h): taken whole from the reading before */
};

struct classify {
	const struct io_root *root;
	const pid_t *pids, *extra;
	size_t npids, nextra;
	const struct vm_memo *memo; /* NULL: none */
	const pid_t *kvm_pids; /* the processes with a debugfs kvm directory, sorted; NULL: scan fds */
	size_t nkvm_pids;
	unsigned char *kind; /* enum proc_kind of each process */
	struct found *found; /* at each VM's index in pids */
	struct vm_other *other; /* with a memo: each process found to be no VM (pid 0: not one) */
};

/* Whether the memo wants pid looked at now (vm_memo.h: due). */
static bool due(const struct classify *c, pid_t pid)
{
	return !c->memo->due || c->memo->due(c->memo->due_cls, pid);
}

/* A VM the memo remembers, when its stat says it is the same process running the same program
 * (pid, start time and name): a VMM does not exec, so what it ran with is what it runs. Its stat
 * is kept for identify. One not due (vm_memo.h: due) is *ret_carry, recognised without a read. */
static struct vm_memo_vm *recognise(const struct classify *c, size_t i, struct proc_stat *st, bool *ret_carry)
{
	struct vm_memo_vm *was = vm_memo_find(c->memo, c->pids[i]);
	if ((*ret_carry = was && was->vm && !due(c, c->pids[i])))
		return was; /* carried whole: nothing read */
	if (!was || proc_read_stat(c->root, c->pids[i], st) < 0 || st->start_ticks != was->start_ticks)
		return NULL;
	return strlen(st->comm) < sizeof(was->comm) && !strcmp(st->comm, was->comm) ? was : NULL;
}

/* Any process holding a KVM VM is a VM: debugfs lists one PID-FD directory per VM; without it,
 * the process's fds say so (anon_inode:kvm-vm), one readlink each. */
static bool holds_kvm_vm(const struct classify *c, pid_t pid)
{
	if (c->kvm_pids)
		return io_pid_in(c->kvm_pids, c->nkvm_pids, pid);
	return io_proc_fd_links_to(c->root, pid, "anon_inode:kvm-vm") == 1;
}

/* The pids of debugfs' PID-FD directories, sorted: 0, or a negative errno when debugfs' kvm
 * directory cannot be listed (then each process's fds are looked at instead). */
static int debugfs_kvm_pids(const struct io_root *root, pid_t **ret, size_t *ret_n)
{
	char **names;
	size_t n;
	int r = io_list_dir(root, IO_SYS, &names, &n, "kernel/debug/kvm");
	if (r < 0)
		return r;
	pid_t *pids = malloc((n ? n : 1) * sizeof(*pids));
	size_t k = 0;
	for (size_t i = 0; pids && i < n; i++) {
		pid_t pid;
		int fd;
		if (parse_kvm_vm_dir(names[i], &pid, &fd) == 0)
			pids[k++] = pid;
	}
	io_free_names(names, n);
	if (!pids)
		return -ENOMEM;
	qsort(pids, k, sizeof(*pids), io_pid_cmp);
	*ret = pids;
	*ret_n = k;
	return 0;
}

/* Process i as one that is no VM (kernel: a kernel thread, no fds to look at), to be remembered:
 * its stat, and without debugfs its fd count, taken before its fds are looked at so that an fd
 * opened meanwhile changes the count the next look compares. */
static void note_other(const struct classify *c, size_t i, bool kernel, long fds)
{
	struct proc_stat st;
	struct vm_other *o = &c->other[i];
	if (proc_read_stat(c->root, c->pids[i], &st) < 0 || strlen(st.comm) >= sizeof(o->comm))
		return;
	*o = (struct vm_other){.pid = c->pids[i], .start_ticks = st.start_ticks, .fds = kernel ? -1 : fds};
	memcpy(o->comm, st.comm, strlen(st.comm) + 1);
}

/* A process the memo says is no VM, when its stat says it is the same one running the same
 * program and it holds no KVM VM now: by debugfs, or without it by an fd count unchanged since
 * its fds were looked at (else they are looked at again). Fills c->other[i]. */
static bool known_other(const struct classify *c, size_t i)
{
	const struct vm_other *o = vm_memo_find_other(c->memo, c->pids[i]);
	struct proc_stat st;
	if (o && !due(c, c->pids[i])) { /* taken as it was */
		c->other[i] = *o;
		return true;
	}
	if (!o || proc_read_stat(c->root, c->pids[i], &st) < 0 || st.start_ticks != o->start_ticks ||
	    strcmp(st.comm, o->comm))
		return false;
	long fds = o->fds;
	if (fds >= 0 && c->kvm_pids) {
		if (holds_kvm_vm(c, c->pids[i]))
			return false;
		fds = 0;
	} else if (fds >= 0) { /* a kernel thread (-1) has no fds */
		fds = io_proc_fd_count(c->root, c->pids[i]);
		if ((fds <= 0 || fds != o->fds) && holds_kvm_vm(c, c->pids[i]))
			return false;
		fds = fds > 0 ? fds : 0;
	}
	c->other[i] = (struct vm_other){.pid = o->pid, .start_ticks = o->start_ticks, .fds = fds};
	memcpy(c->other[i].comm, o->comm, sizeof(o->comm));
	return true;
}

static void classify_some(void *arg, size_t t, size_t n)
{
	struct classify *c = arg;
	for (size_t i = t; i < c->npids; i += n) {
		pid_t pid = c->pids[i];
		char buf[8192], *heap = NULL, *cmd;
		struct proc_stat st;
		if (c->other)
			c->other[i].pid = 0;
		if (c->other && !is_extra(pid, c->extra, c->nextra) && known_other(c, i)) {
			c->kind[i] = c->other[i].fds < 0 ? PROC_GONE : PROC_OTHER; /* kernel threads are no helpers */
			continue;
		}
		bool carry = false;
		struct vm_memo_vm *was = c->memo ? recognise(c, i, &st, &carry) : NULL;
		ssize_t len;
		if (carry) {
			c->found[i] = (struct found){.carry = was->vm};
			c->kind[i] = PROC_VM;
			continue;
		}
		if (was) {
			cmd = (char *)was->cmdline;
			len = (ssize_t)was->cmdline_len;
		} else {
			len = read_cmdline(c->root, pid, buf, sizeof(buf), &cmd, &heap);
		}
		c->kind[i] = PROC_GONE; /* vanished between readdir and read */
		if (len < 0)
			continue;
		bool vmm = parse_vmm_kind(cmd, (size_t)len) != VMM_NONE;
		long fds = !vmm && len && c->other && !c->kvm_pids ? io_proc_fd_count(c->root, pid) : 0;
		bool kvm = !vmm && len && holds_kvm_vm(c, pid); /* kernel threads have no command line */
		if (!vmm && !kvm && !is_extra(pid, c->extra, c->nextra)) {
			c->kind[i] = len ? PROC_OTHER : PROC_GONE; /* kernel threads have no command line */
			if (c->other)
				note_other(c, i, len == 0, fds > 0 ? fds : 0);
			free(heap);
			continue;
		}
		struct found *f = &c->found[i];
		*f = (struct found){.cmdline = heap, .cmdline_len = (size_t)len, .kvm = kvm, .was = was};
		if (was)
			f->st = st;
		if (!heap && (f->cmdline = malloc(len ? (size_t)len : 1)))
			memcpy(f->cmdline, cmd, (size_t)len);
		c->kind[i] = f->cmdline ? PROC_VM : PROC_GONE; /* no memory: as good as unreadable */
	}
}

/* A VM's command line parsed: its VMM, name and RAM; a process asked for by pid that is no VM is
 * a plain process, one that holds a KVM VM (cfg.vmm VMM_KVM before) a VM of an unknown VMM. */
const char *vm_monitor_source_name(enum vm_monitor_source s)
{
	return s == VM_MONITOR_QMP ? "qmp" : s == VM_MONITOR_LIBVIRT ? "libvirt" : NULL;
}

/* The monitor the command line names, not checked yet. */
static struct vm_monitor monitor_of(const struct vm_config *cfg)
{
	struct vm_monitor m = {.source = VM_MONITOR_NONE, .trusted = -1};
	if (cfg->vmm == VMM_QEMU && cfg->qmp.kind == VM_QMP_UNIX)
		m.source = VM_MONITOR_QMP;
	else if (cfg->vmm == VMM_QEMU && cfg->qmp.kind == VM_QMP_FD)
		m.source = VM_MONITOR_LIBVIRT;
	if (m.source != VM_MONITOR_NONE)
		snprintf(m.why, sizeof(m.why), "not checked: no visit to the monitor (--io, --guest)");
	else if (cfg->vmm == VMM_QEMU)
		snprintf(m.why, sizeof(m.why), "%s", vm_qmp_hint(cfg->qmp.kind));
	return m;
}

static void configure(struct vm *vm)
{
	bool kvm = vm->cfg.vmm == VMM_KVM;
	int p = parse_vm_cmdline(vm->cmdline, vm->cmdline_len, &vm->cfg);
	/* procfs ends a command line with a NUL; without it the line was cut short (one page
	 * before Linux 4.2): a size may be cut or its option gone, so the RAM is unknown. */
	if (p == 0 && vm->cmdline[vm->cmdline_len - 1] != '\0')
		vm->cfg.guest_ram_bytes = UNKNOWN;
	if (p < 0) {
		memset(&vm->cfg, 0, sizeof(vm->cfg));
		vm->cfg.vmm = kvm ? VMM_KVM : VMM_PROCESS;
		vm->cfg.guest_ram_bytes = UNKNOWN;
	}
	vm->monitor = monitor_of(&vm->cfg);
}

struct identify_job {
	const struct io_root *root;
	struct vm *vms;
	size_t n;
	int *results;
};

static void identify_some(void *arg, size_t t, size_t n)
{
	struct identify_job *j = arg;
	for (size_t i = t; i < j->n; i += n) {
		j->results[i] = 0;
		if (j->vms[i].carried)
			continue;
		configure(&j->vms[i]);
		j->results[i] = identify(j->root, &j->vms[i]);
	}
}

enum { PIDS_PER_THREAD_MIN = 64, VMS_PER_THREAD_MIN = 16 };

/* A VM the memo remembers takes its stat as read, and the memo's vCPUs. Not its cgroup: a VM is
 * moved between cgroups now and then (live_cgroup_move), and the memo's would name the one it
 * left; identify reads it, one small file a VM. */
static void take_memo(struct vm *vm, struct found *f)
{
	take_stat(vm, &f->st);
	vm->cpu = f->was->cpu;
	f->was->cpu = (struct vm_cpu){0};
}

/* The record of a VM the first round found (pid): a copy of the one carried over, else its command
 * line (taken: the record's now) and what the memo remembers. 0 or -ENOMEM. */
static int take_found(struct found *f, pid_t pid, struct vm *ret)
{
	if (f->carry) {
		int r = vm_copy(f->carry, ret);
		ret->carried = r == 0;
		return r;
	}
	*ret = (struct vm){.pid = pid, .cmdline = f->cmdline, .cmdline_len = f->cmdline_len};
	f->cmdline = NULL;
	ret->cfg.vmm = f->kvm ? VMM_KVM : VMM_NONE; /* configure's hint */
	if (f->was) /* a VM remembered: its vCPUs too */
		take_memo(ret, f);
	return 0;
}

/* The processes found to be no VM, in pid order, into ret->others. */
static int keep_others(const struct classify *c, struct vm_list *ret)
{
	size_t n = 0;
	for (size_t i = 0; i < c->npids; i++)
		n += c->other[i].pid != 0;
	if (!(ret->others = malloc((n ? n : 1) * sizeof(*ret->others))))
		return -ENOMEM;
	for (size_t i = 0; i < c->npids; i++)
		if (c->other[i].pid)
			ret->others[ret->nothers++] = c->other[i];
	return 0;
}

static int discover_all(const struct io_root *root, const pid_t *pids, size_t npids, const pid_t *extra,
			size_t nextra, struct vm_memo *memo, struct vm_list *ret, pid_t *others,
			size_t *ret_nothers)
{
	size_t slots = npids ? npids : 1;
	struct classify c = {.root = root, .pids = pids, .extra = extra, .npids = npids, .nextra = nextra, .memo = memo,
			     .kind = malloc(slots), .found = malloc(slots * sizeof(*c.found)),
			     .other = memo ? malloc(slots * sizeof(*c.other)) : NULL};
	struct vm *all = NULL;
	int *results = malloc(slots * sizeof(*results));
	int r = -ENOMEM;
	size_t n = 0;
	bool classified = false; /* kind and found hold nothing before */
	pid_t *kvm_pids = NULL;
	if (debugfs_kvm_pids(root, &kvm_pids, &c.nkvm_pids) == 0)
		c.kvm_pids = kvm_pids;
	if (!c.kind || !c.found || !results || (memo && !c.other))
		goto out;
	parallel(parallel_threads(npids, PIDS_PER_THREAD_MIN), classify_some, &c);
	classified = true;
	size_t nothers = 0, nvms = 0;
	for (size_t i = 0; i < npids; i++)
		nvms += c.kind[i] == PROC_VM;
	/* The records are written whole right away: their pages mapped in one call, not a fault each. */
	if (!(all = malloc((nvms ? nvms : 1) * sizeof(*all))))
		goto out;
	prefault(all, nvms * sizeof(*all));
	for (size_t i = 0; i < npids; i++) {
		if (c.kind[i] == PROC_VM) {
			if (take_found(&c.found[i], pids[i], &all[n]) == 0)
				n++;
			else
				ret->skipped++; /* no memory: as good as unreadable */
			c.kind[i] = PROC_GONE; /* its command line is the record's now */
		} else if (c.kind[i] == PROC_OTHER)
			others[nothers++] = pids[i];
		else if (is_extra(pids[i], extra, nextra))
			ret->skipped++;
	}
	if (c.other && keep_others(&c, ret) < 0)
		goto out;
	struct identify_job ij = {root, all, n, results};
	parallel(parallel_threads(n, VMS_PER_THREAD_MIN), identify_some, &ij);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (results[i] < 0) {
			ret->skipped++; /* gone before its stat was read */
			vm_free(&all[i]);
			continue;
		}
		if (kept != i)
			all[kept] = all[i];
		kept++;
	}
	ret->vms = all;
	ret->n = kept;
	all = NULL;
	n = 0;
	*ret_nothers = nothers;
	r = 0;
out:
	for (size_t i = 0; classified && i < npids; i++)
		if (c.kind[i] == PROC_VM)
			free(c.found[i].cmdline); /* not taken into a record */
	for (size_t i = 0; i < n; i++)
		vm_free(&all[i]);
	free(all);
	free(results);
	free(kvm_pids);
	free(c.kind);
	free(c.found);
	free(c.other);
	return r;
}

int vm_discover(const struct io_root *root, const pid_t *extra, size_t nextra, struct vm_list *ret)
{
	return vm_discover_known(root, extra, nextra, NULL, ret);
}

int vm_discover_known(const struct io_root *root, const pid_t *extra, size_t nextra, struct vm_memo *memo,
		      struct vm_list *ret)
{
	memset(ret, 0, sizeof(*ret));
	pid_t *pids;
	size_t npids;
	int r = io_list_pids(root, &pids, &npids);
	if (r < 0)
		return r;
	/* Processes that are neither VMs nor asked for: helper candidates (pid list, later). */
	pid_t *others = malloc((npids ? npids : 1) * sizeof(*others));
	size_t nothers = 0;
	if (!others) {
		free(pids);
		return -ENOMEM;
	}
	if ((r = discover_all(root, pids, npids, extra, nextra, memo, ret, others, &nothers)) < 0)
		goto out;
	/* Extra pids that are not in the listing (gone already, or bad). */
	for (size_t e = 0; e < nextra; e++) {
		bool found = false;
		for (size_t i = 0; i < ret->n && !found; i++)
			found = ret->vms[i].pid == extra[e];
		bool listed = false;
		for (size_t i = 0; i < npids && !listed; i++)
			listed = pids[i] == extra[e];
		if (!found && !listed)
			ret->skipped++;
	}
	/* Helpers (swtpm, virtiofsd, ...) share a VM's per-VM scope (a carried VM keeps its own). */
	bool any_scope = false;
	for (size_t i = 0; i < ret->n; i++)
		any_scope |= !ret->vms[i].carried && ret->vms[i].vm_scope && ret->vms[i].cfg.vmm != VMM_PROCESS;
	for (size_t o = 0; any_scope && o < nothers; o++) {
		char cg[512], scope[512];
		if (read_cgroup(root, others[o], cg, sizeof(cg)) < 0 || !parse_cgroup_vm_scope(cg, scope, sizeof(scope)))
			continue;
		for (size_t i = 0; i < ret->n; i++) {
			struct vm *vm = &ret->vms[i];
			if (!vm->carried && vm->vm_scope && vm->cfg.vmm != VMM_PROCESS && vm->cgroup && !strcmp(vm->cgroup, scope) &&
			    vm->nhelpers < VM_MAX_HELPERS) {
				vm->helpers[vm->nhelpers++] = others[o];
				break;
			}
		}
	}
	r = 0;
out:
	free(pids);
	free(others);
	if (r < 0)
		vm_list_free(ret);
	return r;
}

void vm_list_free(struct vm_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		vm_free(&l->vms[i]);
	free(l->vms);
	l->vms = NULL;
	l->n = 0;
	free(l->others);
	l->others = NULL;
	l->nothers = 0;
}

static bool is_same(const struct vm *a, const struct vm *b)
{
	return a->pid == b->pid && a->stat_known == b->stat_known && a->start_ticks == b->start_ticks;
}

const struct vm *vm_list_find(const struct vm_list *l, const struct vm *vm)
{
	size_t lo = 0, hi = l ? l->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->vms[mid].pid < vm->pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (l && lo < l->n && is_same(&l->vms[lo], vm))
		return &l->vms[lo];
	for (size_t i = 0; l && i < l->n; i++)
		if (is_same(&l->vms[i], vm))
			return &l->vms[i];
	return NULL;
}
