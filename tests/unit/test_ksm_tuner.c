/* The tuner's control law, scenario by scenario: start fast, stay fast while merging or while
 * new memory appears, go idle after flat full scans, come back for a new guest, fit the CPU
 * budget, and take memory pressure into account. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "core/tune/tuner.h"
#include "core/tune/tuner_daemon.h"
#include "parse/smaps.h"
#include "testutil.h"

#define MAX_PROCS 8

struct sim {
	struct tuner_config c;
	struct tuner_state s;
	struct tuner_input in;
	struct tuner_decision d;
	/* With procs_known, every step reads these processes through the news tracker. */
	bool procs_known;
	bool denied; /* some processes could not be read */
	struct tuner_news news;
	struct tuner_proc procs[MAX_PROCS];
	size_t nprocs;
};

static void sim_init(struct sim *m)
{
	memset(m, 0, sizeof(*m));
	tuner_config_default(&m->c);
	tuner_init(&m->s);
	/* The /proc figures and ksmd's pages scanned unknown (zero), until a test sets them. */
	m->in = (struct tuner_input){
		.interval_seconds = 2, .ksmd_cpu_percent = NAN,
		.ksm = {.present = true, .pages_shared = MAYBE(0), .pages_sharing = MAYBE(0),
			.pages_unshared = MAYBE(0), .pages_volatile = MAYBE(0), .ksm_zero_pages = MAYBE(0),
			.full_scans = MAYBE(0), .run = MAYBE(0), .pages_to_scan = MAYBE(100),
			.sleep_millisecs = MAYBE(20)},
		.mem_total_bytes = MAYBE(16LL << 30), .mem_available_bytes = MAYBE(12LL << 30),
	};
	tuner_news_init(&m->news);
}

/* One interval: the kernel ran the previous decision (and, with procs_known, the daemon read
 * the processes and rebased after a fast decision, as tuner_decide does). */
static void step(struct sim *m)
{
	if (m->procs_known)
		assert_int_equal(tuner_news_update(&m->news, m->procs, m->nprocs, m->denied, &m->in), 0);
	tuner_step(&m->c, &m->s, &m->in, &m->d);
	if (m->procs_known && m->d.mode == TUNER_FAST)
		tuner_news_rebase(&m->news);
	m->in.ksm.run = MAYBE(m->d.run);
	m->in.ksm.pages_to_scan = MAYBE(m->d.pages_to_scan);
	m->in.ksm.sleep_millisecs = MAYBE(m->d.sleep_millisecs);
}

static void sim_free(struct sim *m) { tuner_news_free(&m->news); }

/* A process ksmd has fully met: every resident mergeable page has its rmap item. */
static void add_proc(struct sim *m, pid_t pid, const char *name, int64_t pages, int64_t rmap)
{
	assert_true(m->nprocs < MAX_PROCS);
	struct tuner_proc *p = &m->procs[m->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->mergeable_pages = pages;
	p->rmap_items = rmap;
}

static void drop_proc(struct sim *m, pid_t pid)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid) {
			m->procs[i] = m->procs[--m->nprocs];
			return;
		}
	fail_msg("no process %d", (int)pid);
}

/* An already scanned host: one 8192-page process, merged, the tuner gone idle at 100/1000,
 * then a few idle intervals in which ksmd scans 200 pages and meets nothing new. */
static void settle_idle(struct sim *m)
{
	sim_init(m);
	m->procs_known = true;
	add_proc(m, 100, "qemu-old", 8192, 8192);
	m->in.ksm.pages_shared = MAYBE(1000), m->in.ksm.pages_sharing = MAYBE(3000), m->in.ksm.pages_unshared = MAYBE(4192);
	step(m);
	assert_int_equal(m->d.mode, TUNER_FAST);
	for (int i = 1; i <= 2; i++) {
		m->in.ksm.full_scans = MAYBE(i);
		step(m);
	}
	assert_int_equal(m->d.mode, TUNER_IDLE);
	m->in.interval_pages_scanned = MAYBE(200);
	for (int i = 0; i < 3; i++) {
		step(m);
		assert_int_equal(m->d.mode, TUNER_IDLE);
		assert_false(m->d.changed);
	}
}

static void test_start_fast(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_int_equal(m.d.run, 1);
	assert_int_equal(m.d.pages_to_scan, 1000);
	assert_int_equal(m.d.sleep_millisecs, 20);
	assert_true(m.d.changed);
	assert_non_null(strstr(m.d.reason, "start"));
}

