/* vmhost's metric families on a frozen fixture host, diffed against golden files
 * (VMHOST_UPDATE_GOLDEN=1 rewrites them; the test then ends skipped, not passed: a file compared
 * with itself proves nothing). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sample/snapshot.h"
#include "out/prom/prom_metrics.h"

static char fixture[1024];

/* The host of a fixture tree (tree/proc), with the tree's own /sys or another (sys). */
static char *render_on(const char *tree, enum prom_format format, const char *sys)
{
	char proc[1100];
	snprintf(proc, sizeof(proc), "%s/proc", tree);
	struct io_root root = {.proc = proc, .sys = sys};
	pid_t extra[] = {20000, 31337}; /* a plain process, and one that does not exist */
	struct snapshot s;
	assert_int_equal(snapshot_take(&root, extra, 2, 0, 0, NULL, &s), 0);
	/* Time figures vary by run: fixed here so the output is stable. */
	s.wall_seconds = 1700000000.25;
	s.gather_seconds = 0.0015;
	struct prom p;
	prom_init(&p, format);
	struct prom_meta meta = {.snapshots_total = 3, .version = "test"};
	prom_write_snapshot(&p, &s, &meta);
	snapshot_free(&s);
	char *out;
	size_t len;
	assert_int_equal(prom_finish(&p, &out, &len), 0);
	return out;
}

static char *render_tree(const char *tree, enum prom_format format)
{
	char sys[1200];
	snprintf(sys, sizeof(sys), "%.1100s/sys", tree);
	return render_on(tree, format, sys);
}

static char *render(enum prom_format format) { return render_tree(fixture, format); }

/* s written with meta (the caller's sizes and detail). */
static char *render_meta(struct snapshot *s, const struct prom_meta *meta)
{
	struct prom p;
	prom_init(&p, PROM_TEXT);
	prom_write_snapshot(&p, s, meta);
	char *out;
	size_t len;
	assert_int_equal(prom_finish(&p, &out, &len), 0);
	return out;
}

/* The serve fixture's VMs, without --pid processes. */
static void take_fixture(struct snapshot *s)
{
	char proc[1100], sys[1200];
	snprintf(proc, sizeof(proc), "%s/proc", fixture);
	snprintf(sys, sizeof(sys), "%.1100s/sys", fixture);
	struct io_root root = {.proc = proc, .sys = sys};
	assert_int_equal(snapshot_take(&root, NULL, 0, 0, 0, NULL, s), 0);
}

static void compare_golden(const char *out, const char *name)
{
	char path[1100];
	snprintf(path, sizeof(path), "%s/%s", fixture, name);
	if (getenv("VMHOST_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(out, f);
		fclose(f);
		print_message("skipped: golden file updated from this run, not compared\n");
		skip();
	}
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char golden[1 << 16];
	size_t n = fread(golden, 1, sizeof(golden) - 1, f);
	fclose(f);
	golden[n] = '\0';
	if (strcmp(out, golden) != 0) {
		fprintf(stderr, "output differs from %s; got:\n%s", path, out);
		fail();
	}
}

/* Every one of want is in out. */
static void expect_lines(const char *out, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!strstr(out, want[i])) {
			fprintf(stderr, "missing: %s", want[i]);
			fail();
		}
	}
}

static void test_text_golden(void **state)
{
	(void)state;
	char *out = render(PROM_TEXT);
	compare_golden(out, "metrics.txt");
	free(out);
}

static void test_openmetrics_golden(void **state)
{
	(void)state;
	char *out = render(PROM_OPENMETRICS);
	compare_golden(out, "metrics.om");
	free(out);
}

