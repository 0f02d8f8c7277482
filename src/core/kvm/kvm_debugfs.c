#include "core/kvm/kvm_reader.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void kvm_debugfs_close_vm(struct kvm_reader *r, struct kvm_vm_files *vm)
{
	for (size_t i = 0; vm->fds && i < r->ncounters; i++)
		io_close(vm->fds[i]);
	free(vm->fds);
	vm->fds = NULL;
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
		e = kvm_set_counters(r, (const char *const *)names, NULL, n);
		if (e == 0)
			kvm_open_globals(r);
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
		vm->denied += kvm_is_denied(fd);
		vm->fds[i] = fd < 0 ? -1 : fd;
		opened += fd >= 0;
	}
	if (r->ncounters && !opened) {
		kvm_debugfs_close_vm(r, vm);
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
			kvm_debugfs_close_vm(r, &r->vms[i]);
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
		e = kvm_set_vcpus(s, n, index, flat, nc);
	free(flat);
	free(index);
	return e;
}

int kvm_debugfs_sync(struct kvm_reader *r)
{
	char **names = NULL;
	size_t n = 0;
	int e = io_list_dir(&r->root, IO_SYS, &names, &n, KVM_DIR);
	if (e < 0)
		return e;
	e = sync_vms(r, names, n);
	io_free_names(names, n);
	return e;
}

/* One VM directory's counters into s; *gone when it was removed under us (the next listing
 * drops it). */
static int read_vm(struct kvm_reader *r, const struct kvm_vm_files *vm, struct kvm_vm_sample *s, bool *gone)
{
	*s = (struct kvm_vm_sample){0}; /* a VM that vanished may have left its reason here */
	s->values = malloc((r->ncounters ? r->ncounters : 1) * sizeof(*s->values));
	if (!s->values)
		return -ENOMEM;
	*gone = false;
	s->denied = vm->denied;
	for (size_t i = 0; i < r->ncounters && !*gone; i++) {
		int rr = read_counter(r, vm->fds[i], vm->dir, r->counters[i].name, &s->values[i]);
		*gone = rr < 0 && !kvm_is_denied(rr);
		s->denied += kvm_is_denied(rr);
	}
	if (s->denied)
		snprintf(s->unavailable, sizeof(s->unavailable),
			 "debugfs: %u counter files denied (even root is refused on a locked-down or nested KVM)",
			 s->denied);
	snprintf(s->dir, sizeof(s->dir), "%s", vm->dir);
	snprintf(s->name, sizeof(s->name), "%s", vm->name);
	s->pid = vm->pid;
	s->kvm_fd = vm->kvm_fd;
	s->start_ticks = vm->start_ticks;
	s->vmm = vm->vmm;
	s->vcpus = vm->vcpus;
	s->source = KVM_SOURCE_DEBUGFS;
	return 0;
}

int kvm_debugfs_read(struct kvm_reader *r, struct kvm_sample *ret)
{
	for (size_t i = 0; i < r->ncounters; i++)
		if (read_counter(r, r->global_fds[i], NULL, r->counters[i].name, &ret->total[i]) < 0)
			ret->total[i] = UNKNOWN;
	for (size_t v = 0; v < r->nvms; v++) {
		struct kvm_vm_sample *s = &ret->vms[ret->nvms];
		bool gone;
		if (read_vm(r, &r->vms[v], s, &gone) < 0)
			return -ENOMEM;
		ret->denied += s->denied;
		if (gone) {
			free(s->values);
			s->values = NULL;
			ret->vanished++;
			continue;
		}
		ret->nvms++;
		if ((r->flags & KVM_READ_VCPUS) && debugfs_vcpus(r, &r->vms[v], s) < 0)
			return -ENOMEM;
	}
	ret->denied += r->denied;
	return 0;
}
