/* The accounting formulas (docs/accounting.md), one test each, with hand-computed figures. */
#include <math.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/model/account.h"
#include "core/model/pss_sample.h"

#define P 4096ll
#define MIB (1ll << 20)

static struct ksm_sysfs ksm(int64_t shared, int64_t sharing)
{
	struct ksm_sysfs k = {.present = true};
	k.pages_shared = MAYBE(shared);
	k.pages_sharing = MAYBE(sharing);
	k.max_page_sharing = MAYBE(256);
	k.ksm_zero_pages = MAYBE(0);
	return k;
}

static struct mem_counters counters(int64_t anon, int64_t file, int64_t shmem, int64_t merging)
{
	return (struct mem_counters){
		.rss = MAYBE(anon + file + shmem), .rss_anon = MAYBE(anon), .rss_file = MAYBE(file),
		.rss_shmem = MAYBE(shmem), .swap = MAYBE(0), .ksm_rmap_items = MAYBE(0),
		.ksm_merging_pages = MAYBE(merging), .ksm_zero_pages = MAYBE(0), .ksm_profit = MAYBE(0),
	};
}

/* Two identical guests: every KSM page has exactly two mappings, one in each. The mean weight is
 * 1/2 and the estimate equals the exact PSS. */
static void pss_symmetric_guests_is_exact(void **state)
{
	(void)state;
	struct ksm_sysfs k = ksm(1000, 1000); /* 1000 KSM pages, 2000 mappings */
	struct mem_counters m = counters(100 * MIB, 0, 0, 1000);
	maybe_i64 pss = pss_estimate(&m, &k, P, NULL);
	assert_true(pss.known);
	assert_int_equal(pss.v, 100 * MIB - 1000 * P / 2);
	assert_true(fabs(ksm_mean_weight(&k) - 0.5) < 1e-12);
}

static void pss_no_ksm_is_rss(void **state)
{
	(void)state;
	struct ksm_sysfs k = ksm(0, 0);
	struct mem_counters m = counters(10 * MIB, 2 * MIB, 1 * MIB, 0);
	assert_int_equal(pss_estimate(&m, &k, P, NULL).v, 13 * MIB);
	/* KSM absent from the kernel: nothing can be merged, PSS estimate is still RSS */
	struct ksm_sysfs none = {.present = false};
	m.ksm_merging_pages = UNKNOWN;
	assert_int_equal(pss_estimate(&m, &none, P, NULL).v, 13 * MIB);
	/* nothing merged host-wide: an unreadable per-process count does not matter */
	assert_int_equal(pss_estimate(&m, &k, P, NULL).v, 13 * MIB);
	/* KSM merging somewhere but this process's count unreadable: unknown, not RSS */
	k = ksm(5, 10);
	assert_false(pss_estimate(&m, &k, P, NULL).known);
}

static void pss_bound_covers_asymmetry(void **state)
{
	(void)state;
	/* Guest A maps 1000 pages of a 2-way merge; guest B maps 1000 pages of a 256-way merge
	 * (zero pages with use_zero_pages=0) plus its half of A's pages... keep it simple: the host
	 * has 1000 pages shared by 2 (A and B) and 4 pages shared by 256 (zero pages in C). */
	struct ksm_sysfs k = ksm(1000 + 4, 1000 + 4 * 255);
	struct mem_counters c = counters(2000 * P, 0, 0, 1024);
	double exact_c = 1024.0 / 256 * P; /* each of C's mappings weighs 1/256 */
	maybe_i64 est = pss_estimate(&c, &k, P, NULL);
	maybe_i64 bound = pss_estimate_bound(&c, &k, P);
	double exact = (2000 - 1024) * P + exact_c;
	assert_true(bound.known);
	assert_true(fabs((double)est.v - exact) <= (double)bound.v);
	assert_true(fabs((double)est.v - exact) > 0.1 * (double)bound.v); /* the bound is not slack */
}

