/* Content sketches and the sharing map: the keyed hash against SipHash's published vector, the
 * sample's consistency, zero pages apart, and the map of hand-built sketches counted by hand. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/base/siphash.h"
#include "core/share/share_run.h"
#include "core/share/share_saved.h"
#include "core/share/sketch.h"
#include "core/share/fleet.h"

static const struct siphash_key ref_key = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};

/* The paper's vector: key 00..0f, message 00..0e. */
static void siphash_reference_vector(void **state)
{
	(void)state;
	unsigned char msg[15];
	for (int i = 0; i < 15; i++)
		msg[i] = (unsigned char)i;
	assert_true(siphash24(&ref_key, msg, 15) == 0xa129ca6149be45e5ull);
	assert_true(siphash24(&ref_key, msg, 0) == 0x726fdb47dd0e0e31ull); /* the empty message */
	struct siphash_key other = {1, 2};
	assert_true(siphash13(&ref_key, msg, 15) != siphash13(&other, msg, 15)); /* the key decides */
	assert_true(siphash13(&ref_key, msg, 15) != siphash24(&ref_key, msg, 15));
}

static void page_of(unsigned char *p, unsigned seed)
{
	memset(p, 0, SKETCH_PAGE_BYTES);
	memcpy(p, &seed, sizeof(seed));
	p[SKETCH_PAGE_BYTES - 1] = 1;
}

/* The same content is kept or dropped in every sketch alike; zero pages never hashed. */
static void sampling_is_by_content(void **state)
{
	(void)state;
	static unsigned char page[SKETCH_PAGE_BYTES];
	struct sketch a = {.sample_n = 8}, b = {.sample_n = 8};
	for (unsigned i = 0; i < 4000; i++) {
		page_of(page, i);
		assert_int_equal(sketch_add_page(&a, &ref_key, page), 0);
		page_of(page, 3999 - i); /* the same pages in the other order */
		assert_int_equal(sketch_add_page(&b, &ref_key, page), 0);
	}
	memset(page, 0, sizeof(page));
	for (int i = 0; i < 10; i++)
		assert_int_equal(sketch_add_page(&a, &ref_key, page), 0);
	sketch_finish(&a);
	sketch_finish(&b);
	assert_int_equal(a.pages, 4010);
	assert_int_equal(a.zero_pages, 10);
	assert_int_equal(a.nhashes, b.nhashes);
	assert_memory_equal(a.hashes, b.hashes, a.nhashes * sizeof(uint64_t));
	assert_in_range(a.nhashes, 4000 / 8 - 100, 4000 / 8 + 100); /* 1/8 of them, give or take */
	sketch_free(&a);
	sketch_free(&b);
}

/* A sketch keeps the top 40 bits of each hash whose whole 64 bits are in the sample: every page
 * checked against its own hash; two sketches of one key, the same pages in another order, map
 * onto each other whole; the size share shows is the bytes a sketch file codes them in. */
static void kept_values(void **state)
{
	(void)state;
	static unsigned char page[SKETCH_PAGE_BYTES];
	struct sketch a = {.sample_n = 8}, b = {.sample_n = 8};
	size_t kept = 0;
	for (unsigned i = 0; i < 4000; i++) {
		page_of(page, i);
		assert_int_equal(sketch_add_page(&a, &ref_key, page), 0);
		uint64_t h = siphash13(&ref_key, page, SKETCH_PAGE_BYTES);
		if (sketch_keeps(h, 8)) {
			assert_true(a.hashes[a.nhashes - 1] == h >> 24);
			kept++;
		}
		assert_int_equal(a.nhashes, kept); /* the sample decided on the whole hash */
		page_of(page, 3999 - i);
		assert_int_equal(sketch_add_page(&b, &ref_key, page), 0);
	}
	sketch_finish(&a);
	sketch_finish(&b);
	assert_true(a.nhashes > 0 && a.hashes[a.nhashes - 1] < sketch_value_end(8));
	assert_true(sketch_value_end(8) == 1ull << 37);
	struct share_map m;
	assert_int_equal(share_map_build((struct sketch[]){a, b}, 2, true, &m), 0);
	assert_int_equal(m.vms[0].shared_with[1], 4000);
	assert_int_equal(m.vms[1].shared_with[0], 4000);
	share_map_free(&m);
	struct sketch_file_vm vm = {.pid = 1, .ram_pages = 4000, .pages = 4000, .hashes = a.hashes, .nhashes = a.nhashes};
	struct sketch_file f = {.sample_n = 8, .mem_total_bytes = -1, .mem_available_bytes = -1, .vms = &vm, .nvms = 1};
	char *buf;
	size_t len;
	assert_int_equal(sketch_file_encode(&f, &buf, &len), 0);
	assert_int_equal(sketch_bytes(&a), len - 64 - 64);
	assert_true(sketch_bytes(&a) < a.nhashes * 4); /* ~28 bits each: 2^37 / ~500 values */
	free(buf);
	sketch_free(&a);
	sketch_free(&b);
}