static void test_flat_scans_go_idle_and_new_guest_wakes(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	/* First scan meets 60000 pages; the second merges 20000. */
	m.in.ksm.pages_unshared = MAYBE(40000), m.in.ksm.pages_volatile = MAYBE(20000), m.in.ksm.full_scans = MAYBE(1);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	m.in.ksm.pages_shared = MAYBE(5000), m.in.ksm.pages_sharing = MAYBE(20000), m.in.ksm.pages_unshared = MAYBE(15000), m.in.ksm.full_scans = MAYBE(2);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	/* Scans that find nothing: one is not enough, two are. */
	m.in.ksm.full_scans = MAYBE(3);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	m.in.ksm.full_scans = MAYBE(4);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_int_equal(m.d.pages_to_scan, 100);
	assert_int_equal(m.d.sleep_millisecs, 1000);
	assert_true(m.d.changed);
	assert_non_null(strstr(m.d.reason, "idle: 2 full scans"));
	/* Idle holds while nothing changes, volatile churn included. */
	m.in.ksm.pages_volatile = MAYBE(20100), m.in.ksm.pages_unshared = MAYBE(14900), m.in.ksm.full_scans = MAYBE(5);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_false(m.d.changed);
	/* A new guest: ksmd meets pages it has never seen. */
	m.in.ksm.pages_volatile = MAYBE(30000);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_int_equal(m.d.sleep_millisecs, 20);
	assert_non_null(strstr(m.d.reason, "new pages"));
}

static void test_merging_keeps_fast(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	m.in.ksm.pages_unshared = MAYBE(1000);
	for (int i = 1; i <= 6; i++) {
		/* Every scan gains: never idle, however many scans. */
		m.in.ksm.full_scans = MAYBE(i);
		m.in.ksm.pages_sharing.v += 5000;
		m.in.ksm.pages_shared.v += 1000;
		step(&m);
		assert_int_equal(m.d.mode, TUNER_FAST);
	}
}

static void test_cpu_budget(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m); /* 1000 pages */
	m.in.ksmd_cpu_percent = 40; /* twice the default budget of 20% */
	step(&m); /* first interval with this setting: it only settles */
	assert_int_equal(m.d.pages_to_scan, 1000);
	step(&m);
	assert_int_equal(m.d.pages_to_scan, 500);
	assert_non_null(strstr(m.d.reason, "pages_to_scan 1000 -> 500"));
	/* Far below budget, ksmd's CPU following the rate (10% at 20000 pages): at most doubles a
	 * step, and never above max_pages_to_scan. */
	for (int i = 0; i < 10; i++) {
		m.in.ksmd_cpu_percent = (double)m.d.pages_to_scan / 2000.0;
		step(&m);
	}
	assert_int_equal(m.d.pages_to_scan, m.c.max_pages_to_scan);
	/* Within 10% of the budget: no churn. */
	m.in.ksmd_cpu_percent = 19;
	m.c.max_pages_to_scan = 1000000;
	int64_t before = m.d.pages_to_scan;
	step(&m);
	assert_int_equal(m.d.pages_to_scan, before);
	/* Someone else changed the kernel's setting: the measured CPU is not ours to fit. */
	m.in.ksm.pages_to_scan = MAYBE(77);
	m.in.ksmd_cpu_percent = 90;
	step(&m);
	assert_int_equal(m.d.pages_to_scan, before);
	assert_non_null(strstr(m.d.reason, "not fitted"));
	/* Unknown CPU: rate kept. */
	m.in.ksmd_cpu_percent = NAN;
	step(&m);
	assert_int_equal(m.d.pages_to_scan, before);
}

static void test_fast_rate_remembered_after_idle(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	m.in.ksmd_cpu_percent = 16; /* under load, a little under the 20% budget */
	step(&m);
	step(&m);
	int64_t fitted = m.d.pages_to_scan;
	assert_int_equal(fitted, 1250);
	m.in.ksm.full_scans = MAYBE(1);
	step(&m);
	m.in.ksm.full_scans = MAYBE(2);
	step(&m);
	m.in.ksm.full_scans = MAYBE(3);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	m.in.ksm.pages_sharing = MAYBE(10000); /* merging happened while idle */
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_true(m.d.pages_to_scan >= fitted);
}