static void calibration_makes_asymmetry_exact(void **state)
{
	(void)state;
	struct ksm_sysfs k = ksm(1000 + 4, 1000 + 4 * 255);
	struct mem_counters c = counters(2000 * P, 8 * P, 0, 1024);
	/* exact read: C's KSM mappings weigh 1/256, its 8 file pages are shared by 4 processes */
	struct smaps_rollup exact = {.pss = MAYBE((2000 - 1024) * P + 1024 * P / 256 + 8 * P / 4),
				     .pss_anon = MAYBE((2000 - 1024) * P + 1024 * P / 256),
				     .pss_file = MAYBE(8 * P / 4), .pss_shmem = MAYBE(0), .rss = MAYBE(2008 * P)};
	struct pss_calibration cal = pss_calibrate(&c, &exact, P);
	assert_true(cal.valid);
	assert_true(fabs(cal.ksm_weight - 1.0 / 256) < 1e-9);
	assert_true(fabs(cal.share_weight - 0.25) < 1e-9);
	assert_int_equal(pss_estimate(&c, &k, P, &cal).v, exact.pss.v);
	/* later, the guest merged 200 more pages of the same kind: the calibrated estimate follows */
	c.ksm_merging_pages = MAYBE(1224);
	int64_t later = (2000 - 1224) * P + 1224 * P / 256 + 8 * P / 4;
	assert_true(llabs(pss_estimate(&c, &k, P, &cal).v - later) <= 1);
}

static void ksm_saved_per_vm(void **state)
{
	(void)state;
	struct ksm_sysfs k = ksm(1000, 3000); /* mean weight 1/4 */
	struct mem_counters m = counters(100 * MIB, 0, 0, 2000);
	m.ksm_zero_pages = MAYBE(10);
	assert_int_equal(ksm_vm_saved(&m, &k, P, NULL).v, 2000 * P * 3 / 4 + 10 * P);
	/* what KSM saves is exactly RSS minus the estimated PSS, plus the zero pages */
	assert_int_equal(ksm_vm_saved(&m, &k, P, NULL).v, m.rss.v - pss_estimate(&m, &k, P, NULL).v + 10 * P);
}

static void overhead_private_ram(void **state)
{
	(void)state;
	struct vm_config cfg = {.guest_ram_bytes = MAYBE(1024 * MIB)};
	/* fully populated guest: 1 GiB guest + 50 MiB heap, 20 MiB libraries */
	struct mem_counters m = counters(1074 * MIB, 20 * MIB, 0, 0);
	assert_int_equal(overhead_estimate(&m, &cfg, P).v, 70 * MIB);
	/* 100 MiB of guest RAM swapped and 10 MiB merged into the zero page left RSS: still 70 */
	m.rss_anon = MAYBE(974 * MIB);
	m.swap = MAYBE(100 * MIB);
	m.ksm_zero_pages = MAYBE(10 * MIB / P);
	m.rss_anon.v -= 10 * MIB;
	assert_int_equal(overhead_estimate(&m, &cfg, P).v, 70 * MIB);
	/* a guest still booting (300 MiB touched): a lower bound, never negative */
	struct mem_counters booting = counters(350 * MIB, 20 * MIB, 0, 0);
	assert_int_equal(overhead_estimate(&booting, &cfg, P).v, 20 * MIB);
	/* unknown guest RAM: unknown overhead */
	cfg.guest_ram_bytes = UNKNOWN;
	assert_false(overhead_estimate(&m, &cfg, P).known);
}

static void overhead_shared_and_hugetlb_ram(void **state)
{
	(void)state;
	struct vm_config memfd = {.guest_ram_bytes = MAYBE(1024 * MIB), .ram_shared = true};
	struct mem_counters m = counters(60 * MIB, 20 * MIB, 1024 * MIB, 0);
	assert_int_equal(overhead_estimate(&m, &memfd, P).v, 80 * MIB);
	struct vm_config huge = {.guest_ram_bytes = MAYBE(1024 * MIB), .ram_hugetlb = true};
	struct mem_counters h = counters(60 * MIB, 20 * MIB, 0, 0); /* hugetlb pages are not in RSS */
	assert_int_equal(overhead_estimate(&h, &huge, P).v, 80 * MIB);
}

