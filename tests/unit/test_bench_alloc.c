/* Population strategies really populate; the guard, medians and the SVG writer do what they say;
 * the experiment (core/bench_alloc) picks its defaults and reference, and fills its cells. */
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

#include "core/bench/alloc.h"
#include "core/bench/bench_alloc.h"
#include "core/base/stats.h"
#include "out/svg.h"
#include "parse/parse.h"

static const struct io_root real_root = {.proc = "/proc", .sys = "/sys"};

static int64_t anon_huge_bytes(void)
{
	char buf[8192];
	ssize_t n = io_read(&real_root, IO_PROC, buf, sizeof(buf), "self/smaps_rollup");
	assert_true(n > 0);
	struct meminfo mi; /* AnonHugePages has the same "Key: N kB" form as in meminfo */
	parse_meminfo(buf, (size_t)n, &mi);
	return mi.anon_huge_pages.known ? mi.anon_huge_pages.v : 0;
}

/* Every strategy this host supports leaves every page resident, with 1 and with 3 threads
 * (3 does not divide the size: the last chunk is shorter). */
static void every_page_resident(void **state)
{
	(void)state;
	struct alloc_env env;
	assert_int_equal(alloc_env_probe(&real_root, &env), 0);
	const size_t len = (size_t)40 << 20;
	int ran = 0;
	for (int s = 0; s < ALLOC_NSTRATEGIES; s++) {
		char why[256];
		if (alloc_unsupported((enum alloc_strategy)s, len, &env, why, sizeof(why))) {
			/* hugetlbfs without a pool is covered by tests/live/bench_alloc_hugetlbfs.sh */
			print_message("not here: %s: %s\n", alloc_strategy_name((enum alloc_strategy)s), why);
			continue;
		}
		for (unsigned threads = 1; threads <= 3; threads += 2) {
			struct alloc_region r;
			assert_int_equal(alloc_create((enum alloc_strategy)s, len, threads, &env, &r), 0);
			uint64_t resident = 0;
			assert_int_equal(alloc_resident_bytes(&r, &resident), 0);
			if (resident != r.map_len)
				fail_msg("%s with %u threads: %llu of %zu bytes resident", alloc_strategy_name((enum alloc_strategy)s),
					 threads, (unsigned long long)resident, r.map_len);
			assert_true(r.map_len >= len);
			/* Populated memory reads as zeros and takes writes. */
			assert_int_equal(r.addr[len / 2 + 7], 0); /* touch strategies write one byte at page starts */
			assert_int_equal(alloc_memset(&r, threads, 0x5a), 0);
			assert_int_equal(r.addr[len - 1], 0x5a);
			assert_int_equal(alloc_destroy(&r), 0);
			assert_null(r.addr);
			ran++;
		}
	}
	assert_true(ran >= 2 * 6); /* all but hugetlbfs run on any THP-capable Linux 5.14+ */
}

/* The THP strategies get huge pages (what makes them fast), the 4k ones do not. */
static void thp_strategies_get_huge_pages(void **state)
{
	(void)state;
	struct alloc_env env;
	assert_int_equal(alloc_env_probe(&real_root, &env), 0);
	if (!env.thp_mode[0] || !strcmp(env.thp_mode, "never"))
		fail_msg("this test needs transparent huge pages (transparent_hugepage/enabled is '%s')", env.thp_mode);
	const size_t len = (size_t)64 << 20;
	int64_t before = anon_huge_bytes();
	struct alloc_region r;
	assert_int_equal(alloc_create(ALLOC_MADV_POPULATE_THP_TAIL, len, 2, &env, &r), 0);
	int64_t with_thp = anon_huge_bytes() - before;
	assert_int_equal(alloc_destroy(&r), 0);
	assert_true(with_thp >= (int64_t)len / 2);

	before = anon_huge_bytes();
	assert_int_equal(alloc_create(ALLOC_MADV_POPULATE_4K, len, 2, &env, &r), 0);
	int64_t without = anon_huge_bytes() - before;
	assert_int_equal(alloc_destroy(&r), 0);
	assert_true(without <= 0);
}

