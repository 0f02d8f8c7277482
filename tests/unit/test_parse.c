/* Parsers on real files from this machine, and on truncated, empty and garbage input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/model/ksm.h"
#include "parse/io_stat.h"
#include "parse/numa_stat.h"
#include "parse/pagemap.h"
#include "parse/parse.h"
#include "testutil.h"

static void meminfo_real(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("parse/meminfo", &len);
	struct meminfo m;
	assert_true(parse_meminfo(buf, len, &m) > 5);
	assert_true(m.mem_total.known && m.mem_total.v > (1ll << 30));
	assert_true(m.mem_available.known && m.mem_available.v <= m.mem_total.v);
	assert_int_equal(m.mem_total.v % 1024, 0); /* kB scaled to bytes */
	free(buf);
}

static void meminfo_bad(void **state)
{
	(void)state;
	struct meminfo m;
	size_t len;
	char *g = fixture("parse/garbage", &len);
	assert_int_equal(parse_meminfo(g, len, &m), -EINVAL);
	assert_int_equal(parse_meminfo("", 0, &m), -EINVAL);
	/* A truncated last line must not yield a cut number. */
	const char *cut = "MemTotal:       24683568 kB\nMemFree:        2468";
	assert_true(parse_meminfo(cut, strlen(cut), &m) == 1);
	assert_false(m.mem_free.known);
	assert_int_equal(m.mem_total.v, 24683568ll * 1024);
	free(g);
}

static void status_vm(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("parse/status-vm", &len);
	struct proc_status st;
	assert_true(parse_status(buf, len, &st) >= 5);
	assert_string_equal(st.name, "fakeguest");
	assert_true(st.vm_rss.known && st.rss_anon.known && st.rss_file.known && st.rss_shmem.known);
	assert_int_equal(st.vm_rss.v, st.rss_anon.v + st.rss_file.v + st.rss_shmem.v);
	assert_true(st.rss_anon.v >= 64ll << 20);
	assert_true(st.hugetlb_pages.known && st.hugetlb_pages.v == 0); /* "HugetlbPages: 0 kB": known 0 */
	assert_true(st.uid.known && st.uid.v == 0); /* Uid: the real uid, the first of four */
	free(buf);
	/* The real uid, not the effective one; a line cut short, or garbage, is unknown. */
	const char *setuid = "Name:\tqemu\nUid:\t1000\t0\t0\t0\nVmRSS:\t 1 kB\n";
	assert_true(parse_status(setuid, strlen(setuid), &st) >= 1);
	assert_int_equal(st.uid.v, 1000);
	const char *cut = "Name:\tqemu\nVmRSS:\t 1 kB\nUid:\t1000";
	assert_true(parse_status(cut, strlen(cut), &st) >= 1);
	assert_false(st.uid.known);
	const char *bad = "Name:\tqemu\nUid:\tx1000\n";
	assert_true(parse_status(bad, strlen(bad), &st) >= 0);
	assert_false(st.uid.known);
	/* A VM whose guest RAM is on hugetlbfs: its huge pages are outside VmRSS. */
	const char *huge = "Name:\tqemu\nVmRSS:\t   37700 kB\nHugetlbPages:\t   65536 kB\n";
	assert_true(parse_status(huge, strlen(huge), &st) >= 2);
	assert_int_equal(st.hugetlb_pages.v, 64ll << 20);
	/* A kernel before 4.4 has no HugetlbPages line: unknown, never 0. */
	const char *old = "Name:\tqemu\nVmRSS:\t   37700 kB\n";
	assert_true(parse_status(old, strlen(old), &st) >= 1);
	assert_false(st.hugetlb_pages.known);
}