/* The process maps KSM pages but the host's mean weight of a mapping is unknown (KSM's sysfs
 * files unreadable, or missing while the process's ksm_stat counts merged pages): its PSS, the
 * bound and what KSM saves it are unknown, never RSS and 0. */
static void pss_unknown_weight_is_unknown(void **state)
{
	(void)state;
	struct mem_counters m = counters(100 * MIB, 0, 0, 1000);
	struct ksm_sysfs unreadable = ksm(0, 0);
	unreadable.pages_shared = unreadable.pages_sharing = UNKNOWN;
	struct ksm_sysfs missing = {.present = false, .max_page_sharing = UNKNOWN};
	const struct ksm_sysfs *hosts[] = {&unreadable, &missing};
	for (size_t i = 0; i < 2; i++) {
		assert_false(pss_estimate(&m, hosts[i], P, NULL).known);
		assert_false(pss_estimate_bound(&m, hosts[i], P).known);
		assert_false(ksm_vm_saved(&m, hosts[i], P, NULL).known);
		/* a calibration that learnt no KSM weight of its own does not make one up either */
		struct pss_calibration cal = {.valid = true, .ksm_weight = NAN, .share_weight = 1};
		assert_false(pss_estimate(&m, hosts[i], P, &cal).known);
		assert_false(ksm_vm_saved(&m, hosts[i], P, &cal).known);
		/* the VM's own weight is known: so are its PSS and what KSM saves it */
		cal.ksm_weight = 0.25;
		assert_int_equal(pss_estimate(&m, hosts[i], P, &cal).v, 100 * MIB - 1000 * P * 3 / 4);
		assert_int_equal(ksm_vm_saved(&m, hosts[i], P, &cal).v, 1000 * P * 3 / 4);
	}
	/* nothing of the process merged: the weight does not matter */
	m.ksm_merging_pages = MAYBE(0);
	assert_int_equal(pss_estimate(&m, &unreadable, P, NULL).v, 100 * MIB);
	assert_int_equal(ksm_vm_saved(&m, &unreadable, P, NULL).v, 0);
}

/* Guest RAM on huge pages whatever the command line says (QEMU -mem-path): the process's own
 * HugetlbPages takes it out of what RSS must hold, and makes the KSM reason hugetlbfs. */
static void hugetlb_from_the_process(void **state)
{
	(void)state;
	struct vm_config plain = {.guest_ram_bytes = MAYBE(64 * MIB)}; /* -m 64 -mem-path /dev/hugepages */
	struct mem_counters m = counters(30 * MIB, 8 * MIB, 0, 0);
	m.ksm_mergeable = MAYBE(1);
	m.hugetlb = MAYBE(64 * MIB);
	assert_int_equal(overhead_estimate(&m, &plain, P).v, 38 * MIB); /* all of RSS, as --exact finds */
	struct ksm_sysfs k = ksm(0, 0);
	k.run = MAYBE(1);
	assert_string_equal(ksm_unmergeable_reason(&plain, &m, &k), "hugetlbfs");
	assert_true(ram_on_hugetlb(&plain, &m));
	/* The kernel says yes (QEMU's other anon memory is marked), but the guest RAM cannot merge. */
	assert_int_equal(ksm_process_mergeable(&m).v, 1);
	maybe_i64 mergeable = ksm_vm_mergeable(&plain, &m, &k);
	assert_true(mergeable.known && mergeable.v == 0);
	/* Half of guest RAM on huge pages (two backends): the other half is in RSS. */
	struct vm_config two = {.guest_ram_bytes = MAYBE(128 * MIB), .ram_hugetlb = true};
	struct mem_counters half = counters(70 * MIB, 8 * MIB, 0, 0);
	half.hugetlb = MAYBE(64 * MIB);
	assert_int_equal(overhead_estimate(&half, &two, P).v, 8 * MIB + 6 * MIB);
	/* No huge pages and a known 0: as before, reason and mergeable the kernel's. */
	m.hugetlb = MAYBE(0);
	assert_null(ksm_unmergeable_reason(&plain, &m, &k));
	assert_int_equal(ksm_vm_mergeable(&plain, &m, &k).v, 1);
	/* KSM stopped is the host's reason: mergeable stays the kernel's word. */
	k.run = MAYBE(0);
	assert_string_equal(ksm_unmergeable_reason(&plain, &m, &k), "ksm-stopped");
	assert_int_equal(ksm_vm_mergeable(&plain, &m, &k).v, 1);
	/* An old kernel: no HugetlbPages, no ksm_stat: both unknown, never made up. */
	struct mem_counters old = counters(30 * MIB, 8 * MIB, 0, 0);
	assert_false(ksm_vm_mergeable(&plain, &old, &k).known);
	assert_false(ram_on_hugetlb(&plain, &old));
}

