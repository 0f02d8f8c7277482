/* store: real SQLite in a temporary directory: write, read back, VM identity, downsampling,
 * one writer at a time, foreign files refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/sqlite.h"

#include "core/model/snapshot.h"
#include "store/store.h"
#include "store/store_schema.h"
#include "store/store_growth.h"
#include "store/store_series.h"
#include "store/store_share.h"
#include "serve_testutil.h"

#define MiB (1024 * 1024)

static char dir[64], db[128];

static int setup(void **state)
{
	(void)state;
	return scratch_make(dir, db, "store");
}

static int teardown(void **state)
{
	(void)state;
	return scratch_remove(dir);
}

/* Two disks as QMP gives them at wall time t: disk0 writes 1 MiB a second (a write of 64 KiB
 * taking 1 ms); cd0, from a QEMU that counts no time, has its times unknown. */
static struct vm_disks *make_disks(double t)
{
	struct vm_disks *d = calloc(1, sizeof(*d));
	assert_non_null(d);
	d->known = true;
	d->source = "qmp";
	d->n = 2;
	int64_t w = (int64_t)(t - 1.7e9) * MiB;
	d->d[0] = (struct vm_disk){.device = "disk0", .read_bytes = MAYBE(8192), .write_bytes = MAYBE(w),
				   .read_ops = MAYBE(2), .write_ops = MAYBE(w / 65536), .flush_ops = MAYBE(7),
				   .read_seconds = 0.000123456, .write_seconds = (double)(w / 65536) * 0.001,
				   .flush_seconds = 0.5};
	d->d[1] = (struct vm_disk){.device = "cd0", .read_bytes = MAYBE(2048), .write_bytes = MAYBE(0),
				   .read_ops = MAYBE(1), .write_ops = MAYBE(0), .flush_ops = UNKNOWN,
				   .read_seconds = NAN, .write_seconds = NAN, .flush_seconds = NAN};
	return d;
}

/* A snapshot at wall time t with nvms VMs (pid 100 + i); VM 0's overhead grows by rate B/s. */
static void make_snapshot(struct snapshot *s, double t, size_t nvms, double rate)
{
	memset(s, 0, sizeof(*s));
	s->wall_seconds = t;
	s->monotonic_seconds = t - 1.7e9; /* boot at 1.7e9 */
	s->gather_seconds = 0.001;
	s->host.mem_known = true;
	s->host.mem.mem_total = MAYBE(8LL << 30);
	s->host.mem.mem_available = MAYBE(6LL << 30);
	s->host.mem.mem_free = MAYBE(5LL << 30);
	s->host.mem.swap_total = MAYBE(0);
	s->host.mem.swap_free = MAYBE(0);
	s->host.page_size_bytes = 4096;
	s->host.clock_ticks_per_second = 100;
	s->host.ksm.present = true;
	s->host.ksm.run = MAYBE(1);
	s->host.ksm.pages_sharing = MAYBE(1000);
	s->host.ksm.pages_shared = MAYBE(10);
	s->host.ksm.ksm_zero_pages = MAYBE(0);
	s->ksmd_cpu_ns = MAYBE((int64_t)((t - 1.7e9) * 1e7)); /* 1% of a CPU */
	s->vms.vms = calloc(nvms, sizeof(struct vm));
	s->vms.n = nvms;
	for (size_t i = 0; i < nvms; i++) {
		struct vm *v = &s->vms.vms[i];
		v->pid = (pid_t)(100 + i);
		v->start_ticks = 1000 + i;
		v->cfg.vmm = VMM_QEMU;
		snprintf(v->cfg.name, sizeof(v->cfg.name), "vm%zu", i);
		v->cfg.guest_ram_bytes = MAYBE(64 * MiB);
		int64_t over = 10 * MiB + (i == 0 ? (int64_t)(rate * (t - 1.7e9)) : 0);
		v->mem.rss_anon = MAYBE(64 * MiB + over);
		v->mem.rss_file = MAYBE(0);
		v->mem.rss_shmem = MAYBE(0);
		v->mem.rss = MAYBE(64 * MiB + over);
		v->mem.swap = MAYBE(0);
		v->mem.ksm_zero_pages = MAYBE(0);
		v->mem.hugetlb = i == 2 ? MAYBE(64 * MiB) : MAYBE(0); /* vm2's guest RAM on huge pages */
		v->pss_bytes = v->mem.rss;
		v->pss_method = METHOD_ESTIMATE;
		v->overhead_bytes = MAYBE(over);
		v->overhead_method = METHOD_ESTIMATE;
		v->cpu = (struct vm_cpu){.cpu_seconds = 0.5 * (t - 1.7e9), .vcpu_delay_seconds = NAN};
		v->cg = (struct vm_cgroup){.memory_bytes = MAYBE(80 * MiB), .limit_bytes = UNKNOWN, .oom_kills = MAYBE((int64_t)i)};
		vm_io_unknown(&v->io);
		if (i == 0) /* vm0's disks were read (record --io); the others' were not asked */
			v->disks = make_disks(t);
		if (i == 0) { /* vm0 writes 1 MiB a second and has two taps; the others' I/O is unknown */
			v->io.read_bytes = MAYBE(4096);
			v->io.write_bytes = MAYBE((int64_t)(t - 1.7e9) * MiB);
			v->io.ifaces_known = true;
			v->io.nifaces = 2;
			for (size_t k = 0; k < 2; k++)
				v->io.ifaces[k] = (struct vm_iface){.rx_bytes = MAYBE(1000), .tx_bytes = MAYBE(2000),
								   .rx_dropped = MAYBE(1), .tx_dropped = MAYBE((int64_t)k)};
		}
	}
}