static void status_kthread_and_truncated(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("parse/status-kthread", &len);
	struct proc_status st;
	assert_true(parse_status(buf, len, &st) >= 0);
	assert_false(st.vm_rss.known); /* kernel threads have no memory: unknown, not 0 */
	free(buf);
	buf = fixture("parse/status-truncated", &len);
	assert_true(parse_status(buf, len, &st) >= 0);
	assert_false(st.rss_anon.known);
	free(buf);
	buf = fixture("parse/empty", &len);
	assert_int_equal(parse_status(buf, len, &st), -EINVAL);
	free(buf);
}

static void ksm_stat_forms(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("parse/ksm_stat-merged", &len);
	struct ksm_stat k;
	assert_true(parse_ksm_stat(buf, len, &k) >= 6);
	assert_int_equal(k.merging_pages.v, 16474);
	assert_int_equal(k.zero_pages.v, 120);
	assert_int_equal(k.rmap_items.v, 65536);
	/* the kernel's own identity: profit = (merging + zero) x page - rmap_items x 64 */
	assert_int_equal(k.process_profit.v, (16474 + 120) * 4096ll - 65536 * 64ll);
	assert_int_equal(k.mergeable.v, 1);
	assert_int_equal(k.merge_any.v, 0);
	free(buf);
	buf = fixture("parse/ksm_stat-truncated", &len);
	assert_true(parse_ksm_stat(buf, len, &k) == 1);
	assert_false(k.zero_pages.known);
	free(buf);
	assert_int_equal(parse_ksm_stat("", 0, &k), -EINVAL);
}

static void smaps_rollup_real(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("parse/smaps_rollup", &len);
	struct smaps_rollup r;
	assert_true(parse_smaps_rollup(buf, len, &r) > 8);
	assert_true(r.pss.v <= r.rss.v);
	assert_int_equal(r.pss.v, r.pss_anon.v + r.pss_file.v + r.pss_shmem.v);
	assert_true(r.private_hugetlb.known && r.private_hugetlb.v == 0 && r.shared_hugetlb.known);
	free(buf);
	const char *huge = "Rss: 100 kB\nPss: 90 kB\nShared_Hugetlb: 2048 kB\nPrivate_Hugetlb: 1048576 kB\n";
	assert_true(parse_smaps_rollup(huge, strlen(huge), &r) == 4);
	assert_int_equal(r.private_hugetlb.v, 1ll << 30);
	assert_int_equal(r.shared_hugetlb.v, 2ll << 20);
	buf = fixture("parse/garbage", &len);
	assert_int_equal(parse_smaps_rollup(buf, len, &r), -EINVAL);
	free(buf);
}

static void stat_fields(void **state)
{
	(void)state;
	size_t len;
	char *buf = fixture("parse/stat-weird-comm", &len);
	struct proc_stat st;
	assert_int_equal(parse_stat(buf, len, &st), 0);
	assert_string_equal(st.comm, "qemu (evil) name");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.utime_ticks, 250);
	assert_int_equal(st.stime_ticks, 75);
	assert_int_equal(st.start_ticks, 98765);
	assert_int_equal(st.rss_pages, 120000);
	free(buf);
	buf = fixture("parse/stat", &len);
	assert_int_equal(parse_stat(buf, len, &st), 0);
	assert_string_equal(st.comm, "fakeguest");
	free(buf);
	assert_int_equal(parse_stat("1 (x) S 1 2", 11, &st), -EINVAL);
	assert_int_equal(parse_stat("", 0, &st), -EINVAL);
}

static void cgroup_forms(void **state)
{
	(void)state;
	char path[512];
	size_t len;
	char *buf = fixture("parse/cgroup-v2", &len);
	assert_int_equal(parse_cgroup(buf, len, path, sizeof(path)), 0);
	assert_string_equal(path, "/machine.slice/machine-qemu\\x2d1\\x2dweb1.scope/libvirt/emulator");
	free(buf);
	buf = fixture("parse/cgroup-v1", &len);
	assert_int_equal(parse_cgroup(buf, len, path, sizeof(path)), 0);
	assert_string_equal(path, "/qemu.slice/100.scope");
	free(buf);
	buf = fixture("parse/cgroup-hybrid", &len);
	assert_int_equal(parse_cgroup(buf, len, path, sizeof(path)), 0);
	assert_string_equal(path, "/"); /* the unified line wins */
	free(buf);
	assert_int_equal(parse_cgroup("", 0, path, sizeof(path)), -EINVAL);
}