/* What an operator reads off the output, spelled out (the golden file holds the rest). */
static void test_contract_series(void **state)
{
	(void)state;
	char *out = render(PROM_TEXT);
	static const char *const want[] = {
		"vmhost_ksm_pages_shared 400000\n",
		"vmhost_ksm_pages_sharing 2400000\n",
		"vmhost_ksm_saved_bytes 9830400000\n",
		"vmhost_ksm_full_scans_total 312\n",
		"# TYPE vmhost_ksm_full_scans_total counter\n",
		"vmhost_ksmd_cpu_seconds_total 987.654321\n",
		"vmhost_ksm_sleep_seconds 0.02\n",
		"vmhost_vm_guest_ram_bytes{vm=\"vm1\",pid=\"10001\",uuid=\"00000001-0000-4000-8000-000000000001\"} 2147483648\n",
		/* vm1's RSS includes its swtpm helper (1024 + 3072 kB). */
		"vmhost_vm_rss_bytes{vm=\"vm1\",pid=\"10001\",uuid=\"00000001-0000-4000-8000-000000000001\",type=\"anon\"} "
		"1801650176\n",
		"vmhost_vm_ksm_merged_bytes{vm=\"vm1\",pid=\"10001\",uuid=\"00000001-0000-4000-8000-000000000001\"} 838860800\n",
		"vmhost_vm_helpers{vm=\"vm1\",pid=\"10001\",uuid=\"00000001-0000-4000-8000-000000000001\"} 1\n",
		/* Escaped label value; the invalid byte became U+FFFD. */
		"vmhost_vm_guest_ram_bytes{vm=\"we\\\"ird\\\\name\xef\xbf\xbd\",pid=\"10002\",uuid=\"\"} 536870912\n",
		"vmhost_vm_ksm_merged_bytes{vm=\"we\\\"ird\\\\name\xef\xbf\xbd\",pid=\"10002\",uuid=\"\"} 5054464\n",
		"vmhost_vm_info{vm=\"\",pid=\"20000\",uuid=\"\",vmm=\"process\",cgroup=\"/user.slice\"} 1\n",
		"vmhost_vms 3\n",
		"vmhost_skipped_processes 1\n",
		"vmhost_scrape_duration_seconds 0.0015\n",
	};
	expect_lines(out, want, sizeof(want) / sizeof(want[0]));
	/* Never a made-up number: a plain process has no guest RAM or overhead series, and vm2
	 * (an older kernel without ksm_stat) has no KSM profit series. */
	assert_null(strstr(out, "vmhost_vm_guest_ram_bytes{vm=\"\",pid=\"20000\""));
	assert_null(strstr(out, "vmhost_vm_overhead_bytes{vm=\"\",pid=\"20000\""));
	assert_null(strstr(out, "vmhost_vm_ksm_profit_bytes{vm=\"we"));
	free(out);
}

/* A host without KSM's sysfs files whose VMs' ksm_stat counts merged pages: the weight of a KSM
 * mapping is unknown, and so is those VMs' PSS: no sample, never their RSS. */
static void test_unknown_pss_left_out(void **state)
{
	(void)state;
	char sys[] = "/tmp/vmhost-test-nosys-XXXXXX";
	assert_non_null(mkdtemp(sys));
	char *out = render_on(fixture, PROM_TEXT, sys);
	rmdir(sys);
	/* every process of the fixture maps KSM pages */
	assert_non_null(strstr(out, "vmhost_vm_rss_bytes{vm=\"vm1\""));
	assert_null(strstr(out, "vmhost_vm_pss_bytes{"));
	free(out);
}

/* Guest RAM on huge pages (tests/fixtures/host-hugetlb): the VM's huge pages and what it costs;
 * a kernel without HugetlbPages has neither series, never a 0. */
static void test_hugetlb_series(void **state)
{
	(void)state;
	char tree[1100];
	snprintf(tree, sizeof(tree), "%s/../host-hugetlb", fixture);
	char *out = render_tree(tree, PROM_TEXT);
	static const char *const want[] = {
		"# TYPE vmhost_vm_hugetlb_bytes gauge\n",
		"vmhost_vm_hugetlb_bytes{vm=\"big\",pid=\"3001\",uuid=\"\"} 4294967296\n",
		/* PSS (the estimate: RSS, nothing merged) + 4 GiB of 1 GiB pages */
		"vmhost_vm_memory_cost_bytes{vm=\"big\",pid=\"3001\",uuid=\"\"} 4356407296\n",
		/* the vhost-user helper maps the same 2 GiB: counted once */
		"vmhost_vm_hugetlb_bytes{vm=\"vhost\",pid=\"3003\",uuid=\"\"} 2147483648\n",
	};
	expect_lines(out, want, sizeof(want) / sizeof(want[0]));
	assert_null(strstr(out, "vmhost_vm_hugetlb_bytes{vm=\"oldkernel\""));
	assert_null(strstr(out, "vmhost_vm_memory_cost_bytes{vm=\"oldkernel\""));
	free(out);
}

/* Disk and network (tests/fixtures/host-io): the VMM's /proc/PID/io with its helper's, each tap by
 * interface and direction; a VM without /proc/PID/io and a vanished tap have no series, never a 0. */
