/* Pure parsers: a buffer in, a struct out. None of them opens a file. */
#ifndef VMHOST_PARSE_H
#define VMHOST_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "parse/maybe.h"

/* Parses a whole decimal integer (leading/trailing blanks allowed). 0 or -EINVAL/-ERANGE. */
int parse_i64(const char *s, int64_t *ret);

/* "Key: value [kB]" or "key value" lines into maybe_i64 fields of a struct.
 * A line without its final newline is ignored (a truncated read must not yield a cut number).
 * Values with a "kB" unit are returned in bytes; a negative value is read only for a field that
 * may be negative (sizes and counts are not). The first valid line of a key wins. Returns the
 * number of fields found. */
struct kv_field {
	const char *key;
	size_t offset; /* of a maybe_i64 inside the output struct */
	bool may_be_negative;
};
int parse_kv(const char *buf, size_t len, const struct kv_field *fields, size_t nfields, void *out);

/* The keys each parser below reads: tests and fuzz targets rebuild input from them. */
struct kv_table {
	const struct kv_field *fields;
	size_t n;
};
extern const struct kv_table meminfo_keys, status_keys, ksm_stat_keys, smaps_rollup_keys;

struct meminfo {
	maybe_i64 mem_total, mem_free, mem_available, buffers, cached, shmem, swap_total, swap_free,
		anon_pages, anon_huge_pages, hugepages_total, hugepages_free, hugepage_size;
	maybe_i64 hugetlb; /* Hugetlb: every huge page size's pool, in bytes (kernels 4.16+) */
};
int parse_meminfo(const char *buf, size_t len, struct meminfo *ret);

/* /proc/PID/status, sizes in bytes. */
struct proc_status {
	char name[64];
	maybe_i64 vm_rss, rss_anon, rss_file, rss_shmem, vm_swap, vm_pte, threads;
	maybe_i64 hugetlb_pages; /* HugetlbPages: hugetlbfs memory mapped (not in VmRSS); kernels 4.4+ */
	maybe_i64 uid;           /* Uid: the real uid, the first of its four */
};
int parse_status(const char *buf, size_t len, struct proc_status *ret);

/* /proc/PID/ksm_stat. merge_any and mergeable are 1 for "yes", 0 for "no". */
struct ksm_stat {
	maybe_i64 rmap_items, zero_pages, merging_pages, process_profit, merge_any, mergeable;
};
int parse_ksm_stat(const char *buf, size_t len, struct ksm_stat *ret);

/* /proc/PID/smaps_rollup, bytes. */
struct smaps_rollup {
	maybe_i64 rss, pss, pss_dirty, pss_anon, pss_file, pss_shmem, shared_clean, shared_dirty,
		private_clean, private_dirty, anonymous, ksm, swap, swap_pss;
	maybe_i64 private_hugetlb, shared_hugetlb; /* hugetlbfs pages, not in Rss or Pss */
	maybe_i64 anon_huge_pages; /* AnonHugePages: anonymous memory on transparent huge pages */
};
int parse_smaps_rollup(const char *buf, size_t len, struct smaps_rollup *ret);

/* /proc/PID/stat: the fields vmhost uses. comm may hold spaces and parentheses. */
struct proc_stat {
	char comm[64];
	char state;
	pid_t ppid;
	uint64_t utime_ticks, stime_ticks, start_ticks, rss_pages;
};
int parse_stat(const char *buf, size_t len, struct proc_stat *ret);

/* /proc/PID/schedstat: "<run ns> <wait ns> <timeslices>", the first field (time spent on a CPU).
 * Returns 0, -EINVAL or -ERANGE. */
int parse_schedstat_run(const char *buf, size_t len, int64_t *ret_run_ns);

/* /proc/PID/cgroup: the unified (v2) path, else the name=systemd path; "" when none. */
int parse_cgroup(const char *buf, size_t len, char *ret, size_t cap);

/* /proc/PID/maps (or smaps headers) one line at a time. */
struct map_entry {
	uint64_t start, end, offset;
	char perms[5];
	uint64_t inode;
	unsigned dev_major, dev_minor; /* of the mapped file's filesystem (hugetlbfs_mount's) */
	const char *path; /* points into the buffer; "" for anonymous */
	size_t path_len;
};
/* Parses the line at *pos; advances *pos. Returns 1 with an entry, 0 at the end, -EINVAL on garbage. */
int parse_maps_next(const char *buf, size_t len, size_t *pos, struct map_entry *ret);

/* A hugetlbfs mount of a process (/proc/PID/mountinfo): its device, as maps shows a mapping of a
 * file in it, and its page size (the pagesize= option; 0 when the mount does not say: the default). */
struct hugetlbfs_mount {
	unsigned dev_major, dev_minor;
	int64_t page_bytes;
};
/* The hugetlbfs mounts of mountinfo, the first cap of them. Returns how many were found (lines
 * that do not read as a mount are skipped), or -EINVAL when no line reads as one. */
int parse_mountinfo_hugetlbfs(const char *buf, size_t len, struct hugetlbfs_mount *ret, size_t cap);

/* The selected word of a sysfs choice file: "[none] scan-time" -> "none", "always [madvise] never"
 * -> "madvise". Returns 0 or -EINVAL (no bracketed word, or longer than cap - 1). */
int parse_sysfs_choice(const char *buf, char *ret, size_t cap);

/* How many CPUs a kernel CPU list names ("0-3,6,8-9\n" -> 7, /sys/devices/system/cpu/online).
 * Returns the count or -EINVAL/-ERANGE. */
int parse_cpu_list_count(const char *buf, size_t len);
/* The same list as a bit set: CPU c sets bits[c / 64] bit c % 64 (bits holds nbits, a multiple of
 * 64, and is only added to); -ERANGE when a CPU is nbits or more (bits then partly set). */
int parse_cpu_list(const char *buf, size_t len, uint64_t *bits, size_t nbits);

/* A huge page pool's directory under /sys/kernel/mm/hugepages: "hugepages-2048kB" -> 2097152
 * (bytes). 0 or -EINVAL. */
int parse_hugepages_dir(const char *name, int64_t *ret_bytes);

/* A QEMU size: "4096" (MiB unless unit_default says otherwise), "4G", "1.5g", "4194304k",
 * "4294967296b". Suffixes are powers of 1024. unit_default is the multiplier without suffix. */
int parse_qemu_size(const char *s, size_t len, uint64_t unit_default, uint64_t *ret);

#endif