static void maps_lines(void **state)
{
	(void)state;
	size_t len, pos = 0;
	char *buf = fixture("parse/maps", &len);
	struct map_entry m;
	int n = 0, anon_big = 0, r;
	while ((r = parse_maps_next(buf, len, &pos, &m)) > 0) {
		n++;
		if (m.path_len == 0 && m.end - m.start == 64u << 20)
			anon_big++;
	}
	assert_int_equal(r, 0);
	assert_true(n > 10);
	assert_int_equal(anon_big, 1); /* the fake guest's RAM */
	const char *bad = "zzzz-1000 rw-p 0 00:00 0\n";
	pos = 0;
	assert_int_equal(parse_maps_next(bad, strlen(bad), &pos, &m), 0); /* not a mapping line: skipped */
	const char *broken = "1000-2000 rw\n";
	pos = 0;
	assert_int_equal(parse_maps_next(broken, strlen(broken), &pos, &m), -EINVAL);
	free(buf);
	/* QEMU's -mem-path RAM on a hugetlbfs mount (maps shows the device in hex). */
	const char *huge = "7fd527e00000-7fd52be00000 rw-p 00000000 00:28 688068 /tmp/pool/qemu_back_mem.pc.ram.eJ8PLz (deleted)\n";
	pos = 0;
	assert_int_equal(parse_maps_next(huge, strlen(huge), &pos, &m), 1);
	assert_int_equal(m.dev_major, 0);
	assert_int_equal(m.dev_minor, 0x28);
}

/* The huge page pools' directories under /sys/kernel/mm/hugepages. */
static void hugepages_dirs(void **state)
{
	(void)state;
	int64_t b = 7;
	assert_int_equal(parse_hugepages_dir("hugepages-2048kB", &b), 0);
	assert_int_equal(b, 2 << 20);
	assert_int_equal(parse_hugepages_dir("hugepages-1048576kB", &b), 0);
	assert_int_equal(b, 1 << 30);
	static const char *const bad[] = {"hugepages-kB", "hugepages-0kB", "hugepages-2048", "hugepages-20x8kB",
					  "nr_hugepages", "hugepages-99999999999999999999kB", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_hugepages_dir(bad[i], &b), -EINVAL);
	assert_int_equal(b, 1 << 30); /* untouched on failure */
	struct meminfo m;
	const char *mi = "MemTotal: 100 kB\nHugetlb:        10485760 kB\n";
	assert_int_equal(parse_meminfo(mi, strlen(mi), &m), 2);
	assert_int_equal(m.hugetlb.v, 10ll << 30);
}

/* The hugetlbfs mounts a process sees, matched to its mappings by device: guest RAM on huge
 * pages whatever its path (this host: 0:40 is maps' 00:28). */