/* What a VM's memory costs: PSS plus its huge pages, shared ones divided among their mappers. */
static void memory_cost_with_huge_pages(void **state)
{
	(void)state;
	/* status only: the VM's huge pages whole */
	maybe_i64 h = hugetlb_cost(MAYBE(64 * MIB), UNKNOWN, UNKNOWN, 0);
	assert_int_equal(h.v, 64 * MIB);
	assert_int_equal(memory_cost(MAYBE(37 * MIB), h).v, 101 * MIB);
	/* 1 GiB private + 2 GiB shared by the VMM and its vhost-user helper (each sees 2 GiB) */
	h = hugetlb_cost(MAYBE(3072 * MIB), MAYBE(1024 * MIB), MAYBE(4096 * MIB), 2);
	assert_int_equal(h.v, 3072 * MIB);
	/* private only: no mapper of shared pages needed */
	assert_int_equal(hugetlb_cost(MAYBE(1), MAYBE(1024 * MIB), MAYBE(0), 0).v, 1024 * MIB);
	/* unknown huge pages (no HugetlbPages line) or unknown PSS: unknown cost, never PSS alone */
	assert_false(memory_cost(MAYBE(37 * MIB), hugetlb_cost(UNKNOWN, UNKNOWN, UNKNOWN, 0)).known);
	assert_false(memory_cost(UNKNOWN, MAYBE(0)).known);
	assert_int_equal(memory_cost(MAYBE(37 * MIB), MAYBE(0)).v, 37 * MIB);
	/* A VM's processes map the same guest RAM: its huge pages are the most of any one of them. */
	struct mem_counters a = counters(10, 20, 30, 1), b = counters(1, 2, 3, 4);
	a.hugetlb = MAYBE(64 * MIB);
	b.hugetlb = MAYBE(64 * MIB);
	mem_counters_add(&a, &b);
	assert_int_equal(a.hugetlb.v, 64 * MIB);
}

static void counters_add_unknown(void **state)
{
	(void)state;
	struct mem_counters a = counters(10, 20, 30, 1), b = counters(1, 2, 3, 4);
	b.swap = UNKNOWN;
	mem_counters_add(&a, &b);
	assert_int_equal(a.rss.v, 66);
	assert_int_equal(a.ksm_merging_pages.v, 5);
	assert_false(a.swap.known);
}