static void test_io_series(void **state)
{
	(void)state;
	char tree[1100];
	snprintf(tree, sizeof(tree), "%s/../host-io", fixture);
	char *out = render_tree(tree, PROM_TEXT);
	static const char *const want[] = {
		"# TYPE vmhost_vm_io_read_bytes_total counter\n",
		"vmhost_vm_io_read_bytes_total{vm=\"v2disk\",pid=\"4001\",uuid=\"\"} 1052672\n",
		"vmhost_vm_io_write_bytes_total{vm=\"v2disk\",pid=\"4001\",uuid=\"\"} 268443648\n",
		"vmhost_vm_net_receive_bytes_total{vm=\"v2disk\",pid=\"4001\",uuid=\"\",interface=\"vnet0\"} 1000000\n",
		"vmhost_vm_net_transmit_bytes_total{vm=\"v2disk\",pid=\"4001\",uuid=\"\",interface=\"vnet0\"} 5000000\n",
		"vmhost_vm_net_dropped_total{vm=\"v2disk\",pid=\"4001\",uuid=\"\",interface=\"vnet0\",direction=\"receive\"} 2\n",
		"vmhost_vm_net_dropped_total{vm=\"v2disk\",pid=\"4001\",uuid=\"\",interface=\"vnet0\",direction=\"transmit\"} 7\n",
		"vmhost_vm_thp_bytes{vm=\"v2disk\",pid=\"4001\",uuid=\"\"} 805306368\n",
		"vmhost_vm_numa_bytes{vm=\"v2disk\",pid=\"4001\",uuid=\"\",node=\"0\"} 268435456\n",
		"vmhost_vm_numa_bytes{vm=\"v2disk\",pid=\"4001\",uuid=\"\",node=\"1\"} 809500672\n",
		"vmhost_vm_numa_bytes{vm=\"v1disk\",pid=\"4003\",uuid=\"\",node=\"1\"} 393216000\n",
	};
	expect_lines(out, want, sizeof(want) / sizeof(want[0]));
	assert_null(strstr(out, "vmhost_vm_io_write_bytes_total{vm=\"noiff\""));
	assert_null(strstr(out, "interface=\"tap9\""));
	assert_null(strstr(out, "vmhost_vm_numa_bytes{vm=\"gone\""));
	assert_null(strstr(out, "vmhost_vm_thp_bytes{vm=\"gone\""));
	free(out);
}

/* serve --io: each disk by device (and op), as read; a VM whose disks could not be read and a
 * figure QEMU did not give have no series, never a 0. */
static void test_disk_series(void **state)
{
	(void)state;
	char tree[1100], proc[1200];
	snprintf(tree, sizeof(tree), "%s/../host-io", fixture);
	snprintf(proc, sizeof(proc), "%s/proc", tree);
	struct io_root root = {.proc = proc, .sys = proc};
	struct snapshot s;
	assert_int_equal(snapshot_take(&root, NULL, 0, 0, 0, NULL, &s), 0);
	assert_true(s.vms.n >= 2);
	struct vm_disks *d = calloc(1, sizeof(*d)), *none = calloc(1, sizeof(*none));
	assert_true(d && none);
	*d = (struct vm_disks){.known = true, .source = "qmp", .n = 2};
	d->d[0] = (struct vm_disk){.device = "disk0", .read_bytes = MAYBE(1048576), .write_bytes = MAYBE(268435456),
				   .read_ops = MAYBE(256), .write_ops = MAYBE(2048), .flush_ops = MAYBE(3),
				   .read_seconds = 0.5, .write_seconds = 4.25, .flush_seconds = 0.0015};
	d->d[1] = (struct vm_disk){.device = "virtio-disk1", .read_bytes = UNKNOWN, .write_bytes = MAYBE(512),
				   .read_ops = UNKNOWN, .write_ops = MAYBE(1), .flush_ops = UNKNOWN,
				   .read_seconds = NAN, .write_seconds = 0.001, .flush_seconds = NAN};
	vm_disks_unread("query-blockstats: timed out", none);
	s.vms.vms[0].disks = d;
	s.vms.vms[1].disks = none;
	char l0[512], l1[256];
	snprintf(l0, sizeof(l0), "{vm=\"%s\",pid=\"%d\",uuid=\"%s\"", s.vms.vms[0].cfg.name, (int)s.vms.vms[0].pid,
		 s.vms.vms[0].cfg.uuid);
	snprintf(l1, sizeof(l1), "pid=\"%d\",uuid=\"%s\",device=", (int)s.vms.vms[1].pid, s.vms.vms[1].cfg.uuid);
	struct prom_meta meta = {.snapshots_total = 1, .version = "test"};
	char *out = render_meta(&s, &meta), want[8][768];
	snapshot_free(&s);
	snprintf(want[0], sizeof(want[0]), "vmhost_vm_disk_read_bytes_total%s,device=\"disk0\"} 1048576\n", l0);
	snprintf(want[1], sizeof(want[1]), "vmhost_vm_disk_write_bytes_total%s,device=\"disk0\"} 268435456\n", l0);
	snprintf(want[2], sizeof(want[2]), "vmhost_vm_disk_write_bytes_total%s,device=\"virtio-disk1\"} 512\n", l0);
	snprintf(want[3], sizeof(want[3]), "vmhost_vm_disk_operations_total%s,device=\"disk0\",op=\"flush\"} 3\n", l0);
	snprintf(want[4], sizeof(want[4]), "vmhost_vm_disk_io_seconds_total%s,device=\"disk0\",op=\"write\"} 4.25\n", l0);
	snprintf(want[5], sizeof(want[5]), "vmhost_vm_disk_io_seconds_total%s,device=\"virtio-disk1\",op=\"write\"} 0.001\n", l0);
	snprintf(want[6], sizeof(want[6]), "# TYPE vmhost_vm_disk_io_seconds_total counter\n");
	snprintf(want[7], sizeof(want[7]), "vmhost_vm_disk_operations_total%s,device=\"disk0\",op=\"read\"} 256\n", l0);
	const char *const wanted[] = {want[0], want[1], want[2], want[3], want[4], want[5], want[6], want[7]};
	expect_lines(out, wanted, 8);
	char absent[768];
	snprintf(absent, sizeof(absent), "vmhost_vm_disk_read_bytes_total%s,device=\"virtio-disk1\"}", l0);
	assert_null(strstr(out, absent));
	snprintf(absent, sizeof(absent), "%s,device=\"virtio-disk1\",op=\"read\"}", l0);
	assert_null(strstr(out, absent));
	assert_null(strstr(out, l1)); /* the VM whose disks are unknown */
	free(out);
}