static struct sketch hand(const uint64_t *h, size_t n, int64_t zero)
{
	struct sketch s = {.sample_n = 4, .nhashes = n, .zero_pages = zero, .pages = (int64_t)n * 4 + zero};
	s.hashes = malloc(n * sizeof(*h));
	memcpy(s.hashes, h, n * sizeof(*h));
	sketch_finish(&s);
	return s;
}

/* Three VMs: A holds 1, 2, 2, 3; B holds 2, 3, 4; C holds 5. Counted by hand at 1/4. */
static void map_by_hand(void **state)
{
	(void)state;
	const uint64_t a[] = {3, 2, 1, 2}, b[] = {4, 2, 3}, c[] = {5};
	struct sketch s[3] = {hand(a, 4, 10), hand(b, 3, 0), hand(c, 1, 6)};
	struct share_map m;
	assert_int_equal(share_map_build(s, 3, true, &m), 0);
	assert_int_equal(m.vms[0].self_shared_pages, 4); /* the second 2 */
	assert_int_equal(m.vms[0].unique_pages, 4);      /* 1 */
	assert_int_equal(m.vms[0].shared_with[1], 12);   /* 2, 2, 3 */
	assert_int_equal(m.vms[1].shared_with[0], 8);    /* 2, 3 */
	assert_int_equal(m.vms[1].unique_pages, 4);      /* 4 */
	assert_int_equal(m.vms[2].unique_pages, 4);
	assert_int_equal(m.vms[2].shared_with[0] + m.vms[2].shared_with[1], 0);
	/* 2 held three times (2 saved), 3 twice (1): 3 sampled pages x 4, plus 16 zero pages. */
	assert_int_equal(m.mergeable_pages, 3 * 4 + 16);
	assert_int_equal(m.zero_pages, 16);
	share_map_free(&m);
	assert_int_equal(share_map_build(s, 3, false, &m), 0);
	assert_int_equal(m.mergeable_pages, 3 * 4 + 15); /* zero pages merge into one KSM page */
	share_map_free(&m);
	s[2].sample_n = 8;
	assert_int_equal(share_map_build(s, 3, true, &m), -EINVAL); /* rates that do not compare */
	for (int i = 0; i < 3; i++)
		sketch_free(&s[i]);
}

/* A VM's figures are its share of its kept hashes times the pages it hashed (the ratio estimator),
 * not its kept hashes times N: A hashed 100 pages but kept 4 hashes at 1/4 (1 2 3 4), B 8 pages
 * and 2 (2 3). Its empty pages on the zero page are savings made, in the host's figure. */
static void map_ratio(void **state)
{
	(void)state;
	const uint64_t a[] = {1, 2, 3, 4}, b[] = {2, 3};
	struct sketch s[2] = {hand(a, 4, 10), hand(b, 2, 0)};
	s[0].zero_mapped_pages = 20;
	s[0].pages = 100 + 10 + 20;
	struct share_map m;
	assert_int_equal(share_map_build(s, 2, true, &m), 0);
	assert_int_equal(m.vms[0].unique_pages, 50);    /* 1 and 4: half its 100 hashed pages */
	assert_int_equal(m.vms[0].shared_with[1], 50);  /* 2 and 3 */
	assert_int_equal(m.vms[1].shared_with[0], 8);   /* all of B's 8 */
	assert_int_equal(m.vms[0].error_bound_pages, 43); /* 100 sqrt(3/4 / 4) */
	assert_int_equal(m.zero_pages, 10);
	assert_int_equal(m.zero_mapped_pages, 20);
	/* 2 contents held twice, at 108 pages per 6 kept hashes; all 30 empty pages */
	assert_int_equal(m.mergeable_pages, 2 * 18 + 30);
	share_map_free(&m);
	for (int i = 0; i < 2; i++)
		sketch_free(&s[i]);
}

