#include "core/model/ksm.h"
#include "parse/parse.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/rate.h"
#include "parse/elements.h"

#define K(name) {#name, offsetof(struct ksm_sysfs, name)}
const struct ksm_file ksm_files[] = {
	K(run), K(pages_to_scan), K(sleep_millisecs), K(pages_shared), K(pages_sharing),
	K(pages_unshared), K(pages_volatile), K(full_scans), K(pages_scanned), K(pages_skipped),
	K(max_page_sharing), K(merge_across_nodes), K(use_zero_pages), K(ksm_zero_pages),
	K(general_profit), K(smart_scan), K(stable_node_chains), K(stable_node_dups),
	K(stable_node_chains_prune_millisecs), K(advisor_max_cpu), K(advisor_min_pages_to_scan),
	K(advisor_max_pages_to_scan), K(advisor_target_scan_time),
};
#undef K
const size_t ksm_nfiles = ELEMENTSOF(ksm_files);

const char *ksm_run_word(maybe_i64 run)
{
	if (!run.known)
		return "n/a";
	return run.v == 1 ? "running" : run.v == 2 ? "unmerging" : "stopped";
}

bool ksm_is_running(const struct ksm_sysfs *k) { return k->present && k->run.known && k->run.v == 1; }

bool ksm_is_off(const struct ksm_sysfs *k) { return k->present && k->run.known && k->run.v != 1; }

int ksm_read(const struct io_root *root, struct ksm_sysfs *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < ksm_nfiles; i++)
		*(maybe_i64 *)((char *)ret + ksm_files[i].offset) = UNKNOWN;
	if (!io_exists(root, IO_SYS, "kernel/mm/ksm"))
		return -ENOENT;
	ret->present = true;
	char buf[64];
	for (size_t i = 0; i < ksm_nfiles; i++) {
		int64_t v;
		if (io_read(root, IO_SYS, buf, sizeof(buf), "kernel/mm/ksm/%s", ksm_files[i].name) > 0 &&
		    parse_i64(buf, &v) == 0)
			*(maybe_i64 *)((char *)ret + ksm_files[i].offset) = MAYBE(v);
	}
	if (io_read(root, IO_SYS, buf, sizeof(buf), "kernel/mm/ksm/advisor_mode") > 0)
		parse_sysfs_choice(buf, ret->advisor_mode, sizeof(ret->advisor_mode));
	return 0;
}

maybe_i64 ksm_saved_pages(const struct ksm_sysfs *k)
{
	if (!k->present || !k->pages_sharing.known)
		return UNKNOWN;
	int64_t zero = k->ksm_zero_pages.known ? k->ksm_zero_pages.v : 0;
	return MAYBE(k->pages_sharing.v + zero);
}

maybe_i64 ksm_saved_bytes(const struct ksm_sysfs *k, int64_t page_size)
{
	maybe_i64 pages = ksm_saved_pages(k);
	return pages.known ? MAYBE(pages.v * page_size) : UNKNOWN;
}

maybe_i64 ksm_rmap_items(const struct ksm_sysfs *k)
{
	if (!k->pages_shared.known || !k->pages_sharing.known || !k->pages_unshared.known ||
	    !k->pages_volatile.known)
		return UNKNOWN;
	return MAYBE(k->pages_shared.v + k->pages_sharing.v + k->pages_unshared.v + k->pages_volatile.v);
}

int ksmd_find(const struct io_root *root, pid_t *ret)
{
	pid_t *pids;
	size_t n;
	int r = io_list_pids(root, &pids, &n);
	if (r < 0)
		return r;
	r = -ENOENT;
	char comm[32];
	/* Kernel threads have low pids: ksmd is found within the first few dozen reads. */
	for (size_t i = 0; i < n; i++) {
		ssize_t l = io_read(root, IO_PROC, comm, sizeof(comm), "%d/comm", pids[i]);
		if (l > 0 && !strcmp(comm, "ksmd\n")) {
			*ret = pids[i];
			r = 0;
			break;
		}
	}
	free(pids);
	return r;
}

int ksmd_cpu_ns(const struct io_root *root, pid_t pid, int64_t *ret)
{
	char buf[1024];
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/schedstat", pid);
	if (n > 0 && parse_schedstat_run(buf, (size_t)n, ret) == 0)
		return 0;
	n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/stat", pid);
	if (n < 0)
		return (int)n;
	struct proc_stat st;
	if (parse_stat(buf, (size_t)n, &st) < 0)
		return -EINVAL;
	*ret = (int64_t)(st.utime_ticks + st.stime_ticks) * (1000000000LL / ticks_per_second());
	return 0;
}