static void strategy_names_round_trip(void **state)
{
	(void)state;
	for (int s = 0; s < ALLOC_NSTRATEGIES; s++)
		assert_int_equal(alloc_strategy_from_name(alloc_strategy_name((enum alloc_strategy)s)), s);
	assert_int_equal(alloc_strategy_from_name("touch"), -EINVAL);
	assert_int_equal(alloc_strategy_from_name(""), -EINVAL);
	assert_string_equal(alloc_strategy_name(ALLOC_MADV_POPULATE_THP), "madv-populate-write-thp");
}

static void unsupported_says_why(void **state)
{
	(void)state;
	struct alloc_env env = {.thp_mode = "never", .madv_populate_write = false, .page_bytes = 4096,
				.hugepage_bytes = 2 << 20, .hugepages_free = 10};
	char why[256];
	assert_non_null(alloc_unsupported(ALLOC_TOUCH_THP, 1 << 20, &env, why, sizeof(why)));
	assert_non_null(strstr(why, "never"));
	assert_null(alloc_unsupported(ALLOC_TOUCH_4K, 1 << 20, &env, why, sizeof(why)));
	assert_non_null(alloc_unsupported(ALLOC_MADV_POPULATE_4K, 1 << 20, &env, why, sizeof(why)));
	assert_non_null(strstr(why, "MADV_POPULATE_WRITE"));
	/* 10 free huge pages hold 20 MiB, not 21. */
	assert_null(alloc_unsupported(ALLOC_HUGETLBFS, (uint64_t)20 << 20, &env, why, sizeof(why)));
	assert_non_null(alloc_unsupported(ALLOC_HUGETLBFS, (uint64_t)21 << 20, &env, why, sizeof(why)));
	assert_non_null(strstr(why, "nr_hugepages"));
	/* An unsupported strategy is refused, not faked. */
	struct alloc_region r;
	assert_int_equal(alloc_create(ALLOC_TOUCH_THP, 1 << 20, 1, &env, &r), -EOPNOTSUPP);
}

static void size_guard(void **state)
{
	(void)state;
	const int64_t gib = (int64_t)1 << 30;
	uint64_t margin;
	/* 24 GiB host: margin 3 GiB. */
	assert_true(alloc_size_safe((uint64_t)4 * gib, 20 * gib, 24 * gib, &margin));
	assert_int_equal(margin, 3 * gib);
	assert_true(alloc_size_safe((uint64_t)17 * gib, 20 * gib, 24 * gib, NULL));
	assert_false(alloc_size_safe((uint64_t)17 * gib + 1, 20 * gib, 24 * gib, NULL));
	/* Small host: margin at least 1 GiB. */
	assert_false(alloc_size_safe((uint64_t)gib, 2 * gib - 1, 4 * gib, &margin));
	assert_int_equal(margin, gib);
	/* Already below the margin, or unknown: nothing is safe. */
	assert_false(alloc_size_safe(1, gib / 2, 4 * gib, NULL));
	assert_false(alloc_size_safe(1, -1, 4 * gib, NULL));
}

static void median_and_rate(void **state)
{
	(void)state;
	double a[] = {3, 1, 2};
	assert_true(median(a, 3) == 2);
	double b[] = {4, 1, 3, 2};
	assert_true(median(b, 4) == 2.5);
	assert_true(isnan(median(b, 0)));
	assert_true(fabs(alloc_gib_per_s((uint64_t)1 << 30, 0.5) - 2.0) < 1e-12);
	assert_true(isnan(alloc_gib_per_s(1, 0)));
}