static void test_rate_that_buys_no_cpu_is_not_kept(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	/* ksmd's CPU stays at 2% whatever the rate: both cores busy (ksmd runs at nice 5), or little
	 * memory. One doubling is tried, taken back, and becomes a ceiling. */
	m.in.ksmd_cpu_percent = 2;
	step(&m); /* the first interval at a setting only settles */
	step(&m);
	assert_int_equal(m.d.pages_to_scan, 2000);
	step(&m);
	assert_int_equal(m.d.pages_to_scan, 1000);
	assert_non_null(strstr(m.d.reason, "busy cores or little to scan"));
	for (int i = 0; i < 8; i++) {
		step(&m);
		assert_int_equal(m.d.pages_to_scan, 1000);
	}
	assert_non_null(strstr(m.d.reason, "held at 1000"));
	/* The cores free up: ksmd's CPU at the same rate rises by a quarter or more, the ceiling goes. */
	m.in.ksmd_cpu_percent = 5;
	step(&m);
	assert_int_equal(m.d.pages_to_scan, 2000);
	/* Not measured under load, so not remembered: after idling, a wake starts from 1000. */
	for (int i = 1; i <= 3; i++) {
		m.in.ksm.full_scans = MAYBE(i);
		step(&m);
	}
	assert_int_equal(m.d.mode, TUNER_IDLE);
	m.in.ksm.pages_unshared = MAYBE(50000);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_int_equal(m.d.pages_to_scan, m.c.fast_pages_to_scan);
}

static void test_rate_fitted_without_load_not_remembered(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	/* Little memory: ksmd's CPU follows the rate but stays under 75% of the budget, so the rate
	 * climbs to the maximum (6% at 20000 pages). */
	for (int i = 0; i < 12; i++) {
		m.in.ksmd_cpu_percent = (double)m.d.pages_to_scan / 20000.0 * 6;
		step(&m);
	}
	assert_int_equal(m.d.pages_to_scan, m.c.max_pages_to_scan);
	for (int i = 1; i <= 3; i++) {
		m.in.ksm.full_scans = MAYBE(i);
		step(&m);
	}
	assert_int_equal(m.d.mode, TUNER_IDLE);
	/* The next guest may be large: the wake starts from the first fast setting, not 20000. */
	m.in.ksm.pages_unshared = MAYBE(50000);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_int_equal(m.d.pages_to_scan, m.c.fast_pages_to_scan);
}

static void test_memory_pressure(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	m.in.mem_available_bytes = MAYBE(1LL << 30); /* 1 of 16 GiB: under 10% */
	step(&m);
	assert_true(m.d.pressure);
	m.in.ksmd_cpu_percent = 30; /* within the doubled budget (40%) */
	step(&m);
	step(&m);
	assert_true(m.d.pages_to_scan > 1000);
	assert_non_null(strstr(m.d.reason, "memory pressure"));
	/* Twice as patient before idling. */
	for (int i = 1; i <= 3; i++) {
		m.in.ksm.full_scans = MAYBE(i);
		step(&m);
		assert_int_equal(m.d.mode, TUNER_FAST);
	}
	m.in.ksm.full_scans = MAYBE(4);
	step(&m);
	m.in.ksm.full_scans = MAYBE(5);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
}

static void test_idle_wakes_for_new_guest(void **state)
{
	(void)state;
	struct sim m;
	settle_idle(&m);
	/* A guest starts: its RAM is marked mergeable at once and filled as it boots. One interval
	 * holds less than wake_pages: not yet worth it. */
	add_proc(&m, 200, "qemu-web1", 1000, 0);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_non_null(strstr(m.d.reason, "1000 unscanned pages new"));
	m.procs[1].mergeable_pages = 6000;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_true(m.d.changed);
	assert_int_equal(m.d.sleep_millisecs, 20);
	assert_non_null(strstr(m.d.reason, "new mergeable process 200 (qemu-web1) holds 6000 pages"));
	sim_free(&m);
}

static void test_idle_wakes_for_migrated_guest(void **state)
{
	(void)state;
	struct sim m;
	settle_idle(&m);
	/* Migration's target (or a preallocated start): all of its memory is there when first seen. */
	add_proc(&m, 300, "qemu-db", 65536, 0);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_non_null(strstr(m.d.reason, "process 300 (qemu-db) appeared with 65536 resident mergeable pages"));
	assert_non_null(strstr(m.d.reason, "migrated in"));
	sim_free(&m);
}

static void test_idle_wakes_for_grown_guest(void **state)
{
	(void)state;
	struct sim m;
	settle_idle(&m);
	/* The known guest touches more RAM (a balloon deflates, a workload grows). */
	m.procs[0].mergeable_pages += 3000;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	m.procs[0].mergeable_pages += 2000;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_non_null(strstr(m.d.reason, "mergeable process 100 (qemu-old) grew by 5000 pages"));
	/* Scanning fast meets them; nothing merges; two flat scans and idle again, with a new base:
	 * the same memory does not wake it twice. */
	m.procs[0].rmap_items += 5000;
	m.in.ksm.pages_unshared.v += 5000;
	step(&m);
	m.in.ksm.full_scans.v += 1;
	step(&m);
	m.in.ksm.full_scans.v += 1;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	sim_free(&m);
}