/* Yield: merged and zero pages per tracked page; share: tracked pages over the host's. */
static void ksm_yield_and_ksmd_share(void **state)
{
	(void)state;
	struct ksm_sysfs k = ksm(1000, 3000);
	k.pages_unshared = MAYBE(4000);
	k.pages_volatile = MAYBE(2000); /* 10000 rmap items host-wide */
	struct mem_counters m = counters(0, 0, 0, 1500);
	m.ksm_rmap_items = MAYBE(2500);
	m.ksm_zero_pages = MAYBE(500);
	assert_float_equal(ksm_vm_yield(&m), 2000.0 / 2500.0, 1e-12);
	assert_float_equal(ksmd_vm_cpu_share(&m, &k), 0.25, 1e-12);
	m.ksm_merging_pages = MAYBE(0);
	m.ksm_zero_pages = MAYBE(0);
	assert_float_equal(ksm_vm_yield(&m), 0.0, 0.0); /* tracked, nothing merged: 0, not unknown */
	m.ksm_rmap_items = MAYBE(0);
	assert_true(isnan(ksm_vm_yield(&m))); /* nothing tracked: no yield to speak of */
	assert_float_equal(ksmd_vm_cpu_share(&m, &k), 0.0, 0.0);
	m.ksm_rmap_items = UNKNOWN;
	assert_true(isnan(ksm_vm_yield(&m)) && isnan(ksmd_vm_cpu_share(&m, &k)));
	m.ksm_rmap_items = MAYBE(2500);
	k.pages_volatile = UNKNOWN; /* the host's count unknown: the share too */
	assert_true(isnan(ksmd_vm_cpu_share(&m, &k)));
}

/* The sampled PSS's error bound, per kind: its bytes times three standard errors of the mean
 * weight plus the rule of three, 1.5 / pages sampled for KSM pages, 3 / clusters times
 * max(w, 1 - w) for file pages; a kind sampled in under 32 clusters keeps its worst case (KSM:
 * the estimate's own bound; file and shmem: all of it); a standard error not known counts 0.5. */
static void pss_sample_bound_per_kind(void **state)
{
	(void)state;
	struct ksm_sysfs k = ksm(1000, 3000);
	struct mem_counters m = counters(100 * MIB, 600000, 400000, 1000);
	struct pss_sample s = {.ksm_pages = 600, .share_pages = 400, .ksm_clusters = 32, .share_clusters = 40,
			       .ksm_weight = 0.4, .share_weight = 0.7, .ksm_se = 0.01, .share_se = 0.02};
	/* KSM pages: 3 se and the rule of three over pages; file pages: over clusters, max(w, 1 - w) each */
	double ksm_err = 1000 * P * (3 * 0.01 + 1.5 / 600), share_err = 1000000 * (3 * 0.02 + 3.0 / 40 * 0.7);
	maybe_i64 b = pss_sample_bound(&m, &s, &k, P);
	assert_true(b.known);
	assert_int_equal(b.v, llround(ksm_err + share_err));

	s.share_se = NAN;
	share_err = 1000000 * (3 * 0.5 + 3.0 / 40 * 0.7);
	assert_int_equal(pss_sample_bound(&m, &s, &k, P).v, llround(ksm_err + share_err));

	s.share_se = 0, s.share_weight = 1; /* every file page seen weighed 1: the libraries may be unseen */
	share_err = 1000000 * (3.0 / 40);
	assert_int_equal(pss_sample_bound(&m, &s, &k, P).v, llround(ksm_err + share_err));

	s.ksm_clusters = 31, s.share_clusters = 31;
	struct mem_counters only_ksm = m;
	only_ksm.rss_file = only_ksm.rss_shmem = MAYBE(0);
	maybe_i64 worst = pss_estimate_bound(&only_ksm, &k, P);
	assert_true(worst.known);
	assert_int_equal(pss_sample_bound(&m, &s, &k, P).v, worst.v + 1000000);

	m.rss_shmem = UNKNOWN;
	assert_false(pss_sample_bound(&m, &s, &k, P).known);
}

/* pss_refine's choice: a VM seen first is read exactly, its cost timed; then sampled, for at most
 * half the exact read's CPU time, unless no sample can cost that little here; exactly once a
 * sample cost that much; timed exactly again once the exact cost is ten minutes old or its KSM
 * mappings moved by more than an eighth (the sample's cost then forgotten, to be learned again). */