static void svg_document(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	struct svg *s = svg_begin(f, 600, 400);
	assert_non_null(s);
	struct svg_plot p;
	svg_plot_begin(s, &p, &(struct svg_plot_spec){
		.x = {.min = 1, .max = 1000, .log = true, .label = "size <bytes>"},
		.y = {.min = 0, .max = 7, .label = "a & b"},
		.title = "\"quoted\" 'title'",
	});
	double xs[] = {1, 10, 100, 1000}, ys[] = {1, NAN, 3, 4};
	svg_plot_series(&p, "one<two>", xs, ys, 4, SVG_LINES | SVG_POINTS);
	svg_plot_series(&p, "second", xs, ys, 2, SVG_POINTS);
	/* log axis: 10 sits a third of the way across 1..1000 */
	assert_true(fabs(svg_plot_x(&p, 10) - (p.spec.left + p.spec.width / 3)) < 1e-6);
	assert_true(isnan(svg_plot_x(&p, 0)));
	svg_plot_end(&p);
	assert_int_equal(svg_end(s), 0);
	fclose(f);
	assert_non_null(strstr(text, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(text, "</svg>\n"));
	assert_non_null(strstr(text, "size &lt;bytes&gt;"));
	assert_non_null(strstr(text, "a &amp; b"));
	assert_non_null(strstr(text, "&quot;quoted&quot; &apos;title&apos;"));
	assert_non_null(strstr(text, "one&lt;two&gt;"));
	assert_null(strstr(text, "one<two>"));
	/* The NaN breaks the line into two polylines; the 7 points of both series are drawn. */
	int polylines = 0, circles = 0;
	for (char *c = text; (c = strstr(c, "<polyline")); c++)
		polylines++;
	for (char *c = text; (c = strstr(c, "<circle")); c++)
		circles++;
	assert_int_equal(polylines, 2);
	assert_int_equal(circles, 3 + 1 + 2); /* finite points + one legend mark per series */
	/* Linear axis ticks are whole steps: 0 and 8 (7 widened to the 2-step grid). */
	assert_non_null(strstr(text, ">0</text>"));
	assert_non_null(strstr(text, ">8</text>"));
	free(text);
}

static void sorted_unique(void **state)
{
	(void)state;
	uint64_t sizes[] = {5, 1, 5, 3, 1, 1};
	assert_int_equal(sort_unique(sizes, 6, sizeof(sizes[0]), cmp_u64), 3);
	assert_true(sizes[0] == 1 && sizes[1] == 3 && sizes[2] == 5);
	unsigned threads[] = {4, 2, 4, 1};
	assert_int_equal(sort_unique(threads, 4, sizeof(threads[0]), cmp_unsigned), 3);
	assert_true(threads[0] == 1 && threads[1] == 2 && threads[2] == 4);
	assert_int_equal(sort_unique(threads, 1, sizeof(threads[0]), cmp_unsigned), 1);
	assert_int_equal(sort_unique(NULL, 0, sizeof(threads[0]), cmp_unsigned), 0);
}

static struct meminfo mem_of(int64_t total, int64_t avail)
{
	struct meminfo m = {0};
	m.mem_total = MAYBE(total);
	m.mem_available = MAYBE(avail);
	return m;
}

static void default_sizes_scale_to_the_host(void **state)
{
	(void)state;
	const uint64_t mib = (uint64_t)1 << 20, gib = (uint64_t)1 << 30;
	uint64_t v[BENCH_ALLOC_MAX_SIZES];
	/* 24 GiB: x4 steps up to a quarter of RAM. */
	struct meminfo m = mem_of(24 * (int64_t)gib, 20 * (int64_t)gib);
	assert_int_equal(bench_alloc_default_sizes(&m, false, v), 3);
	assert_true(v[0] == 256 * mib && v[1] == gib && v[2] == 4 * gib);
	/* 1 TiB: at most 64 GiB. */
	m = mem_of((int64_t)1024 * (int64_t)gib, (int64_t)1000 * (int64_t)gib);
	assert_int_equal(bench_alloc_default_sizes(&m, false, v), 5);
	assert_true(v[4] == 64 * gib);
	/* 8 GiB with 2.3 GiB available (margin 1 GiB): 1 GiB fits, not with QEMU's 512 MiB on top. */
	m = mem_of(8 * (int64_t)gib, 23 * (int64_t)gib / 10);
	assert_int_equal(bench_alloc_default_sizes(&m, false, v), 2);
	assert_int_equal(bench_alloc_default_sizes(&m, true, v), 1);
	/* Unknown memory: the one size the guard then refuses plainly. */
	m = (struct meminfo){.mem_total = UNKNOWN, .mem_available = UNKNOWN};
	assert_int_equal(bench_alloc_default_sizes(&m, false, v), 1);
	assert_true(v[0] == 256 * mib);
}

static void default_threads_are_powers_of_two_and_the_cpus(void **state)
{
	(void)state;
	unsigned v[BENCH_ALLOC_MAX_THREADS];
	assert_int_equal(bench_alloc_default_threads(6, v), 4);
	assert_true(v[0] == 1 && v[1] == 2 && v[2] == 4 && v[3] == 6);
	assert_int_equal(bench_alloc_default_threads(8, v), 4);
	assert_true(v[3] == 8);
	assert_int_equal(bench_alloc_default_threads(1, v), 1);
	assert_int_equal(bench_alloc_default_threads(-1, v), 1); /* sysconf failed */
	assert_true(v[0] == 1);
	assert_int_equal(bench_alloc_default_threads(64, v), 5);
	assert_true(v[4] == BENCH_ALLOC_MAX_THREADS);
}

static void reference_is_the_fastest_the_host_has(void **state)
{
	(void)state;
	struct alloc_env env = {.thp_mode = "madvise", .madv_populate_write = true, .page_bytes = 4096};
	assert_int_equal(bench_alloc_reference(&env), ALLOC_MADV_POPULATE_THP_TAIL);
	env.madv_populate_write = false;
	assert_int_equal(bench_alloc_reference(&env), ALLOC_TOUCH_THP);
	snprintf(env.thp_mode, sizeof(env.thp_mode), "never");
	assert_int_equal(bench_alloc_reference(&env), ALLOC_TOUCH_4K);
	env.madv_populate_write = true;
	assert_int_equal(bench_alloc_reference(&env), ALLOC_MADV_POPULATE_4K);
	assert_string_equal(bench_alloc_slot_name(BENCH_ALLOC_MEMSET), "memset-reference");
	assert_string_equal(bench_alloc_slot_name(BENCH_ALLOC_FIRST_TOUCH), "first-touch");
	assert_string_equal(bench_alloc_slot_name(ALLOC_TOUCH_4K), "touch-4k");
}

struct steps {
	unsigned n;
	struct bench_alloc_step first, last;
};

static void count_step(void *cls, const struct bench_alloc_step *step)
{
	struct steps *st = cls;
	if (!st->n++)
		st->first = *step;
	st->last = *step;
}

/* A real run on 2 and 4 MiB: every cell the plan names is timed, in the order it says. */
static void tiny_run_fills_every_cell(void **state)
{
	(void)state;
	struct steps st = {0};
	struct bench_alloc_config cfg = {.sizes = {4 << 20, 2 << 20, 4 << 20}, .nsizes = 3, .threads = {2, 1},
					 .nthreads = 2, .repeats = 2, .progress = count_step, .progress_cls = &st};
	cfg.strategy[ALLOC_TOUCH_4K] = cfg.strategy[ALLOC_MADV_POPULATE_THP] = true;
	struct bench_alloc *b = NULL;
	struct bench_alloc_error err;
	assert_int_equal(bench_alloc_new(&real_root, &cfg, &b, &err), 0);
	assert_int_equal(b->cfg.nsizes, 2);
	assert_true(b->cfg.sizes[0] == 2 << 20 && b->cfg.sizes[1] == 4 << 20);
	assert_true(b->cfg.nthreads == 2 && b->cfg.threads[0] == 1 && b->cfg.threads[1] == 2);
	assert_int_equal(st.n, 0); /* nothing runs before bench_alloc_run */
	assert_int_equal(bench_alloc_run(b, &err), 0);
	unsigned nstrat = 1 + !b->skipped[ALLOC_MADV_POPULATE_THP][0];
	/* Per size: the first touch, then per run and thread count memset and each strategy. */
	assert_int_equal(st.n, 2 * (1 + 2 * 2 * (1 + nstrat)));
	assert_int_equal(st.first.slot, BENCH_ALLOC_FIRST_TOUCH);
	assert_true(st.first.threads == 2 && st.first.run == 0 && st.first.repeats == 2 && st.first.size == 2 << 20);
	assert_true(st.last.size == 4 << 20 && st.last.run == 1 && st.last.threads == 2);
	for (size_t si = 0; si < 2; si++) {
		assert_int_equal(b->cells[si][BENCH_ALLOC_FIRST_TOUCH][1].runs, 1);
		assert_int_equal(b->cells[si][BENCH_ALLOC_FIRST_TOUCH][0].runs, 0);
		for (size_t ti = 0; ti < 2; ti++) {
			const struct bench_alloc_cell *ref = &b->cells[si][BENCH_ALLOC_MEMSET][ti];
			assert_int_equal(ref->runs, 2);
			assert_true(isnan(ref->destroy[0]) && ref->create[0] > 0);
			assert_true(bench_alloc_reference_gibs(b, si, ti) > 0);
			const struct bench_alloc_cell *c = &b->cells[si][ALLOC_TOUCH_4K][ti];
			assert_int_equal(c->runs, 2);
			assert_true(c->create[1] > 0 && c->destroy[1] > 0);
			assert_int_equal(b->cells[si][ALLOC_POPULATE_4K][ti].runs, 0);
			assert_int_equal(b->cells[si][BENCH_ALLOC_QEMU][ti].runs, 0);
		}
		int slot;
		unsigned threads;
		double eff;
		assert_true(bench_alloc_best(b, si, &slot, &threads, &eff));
		assert_true(slot == ALLOC_TOUCH_4K || slot == ALLOC_MADV_POPULATE_THP);
		assert_true(threads == 1 || threads == 2);
		assert_true(eff > 0);
	}
	bench_alloc_free(b);
	bench_alloc_free(NULL);
}

/* Refusals come before anything is allocated, with the numbers; ret stays untouched. */
static void refusals_say_why(void **state)
{
	(void)state;
	struct bench_alloc_config cfg = {.sizes = {(uint64_t)1000 << 40, 4 << 20}, .nsizes = 2, .threads = {1},
					 .nthreads = 1, .repeats = 1};
	struct bench_alloc *b = (struct bench_alloc *)&cfg; /* a sentinel, never dereferenced */
	struct bench_alloc_error err;
	assert_int_equal(bench_alloc_new(&real_root, &cfg, &b, &err), -ENOMEM);
	assert_ptr_equal(b, &cfg);
	assert_true(err.refused);
	assert_string_equal(err.what, "size refused");
	assert_true(err.size_bytes == (uint64_t)1000 << 40 && err.margin_bytes >= (uint64_t)1 << 30);
	assert_true(err.available_bytes > 0);

	const struct io_root nowhere = {.proc = "/nonexistent", .sys = "/sys"};
	cfg.sizes[0] = 4 << 20;
	assert_true(bench_alloc_new(&nowhere, &cfg, &b, &err) < 0);
	assert_ptr_equal(b, &cfg);
	assert_false(err.refused);
	assert_string_equal(err.what, "size guard");
	assert_non_null(strstr(err.why, "/nonexistent/meminfo"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_page_resident),
		cmocka_unit_test(thp_strategies_get_huge_pages),
		cmocka_unit_test(strategy_names_round_trip),
		cmocka_unit_test(unsupported_says_why),
		cmocka_unit_test(size_guard),
		cmocka_unit_test(median_and_rate),
		cmocka_unit_test(svg_document),
		cmocka_unit_test(sorted_unique),
		cmocka_unit_test(default_sizes_scale_to_the_host),
		cmocka_unit_test(default_threads_are_powers_of_two_and_the_cpus),
		cmocka_unit_test(reference_is_the_fastest_the_host_has),
		cmocka_unit_test(tiny_run_fills_every_cell),
		cmocka_unit_test(refusals_say_why),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