static void test_guest_exit_stays_idle(void **state)
{
	(void)state;
	struct sim m;
	settle_idle(&m);
	add_proc(&m, 400, "qemu-tmp", 20000, 0);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	/* It gets merged and the tuner goes idle again. */
	m.procs[1].rmap_items = 20000;
	m.in.ksm.pages_sharing.v += 9000, m.in.ksm.pages_shared.v += 1000, m.in.ksm.pages_unshared.v += 10000;
	step(&m);
	/* The scan that merged gained; two more find nothing. */
	for (int i = 0; i < 3; i++) {
		m.in.ksm.full_scans.v += 1;
		step(&m);
	}
	assert_int_equal(m.d.mode, TUNER_IDLE);
	/* It exits: savings and rmap items fall. Nothing new to scan. */
	drop_proc(&m, 400);
	m.in.ksm.pages_sharing.v -= 9000, m.in.ksm.pages_shared.v -= 1000, m.in.ksm.pages_unshared.v -= 10000;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_false(m.d.changed);
	assert_non_null(strstr(m.d.reason, "1 mergeable process exited (savings -9000 pages)"));
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	sim_free(&m);
}

static void test_no_mergeable_memory_stays_idle(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	m.procs_known = true;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_int_equal(m.d.run, 1);
	assert_int_equal(m.d.pages_to_scan, 100);
	assert_int_equal(m.d.sleep_millisecs, 1000);
	assert_non_null(strstr(m.d.reason, "no mergeable memory"));
	for (int i = 0; i < 3; i++) {
		step(&m);
		assert_int_equal(m.d.mode, TUNER_IDLE);
		assert_false(m.d.changed);
		assert_non_null(strstr(m.d.reason, "no mergeable memory"));
	}
	/* The first guest. */
	add_proc(&m, 500, "qemu-first", 30000, 0);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	/* ... and once it is gone (ksmd dropped its rmap items), idle again, saying why. */
	drop_proc(&m, 500);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_non_null(strstr(m.d.reason, "no mergeable memory"));
	sim_free(&m);
}

/* ksmd's rmap items move with nothing new: measured here, a 32 MiB fake guest nothing wrote went
 * from 7436 to 7505 items in one idle second and back to 7436 two seconds later (pages met again:
 * zero pages that became resident again, pages migrated under its cursor). Where /proc reads
 * every mergeable process, new memory shows there; such a move is no reason to scan fast. */
static void test_remet_pages_do_not_wake(void **state)
{
	(void)state;
	struct sim m;
	settle_idle(&m); /* threshold 100 */
	m.procs[0].mergeable_pages += 150, m.procs[0].rmap_items += 150;
	m.in.ksm.pages_unshared.v += 150;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_non_null(strstr(m.d.reason, "idle: ksmd met 150 pages in 2.0s, none new to /proc"));
	m.procs[0].mergeable_pages -= 150, m.procs[0].rmap_items -= 150;
	m.in.ksm.pages_unshared.v -= 150;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_false(m.d.changed);
	/* Some processes could not be read: /proc cannot tell, what ksmd met wakes it. */
	m.denied = true;
	m.in.ksm.pages_unshared.v += 150;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_non_null(strstr(m.d.reason, "fast: ksmd met 150 new pages in 2.0s (threshold 100)"));
	sim_free(&m);
}

static void test_rate_relative_wake_without_proc(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	step(&m);
	m.in.ksm.pages_unshared = MAYBE(8000), m.in.ksm.full_scans = MAYBE(1);
	step(&m);
	m.in.ksm.full_scans = MAYBE(2);
	step(&m);
	m.in.ksm.full_scans = MAYBE(3);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	/* At 100 pages / 1000 ms ksmd scans 200 pages in 2 s: 256 new pages could never be met. */
	m.in.interval_pages_scanned = MAYBE(200);
	m.in.ksm.pages_unshared.v += 40; /* a few stale pages re-met: noise */
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	m.in.ksm.pages_unshared.v += 150; /* 150 of 200 scanned pages were new: ksmd reached new memory */
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_non_null(strstr(m.d.reason, "ksmd met 150 new pages"));
	/* The nominal rate when pages_scanned is unknown: 100 pages x 2 s / 1 s = 200, threshold 100. */
	struct sim n;
	sim_init(&n);
	n.in.ksm.run = MAYBE(1), n.in.ksm.pages_to_scan = MAYBE(100), n.in.ksm.sleep_millisecs = MAYBE(1000);
	n.s.started = true, n.s.mode = TUNER_IDLE, n.s.pages_to_scan = 100, n.s.sleep_millisecs = 1000;
	n.s.fast_pages_to_scan = 1000;
	n.s.last_full_scans = n.s.last_rmap_items = n.s.last_saved_pages = MAYBE(0); /* what it read last */
	n.in.ksm.pages_unshared = MAYBE(120);
	tuner_step(&n.c, &n.s, &n.in, &n.d);
	assert_int_equal(n.d.mode, TUNER_FAST);
	assert_non_null(strstr(n.d.reason, "threshold 100"));
}