static void mountinfo_hugetlbfs(void **state)
{
	(void)state;
	const char *mi = "25 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
			 "45 27 0:40 / /tmp/vmhost-pool.CLkJiL rw,relatime - hugetlbfs none rw,pagesize=2M\n"
			 "46 27 0:41 / /dev/hugepages1G rw,relatime shared:30 master:2 - hugetlbfs hugetlbfs rw,pagesize=1024M\n"
			 "47 27 0:42 / /dev/hugepages rw,relatime shared:31 - hugetlbfs hugetlbfs rw\n"
			 "48 27 0:43 / /mnt/cut rw - hugetlbfs none rw,pagesize=2M";
	struct hugetlbfs_mount m[4];
	assert_int_equal(parse_mountinfo_hugetlbfs(mi, strlen(mi), m, 4), 3);
	assert_true(m[0].dev_major == 0 && m[0].dev_minor == 40 && m[0].page_bytes == 2 << 20);
	assert_true(m[1].dev_minor == 41 && m[1].page_bytes == 1 << 30); /* optional fields skipped */
	assert_true(m[2].dev_minor == 42 && m[2].page_bytes == 0);        /* no pagesize=: the default */
	assert_int_equal(parse_mountinfo_hugetlbfs(mi, strlen(mi), m, 1), 1); /* at most cap */
	const char *none = "25 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
	assert_int_equal(parse_mountinfo_hugetlbfs(none, strlen(none), m, 4), 0);
	const char *garbage = "not a mount\n";
	assert_int_equal(parse_mountinfo_hugetlbfs(garbage, strlen(garbage), m, 4), -EINVAL);
}

static void qemu_sizes(void **state)
{
	(void)state;
	uint64_t v;
	const uint64_t M = 1ull << 20;
	assert_int_equal(parse_qemu_size("4096", 4, M, &v), 0), assert_true(v == 4096 * M);
	assert_int_equal(parse_qemu_size("4G", 2, M, &v), 0), assert_true(v == 4096 * M);
	assert_int_equal(parse_qemu_size("4194304k", 8, M, &v), 0), assert_true(v == 4096 * M);
	assert_int_equal(parse_qemu_size("1.5g", 4, M, &v), 0), assert_true(v == 1536 * M);
	assert_int_equal(parse_qemu_size("4294967296", 10, 1, &v), 0), assert_true(v == 4096 * M);
	assert_int_equal(parse_qemu_size("512MiB", 6, 1, &v), 0), assert_true(v == 512 * M);
	assert_int_equal(parse_qemu_size("lots", 4, M, &v), -EINVAL);
	assert_int_equal(parse_qemu_size("4X", 2, M, &v), -EINVAL);
	assert_int_equal(parse_qemu_size("", 0, M, &v), -EINVAL);
	assert_int_equal(parse_qemu_size("99999999999999999T", 18, M, &v), -ERANGE);
}

static void advisor_mode(void **state)
{
	(void)state;
	char w[16];
	assert_int_equal(parse_sysfs_choice("[none] scan-time\n", w, sizeof(w)), 0);
	assert_string_equal(w, "none");
	assert_int_equal(parse_sysfs_choice("none [scan-time]\n", w, sizeof(w)), 0);
	assert_string_equal(w, "scan-time");
	assert_int_equal(parse_sysfs_choice("garbage", w, sizeof(w)), -EINVAL);
}

