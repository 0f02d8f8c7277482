/* What vmhost exits watches (core/kvm/kvm_watch.h). */
#include "core/kvm/kvm_watch.h"

#include <errno.h>
#include <string.h>

#include "core/base/stop.h"
#include "io/run.h"

#define LIBVIRT_DEADLINE_MS 750

bool kvm_watch_selects(const struct kvm_watch *w, const struct kvm_vm_sample *vm)
{
	for (size_t i = 0; i < w->nvm_names; i++)
		if (vm->name[0] && !strcmp(vm->name, w->vm_names[i]))
			return true;
	for (size_t i = 0; i < w->npids; i++)
		if (vm->pid == w->pids[i])
			return true;
	return false;
}

static bool vm_selected(const struct kvm_vm_sample *vm, void *data) { return kvm_watch_selects(data, vm); }

static bool field_selected(const char *name, void *data)
{
	const struct kvm_watch *w = data;
	return regexec(w->fields, name, 0, NULL, 0) == 0;
}

static bool selects_vms(const struct kvm_watch *w) { return w->nvm_names || w->npids; }

int kvm_watch_open(const struct io_root *root, const struct kvm_watch *w, struct kvm_reader **ret,
		   enum kvm_avail *ret_why, char *qmp_why, size_t cap)
{
	struct kvm_reader *kr = NULL;
	qmp_why[0] = '\0';
	int r = kvm_reader_open_with(root, w->read_flags, &kr, ret_why);
	for (size_t i = 0; r == 0 && i < w->nqmp; i++)
		r = kvm_reader_qmp_socket(kr, w->qmp_pids[i], w->qmp_paths[i]);
	if (r == 0)
		r = kvm_reader_libvirt(kr, w->libvirt_uri, LIBVIRT_DEADLINE_MS);
	if (r == 0 && w->pace_seconds >= 0)
		kvm_reader_pace(kr, w->pace_seconds);
	if (r == 0 && selects_vms(w))
		kvm_reader_select(kr, vm_selected, (void *)w);
	if (r == 0 && w->probe && !kvm_reader_has_debugfs(kr))
		r = kvm_reader_probe(kr, selects_vms(w) ? vm_selected : NULL, (void *)w, qmp_why, cap);
	if (r < 0) {
		kvm_reader_close(kr);
		return r;
	}
	*ret = kr;
	return 0;
}

int kvm_watch_delta(const struct kvm_reader *kr, const struct kvm_watch *w, const struct kvm_sample *a,
		    const struct kvm_sample *b, struct kvm_delta *ret)
{
	struct kvm_delta_filter f = {
		.vm = selects_vms(w) ? vm_selected : NULL,
		.counter = w->fields ? field_selected : NULL,
		.data = (void *)w,
	};
	return kvm_delta_build(kr, a, b, &f, ret);
}

int kvm_watch_command(struct kvm_reader *kr, char *const *argv, bool quiet_stdout, double *ret_wall)
{
	struct io_run run;
	int r = io_run_start(argv, quiet_stdout, &run);
	if (r < 0)
		return r;
	if (kvm_reader_follow(kr, run.pid, argv[0]) == -ENOMEM) {
		io_run_finish(&run, false);
		return -ENOMEM;
	}
	stop_catch(true); /* like time(1): Ctrl-C goes to the command */
	double start = clock_monotonic_seconds();
	r = io_run_finish(&run, true);
	*ret_wall = clock_monotonic_seconds() - start;
	stop_catch(false);
	return r;
}