static void test_pressure_wakes_once(void **state)
{
	(void)state;
	struct sim m;
	settle_idle(&m);
	m.in.mem_available_bytes = MAYBE(1LL << 30); /* 6% of 16 GiB */
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_true(m.d.pressure);
	assert_non_null(strstr(m.d.reason, "memory pressure"));
	/* Twice the patience: four flat scans, then idle; still under pressure, it stays idle. */
	for (int i = 0; i < 4; i++) {
		m.in.ksm.full_scans.v += 1;
		step(&m);
	}
	assert_int_equal(m.d.mode, TUNER_IDLE);
	for (int i = 0; i < 3; i++) {
		step(&m);
		assert_int_equal(m.d.mode, TUNER_IDLE);
	}
	/* Just over the threshold is not a recovery; a quarter above is, and re-arms it. */
	m.in.mem_available_bytes = MAYBE((int64_t)(0.11 * (double)(16LL << 30)));
	step(&m);
	m.in.mem_available_bytes = MAYBE(1LL << 30);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	m.in.mem_available_bytes = MAYBE(4LL << 30);
	step(&m);
	m.in.mem_available_bytes = MAYBE(1LL << 30);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	sim_free(&m);
}

static void test_news_while_fast_postpones_idle(void **state)
{
	(void)state;
	struct sim m;
	sim_init(&m);
	m.procs_known = true;
	add_proc(&m, 100, "qemu-old", 8192, 8192);
	m.in.ksm.pages_unshared = MAYBE(8192);
	step(&m);
	m.in.ksm.full_scans = MAYBE(1);
	step(&m);
	/* A guest appears just before the second flat scan ends, before ksmd reached it: going idle
	 * now would take its memory into the base and never wake for it. */
	add_proc(&m, 600, "qemu-late", 30000, 0);
	m.in.ksm.full_scans = MAYBE(2);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_non_null(strstr(m.d.reason, "0 flat scans"));
	sim_free(&m);
}

/* smaps: only anonymous memory of mappings marked mergeable counts. */
static void test_smaps_mergeable(void **state)
{
	(void)state;
	const char *text =
		"7f0000000000-7f0040000000 rw-p 00000000 00:00 0 \n"
		"Rss:              262144 kB\n"
		"Anonymous:        262144 kB\n"
		"VmFlags: rd wr mr mw me ac hg mg \n"
		"55d0a0000000-55d0a4000000 rw-p 00000000 00:00 0                          [heap]\n"
		"Rss:               65536 kB\n"
		"Anonymous:         65536 kB\n"
		"VmFlags: rd wr mr mw me ac \n"
		"7f1000000000-7f1000001000 r-xp 00000000 08:01 1234                       /usr/bin/qemu\n"
		"Rss:                   4 kB\n"
		"Anonymous:             0 kB\n"
		"VmFlags: rd ex mr mw me mg \n";
	struct smaps_mergeable sm;
	assert_int_equal(parse_smaps_mergeable(text, strlen(text), &sm), 0);
	assert_int_equal(sm.mergeable_anon_bytes, 262144LL * 1024);
	assert_int_equal(sm.anon_bytes, (262144LL + 65536) * 1024);
	assert_int_equal(parse_smaps_mergeable("", 0, &sm), -EINVAL);
	const char *cut = "7f0000000000-7f0040000000 rw-p 00000000 00:00 0 \nAnonymous:  12";
	assert_int_equal(parse_smaps_mergeable(cut, strlen(cut), &sm), -EINVAL);
}

