/* The per-process /proc files every figure of a VM starts from: see proc.h. */
#include "core/model/proc.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>

#include "parse/io_stat.h"
#include "parse/parse.h"

int proc_read_stat(const struct io_root *root, pid_t pid, struct proc_stat *ret)
{
	char buf[1024];
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/stat", pid);
	if (n < 0)
		return (int)n;
	return parse_stat(buf, (size_t)n, ret) == 0 ? 0 : -EINVAL;
}

int proc_read_counters(const struct io_root *root, pid_t pid, struct mem_counters *ret, unsigned *denied)
{
	char buf[4096];
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/status", pid);
	if (n < 0)
		return (int)n;
	struct proc_status st;
	if (parse_status(buf, (size_t)n, &st) < 0)
		return -EINVAL;
	*ret = (struct mem_counters){
		.rss = st.vm_rss, .rss_anon = st.rss_anon, .rss_file = st.rss_file,
		.rss_shmem = st.rss_shmem, .swap = st.vm_swap, .threads = st.threads, .hugetlb = st.hugetlb_pages,
		.uid = st.uid,
		.ksm_rmap_items = UNKNOWN, .ksm_merging_pages = UNKNOWN,
		.ksm_zero_pages = UNKNOWN, .ksm_profit = UNKNOWN,
	};
	n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/ksm_stat", pid);
	struct ksm_stat ks;
	if (n >= 0 && parse_ksm_stat(buf, (size_t)n, &ks) >= 0) {
		ret->ksm_rmap_items = ks.rmap_items;
		ret->ksm_merging_pages = ks.merging_pages;
		ret->ksm_zero_pages = ks.zero_pages;
		ret->ksm_profit = ks.process_profit;
		ret->ksm_mergeable = ks.mergeable;
		ret->ksm_merge_any = ks.merge_any;
	} else if (n == -ENOENT) {
		/* Older kernels: only the merging page count. */
		n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/ksm_merging_pages", pid);
		int64_t v;
		if (n > 0 && parse_i64(buf, &v) == 0)
			ret->ksm_merging_pages = MAYBE(v);
	} else if (n == -EACCES || n == -EPERM) {
		(*denied)++;
	}
	/* A process that exits between the two reads has an empty ksm_stat: check it is alive. */
	if (n == -ESRCH)
		return -ESRCH;
	return 0;
}

int proc_read_smaps_rollup(const struct io_root *root, pid_t pid, struct smaps_rollup *ret)
{
	char buf[4096];
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "%d/smaps_rollup", pid);
	if (n < 0)
		return proc_gone((int)n) ? -ESRCH : (int)n;
	/* Empty when the process exited between open and read. */
	if (n == 0)
		return -ESRCH;
	return parse_smaps_rollup(buf, (size_t)n, ret) < 0 ? -EINVAL : 0;
}

int proc_listens_on(const struct io_root *root, pid_t pid, const char *path)
{
	char *buf;
	size_t len;
	int r = io_read_alloc(root, IO_PROC, &buf, &len, "%d/net/unix", pid);
	if (r < 0)
		return r;
	uint64_t inodes[8];
	size_t n = parse_unix_listeners(buf, len, path, inodes, 8);
	free(buf);
	if (!n) /* no socket lists that path (one renamed after bind lists the old): SO_PEERCRED decides */
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		char target[40];
		snprintf(target, sizeof(target), "socket:[%llu]", (unsigned long long)inodes[i]);
		if ((r = io_proc_fd_links_to(root, pid, target)) != 0)
			return r; /* 1, or why it cannot be told */
	}
	return 0;
}