static void write_samples(struct store *s, double t0, double dt, size_t n, size_t nvms, double rate)
{
	for (size_t i = 0; i < n; i++) {
		struct snapshot snap;
		make_snapshot(&snap, t0 + (double)i * dt, nvms, rate);
		assert_int_equal(store_write_sample(s, &snap, NULL), 0);
		snapshot_free(&snap);
	}
}

static int64_t count_rows(const char *sql)
{
	sqlite3 *raw;
	sqlite3_stmt *st;
	assert_int_equal(sq.open_v2(db, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sq.prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sq.step(st), SQLITE_ROW);
	int64_t n = sq.column_int64(st, 0);
	sq.finalize(st);
	sq.close_v2(raw);
	return n;
}

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

static void one_writer_at_a_time(void **state)
{
	(void)state;
	struct store *a, *b;
	assert_int_equal(store_open(db, &a), 0);
	assert_int_equal(store_open(db, &b), -EBUSY);
	/* Readers are welcome while the writer runs. */
	write_samples(a, 1.8e9, 10, 2, 1, 0);
	assert_int_equal(store_open_read(db, &b), 0);
	store_close(b);
	store_close(a);
	assert_int_equal(store_open(db, &b), 0);
	store_close(b);
}

static void foreign_files_are_refused(void **state)
{
	(void)state;
	char path[160];
	snprintf(path, sizeof(path), "%s/text.db", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("this is not a database, and it is long enough to look like a header to sqlite....\n", f);
	fclose(f);
	struct store *s;
	assert_int_equal(store_open(path, &s), -EPROTO);
	assert_int_equal(store_open_read(path, &s), -EPROTO);
	snprintf(path, sizeof(path), "%s/missing.db", dir);
	assert_int_equal(store_open_read(path, &s), -ENOENT);
	assert_non_null(strstr(store_strerror(-EBUSY), "another recorder"));
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

/* The database vmhost left at schema version (its migrations), with rows. */
static void vmhost_database(int version, const char *rows)
{
	sqlite3 *raw;
	assert_int_equal(sqlite_load(NULL, 0), 0); /* loaded by store_open, or here */
	assert_int_equal(sq.open_v2(db, &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
	char pragmas[128];
	for (int v = 0; v < version; v++)
		assert_int_equal(sq.exec(raw, store_migrations[v], NULL, NULL, NULL), SQLITE_OK);
	snprintf(pragmas, sizeof(pragmas), "PRAGMA application_id = 1986881651; PRAGMA user_version = %d;", version);
	assert_int_equal(sq.exec(raw, pragmas, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sq.exec(raw, rows, NULL, NULL, NULL), SQLITE_OK);
	sq.close_v2(raw);
}

/* vm 1's points in a database left by vmhost at schema version (its migrations, then rows), once
 * this build opened it (migrating it in place) and wrote samples of other VMs. */
static struct history_vm_point *old_database(int version, const char *rows, size_t *ret_n)
{
	vmhost_database(version, rows);
	struct store *s;
	assert_int_equal(store_open(db, &s), 0);
	write_samples(s, 1.8e9, 10, 2, 1, 0);
	struct history_vm_point *p;
	assert_int_equal(store_vm_points(s, 1, 0, 2e9, &p, ret_n), 0);
	store_close(s);
	return p;
}

/* A database written by vmhost with schema 1 (before the CPU and cgroup columns) is migrated
 * in place by the next writer; its old rows read back with the new figures unknown. */
static void schema_1_is_migrated(void **state)
{
	(void)state;
	size_t np;
	struct history_vm_point *p = old_database(1,
		"INSERT INTO vms (id, pid, start_ticks, boot_ms, vmm) VALUES (1, 7, 9, 0, 'qemu');"
		"INSERT INTO vm_samples (vm_id, t_ms, rss) VALUES (1, 1799999995000, 4096);", &np);
	assert_int_equal(np, 1);
	assert_true(p[0].rss.known && p[0].rss.v == 4096);
	assert_false(p[0].cpu_ms.known);
	free(p);
}

/* Schema 2 (before the huge page columns): its rows read back with them unknown, never 0. */
static void schema_2_is_migrated(void **state)
{
	(void)state;
	size_t np;
	struct history_vm_point *p = old_database(2,
		"INSERT INTO vms (id, pid, start_ticks, boot_ms, vmm) VALUES (1, 7, 9, 0, 'qemu');"
		"INSERT INTO vm_samples (vm_id, t_ms, rss, pss, cpu_ms) VALUES (1, 1799999995000, 4096, 4096, 5);", &np);
	assert_int_equal(np, 1);
	assert_true(p[0].pss.known && p[0].pss.v == 4096 && p[0].cpu_ms.known);
	assert_false(p[0].hugetlb.known);
	assert_false(p[0].memory_cost.known);
	free(p);
}

/* Schema 3 (before the I/O columns): its rows read back with them unknown, never 0. */
static void schema_3_is_migrated(void **state)
{
	(void)state;
	size_t np;
	struct history_vm_point *p = old_database(3,
		"INSERT INTO vms (id, pid, start_ticks, boot_ms, vmm) VALUES (1, 7, 9, 0, 'qemu');"
		"INSERT INTO vm_samples (vm_id, t_ms, rss, pss, hugetlb) VALUES (1, 1799999995000, 4096, 4096, 0);", &np);
	assert_int_equal(np, 1);
	assert_true(p[0].hugetlb.known && p[0].hugetlb.v == 0);
	assert_false(p[0].io_write.known);
	assert_false(p[0].net_rx.known);
	free(p);
}

/* Schema 4 (before the sharing maps): migrated in place, its rows kept; the new tables empty. */
static void schema_4_is_migrated(void **state)
{
	(void)state;
	size_t np;
	struct history_vm_point *p = old_database(4,
		"INSERT INTO vms (id, pid, start_ticks, boot_ms, vmm) VALUES (1, 7, 9, 0, 'qemu');"
		"INSERT INTO vm_samples (vm_id, t_ms, rss, pss, io_write) VALUES (1, 1799999995000, 4096, 4096, 512);", &np);
	assert_int_equal(np, 1);
	assert_true(p[0].rss.known && p[0].rss.v == 4096);
	assert_true(p[0].io_write.known && p[0].io_write.v == 512);
	free(p);
	struct store *s;
	assert_int_equal(store_open_read(db, &s), 0);
	struct share_run r;
	assert_int_equal(store_share_latest(s, &r), -ENODATA);
	store_close(s);
}

/* The names of a table's columns in the database at db, comma-separated. */
static void table_columns(const char *table, char *buf, size_t cap)
{
	sqlite3 *raw;
	sqlite3_stmt *st;
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT group_concat(name) FROM pragma_table_info('%s')", table);
	assert_int_equal(sq.open_v2(db, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sq.prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sq.step(st), SQLITE_ROW);
	const unsigned char *t = sq.column_text(st, 0);
	snprintf(buf, cap, "%s", t ? (const char *)t : "");
	sq.finalize(st);
	sq.close_v2(raw);
}

#define SCHEMA_5_ROWS                                                                                  \
	"INSERT INTO vms (id, pid, start_ticks, boot_ms, vmm) VALUES (1, 7, 9, 0, 'qemu');"            \
	"INSERT INTO vm_samples (vm_id, t_ms, rss, cpu_ms, vcpu_wait_ms) VALUES (1, 1799999990000, 4096, 10, 1000),"\
	" (1, 1799999995000, 4096, 20, 3500);"

/* A schema-4 database no writer has migrated yet: readers refuse it as older, not newer (they
 * said "written by a newer vmhost"), and say what migrates it. */
static void schema_4_is_old_to_readers(void **state)
{
	(void)state;
	vmhost_database(4, "");
	struct store *s;
	int r = store_open_read(db, &s);
	assert_int_equal(r, -ESTALE);
	assert_non_null(strstr(store_strerror(r), "older vmhost"));
	assert_non_null(strstr(store_strerror(r), "vmhost record"));
	assert_int_equal(count_rows("PRAGMA user_version"), 4);
}

/* Schema 5 (the vCPUs' delay as vcpu_wait_ms, no disks): a reader reads it as it is, the delay
 * under its name and no disks; the next writer renames the column in place, keeping its figures,
 * and adds the disks' table. */
static void schema_5_is_migrated(void **state)
{
	(void)state;
	size_t np;
	struct history_vm_point *p = old_database(5, SCHEMA_5_ROWS, &np);
	assert_int_equal(np, 2);
	assert_true(p[0].vcpu_delay_ms.known && p[0].vcpu_delay_ms.v == 1000);
	assert_true(p[1].vcpu_delay_ms.known && p[1].vcpu_delay_ms.v == 3500);
	assert_true(p[1].cpu_ms.known && p[1].cpu_ms.v == 20);
	free(p);
	char cols[1024];
	table_columns("vm_samples", cols, sizeof(cols));
	assert_non_null(strstr(cols, ",vcpu_delay_ms,"));
	assert_null(strstr(cols, "vcpu_wait_ms"));
	table_columns("vm_disk_samples", cols, sizeof(cols));
	assert_string_equal(cols, "vm_id,t_ms,device,resolution,read_bytes,write_bytes,read_ops,write_ops,flush_ops,"
				  "read_time_ns,write_time_ns,flush_time_ns");
	/* The new writer's samples carry the delay and vm0's disks under the new names. */
	struct store *s;
	assert_int_equal(store_open_read(db, &s), 0);
	struct history_disk_point *d;
	assert_int_equal(store_vm_disk_points(s, 2, 0, 2e9, &d, &np), 0);
	assert_int_equal(np, 4);
	free(d);
	store_close(s);
}

/* A schema-5 database not migrated yet (no writer since the upgrade): report and growth read it. */
static void schema_5_is_read_as_it_is(void **state)
{
	(void)state;
	vmhost_database(5, SCHEMA_5_ROWS "INSERT INTO samples (t_ms) VALUES (1799999990000), (1799999995000);");
	struct store *s;
	assert_int_equal(store_open_read(db, &s), 0);
	struct history_vm_point *p;
	size_t np;
	assert_int_equal(store_vm_points(s, 1, 0, 2e9, &p, &np), 0);
	assert_int_equal(np, 2);
	assert_true(p[1].vcpu_delay_ms.known && p[1].vcpu_delay_ms.v == 3500);
	free(p);
	struct history_disk_point *d;
	assert_int_equal(store_vm_disk_points(s, 1, 0, 2e9, &d, &np), 0);
	assert_int_equal(np, 0);
	free(d);
	/* The report's series: 2.5 s of delay over 5 s is 50% of one CPU. */
	struct series_set set;
	assert_int_equal(store_vm_series(s, 1, 0, 2e9, 4096, NULL, 100, &set), 0);
	assert_int_equal(set.n, 2);
	assert_true(fabs(series_row(&set, SERIES_VM_VCPU_DELAY)[1] - 50.0) < 1e-9);
	series_free(&set);
	store_close(s);
	assert_int_equal(count_rows("PRAGMA user_version"), 5); /* a reader leaves it as it is */
}

/* Three VMs: a and b of one image, c apart; c partial. */
static void three_vm_run(struct share_run *r, double t)
{
	assert_int_equal(share_run_alloc(3, r), 0);
	r->t = t;
	r->sample_n = 64;
	r->page_size = 4096;
	r->host_pages = 3000;
	r->zero_pages = 100;
	r->mergeable_savings_bytes = 900 * 4096;
	r->ksm_saved_bytes = MAYBE(400 * 4096);
	const char *names[] = {"a", "b", ""};
	for (size_t i = 0; i < 3; i++) {
		r->vms[i] = (struct share_run_vm){.pid = (pid_t)(10 + i), .pages = 1000, .zero_pages = 30 + (int64_t)i,
						  .unique_pages = 200 + (int64_t)i, .error_bound_pages = 64,
						  .sketch_bytes = 128};
		snprintf(r->vms[i].name, sizeof(r->vms[i].name), "%s", names[i]);
	}
	snprintf(r->vms[2].partial_reason, sizeof(r->vms[2].partial_reason), "vm-exited");
	int64_t pairs[9] = {5, 800, 64, 790, 0, 0, 64, 0, 128};
	memcpy(r->pairs, pairs, sizeof(pairs));
}

/* A sharing map is written beside a recorder holding the database, and the latest run reads back
 * whole: every figure, names, unknown ksm_saved, the partial reason, pairs left out read as 0. */
static void share_run_beside_a_recorder(void **state)
{
	(void)state;
	struct store *rec, *side, *s;
	assert_int_equal(store_open(db, &rec), 0);
	assert_int_equal(store_open(db, &side), -EBUSY);
	assert_int_equal(store_open_side(db, &side), 0);
	struct share_run w, w2, r;
	three_vm_run(&w, 1.8e9);
	three_vm_run(&w2, 1.8e9 + 60);
	w2.ksm_saved_bytes = UNKNOWN;
	w2.pairs[1] = 801;
	assert_int_equal(store_share_write(side, &w), 0);
	write_samples(rec, 1.8e9, 10, 2, 1, 0);
	assert_int_equal(store_share_write(side, &w2), 0);
	store_close(side);
	store_close(rec);
	assert_int_equal(store_open_read(db, &s), 0);
	assert_int_equal(store_share_latest(s, &r), 0);
	store_close(s);
	assert_int_equal(r.n, 3);
	assert_true(fabs(r.t - (1.8e9 + 60)) < 1e-3);
	assert_int_equal(r.sample_n, 64);
	assert_int_equal(r.host_pages, 3000);
	assert_int_equal(r.mergeable_savings_bytes, 900 * 4096);
	assert_false(r.ksm_saved_bytes.known);
	assert_string_equal(r.vms[0].name, "a");
	assert_string_equal(r.vms[2].name, "");
	assert_string_equal(r.vms[2].partial_reason, "vm-exited");
	assert_string_equal(r.vms[0].partial_reason, "");
	assert_int_equal(r.vms[1].zero_pages, 31);
	assert_int_equal(r.vms[2].unique_pages, 202);
	assert_int_equal(r.vms[1].pid, 11);
	for (size_t i = 0; i < 9; i++)
		assert_int_equal(r.pairs[i], w2.pairs[i]);
	share_run_free(&r);
	share_run_free(&w);
	share_run_free(&w2);
}

/* A map's pairs (n x n rows) are kept 30 days; its run and VM rows stay. */
static void old_maps_lose_their_pairs(void **state)
{
	(void)state;
	struct store *s;
	struct share_run w;
	assert_int_equal(store_open_side(db, &s), 0);
	three_vm_run(&w, 1.8e9 - 31 * 86400.0);
	assert_int_equal(store_share_write(s, &w), 0);
	w.t = 1.8e9 - 29 * 86400.0;
	assert_int_equal(store_share_write(s, &w), 0);
	assert_int_equal(count_rows("SELECT count(*) FROM share_pairs"), 2 * 6);
	w.t = 1.8e9;
	assert_int_equal(store_share_write(s, &w), 0);
	store_close(s);
	assert_int_equal(count_rows("SELECT count(*) FROM share_pairs"), 2 * 6);
	assert_int_equal(count_rows("SELECT count(*) FROM share_pairs WHERE run_id = 1"), 0);
	assert_int_equal(count_rows("SELECT count(*) FROM share_runs"), 3);
	assert_int_equal(count_rows("SELECT count(*) FROM share_vms"), 9);
	share_run_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(write_and_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(one_writer_at_a_time, setup, teardown),
		cmocka_unit_test_setup_teardown(foreign_files_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(restarted_vm_is_a_new_series, setup, teardown),
		cmocka_unit_test_setup_teardown(downsampling_keeps_means, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_1_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_resident_is_not_populated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_2_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_3_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_4_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_5_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_5_is_read_as_it_is, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_4_is_old_to_readers, setup, teardown),
		cmocka_unit_test_setup_teardown(share_run_beside_a_recorder, setup, teardown),
		cmocka_unit_test_setup_teardown(old_maps_lose_their_pairs, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