/* Inputs the fuzz targets (fuzz/) broke an invariant on; each is also fuzz/corpus/<target>/bug-*. */
static void fuzz_regressions(void **state)
{
	(void)state;
	/* A size is never negative: "-4 kB" is no MemTotal (the profit alone may be negative). */
	struct meminfo m;
	const char neg[] = "MemTotal: -4 kB\nMemFree: 8 kB\n";
	assert_int_equal(parse_meminfo(neg, sizeof(neg) - 1, &m), -EINVAL);
	assert_false(m.mem_total.known);
	assert_true(m.mem_free.known && m.mem_free.v == 8192);
	/* A flag counts once, and the first line that reads wins, as for every other key. */
	struct ksm_stat k;
	const char twice[] = "ksm_merge_any: yes\nksm_merge_any: no\nksm_process_profit: -4096\n";
	assert_int_equal(parse_ksm_stat(twice, sizeof(twice) - 1, &k), 2);
	assert_true(k.merge_any.known && k.merge_any.v == 1);
	assert_true(k.process_profit.known && k.process_profit.v == -4096);
	/* CPU ticks are unsigned: -5 is refused, not read as 18446744073709551611; ppid is a pid. */
	struct proc_stat st;
	const char utime[] = "1 (x) S 1 1 1 0 -1 0 0 0 0 0 -5 3 0 0 20 0 1 0 100 0 7\n";
	assert_int_equal(parse_stat(utime, sizeof(utime) - 1, &st), -EINVAL);
	const char ppid[] = "1 (x) S 4294967297 1 1 0 -1 0 0 0 0 0 5 3 0 0 20 0 1 0 100 0 7\n";
	assert_int_equal(parse_stat(ppid, sizeof(ppid) - 1, &st), -EINVAL);
	const char fine[] = "1 (x) S 1 1 1 0 -1 0 0 0 0 0 5 3 0 0 20 0 1 0 100 0 7\n";
	assert_int_equal(parse_stat(fine, sizeof(fine) - 1, &st), 0);
	assert_int_equal(st.utime_ticks, 5);
	/* A NUL inside a size is not the end of it. */
	uint64_t bytes = 1;
	assert_int_equal(parse_qemu_size("4\0G", 3, 1, &bytes), -EINVAL);
	assert_int_equal(bytes, 1);
	/* schedstat: an overflowing run time is refused (strtoll gave LLONG_MAX), a cut one too. */
	int64_t ns = 1;
	assert_int_equal(parse_schedstat_run("99999999999999999999 0 0\n", 25, &ns), -ERANGE);
	assert_int_equal(parse_schedstat_run("12345", 5, &ns), -EINVAL);
	assert_int_equal(ns, 1);
	assert_int_equal(parse_schedstat_run("12345 67 8\n", 11, &ns), 0);
	assert_int_equal(ns, 12345);
}

#define S(lit) lit, sizeof(lit) - 1

static void proc_io_forms(void **state)
{
	(void)state;
	struct proc_io io = {.rchar = MAYBE(-1)};
	assert_int_equal(parse_proc_io(S("rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\n"
					 "write_bytes: 8192\ncancelled_write_bytes: 0\n"), &io), 4);
	assert_true(io.rchar.known && io.rchar.v == 10 && io.wchar.v == 20);
	assert_true(io.read_bytes.v == 4096 && io.write_bytes.v == 8192);
	/* Cut before read_bytes: no storage figure, an error, ret untouched. */
	struct proc_io was = io;
	assert_int_equal(parse_proc_io(S("rchar: 10\nwchar: 20\nread_by"), &io), -EINVAL);
	assert_memory_equal(&io, &was, sizeof(io));
}

static void cgroup_io_forms(void **state)
{
	(void)state;
	struct cgroup_io c;
	assert_int_equal(parse_cgroup_io_stat(S("253:0 rbytes=100 wbytes=200 rios=1 wios=2 dbytes=0 dios=0\n"
						"8:0 rbytes=1 wbytes=2 rios=3 wios=4\n"), &c), 0);
	assert_true(c.read_bytes.v == 101 && c.write_bytes.v == 202 && c.read_ios.v == 4 && c.write_ios.v == 6);
	assert_int_equal(parse_cgroup_io_stat(S(""), &c), 0); /* no I/O yet: 0, known */
	assert_true(c.write_bytes.known && c.write_bytes.v == 0);
	assert_int_equal(parse_cgroup_io_stat(S("8:0 rbytes=1 wbytes=x\n"), &c), -EINVAL);
	assert_int_equal(parse_cgroup_io_stat(S("8:0 rbytes=1 wbytes=2"), &c), -EINVAL); /* cut */
	int64_t rd = -1, wr = -1;
	assert_int_equal(parse_blkio(S("8:0 Read 10\n8:0 Write 20\n8:0 Total 30\n8:16 Write 5\nTotal 35\n"), &rd, &wr), 0);
	assert_true(rd == 10 && wr == 25);
	assert_int_equal(parse_blkio(S("8:0 Read\n"), &rd, &wr), -EINVAL);
	assert_true(rd == 10 && wr == 25);
	/* two devices whose sum passes int64 (found by fuzz_io_stat): refused, never wrapped */
	assert_int_equal(parse_blkio(S("8:0 Write 9223372036854775807\n8:16 Write 1048576\n"), &rd, &wr), -ERANGE);
	assert_int_equal(parse_blkio(S("8:0 Read 9223372036854775807\n8:16 Read 1\n"), &rd, &wr), -ERANGE);
	assert_true(rd == 10 && wr == 25);
}