/* vmhost_vm_stall_seconds_total: a series per kind for a VM whose stalls were read, in seconds;
 * none for one where they were not (a fixture tree, delay accounting off), and none for a kind
 * this kernel does not count. */
static void test_stall_series(void **state)
{
	(void)state;
	struct snapshot s;
	take_fixture(&s);
	assert_true(s.vms.n >= 2);
	assert_false(s.vms.vms[0].stalls.all.known); /* a fixture tree is not the running kernel */
	struct stalls *st = &s.vms.vms[0].stalls.all;
	*st = stalls_unknown();
	st->known = true;
	for (int k = 0; k < STALL_NKINDS; k++)
		st->seconds[k] = 0.5 * k;
	st->seconds[STALL_IRQ] = NAN;
	char want[STALL_NKINDS][640];
	for (int k = 0; k < STALL_NKINDS; k++)
		snprintf(want[k], sizeof(want[k]), "vmhost_vm_stall_seconds_total{vm=\"%s\",pid=\"%d\",uuid=\"%s\",kind=\"%s\"} ",
			 s.vms.vms[0].cfg.name, (int)s.vms.vms[0].pid, s.vms.vms[0].cfg.uuid, stall_kind_names[k]);
	struct prom_meta meta = {.snapshots_total = 1, .version = "test"};
	char *out = render_meta(&s, &meta);
	assert_non_null(strstr(out, "# TYPE vmhost_vm_stall_seconds_total counter\n"));
	char line[700];
	snprintf(line, sizeof(line), "%s1.5\n", want[STALL_THRASHING]);
	assert_non_null(strstr(out, line));
	snprintf(line, sizeof(line), "%s0\n", want[STALL_WPCOPY]);
	assert_non_null(strstr(out, line));
	assert_null(strstr(out, want[STALL_IRQ]));
	char other[320];
	snprintf(other, sizeof(other), "vmhost_vm_stall_seconds_total{vm=\"%s\"", s.vms.vms[1].cfg.name);
	assert_null(strstr(out, other));
	free(out);
	snapshot_free(&s);
}

/* serve --capacity-size: vmhost capacity's figures by size, "now" and "after_reclaim", worked by
 * hand on the serve fixture (docs/capacity.md): room = MemAvailable 63485412 kB less 10% of
 * MemTotal 263824568 kB = 37993426125 bytes; each new guest costs its size and the median of the
 * two QEMUs' overhead estimates (33865728, 2133516288) = 1083691008. No guest reports: no
 * after_reclaim; one that reports 4 GiB +- 1 GiB adds 3 GiB of room. Its reclaimable bytes by
 * action at --detail full only, an unknown action absent. No meminfo: no series at all. */