/* The run keeps the map's figures: a's pages b holds off the diagonal, its own duplicates on it. */
static void run_of_map(void **state)
{
	(void)state;
	const uint64_t a[] = {3, 2, 1, 2}, b[] = {4, 2, 3};
	struct sketch s[2] = {hand(a, 4, 10), hand(b, 3, 0)};
	snprintf(s[0].name, sizeof(s[0].name), "web1");
	s[1].gap = SKETCH_VM_EXITED;
	struct share_map m;
	struct share_run r;
	assert_int_equal(share_map_build(s, 2, true, &m), 0);
	assert_int_equal(share_run_of(s, 2, &m, 1.8e9, 4096, MAYBE(8192), &r), 0);
	assert_int_equal(r.pairs[0], 4);  /* a's second 2 */
	assert_int_equal(r.pairs[1], 12); /* a's 2, 2, 3 in b */
	assert_int_equal(r.pairs[2], 8);  /* b's 2, 3 in a */
	assert_int_equal(r.pairs[3], 0);
	assert_int_equal(r.mergeable_savings_bytes, m.mergeable_pages * 4096);
	assert_int_equal(r.sample_n, 4);
	assert_string_equal(r.vms[0].name, "web1");
	assert_string_equal(r.vms[0].partial_reason, "");
	assert_string_equal(r.vms[1].partial_reason, "vm-exited");
	assert_int_equal(r.vms[1].unique_pages, m.vms[1].unique_pages);
	share_run_free(&r);
	share_map_free(&m);
	for (int i = 0; i < 2; i++)
		sketch_free(&s[i]);
}

static size_t place_of(const size_t *order, size_t n, size_t vm)
{
	for (size_t i = 0; i < n; i++)
		if (order[i] == vm)
			return i;
	fail();
	return 0;
}

/* Clusters sit together: {0, 3, 5} (0-3 and 3-5 share the most) first as the largest, then
 * {1, 4}, then 2 that shares nothing; every VM once. */
static void order_keeps_clusters_together(void **state)
{
	(void)state;
	struct share_run r;
	assert_int_equal(share_run_alloc(6, &r), 0);
	const size_t n = 6;
	const int64_t links[][3] = {{0, 3, 100}, {3, 5, 90}, {0, 5, 10}, {1, 4, 50}, {4, 1, 40}, {1, 0, 1}};
	for (size_t k = 0; k < sizeof(links) / sizeof(links[0]); k++)
		r.pairs[links[k][0] * n + links[k][1]] = links[k][2];
	r.pairs[2 * n + 2] = 1000; /* its own duplicates link it to nobody */
	r.pairs[1 * n + 0] = 0;
	size_t order[6];
	assert_int_equal(share_run_order(&r, order), 0);
	size_t seen = 0;
	for (size_t i = 0; i < n; i++)
		seen |= (size_t)1 << order[i];
	assert_int_equal(seen, 0x3f);
	assert_int_equal(labs((long)place_of(order, n, 0) - (long)place_of(order, n, 3)), 1);
	assert_int_equal(labs((long)place_of(order, n, 3) - (long)place_of(order, n, 5)), 1);
	assert_true(place_of(order, n, 0) < 3 && place_of(order, n, 3) < 3 && place_of(order, n, 5) < 3);
	assert_int_equal(labs((long)place_of(order, n, 1) - (long)place_of(order, n, 4)), 1);
	assert_int_equal(order[5], 2);
	share_run_free(&r);
}

/* Host A runs x (contents 1 2 3 4) and a (10 11); host B runs y (1 2 3 31) and b (20), at 1/4.
 * x's content is on B: its best target, the one move, freeing 3 contents x 4 pages. Each VM read
 * 4 pages per kept hash, 5 empty ones and 50 on the zero page. */
static uint64_t hx[] = {1, 2, 3, 4}, ha[] = {10, 11}, hy[] = {1, 2, 3, 31}, hb[] = {20};

static struct sketch_file_vm fvm(int pid, uint64_t *h, size_t n)
{
	return (struct sketch_file_vm){.pid = pid, .ram_pages = 100, .pages = 55 + 4 * (int64_t)n, .zero_pages = 5,
				       .zero_mapped_pages = 50, .hashes = h, .nhashes = n};
}