static void tun_and_net_dev(void **state)
{
	(void)state;
	char name[16] = "x";
	assert_int_equal(parse_fdinfo_iff(S("pos:\t0\nflags:\t02\niff:\ttap0\n"), name, sizeof(name)), 0);
	assert_string_equal(name, "tap0");
	assert_int_equal(parse_fdinfo_iff(S("pos:\t0\nflags:\t02\n"), name, sizeof(name)), -ENOENT);
	assert_int_equal(parse_fdinfo_iff(S("iff:\ta-name-far-too-long-for-ifnamsiz\n"), name, sizeof(name)), -EINVAL);
	assert_string_equal(name, "tap0");
	struct net_dev_stats st;
	const char dev[] = "Inter-|   Receive |  Transmit\n face |bytes packets errs drop ...\n"
			   "    lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
			   "tap0: 100 2 0 1 0 0 0 0 300 4 5 6 0 0 0 0\n"
			   "tap01: 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n";
	assert_int_equal(parse_net_dev(dev, sizeof(dev) - 1, "tap0", &st), 0);
	assert_true(st.rx_bytes == 100 && st.rx_packets == 2 && st.rx_dropped == 1 && st.tx_bytes == 300 &&
		    st.tx_packets == 4 && st.tx_errors == 5 && st.tx_dropped == 6);
	assert_int_equal(parse_net_dev(dev, sizeof(dev) - 1, "tap", &st), -ENOENT);
	assert_int_equal(parse_net_dev(S("tap0: 1 2 3\n"), "tap0", &st), -EINVAL);
	assert_int_equal(parse_net_dev(S("tap0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16"), "tap0", &st), -ENOENT);
}

static void numa_stat_forms(void **state)
{
	(void)state;
	int64_t nodes[NUMA_NODES_MAX] = {0};
	size_t n = 0;
	const char v2[] = "anon N0=100 N1=200\nfile N0=1 N1=2\nshmem N0=0 N1=5\n";
	assert_int_equal(parse_numa_stat(v2, sizeof(v2) - 1, "anon", nodes, &n), 0);
	assert_int_equal(parse_numa_stat(v2, sizeof(v2) - 1, "shmem", nodes, &n), 0);
	assert_int_equal(n, 2);
	assert_true(nodes[0] == 100 && nodes[1] == 205);
	const char v1[] = "total=3 N0=1 N1=2\nanon=3 N0=1 N1=2\nhierarchical_anon=9 N0=4 N1=5\n";
	int64_t one[NUMA_NODES_MAX] = {0};
	n = 0;
	assert_int_equal(parse_numa_stat(v1, sizeof(v1) - 1, "hierarchical_anon", one, &n), 0);
	assert_true(n == 2 && one[0] == 4 && one[1] == 5);
	assert_int_equal(parse_numa_stat(v1, sizeof(v1) - 1, "kernel", one, &n), -ENOENT);
	assert_int_equal(parse_numa_stat(S("anon N0=1 N1=x\n"), "anon", one, &n), -EINVAL);
	assert_int_equal(parse_numa_stat(S("anon N99=1\n"), "anon", one, &n), -EINVAL);
	assert_int_equal(parse_numa_stat(S("anon N0=1 N1=2"), "anon", one, &n), -ENOENT); /* cut */
	assert_true(n == 2 && one[0] == 4 && one[1] == 5); /* untouched by the bad ones */
}

