/* Population strategies really populate; the guard, medians and the SVG writer do what they say. */
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

#include "core/alloc.h"
#include "core/stats.h"
#include "out/svg.h"
#include "parse/parse.h"

static const struct io_root real_root = {"/proc", "/sys"};

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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
