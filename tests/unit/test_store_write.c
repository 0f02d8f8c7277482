/* store_write.c and store_read.c with real SQLite in a temporary directory: samples written and
 * read back (every figure, unknown staying unknown, a VM's disks), a restarted VM as a new series
 * found again by a fresh writer, downsampling into 5-minute and hourly means that keep the growth
 * slope, and an unknown resident guest RAM read back as not populated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_growth.h"
#include "store_testutil.h"

/* vm0's disks as make_disks wrote them at 1.8e9 + 10 i (by device, then time); vm1 has none. */
static void check_disks(struct store *s, int64_t vm0, int64_t vm1)
{
	struct history_disk_point *d;
	size_t n;
	assert_int_equal(store_vm_disk_points(s, vm0, 0, 2e9, &d, &n), 0);
	assert_int_equal(n, 60);
	assert_string_equal(d[0].device, "cd0");
	assert_string_equal(d[30].device, "disk0");
	assert_true(fabs(d[31].t - (1.8e9 + 10)) < 1e-3);
	int64_t w = (int64_t)(1.8e9 + 10 - 1.7e9) * MiB;
	assert_true(d[31].write_bytes.known && d[31].write_bytes.v == w);
	assert_true(d[31].write_ops.known && d[31].write_ops.v == w / 65536);
	assert_true(d[31].write_time_ns.known && d[31].write_time_ns.v == w / 65536 * 1000000);
	assert_true(d[31].read_time_ns.known && d[31].read_time_ns.v == 123456); /* QEMU's nanoseconds, all */
	assert_true(d[31].read_bytes.v == 8192 && d[31].read_ops.v == 2 && d[31].flush_ops.v == 7);
	assert_true(d[31].flush_time_ns.known && d[31].flush_time_ns.v == 500000000);
	assert_true(d[0].read_bytes.known && d[0].read_bytes.v == 2048);
	assert_false(d[0].flush_ops.known); /* unknown stays unknown, never 0 */
	assert_false(d[0].read_time_ns.known);
	assert_false(d[0].write_time_ns.known);
	free(d);
	assert_int_equal(store_vm_disk_points(s, vm1, 0, 2e9, &d, &n), 0);
	assert_int_equal(n, 0);
	free(d);
}

static void write_and_read_back(void **state)
{
	(void)state;
	struct store *s;
	assert_int_equal(store_open(db, &s), 0);
	write_samples(s, 1.8e9, 10, 30, 3, 0);
	double first, last;
	assert_int_equal(store_time_range(s, &first, &last), 0);
	assert_true(fabs(first - 1.8e9) < 1e-3);
	assert_true(fabs(last - (1.8e9 + 290)) < 1e-3);

	struct store_vm *vms;
	size_t n;
	assert_int_equal(store_vms(s, 0, 2e9, &vms, &n), 0);
	assert_int_equal(n, 3); /* one series per VM, not per sample */
	assert_string_equal(vms[0].name, "vm0");
	assert_int_equal(vms[0].samples, 30);
	assert_true(vms[0].guest_ram_bytes.known && vms[0].guest_ram_bytes.v == 64 * MiB);
	/* started = boot + start_ticks / HZ */
	assert_true(fabs(vms[1].started_seconds - (1.7e9 + 10.01)) < 0.01);

	struct history_vm_point *p;
	size_t np;
	assert_int_equal(store_vm_points(s, vms[0].id, 0, 2e9, &p, &np), 0);
	assert_int_equal(np, 30);
	assert_true(p[0].populated);
	assert_int_equal(p[0].overhead.v, 10 * MiB);
	assert_false(p[0].ksm_profit.known); /* unknown stays unknown */
	assert_true(p[0].cpu_ms.known && p[0].cpu_ms.v == llround(0.5 * (1.8e9 - 1.7e9) * 1000));
	assert_false(p[0].vcpu_delay_ms.known);
	assert_true(p[0].cgroup_memory.known && p[0].cgroup_memory.v == 80 * MiB);
	assert_false(p[0].cgroup_limit.known); /* unlimited */
	assert_true(p[0].oom_kills.known && p[0].oom_kills.v == 0);
	assert_true(p[0].hugetlb.known && p[0].hugetlb.v == 0);
	assert_true(p[0].memory_cost.known && p[0].pss.known && p[0].memory_cost.v == p[0].pss.v);
	assert_true(p[0].io_read.known && p[0].io_read.v == 4096);
	assert_true(p[0].io_write.known && p[0].io_write.v == (int64_t)(1.8e9 - 1.7e9) * MiB);
	assert_true(p[0].net_rx.known && p[0].net_rx.v == 2000 && p[0].net_tx.v == 4000);
	assert_true(p[0].net_dropped.known && p[0].net_dropped.v == 3);
	free(p);
	assert_int_equal(store_vm_points(s, vms[1].id, 0, 2e9, &p, &np), 0);
	assert_false(p[0].io_write.known); /* unknown I/O stays unknown */
	assert_false(p[0].net_rx.known);
	free(p);
	assert_int_equal(store_vm_points(s, vms[2].id, 0, 2e9, &p, &np), 0);
	assert_true(p[0].hugetlb.known && p[0].hugetlb.v == 64 * MiB);
	assert_true(p[0].memory_cost.known && p[0].memory_cost.v == p[0].pss.v + 64 * MiB);
	free(p);

	check_disks(s, vms[0].id, vms[1].id);

	struct history_host_point *h;
	assert_int_equal(store_host_points(s, 0, 2e9, &h, &np), 0);
	assert_int_equal(np, 30);
	assert_int_equal(h[0].mem_total.v, 8LL << 30);
	assert_int_equal(h[0].vm_count.v, 3);
	free(h);
	free(vms);
	store_close(s);
}