static void test_capacity_series(void **state)
{
	(void)state;
	struct snapshot s;
	take_fixture(&s);
	/* 256 MiB typed as bytes, 1 GiB, 1.5 GiB, and a size no unit divides */
	static const int64_t sizes[] = {268435456, 1073741824, 1610612736, 1000000000};
	struct prom_meta meta = {.snapshots_total = 1, .version = "test", .capacity_sizes = sizes, .ncapacity_sizes = 4};
	char *out = render_meta(&s, &meta);
	static const char *const now[] = {
		"# TYPE vmhost_host_capacity_vms gauge\n",
		"vmhost_host_capacity_vms{size=\"256MiB\",when=\"now\"} 28\n",
		"vmhost_host_capacity_vms{size=\"1GiB\",when=\"now\"} 17\n",
		"vmhost_host_capacity_vms{size=\"1536MiB\",when=\"now\"} 14\n",
		"vmhost_host_capacity_vms{size=\"1000000000\",when=\"now\"} 18\n",
	};
	expect_lines(out, now, sizeof(now) / sizeof(now[0]));
	assert_null(strstr(out, "when=\"after_reclaim\""));
	assert_null(strstr(out, "vmhost_vm_reclaimable_bytes"));
	free(out);

	struct guest_view *g = calloc(1, sizeof(*g));
	assert_non_null(g);
	g->reclaim = (struct reclaim){.known = true, .bytes = 4294967296, .error_bound_bytes = 1073741824,
				      .by_balloon = MAYBE(2147483648), .by_free_page_reporting = MAYBE(0),
				      .by_drop_caches = UNKNOWN};
	s.vms.vms[0].guest = g;
	char vm0[512];
	snprintf(vm0, sizeof(vm0), "vmhost_vm_reclaimable_bytes{vm=\"%s\",pid=\"%d\",uuid=\"%s\",by=", s.vms.vms[0].cfg.name,
		 (int)s.vms.vms[0].pid, s.vms.vms[0].cfg.uuid);
	out = render_meta(&s, &meta);
	static const char *const after[] = {
		"vmhost_host_capacity_vms{size=\"256MiB\",when=\"now\"} 28\n",
		"vmhost_host_capacity_vms{size=\"256MiB\",when=\"after_reclaim\"} 30\n",
		"vmhost_host_capacity_vms{size=\"1GiB\",when=\"after_reclaim\"} 19\n",
		"# TYPE vmhost_vm_reclaimable_bytes gauge\n",
	};
	expect_lines(out, after, sizeof(after) / sizeof(after[0]));
	char line[600];
	snprintf(line, sizeof(line), "%s\"balloon\"} 2147483648\n", vm0);
	assert_non_null(strstr(out, line));
	snprintf(line, sizeof(line), "%s\"free_page_reporting\"} 0\n", vm0);
	assert_non_null(strstr(out, line));
	snprintf(line, sizeof(line), "%s\"drop_caches\"}", vm0);
	assert_null(strstr(out, line));
	snprintf(line, sizeof(line), "vmhost_vm_reclaimable_bytes{vm=\"%s\"", s.vms.vms[1].cfg.name);
	assert_null(strstr(out, line)); /* its guest was not visited */
	free(out);

	meta.detail = PROM_DETAIL_BASIC; /* the host's capacity stays; the per-VM figures go */
	out = render_meta(&s, &meta);
	assert_non_null(strstr(out, "vmhost_host_capacity_vms{size=\"1GiB\",when=\"after_reclaim\"} 19\n"));
	assert_null(strstr(out, "vmhost_vm_reclaimable_bytes"));
	free(out);

	s.host.mem_known = false; /* no /proc/meminfo: nothing to count on, not 0 */
	meta.detail = PROM_DETAIL_FULL;
	out = render_meta(&s, &meta);
	assert_null(strstr(out, "vmhost_host_capacity_vms"));
	free(out);
	snapshot_free(&s);
}

int main(void)
{
	const char *f = getenv("VMHOST_FIXTURES");
	snprintf(fixture, sizeof(fixture), "%s/serve", f ? f : "tests/fixtures");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_golden),
		cmocka_unit_test(test_openmetrics_golden),
		cmocka_unit_test(test_contract_series),
		cmocka_unit_test(test_unknown_pss_left_out),
		cmocka_unit_test(test_hugetlb_series),
		cmocka_unit_test(test_io_series),
		cmocka_unit_test(test_disk_series),
		cmocka_unit_test(test_stall_series),
		cmocka_unit_test(test_capacity_series),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