static void cpu_lists_as_bits(void **state)
{
	(void)state;
	uint64_t bits[2] = {0};
	assert_int_equal(parse_cpu_list(S("0-2,64,127\n"), bits, 128), 5);
	assert_true(bits[0] == 7 && bits[1] == (1 | UINT64_C(1) << 63));
	assert_int_equal(parse_cpu_list(S("128\n"), bits, 128), -ERANGE); /* past the set */
	assert_int_equal(parse_cpu_list(S("3-1\n"), bits, 128), -EINVAL);
	assert_int_equal(parse_cpu_list_count(S("128\n")), 1);            /* counting has no bound */
	uint64_t allowed[1] = {0};
	const char st[] = "Name:\tCPU 0/KVM\nCpus_allowed:\tf0\nCpus_allowed_list:\t4-7\nMems_allowed_list:\t0\n";
	assert_int_equal(parse_cpus_allowed(st, sizeof(st) - 1, allowed, 64), 0);
	assert_true(allowed[0] == 0xf0);
	allowed[0] = 0;
	assert_int_equal(parse_cpus_allowed(S("Name:\tx\nCpus_allowed:\tf0\n"), allowed, 64), -ENOENT);
	assert_int_equal(parse_cpus_allowed(S("Cpus_allowed_list:\t4-x\n"), allowed, 64), -EINVAL);
	assert_int_equal(parse_cpus_allowed(S("Cpus_allowed_list:\t\n"), allowed, 64), -EINVAL);
	assert_int_equal(parse_cpus_allowed(S("Cpus_allowed_list:\t1,3"), allowed, 64), 0); /* the last line, unended */
	assert_true(allowed[0] == 0xa);
}

static void macvtap_devices(void **state)
{
	(void)state;
	int ifindex = -1;
	assert_int_equal(parse_dev_tap("/dev/tap12", &ifindex), 0);
	assert_int_equal(ifindex, 12);
	assert_int_equal(parse_dev_tap("/dev/tap", &ifindex), -EINVAL);
	assert_int_equal(parse_dev_tap("/dev/tap0", &ifindex), -EINVAL); /* no interface has ifindex 0 */
	assert_int_equal(parse_dev_tap("/dev/tap1x", &ifindex), -EINVAL);
	assert_int_equal(parse_dev_tap("/dev/tape", &ifindex), -EINVAL);
	assert_int_equal(parse_dev_tap("/dev/net/tun", &ifindex), -EINVAL);
	assert_int_equal(parse_dev_tap("/dev/tap99999999999", &ifindex), -EINVAL);
	assert_int_equal(ifindex, 12); /* untouched */
	/* opened in a mount namespace that is gone (a helper under ip netns exec that passed the fd on):
	 * readlink stops at the root of its detached /dev */
	assert_int_equal(parse_dev_tap("/tap7", &ifindex), 0);
	assert_int_equal(ifindex, 7);
	assert_int_equal(parse_dev_tap("tap7", &ifindex), -EINVAL);
	assert_int_equal(parse_dev_tap("/dev/net/tap7", &ifindex), -EINVAL);
	assert_true(parse_dev_tun("/dev/net/tun"));
	assert_true(parse_dev_tun("/net/tun"));
	assert_false(parse_dev_tun("/dev/net/tun0"));
	assert_false(parse_dev_tun("net/tun"));
	assert_false(parse_dev_tun("/dev/tap7"));
	assert_false(parse_dev_tun("socket:[123]"));
	assert_false(parse_dev_tun("anon_inode:[eventfd]"));
}