static void restarted_vm_is_a_new_series(void **state)
{
	(void)state;
	struct store *s;
	assert_int_equal(store_open(db, &s), 0);
	struct snapshot snap;
	make_snapshot(&snap, 1.8e9, 1, 0);
	assert_int_equal(store_write_sample(s, &snap, NULL), 0);
	snap.vms.vms[0].start_ticks = 99999; /* same pid, started again */
	snap.wall_seconds += 10;
	snap.monotonic_seconds += 10;
	assert_int_equal(store_write_sample(s, &snap, NULL), 0);
	snap.wall_seconds += 10;
	snap.monotonic_seconds += 10;
	assert_int_equal(store_write_sample(s, &snap, NULL), 0);
	snapshot_free(&snap);
	struct store_vm *vms;
	size_t n;
	assert_int_equal(store_vms(s, 0, 2e9, &vms, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(vms[0].samples, 1);
	assert_int_equal(vms[1].samples, 2);
	free(vms);
	store_close(s);
	/* A fresh writer finds the series again (no cache). */
	assert_int_equal(store_open(db, &s), 0);
	make_snapshot(&snap, 1.8e9 + 30, 1, 0);
	snap.vms.vms[0].start_ticks = 99999;
	assert_int_equal(store_write_sample(s, &snap, NULL), 0);
	snapshot_free(&snap);
	assert_int_equal(store_vms(s, 0, 2e9, &vms, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(vms[1].samples, 3);
	free(vms);
	store_close(s);
}

/* vm0's disk rows after downsample_keeps_means' retention: the tiers of the host's samples, each
 * mean a counter's last value in its bucket (its maximum), unknown staying unknown. */
static void check_disk_tiers(struct store *s, double t0)
{
	struct history_disk_point *d;
	size_t n, tiers[3] = {0};
	assert_int_equal(store_vm_disk_points(s, 1, 0, 2e9, &d, &n), 0);
	for (size_t i = 0; i < n; i++) {
		tiers[d[i].resolution == 0 ? 0 : d[i].resolution == 300 ? 1 : 2]++;
		if (strcmp(d[i].device, "cd0") == 0) {
			assert_false(d[i].flush_ops.known);
			assert_false(d[i].read_time_ns.known);
			continue;
		}
		/* disk0 writes 1 MiB a second: a bucket's last sample is 60 s before its end */
		double end = d[i].t + d[i].resolution / 2.0 - (d[i].resolution ? 60 : 0);
		assert_true(d[i].write_bytes.known && d[i].write_bytes.v == (int64_t)(end - 1.7e9) * MiB);
	}
	assert_int_equal(tiers[0] % 2, 0); /* both disks in every sample */
	assert_in_range(tiers[0] / 2, 55, 66);
	assert_in_range(tiers[1] / 2, 55, 72);
	assert_in_range(tiers[2] / 2, 5, 7);
	assert_true(d[n - 1].t >= t0);
	free(d);
}

static void downsampling_keeps_means(void **state)
{
	(void)state;
	struct store *s;
	assert_int_equal(store_open(db, &s), 0);
	/* Retention short enough to see every tier: raw 1 h, 5-minute means 6 h, hourly 2 days. */
	struct store_retention r = {.raw_seconds = 3600, .minute5_seconds = 6 * 3600, .hour_seconds = 2 * 86400};
	store_set_retention(s, &r);
	double t0 = 1.8e9 - fmod(1.8e9, 3600); /* on the hour */
	/* 12 hours at 60 s, 2 VMs, VM 0 growing 1 KiB/s. */
	write_samples(s, t0, 60, 720, 2, 1024);
	double now = t0 + 719 * 60;
	assert_int_equal(store_downsample(s, now), 0);

	struct history_host_point *h;
	size_t n;
	assert_int_equal(store_host_points(s, 0, 2e9, &h, &n), 0);
	size_t raw = 0, m5 = 0, h1 = 0;
	for (size_t i = 0; i < n; i++) {
		raw += h[i].resolution == 0;
		m5 += h[i].resolution == 300;
		h1 += h[i].resolution == 3600;
		if (i)
			assert_true(h[i].t > h[i - 1].t); /* tiers do not overlap */
	}
	/* older than 6 h: hourly; 1..6 h: 5-minute; last hour: raw (cutoffs on bucket bounds) */
	assert_in_range(h1, 5, 7);
	assert_in_range(m5, 55, 72);
	assert_in_range(raw, 55, 66);
	assert_int_equal(h[0].mem_total.v, 8LL << 30); /* a mean of constants is the constant */
	free(h);
	check_disk_tiers(s, t0);

	/* The growth slope survives the means: 1 KiB/s = 3.5 MiB/hour. */
	struct growth_scan_opts o = growth_scan_defaults();
	o.window_seconds = 86400;
	o.params.warmup_seconds = 0;
	struct growth_scan g;
	assert_int_equal(growth_scan_store(s, &o, &g), 0);
	assert_int_equal(g.n, 2);
	assert_true(fabs(g.vms[0].result.bytes_per_hour - 1024 * 3600.0) < 1024 * 3600.0 * 0.02);
	assert_true(fabs(g.vms[1].result.bytes_per_hour) < 1);
	growth_scan_free(&g);

	/* Two days later everything is gone, series included. */
	assert_int_equal(store_downsample(s, now + 3 * 86400), 0);
	double first, last;
	assert_int_equal(store_time_range(s, &first, &last), -ENODATA);
	struct store_vm *vms;
	assert_int_equal(store_vms(s, 0, 2e9, &vms, &n), 0);
	assert_int_equal(n, 0);
	free(vms);
	store_close(s);
	assert_int_equal(count_rows("SELECT count(*) FROM vm_disk_samples"), 0);
}

/* A VM whose resident guest memory is unknown (status without RssAnon / RssShmem): whether its
 * guest RAM is populated is unknown, NULL in the database, and read back as warm-up (not
 * populated), for the anonymous and the shared-memory guest alike. */
static void unknown_resident_is_not_populated(void **state)
{
	(void)state;
	struct store *s;
	assert_int_equal(store_open(db, &s), 0);
	struct snapshot snap;
	make_snapshot(&snap, 1.8e9, 2, 0);
	snap.vms.vms[0].mem.rss_anon = UNKNOWN;
	snap.vms.vms[1].mem.rss_shmem = UNKNOWN;
	snap.vms.vms[1].cfg.ram_shared = true;
	assert_int_equal(store_write_sample(s, &snap, NULL), 0);
	snapshot_free(&snap);
	store_close(s);
	sqlite3 *raw;
	assert_int_equal(sq.open_v2(db, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sq.prepare_v2(raw, "SELECT COUNT(*) FROM vm_samples WHERE populated IS NULL", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sq.step(st), SQLITE_ROW);
	assert_int_equal(sq.column_int(st, 0), 2);
	sq.finalize(st);
	sq.close_v2(raw);
	assert_int_equal(store_open(db, &s), 0);
	struct history_vm_point *p;
	size_t np;
	assert_int_equal(store_vm_points(s, 1, 0, 2e9, &p, &np), 0);
	assert_int_equal(np, 1);
	assert_false(p[0].populated);
	free(p);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(write_and_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(restarted_vm_is_a_new_series, setup, teardown),
		cmocka_unit_test_setup_teardown(downsampling_keeps_means, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_resident_is_not_populated, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
