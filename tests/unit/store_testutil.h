/* What the store's unit tests share (test_store.c, test_store_write.c, test_store_share.c): a
 * scratch directory and database per test (dir, db: one test program per file includes this), the
 * snapshots they record (VMs with known memory, CPU, I/O and disks), and a count asked of the
 * database with SQLite itself. */
#ifndef VMHOST_STORE_TESTUTIL_H
#define VMHOST_STORE_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sample/snapshot.h"
#include "serve_testutil.h"
#include "store/sqlite.h"
#include "store/store.h"

#define MiB (1024 * 1024)

static char dir[64], db[128];

static inline int setup(void **state)
{
	(void)state;
	return scratch_make(dir, db, "store");
}

static inline int teardown(void **state)
{
	(void)state;
	return scratch_remove(dir);
}

/* Two disks as QMP gives them at wall time t: disk0 writes 1 MiB a second (a write of 64 KiB
 * taking 1 ms); cd0, from a QEMU that counts no time, has its times unknown. */
static inline struct vm_disks *make_disks(double t)
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
static inline void make_snapshot(struct snapshot *s, double t, size_t nvms, double rate)
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
		v->stalls = vm_stalls_unknown("off");
		if (i == 0) { /* vm0's stalls were read: 10 ms of copies and 20 ms of reclaim a second */
			v->stalls.all = stalls_unknown();
			v->stalls.all.known = true;
			for (int k = 0; k < STALL_NKINDS; k++) {
				v->stalls.all.seconds[k] = 0;
				v->stalls.all.count[k] = 0;
			}
			v->stalls.all.seconds[STALL_WPCOPY] = 0.01 * (t - 1.7e9);
			v->stalls.all.count[STALL_WPCOPY] = (int64_t)(t - 1.7e9) * 100;
			v->stalls.all.seconds[STALL_RECLAIM] = 0.02 * (t - 1.7e9);
		}
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


/* n samples of nvms VMs every dt seconds from t0 (make_snapshot's), each written and kept. */
static inline void write_samples(struct store *s, double t0, double dt, size_t n, size_t nvms, double rate)
{
	for (size_t i = 0; i < n; i++) {
		struct snapshot snap;
		make_snapshot(&snap, t0 + (double)i * dt, nvms, rate);
		assert_int_equal(store_write_sample(s, &snap, NULL), 0);
		snapshot_free(&snap);
	}
}

/* The count (or any integer) sql gives, asked of the database at db with SQLite itself. */
static inline int64_t count_rows(const char *sql)
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

#endif