/* smaps sizes too big for bytes in an int64_t: an error, never a wrapped (negative) figure. */
static void test_smaps_mergeable_huge(void **state)
{
	(void)state;
	struct smaps_mergeable sm = {.anon_bytes = -1, .mergeable_anon_bytes = -1};
	/* INT64_MAX / 1024 kB is the most that fits; one more kB does not. */
	const char *most = "Anonymous: 9007199254740991 kB\nVmFlags: mg\n";
	assert_int_equal(parse_smaps_mergeable(most, strlen(most), &sm), 0);
	assert_int_equal(sm.anon_bytes, 9007199254740991LL * 1024);
	const char *const bad[] = {
		"Anonymous: 9007199254740992 kB\nVmFlags: mg\n",  /* kB x 1024 overflows */
		"Anonymous: 9223372036854775807 kB\nVmFlags: mg\n", /* INT64_MAX kB */
		"Anonymous: 99999999999999999999 kB\nVmFlags: mg\n",  /* beyond int64_t */
		/* two mappings whose sum overflows */
		"Anonymous: 9007199254740991 kB\nVmFlags: mg\nAnonymous: 1 kB\nVmFlags: mg\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sm = (struct smaps_mergeable){.anon_bytes = -1, .mergeable_anon_bytes = -1};
		assert_int_equal(parse_smaps_mergeable(bad[i], strlen(bad[i]), &sm), -ERANGE);
		assert_int_equal(sm.anon_bytes, -1); /* untouched */
	}
	/* 40 digits, a 1 after 39 zeros: read whole, not cut to the first 31 and read as 0 */
	const char *zeros = "Anonymous: 0000000000000000000000000000000000000001 kB\nVmFlags:\n";
	assert_int_equal(parse_smaps_mergeable(zeros, strlen(zeros), &sm), 0);
	assert_int_equal(sm.anon_bytes, 1024);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[4300];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void set_anon(const char *proc, int64_t host_anon_kb, int64_t rss_anon_kb)
{
	char text[256];
	snprintf(text, sizeof(text), "MemTotal: 16384000 kB\nMemAvailable: 12000000 kB\nAnonPages: %lld kB\n",
		 (long long)host_anon_kb);
	write_file(proc, "meminfo", text);
	snprintf(text, sizeof(text), "Name:\tqemu-system-x86\nRssAnon:\t%lld kB\n", (long long)rss_anon_kb);
	write_file(proc, "100/status", text);
}

static void set_guest_ram_kb(const char *proc, int64_t kb)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "7f0000000000-7f0080000000 rw-p 00000000 00:00 0 \nAnonymous: %lld kB\nVmFlags: rd wr mr mw me ac hg mg \n"
		 "55d0a0000000-55d0a1000000 rw-p 00000000 00:00 0 [heap]\nAnonymous: 16384 kB\nVmFlags: rd wr mr mw me ac \n",
		 (long long)kb);
	write_file(proc, "100/smaps", text);
}

static void watch_sample(struct tuner_watch *w, const struct tuner_config *c, double t, int64_t host_anon_kb,
			 struct tuner_input *in)
{
	struct ksm_sample now = {.t = t, .mem_anon = MAYBE(host_anon_kb * 1024)};
	*in = (struct tuner_input){0}; /* all unknown */
	assert_int_equal(tuner_watch_sample(w, c, &now, in), 0);
}

/* The daemon's /proc watch on a fixture tree (copied, then changed as processes would change):
 * a QEMU-like process with 32 MiB of mergeable guest RAM and a 16 MiB heap, an sshd with nothing
 * mergeable, a python3 with PR_SET_MEMORY_MERGE. */