static void plan_by_hand(void **state)
{
	(void)state;
	struct sketch_file_vm va[] = {fvm(1, hx, 4), fvm(2, ha, 2)}, vb[] = {fvm(3, hy, 4), fvm(4, hb, 1)};
	struct sketch_file fa = {.sample_n = 4, .key_fingerprint = 7, .mem_total_bytes = 1 << 30,
				 .mem_available_bytes = 1 << 30, .vms = va, .nvms = 2};
	struct sketch_file fb = fa;
	fb.vms = vb;
	struct plan_host hosts[] = {{"A", &fa}, {"B", &fb}};
	struct share_plan p;
	char why[256] = "";
	assert_int_equal(share_plan_build(hosts, 2, &p, why, sizeof(why)), 0);
	assert_int_equal(p.nvms, 4);
	assert_int_equal(p.vms[0].common_pages[0], 0);
	assert_int_equal(p.vms[0].common_pages[1], 3 * 4);
	assert_int_equal(p.vms[0].best_host, 1);
	assert_int_equal(p.vms[0].zero_pages, 55); /* empty: holding memory or not, free anywhere */
	assert_int_equal(p.vms[2].common_pages[0], 3 * 4); /* y would share 1 2 3 with x on A */
	assert_int_equal(p.vms[1].best_host, 0);            /* a shares nothing: it stays */
	assert_int_equal(p.nmoves, 1);                       /* x to B; then y has nothing on A */
	assert_true(p.moves[0].vm == 0 && p.moves[0].from == 0 && p.moves[0].to == 1);
	assert_int_equal(p.moves[0].freed_pages, 12);
	assert_int_equal(p.moves[0].need_pages, 16 - 12); /* its 4 contents less the 3 B holds */
	assert_int_equal(p.freed_pages, 12);
	assert_true(p.memory_checked);
	share_plan_free(&p);
	/* B too full for x (it needs 4 pages there): y goes to x instead. */
	fb.mem_available_bytes = 3 * 4096;
	assert_int_equal(share_plan_build(hosts, 2, &p, why, sizeof(why)), 0);
	assert_int_equal(p.vms[0].best_host, 1);
	assert_int_equal(p.nmoves, 1);
	assert_true(p.moves[0].vm == 2 && p.moves[0].from == 1 && p.moves[0].to == 0);
	share_plan_free(&p);
	fa.mem_available_bytes = 0; /* and A full too: nothing moves */
	assert_int_equal(share_plan_build(hosts, 2, &p, why, sizeof(why)), 0);
	assert_int_equal(p.nmoves, 0);
	fa.mem_available_bytes = 1 << 30;
	share_plan_free(&p);
	fb.mem_available_bytes = 4 * 4096; /* exactly enough */
	assert_int_equal(share_plan_build(hosts, 2, &p, why, sizeof(why)), 0);
	assert_int_equal(p.nmoves, 1);
	assert_int_equal(p.moves[0].vm, 0);
	share_plan_free(&p);
	va[0].gap = 1; /* x's sketch partial: it stays, and y comes to it */
	assert_int_equal(share_plan_build(hosts, 2, &p, why, sizeof(why)), 0);
	assert_int_equal(p.nmoves, 1);
	assert_int_equal(p.moves[0].vm, 2);
	share_plan_free(&p);
	va[0].gap = 0;
	fb.mem_available_bytes = -1; /* unknown: not checked, and said so */
	assert_int_equal(share_plan_build(hosts, 2, &p, why, sizeof(why)), 0);
	assert_false(p.memory_checked);
	share_plan_free(&p);
	fb.key_fingerprint = 8;
	assert_int_equal(share_plan_build(hosts, 2, &p, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "different keys"));
	fb.key_fingerprint = 7;
	fb.sample_n = 8;
	assert_int_equal(share_plan_build(hosts, 2, &p, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "sampled at 1/4"));
}

/* What is saved now: KSM's pages_sharing and the map's empty pages already on the zero page, in
 * bytes; unknown without KSM or its counter. */
static void saved_now(void **state)
{
	(void)state;
	struct share_map m = {.zero_mapped_pages = 3};
	struct host h = {.page_size_bytes = 4096};
	h.ksm.present = true;
	h.ksm.pages_sharing = MAYBE(7);
	maybe_i64 b = share_saved_now_bytes(&m, &h);
	assert_true(b.known && b.v == 10 * 4096);
	h.ksm.pages_sharing = UNKNOWN;
	assert_false(share_saved_now_bytes(&m, &h).known);
	h.ksm.pages_sharing = MAYBE(7);
	h.ksm.present = false;
	assert_false(share_saved_now_bytes(&m, &h).known);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(siphash_reference_vector),
		cmocka_unit_test(sampling_is_by_content),
		cmocka_unit_test(kept_values),
		cmocka_unit_test(map_by_hand),
		cmocka_unit_test(map_ratio),
		cmocka_unit_test(run_of_map),
		cmocka_unit_test(order_keeps_clusters_together),
		cmocka_unit_test(plan_by_hand),
		cmocka_unit_test(saved_now),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
