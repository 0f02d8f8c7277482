#include "core/snapshot.h"

#include <string.h>
#include <time.h>

int snapshot_take(const struct io_root *root, const pid_t *extra, size_t nextra, unsigned flags,
		  pid_t ksmd_pid_hint, struct snapshot *ret)
{
	memset(ret, 0, sizeof(*ret));
	double start = clock_monotonic_seconds();
	ret->wall_seconds = clock_wall_seconds();
	ret->monotonic_seconds = start;
	int r = host_read(root, &ret->host);
	if (r < 0)
		return r;
	ret->ksmd_cpu_ns = UNKNOWN;
	if (ret->host.ksm.present) {
		pid_t pid = ksmd_pid_hint;
		int64_t ns;
		if (pid > 0 && ksmd_cpu_ns(root, pid, &ns) == 0) {
			ret->ksmd_pid = pid;
			ret->ksmd_cpu_ns = MAYBE(ns);
		} else if (ksmd_find(root, &pid) == 0 && ksmd_cpu_ns(root, pid, &ns) == 0) {
			ret->ksmd_pid = pid;
			ret->ksmd_cpu_ns = MAYBE(ns);
		}
	}
	r = vm_discover(root, extra, nextra, &ret->vms);
	if (r < 0)
		return r;
	vm_measure_all(root, &ret->host, &ret->vms, flags);
	ret->gather_seconds = clock_monotonic_seconds() - start;
	return 0;
}

void snapshot_free(struct snapshot *s)
{
	vm_list_free(&s->vms);
}