static void test_watch_on_fixture(void **state)
{
	(void)state;
	char *dir = tmp_tree_new("watch"), cmd[8300], proc[4200];
	snprintf(cmd, sizeof(cmd), "cp -r '%s/tuner-watch/proc' '%s/'", fixtures_dir(), dir);
	assert_int_equal(system(cmd), 0);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	struct io_root root = {.proc = proc, .sys = dir};
	struct tuner_config c;
	tuner_config_default(&c);
	struct tuner_watch *w;
	assert_int_equal(tuner_watch_new(&root, 4096, &w), 0);
	struct tuner_input in;
	struct tuner_watch_cost cost;

	watch_sample(w, &c, 0, 1000000, &in);
	assert_int_equal(in.mergeable_processes.v, 2);
	assert_int_equal(in.unscanned_new_pages.v + in.unscanned_arrived_pages.v + in.unscanned_grown_pages.v, 0);
	tuner_watch_cost(w, &cost);
	assert_int_equal(cost.smaps_reads, 1); /* python3 merges all of its memory: no smaps needed */
	struct tuner_decision fast = {.mode = TUNER_FAST};
	tuner_watch_decided(w, &fast);

	/* The heap grows by 16 MiB (a leak): not mergeable, no news, one smaps read to know it. */
	set_anon(proc, 1000000 + 16384, 49152 + 16384);
	watch_sample(w, &c, 2, 1000000 + 16384, &in);
	assert_int_equal(in.unscanned_grown_pages.v, 0);
	tuner_watch_cost(w, &cost);
	assert_int_equal(cost.smaps_reads, 2);

	/* Guest RAM grows by 32 MiB that ksmd has not met: 8192 pages of news. */
	set_guest_ram_kb(proc, 65536);
	set_anon(proc, 1000000 + 49152, 49152 + 49152);
	watch_sample(w, &c, 4, 1000000 + 49152, &in);
	assert_int_equal(in.unscanned_grown_pages.v, 8192);
	assert_int_equal(in.news_kind, TUNER_NEWS_GROWN);
	assert_int_equal(in.news_pid, 100);
	assert_string_equal(in.news_name, "qemu-system-x86");

	/* AnonPages still: no walk at all until TUNER_WALK_SECONDS (one more walk right after a rise). */
	watch_sample(w, &c, 6, 1000000 + 49152, &in);
	tuner_watch_cost(w, &cost);
	uint64_t walks = cost.walks;
	watch_sample(w, &c, 8, 1000000 + 49152, &in);
	tuner_watch_cost(w, &cost);
	assert_int_equal(cost.walks, walks);
	assert_int_equal(in.unscanned_grown_pages.v, 8192);

	/* A small move (4 MiB, under wake_pages / 2) seen by the periodic walk: counted as growth
	 * (the upper bound), without another smaps read. */
	set_anon(proc, 1000000 + 49152, 49152 + 49152 + 4096);
	uint64_t smaps = cost.smaps_reads;
	watch_sample(w, &c, 8 + TUNER_WALK_SECONDS, 1000000 + 49152, &in);
	tuner_watch_cost(w, &cost);
	assert_int_equal(cost.walks, walks + 1);
	assert_int_equal(cost.smaps_reads, smaps);
	assert_int_equal(in.unscanned_grown_pages.v, 8192 + 1024);

	tuner_watch_free(w);
	tmp_tree_free(dir);
}

/* Idle after three flat full scans over 8000 pages ksmd has met, 200 pages scanned an interval. */
static void idle_sim(struct sim *m)
{
	sim_init(m);
	step(m);
	m->in.ksm.pages_unshared = MAYBE(8000), m->in.ksm.full_scans = MAYBE(1);
	step(m);
	m->in.ksm.full_scans = MAYBE(2);
	step(m);
	m->in.ksm.full_scans = MAYBE(3);
	step(m);
	assert_int_equal(m->d.mode, TUNER_IDLE);
	m->in.interval_pages_scanned = MAYBE(200); /* threshold 100 */
}

/* What wakes the idle tuner, in order: memory pressure before what ksmd met, what it met before
 * what it merged; merging alone (pages moving from unshared to sharing, none new) wakes it too. */
static void test_idle_wake_order(void **state)
{
	(void)state;
	struct sim m;
	idle_sim(&m);
	m.in.ksm.pages_unshared.v -= 150, m.in.ksm.pages_sharing.v += 150;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_non_null(strstr(m.d.reason, "fast: 150 pages merged in 2.0s at the idle rate (threshold 100)"));

	idle_sim(&m);
	m.in.ksm.pages_unshared.v += 150, m.in.ksm.pages_sharing.v += 150;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_non_null(strstr(m.d.reason, "fast: ksmd met 300 new pages"));

	idle_sim(&m);
	m.in.ksm.pages_unshared.v += 150;
	m.in.mem_available_bytes = MAYBE(m.in.mem_total_bytes.v / 20);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	assert_non_null(strstr(m.d.reason, "fast: memory pressure (MemAvailable 5.0% of MemTotal, under 10%)"));

	idle_sim(&m);
	m.in.ksm.pages_unshared.v += 99;
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_non_null(strstr(m.d.reason, "idle: nothing new to merge (99 new pages, +0 merged"));
}

/* The news, the one sum the law and the daemon's log both read: unknown when any part is, and an
 * unknown news neither wakes the idle tuner nor shows as a negative count in its reason. */