static void numa_maps_forms(void **state)
{
	(void)state;
	struct numa_maps_sum m;
	const char real[] = "55d0c0a00000 default file=/usr/bin/qemu mapped=800 N0=800 kernelpagesize_kB=4\n"
			    "7f5000000000 default\n"
			    "7f4000000000 bind:1 file=/dev/hugepages/qemu_back_mem.pc.ram huge dirty=512 N1=512 kernelpagesize_kB=2048\n"
			    "7f1000000000 interleave:0-1 anon=3 dirty=3 N0=1 N1=2 kernelpagesize_kB=4\n";
	assert_int_equal(parse_numa_maps(real, sizeof(real) - 1, &m), 0);
	assert_int_equal(m.nnodes, 2);
	assert_true(m.bytes[0] == 801 * 4096 && m.bytes[1] == 512LL * 2048 * 1024 + 2 * 4096);
	assert_true(m.hugetlb_bytes[0] == 0 && m.hugetlb_bytes[1] == 512LL * 2048 * 1024);
	assert_int_equal(parse_numa_maps("", 0, &m), 0); /* no mapping: nothing on any node */
	assert_int_equal(m.nnodes, 0);
	m.nnodes = 7;
	assert_int_equal(parse_numa_maps(S("7f00 default anon=1 N0=1 kernelpagesize_kB=4"), &m), -EINVAL); /* cut */
	assert_int_equal(parse_numa_maps(S("7f00 default anon=1 N0=1\n"), &m), -EINVAL); /* no page size */
	assert_int_equal(parse_numa_maps(S("7f00 default N64=1 kernelpagesize_kB=4\n"), &m), -EINVAL);
	assert_int_equal(parse_numa_maps(S("7f00 default N0=x kernelpagesize_kB=4\n"), &m), -EINVAL);
	assert_int_equal(parse_numa_maps(S("7f00 default N0=1 kernelpagesize_kB=0\n"), &m), -EINVAL);
	assert_int_equal(parse_numa_maps(S("7f00 default N0=9223372036854775807 kernelpagesize_kB=4\n"), &m), -EINVAL);
	assert_int_equal(m.nnodes, 7); /* untouched by the bad ones */
}

/* A pagemap entry: present, file or anonymous, exclusive, and its frame (bits 0-54). */
static void pagemap_entries(void **state)
{
	(void)state;
	uint64_t anon = (UINT64_C(1) << 63) | (UINT64_C(1) << 56) | 0x12345;
	assert_true(pagemap_present(anon));
	assert_false(pagemap_file(anon));
	assert_true(pagemap_exclusive(anon));
	assert_int_equal(pagemap_pfn(anon), 0x12345);
	uint64_t file = (UINT64_C(1) << 63) | (UINT64_C(1) << 61) | (UINT64_C(1) << 55) | ((UINT64_C(1) << 55) - 1);
	assert_true(pagemap_file(file));
	assert_false(pagemap_exclusive(file));
	assert_int_equal(pagemap_pfn(file), (UINT64_C(1) << 55) - 1); /* bit 55 (soft-dirty) is not the frame's */
	uint64_t swapped = (UINT64_C(1) << 62) | 0x777; /* the low bits are the swap entry then */
	assert_false(pagemap_present(swapped));
	assert_false(pagemap_present(0));
	assert_int_equal(pagemap_pfn(0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(meminfo_real), cmocka_unit_test(meminfo_bad),
		cmocka_unit_test(status_vm), cmocka_unit_test(mountinfo_hugetlbfs), cmocka_unit_test(hugepages_dirs), cmocka_unit_test(status_kthread_and_truncated),
		cmocka_unit_test(ksm_stat_forms), cmocka_unit_test(smaps_rollup_real),
		cmocka_unit_test(stat_fields), cmocka_unit_test(cgroup_forms),
		cmocka_unit_test(maps_lines), cmocka_unit_test(qemu_sizes),
		cmocka_unit_test(advisor_mode), cmocka_unit_test(fuzz_regressions),
		cmocka_unit_test(proc_io_forms), cmocka_unit_test(cgroup_io_forms), cmocka_unit_test(tun_and_net_dev), cmocka_unit_test(numa_stat_forms),
		cmocka_unit_test(cpu_lists_as_bits), cmocka_unit_test(numa_maps_forms),
		cmocka_unit_test(macvtap_devices), cmocka_unit_test(pagemap_entries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
