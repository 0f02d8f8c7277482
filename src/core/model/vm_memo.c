#include "core/model/vm_memo.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/state.h"

#define MEMO_FILE "vms"
#define MAGIC "vmhost vms 2\n"
enum { BOOT_ID_LEN = 36, MEMO_MAX = 64 << 20, CMDLINE_MAX = 1 << 20, THREADS_MAX = 1 << 16, IFACE_LEN = 16 };

/* Each VM: its header, then its command line, its vCPUs (tid, index), its named threads and its
 * taps' names (IFNAMSIZ bytes each, NUL-padded). */
struct record {
	int32_t pid;
	uint32_t cmdline_len;
	uint64_t start_ticks;
	char comm[16];
	uint32_t nvcpus, nnamed;
	int64_t ifaces_fds; /* the VMM's fd count when its taps were listed; 0: not listed */
	uint32_t nifaces, reserved;
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
	    rec.ifaces_fds < 0)
		return false;
	const char *cmd = take(file, len, pos, rec.cmdline_len);
	const char *vcpus = cmd ? take(file, len, pos, (size_t)rec.nvcpus * 2 * sizeof(int32_t)) : NULL;
	const char *named = vcpus ? take(file, len, pos, (size_t)rec.nnamed * sizeof(int32_t)) : NULL;
	const char *ifaces = named ? take(file, len, pos, (size_t)rec.nifaces * IFACE_LEN) : NULL;
	if (!ifaces)
		return false;
	for (size_t i = 0; i < rec.nifaces; i++)
		if (!ifaces[i * IFACE_LEN] || ifaces[(i + 1) * IFACE_LEN - 1])
			return false;
	*vm = (struct vm_memo_vm){.pid = rec.pid, .start_ticks = rec.start_ticks, .cmdline = cmd,
				  .cmdline_len = rec.cmdline_len, .ifaces_fds = (long)rec.ifaces_fds,
				  .ifaces = ifaces, .nifaces = rec.nifaces,
				  .cpu = {.vcpus = malloc((rec.nvcpus ? rec.nvcpus : 1) * sizeof(struct vcpu)),
					  .named = malloc((rec.nnamed ? rec.nnamed : 1) * sizeof(pid_t)),
					  .nvcpus = rec.nvcpus, .nnamed = rec.nnamed, .vcpus_known = true,
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

static bool parse_memo(const char *file, size_t len, const char *boot_id, struct vm_memo *ret)
{
	size_t pos = 0;
	const char *magic = take(file, len, &pos, strlen(MAGIC)), *id = take(file, len, &pos, BOOT_ID_LEN + 1);
	const char *count = id ? take(file, len, &pos, sizeof(uint32_t)) : NULL;
	if (!count || memcmp(magic, MAGIC, strlen(MAGIC)) || memcmp(id, boot_id, BOOT_ID_LEN) || id[BOOT_ID_LEN] != '\n')
		return false;
	uint32_t n;
	memcpy(&n, count, sizeof(n));
	if (n > (len - pos) / sizeof(struct record))
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
	return pos == len;
}

static void free_vms(struct vm_memo *m)
{
	for (size_t i = 0; i < m->n; i++)
		vm_cpu_free(&m->vms[i].cpu);
	free(m->vms);
	m->vms = NULL;
	m->n = 0;
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
	if (io_state_read(dir, MEMO_FILE, MEMO_MAX, &ret->file, &ret->len) < 0)
		return;
	if (!parse_memo(ret->file, ret->len, ret->boot_id, ret))
		free_vms(ret); /* damaged: the run reads everything, and writes it anew */
}

struct vm_memo_vm *vm_memo_find(const struct vm_memo *m, pid_t pid)
{
	size_t lo = 0, hi = m ? m->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->vms[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return m && lo < m->n && m->vms[lo].pid == pid ? &m->vms[lo] : NULL;
}

/* A VM worth remembering: known by pid, start time and a name that fits, and a VMM (a plain
 * --pid process is not recognised by its command line). */
static bool remembered(const struct vm *vm)
{
	return vm->cmdline && vm->stat_known && strlen(vm->comm) < sizeof(((struct record *)0)->comm) &&
	       vm->cfg.vmm != VMM_PROCESS;
}

int vm_memo_save(const char *dir, const struct vm_memo *m, const struct vm_list *now)
{
	if (strlen(m->boot_id) != BOOT_ID_LEN)
		return -ENOENT;
	struct out o = {0};
	put(&o, MAGIC, strlen(MAGIC));
	put(&o, m->boot_id, BOOT_ID_LEN);
	put(&o, "\n", 1);
	uint32_t n = 0;
	for (size_t i = 0; i < now->n; i++)
		n += remembered(&now->vms[i]);
	put(&o, &n, sizeof(n));
	for (size_t i = 0; i < now->n; i++) {
		const struct vm *vm = &now->vms[i];
		if (!remembered(vm))
			continue;
		bool taps = vm->io.ifaces_known && vm->io.ifaces_fds > 0;
		struct record rec = {.pid = vm->pid, .cmdline_len = (uint32_t)vm->cmdline_len,
				     .start_ticks = vm->start_ticks, .nvcpus = (uint32_t)vm->cpu.nvcpus,
				     .nnamed = (uint32_t)vm->cpu.nnamed, .ifaces_fds = taps ? vm->io.ifaces_fds : 0,
				     .nifaces = taps ? (uint32_t)vm->io.nifaces : 0};
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
	}
	int r = o.failed ? -ENOMEM : 0;
	if (r == 0 && !(m->file && m->len == o.len && !memcmp(m->file, o.p, o.len)))
		r = io_state_write(dir, MEMO_FILE, o.p, o.len);
	free(o.p);
	return r;
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

void vm_memo_free(struct vm_memo *m)
{
	free_vms(m);
	free(m->file);
	m->file = NULL;
	m->len = 0;
}