static void test_news_pages(void **state)
{
	(void)state;
	struct tuner_input in = {.unscanned_arrived_pages = MAYBE(10), .unscanned_new_pages = MAYBE(200),
				 .unscanned_grown_pages = MAYBE(3000)};
	assert_true(tuner_news_pages(&in).known);
	assert_int_equal(tuner_news_pages(&in).v, 3210);
	in.unscanned_grown_pages = UNKNOWN;
	assert_false(tuner_news_pages(&in).known);
	in = (struct tuner_input){.unscanned_new_pages = MAYBE(1), .unscanned_grown_pages = MAYBE(2)};
	assert_false(tuner_news_pages(&in).known);

	struct sim m;
	sim_init(&m);
	m.in.mergeable_processes = MAYBE(1);
	m.in.ksm.pages_unshared = MAYBE(1000);
	m.c.idle_pages_to_scan = 1; /* ksmd meets nothing new in an interval */
	step(&m);
	assert_int_equal(m.d.mode, TUNER_FAST);
	for (int i = 0; i < 4 && m.d.mode == TUNER_FAST; i++) {
		m.in.ksm.full_scans.v++;
		step(&m);
	}
	assert_int_equal(m.d.mode, TUNER_IDLE);
	step(&m);
	assert_int_equal(m.d.mode, TUNER_IDLE);
	assert_non_null(strstr(m.d.reason, ", 0 unscanned pages new since idling"));
}

/* A KSM file unread for one interval (pages_shared unknown, the others read) is unknown, not 0:
 * an idle tuner stays idle when it reads again. Taken for 0, ksmd's rmap items fell by
 * pages_shared and rose by as much an interval later, which woke the tuner for "new pages" that
 * were the same pages. */
static void test_unknown_counter_is_not_zero(void **state)
{
	(void)state;
	struct tuner_config c;
	tuner_config_default(&c);
	struct tuner_state s;
	tuner_init(&s);
	struct ksm_rates rates = {.ksmd_cpu_percent = NAN};
	struct ksm_sample prev, now = {.t = 0};
	now.k = (struct ksm_sysfs){.present = true, .run = MAYBE(1), .pages_to_scan = MAYBE(100),
				   .sleep_millisecs = MAYBE(1000), .pages_shared = MAYBE(1000),
				   .pages_sharing = MAYBE(3000), .pages_unshared = MAYBE(4000),
				   .pages_volatile = MAYBE(0), .ksm_zero_pages = MAYBE(0), .full_scans = MAYBE(0),
				   .pages_scanned = MAYBE(0)};
	struct tuner_decision d = {.mode = TUNER_FAST};
	/* Full scans that merge nothing more: fast at first, then idle. */
	for (int i = 0; i < 10 && !(i > 0 && d.mode == TUNER_IDLE); i++) {
		prev = now;
		now.t += 2;
		now.k.full_scans.v += 1;
		now.k.pages_scanned.v += 200;
		assert_int_equal(tuner_decide(&c, &s, NULL, &prev, &now, &rates, &d, NULL), 0);
	}
	assert_int_equal(d.mode, TUNER_IDLE);

	prev = now;
	now.t += 2;
	now.k.pages_scanned.v += 200;
	now.k.pages_shared = UNKNOWN;
	assert_int_equal(tuner_decide(&c, &s, NULL, &prev, &now, &rates, &d, NULL), 0);
	assert_int_equal(d.mode, TUNER_IDLE);

	prev = now;
	now.t += 2;
	now.k.pages_scanned.v += 200;
	now.k.pages_shared = MAYBE(1000);
	assert_int_equal(tuner_decide(&c, &s, NULL, &prev, &now, &rates, &d, NULL), 0);
	assert_int_equal(d.mode, TUNER_IDLE);
	assert_non_null(strstr(d.reason, "idle: nothing new to merge (0 new pages"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_fast),
		cmocka_unit_test(test_flat_scans_go_idle_and_new_guest_wakes),
		cmocka_unit_test(test_merging_keeps_fast),
		cmocka_unit_test(test_cpu_budget),
		cmocka_unit_test(test_fast_rate_remembered_after_idle),
		cmocka_unit_test(test_rate_fitted_without_load_not_remembered),
		cmocka_unit_test(test_rate_that_buys_no_cpu_is_not_kept),
		cmocka_unit_test(test_memory_pressure),
		cmocka_unit_test(test_idle_wakes_for_new_guest),
		cmocka_unit_test(test_idle_wakes_for_migrated_guest),
		cmocka_unit_test(test_idle_wakes_for_grown_guest),
		cmocka_unit_test(test_guest_exit_stays_idle),
		cmocka_unit_test(test_no_mergeable_memory_stays_idle),
		cmocka_unit_test(test_rate_relative_wake_without_proc),
		cmocka_unit_test(test_pressure_wakes_once),
		cmocka_unit_test(test_news_while_fast_postpones_idle),
		cmocka_unit_test(test_smaps_mergeable),
		cmocka_unit_test(test_smaps_mergeable_huge),
		cmocka_unit_test(test_watch_on_fixture),
		cmocka_unit_test(test_news_pages),
		cmocka_unit_test(test_idle_wake_order),
		cmocka_unit_test(test_remet_pages_do_not_wake),
		cmocka_unit_test(test_unknown_counter_is_not_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
