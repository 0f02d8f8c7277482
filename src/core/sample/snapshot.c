#include "core/sample/snapshot.h"

#include <string.h>

#include "core/model/vm_memo.h"

/* ksmd's pid (the hint when it still answers, else looked up) and its CPU time so far. */
static void read_ksmd(const struct io_root *root, pid_t hint, struct snapshot *s)
{
	s->ksmd_cpu_ns = UNKNOWN;
	if (!s->host.ksm.present)
		return;
	pid_t pid = hint;
	int64_t ns;
	if ((pid > 0 && ksmd_cpu_ns(root, pid, &ns) == 0) ||
	    (ksmd_find(root, &pid) == 0 && ksmd_cpu_ns(root, pid, &ns) == 0)) {
		s->ksmd_pid = pid;
		s->ksmd_cpu_ns = MAYBE(ns);
	}
}

int snapshot_take(const struct io_root *root, const pid_t *extra, size_t nextra, unsigned flags,
		  pid_t ksmd_pid_hint, const struct vm_list *before, struct snapshot *ret)
{
	struct snapshot s = {0};
	double start = clock_monotonic_seconds();
	s.wall_seconds = clock_wall_seconds();
	s.monotonic_seconds = start;
	int r = host_read(root, &s.host);
	if (r < 0)
		return r;
	read_ksmd(root, ksmd_pid_hint, &s);
	/* The snapshot before's processes, VMs and others, are known by their stat alone. */
	static const struct vm_list none;
	struct vm_memo memo;
	bool known = vm_memo_of_list(before ? before : &none, &memo) == 0;
	r = vm_discover_known(root, extra, nextra, known ? &memo : NULL, &s.vms);
	vm_memo_free(&memo);
	if (r < 0) {
		snapshot_free(&s);
		return r;
	}
	vm_measure_all(root, &s.host, &s.vms, before, flags);
	s.gather_seconds = clock_monotonic_seconds() - start;
	*ret = s;
	return 0;
}

void snapshot_free(struct snapshot *s)
{
	vm_list_free(&s->vms);
}