static void pss_choice_by_cost(void **state)
{
	(void)state;
	double cap = -1;
	struct pss_cost c = {0};
	assert_int_equal(pss_choose(&c, 1000, 50, 0.0001, &cap), PSS_EXACT_TIMED); /* never timed */

	c = (struct pss_cost){.exact_seconds = 0.004, .exact_at = 100, .exact_merging = 1000};
	assert_int_equal(pss_choose(&c, 1000, 160, 0.0001, &cap), PSS_SAMPLE); /* no sample timed yet: try one */
	assert_true(cap == 0.002);
	assert_int_equal(pss_choose(&c, 1000, 160, 0.0021, &cap), PSS_EXACT); /* unless none could cost under half */
	c.sample_seconds = 0.0015;
	assert_int_equal(pss_choose(&c, 1100, 160, 0.0001, &cap), PSS_SAMPLE); /* 100 more mappings: under an eighth */
	c.sample_seconds = 0.002;
	assert_int_equal(pss_choose(&c, 1000, 160, 0.0001, &cap), PSS_EXACT); /* a sample costs half the exact read */
	assert_true(c.sample_seconds == 0.002);                                 /* and that is remembered */

	c.sample_seconds = 0.001;
	assert_int_equal(pss_choose(&c, 1000, 701, 0.0001, &cap), PSS_EXACT_TIMED); /* ten minutes on */
	assert_true(c.sample_seconds == 0);
	c.sample_seconds = 0.001;
	assert_int_equal(pss_choose(&c, 1126, 160, 0.0001, &cap), PSS_EXACT_TIMED); /* huge pages split since */
	assert_true(c.sample_seconds == 0);
	c.sample_seconds = 0.001;
	assert_int_equal(pss_choose(&c, 1000, 99, 0.0001, &cap), PSS_EXACT_TIMED); /* a time before: another clock's */
}

/* The memo is rewritten only for news: a cost first timed, one that moved by more than half of the
 * smaller or became known or unknown, an exact read timed again five minutes later, mappings moved by more than
 * an eighth; nothing timed in this run is none. */
static void pss_cost_news_only(void **state)
{
	(void)state;
	struct pss_cost was = {.exact_seconds = 0.004, .exact_at = 100, .exact_merging = 1000, .sample_seconds = 0.001};
	struct pss_cost now = was;
	now.seconds = 0.004;
	assert_false(pss_cost_news(&was, &now));
	assert_true(pss_cost_news(NULL, &now));
	now.exact_seconds = 0.0049, now.exact_at = 399, now.exact_merging = 1125, now.sample_seconds = 0.00124;
	assert_false(pss_cost_news(&was, &now));
	now.exact_seconds = 0.0059;
	assert_false(pss_cost_news(&was, &now));
	now.exact_seconds = 0.0061;
	assert_true(pss_cost_news(&was, &now));
	now.exact_seconds = 0.004, now.exact_at = 400;
	assert_true(pss_cost_news(&was, &now));
	now.exact_at = 100, now.exact_merging = 1126;
	assert_true(pss_cost_news(&was, &now));
	now.exact_merging = 1000, now.sample_seconds = 0;
	assert_true(pss_cost_news(&was, &now));
	assert_false(pss_cost_news(&was, &(struct pss_cost){0}));
	assert_false(pss_cost_news(NULL, &(struct pss_cost){0}));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pss_symmetric_guests_is_exact), cmocka_unit_test(pss_no_ksm_is_rss),
		cmocka_unit_test(pss_bound_covers_asymmetry), cmocka_unit_test(calibration_makes_asymmetry_exact),
		cmocka_unit_test(ksm_saved_per_vm), cmocka_unit_test(overhead_private_ram),
		cmocka_unit_test(overhead_shared_and_hugetlb_ram), cmocka_unit_test(counters_add_unknown),
		cmocka_unit_test(pss_unknown_weight_is_unknown), cmocka_unit_test(ksm_yield_and_ksmd_share),
		cmocka_unit_test(hugetlb_from_the_process), cmocka_unit_test(memory_cost_with_huge_pages),
		cmocka_unit_test(pss_sample_bound_per_kind), cmocka_unit_test(pss_choice_by_cost),
		cmocka_unit_test(pss_cost_news_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
