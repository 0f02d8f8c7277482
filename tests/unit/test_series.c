/* core/series (thinning by time and by count, the anchor of a fitted line) and the report's
 * series built from stored points (store/store_series.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/sample/series.h"
#include "out/report/report_html.h"
#include "store/store_series.h"

#define MiB (1024.0 * 1024.0)

static bool near(double a, double b, double tol) { return fabs(a - b) <= tol; }

/* n points every dt seconds from t0, row 0 = 2 t, row 1 = NaN where i % 3 == 0, else 1. */
static void fill(struct series_set *s, size_t n, double t0, double dt)
{
	assert_int_equal(series_alloc(s, n, 2), 0);
	for (size_t i = 0; i < n; i++) {
		s->t[i] = t0 + dt * (double)i;
		series_row(s, 0)[i] = 2 * s->t[i];
		series_row(s, 1)[i] = i % 3 ? 1 : NAN;
	}
}

static void short_series_is_kept(void **state)
{
	(void)state;
	struct series_set s;
	fill(&s, 50, 0, 1);
	assert_int_equal(series_thin(&s, 50, SERIES_EQUAL_TIME), 0);
	assert_int_equal(s.n, 50);
	assert_true(isnan(series_row(&s, 1)[0]));
	series_free(&s);
}

static void equal_count_buckets(void **state)
{
	(void)state;
	struct series_set s;
	fill(&s, 1000, 0, 1);
	assert_int_equal(series_thin(&s, 100, SERIES_EQUAL_COUNT), 0);
	assert_int_equal(s.n, 100);
	for (size_t b = 0; b < 100; b++) {
		assert_true(near(s.t[b], 10.0 * (double)b + 4.5, 1e-9)); /* mean of 10 consecutive times */
		assert_true(near(series_row(&s, 0)[b], 2 * s.t[b], 1e-9));
		assert_true(near(series_row(&s, 1)[b], 1, 0)); /* NaN skipped, not counted as 0 */
	}
	series_free(&s);
}

/* Points of 1200 samples (606 s, a pause, 594 s from 3000 s) thinned to 100 by rule, in the pause. */
static size_t points_in_pause(enum series_buckets rule)
{
	struct series_set s;
	assert_int_equal(series_alloc(&s, 1200, 1), 0);
	for (size_t i = 0; i < 1200; i++) {
		s.t[i] = i < 606 ? (double)i : 3000 + (double)(i - 606);
		series_row(&s, 0)[i] = i < 606 ? 10 : 20;
	}
	assert_int_equal(series_thin(&s, 100, rule), 0);
	size_t in_pause = 0;
	for (size_t i = 0; i < s.n; i++)
		in_pause += s.t[i] > 605 && s.t[i] < 3000;
	if (rule == SERIES_EQUAL_TIME) {
		assert_true(s.n < 100); /* the spans of the pause are dropped */
		for (size_t i = 0; i < s.n; i++) /* and no bucket mixes the two sides */
			assert_true(series_row(&s, 0)[i] == (s.t[i] < 1000 ? 10 : 20));
	}
	series_free(&s);
	return in_pause;
}

static void equal_time_keeps_a_pause(void **state)
{
	(void)state;
	/* The chart breaks its line where no point falls; equal counts would bridge the pause. */
	assert_int_equal(points_in_pause(SERIES_EQUAL_TIME), 0);
	assert_int_equal(points_in_pause(SERIES_EQUAL_COUNT), 1);
}

static void a_bucket_without_values_is_nan(void **state)
{
	(void)state;
	struct series_set s;
	assert_int_equal(series_alloc(&s, 40, 1), 0);
	for (size_t i = 0; i < 40; i++) {
		s.t[i] = (double)i;
		series_row(&s, 0)[i] = i < 20 ? NAN : 5;
	}
	assert_int_equal(series_thin(&s, 4, SERIES_EQUAL_COUNT), 0);
	assert_int_equal(s.n, 4);
	assert_true(isnan(series_row(&s, 0)[0]) && isnan(series_row(&s, 0)[1]));
	assert_true(series_row(&s, 0)[2] == 5 && series_row(&s, 0)[3] == 5);
	series_free(&s);
}

static void anchor_is_the_median_residual(void **state)
{
	(void)state;
	double x[101], y[101];
	for (int i = 0; i < 101; i++) {
		x[i] = i;
		y[i] = 3.0 * i + 7;
	}
	for (int i = 0; i < 101; i += 4) /* a quarter of the points far off, one without a value */
		y[i] = 1e9;
	y[1] = NAN;
	double b = -1;
	assert_int_equal(series_anchor(x, y, 101, 3.0, &b), 0);
	assert_true(near(b, 7, 1e-9));
	double all_nan[3] = {NAN, NAN, NAN};
	b = -1;
	assert_int_equal(series_anchor(x, all_nan, 3, 3.0, &b), -EINVAL);
	assert_true(b == -1); /* untouched */
}

static void line_over_its_span_only(void **state)
{
	(void)state;
	double t[6] = {0, 10, 20, 30, 40, 50}, out[6] = {NAN, NAN, NAN, NAN, NAN, NAN};
	series_line(t, 6, 10, 40, 0.5, 100, out);
	assert_true(isnan(out[0]) && isnan(out[5]));
	assert_true(out[1] == 100 && out[2] == 105 && out[4] == 115);
	double v[5] = {1, NAN, 3, 5, NAN};
	assert_true(series_last(v, 5) == 5);
	assert_true(series_mean(v, 5) == 3);
	assert_true(isnan(series_last(v, 0)) && isnan(series_mean(v + 4, 1)));
}

static void host_series_from_stored_points(void **state)
{
	(void)state;
	struct store_host_point p[3] = {
		{.t = 100, .mem_total = MAYBE(8LL << 30), .mem_available = MAYBE(6LL << 30), .swap_total = MAYBE(100),
		 .swap_free = MAYBE(40), .page_size = MAYBE(4096), .ksm_pages_sharing = MAYBE(1000),
		 .ksm_zero_pages = MAYBE(24), .ksmd_cpu_ns = MAYBE(5000000000)},
		{.t = 110, .mem_total = MAYBE(8LL << 30), .page_size = MAYBE(16384), .ksm_pages_sharing = MAYBE(1000),
		 .ksmd_cpu_ns = MAYBE(6000000000)},
		{.t = 120, .mem_total = MAYBE(8LL << 30), .ksmd_cpu_ns = MAYBE(1000)}, /* ksmd restarted */
	};
	struct series_set s;
	int64_t page = 0;
	assert_int_equal(host_series_from_points(p, 3, &s, &page), 0);
	assert_int_equal(page, 16384); /* the last recorded one */
	assert_true(series_row(&s, SERIES_HOST_USED)[0] == (double)(2LL << 30));
	assert_true(isnan(series_row(&s, SERIES_HOST_USED)[1])); /* no MemAvailable: unknown, not 0 */
	assert_true(series_row(&s, SERIES_HOST_SWAP)[0] == 60);
	assert_true(series_row(&s, SERIES_HOST_KSM_SAVED)[0] == 1024.0 * 4096);
	assert_true(series_row(&s, SERIES_HOST_KSM_SAVED)[1] == 1000.0 * 16384);
	assert_true(isnan(series_row(&s, SERIES_HOST_KSM_SAVED)[2]));
	assert_true(isnan(series_row(&s, SERIES_HOST_KSMD_CPU)[0]));
	assert_true(near(series_row(&s, SERIES_HOST_KSMD_CPU)[1], 10, 1e-9)); /* 1 s of CPU in 10 s */
	assert_true(isnan(series_row(&s, SERIES_HOST_KSMD_CPU)[2]));
	series_free(&s);
}

static void vm_series_from_stored_points(void **state)
{
	(void)state;
	struct store_vm_point p[2] = {
		{.t = 100, .rss = MAYBE((int64_t)(1100 * MiB)), .overhead = MAYBE((int64_t)(100 * MiB)),
		 .ksm_merging_pages = MAYBE(256 * 100), .ksm_saved = MAYBE((int64_t)(50 * MiB)),
		 .cpu_ms = MAYBE(20000), .vcpu_delay_ms = MAYBE(100), .io_write = MAYBE((int64_t)(10 * MiB)),
		 .net_rx = MAYBE(1000), .net_tx = MAYBE(5000)},
		/* more merged than resident guest RAM (a sample between two reads): capped */
		{.t = 110, .rss = MAYBE((int64_t)(300 * MiB)), .overhead = MAYBE((int64_t)(100 * MiB)),
		 .ksm_merging_pages = MAYBE(256 * 1000), .cpu_ms = MAYBE(25000), .io_write = MAYBE((int64_t)(110 * MiB)),
		 .net_rx = MAYBE(2000), .net_tx = MAYBE(4000)},
	};
	struct series_set s;
	assert_int_equal(vm_series_from_points(p, 2, 4096, &s), 0);
	assert_true(isnan(series_row(&s, SERIES_VM_CPU)[0])); /* no interval before the first sample */
	assert_true(near(series_row(&s, SERIES_VM_CPU)[1], 50, 1e-9)); /* 5 s of CPU in 10 s */
	assert_true(isnan(series_row(&s, SERIES_VM_VCPU_DELAY)[1]));  /* unknown at the second: no rate */
	assert_true(series_row(&s, SERIES_VM_OVERHEAD)[0] == 100 * MiB);
	assert_true(series_row(&s, SERIES_VM_MERGED)[0] == 100 * MiB);
	assert_true(series_row(&s, SERIES_VM_PRIVATE)[0] == 900 * MiB);
	assert_true(series_row(&s, SERIES_VM_SAVED)[0] == 50 * MiB);
	assert_true(series_row(&s, SERIES_VM_MERGED)[1] == 200 * MiB);
	assert_true(series_row(&s, SERIES_VM_PRIVATE)[1] == 0);
	assert_true(isnan(series_row(&s, SERIES_VM_SAVED)[1]));
	assert_true(isnan(series_row(&s, SERIES_VM_FIT)[0]) && isnan(series_row(&s, SERIES_VM_FIT)[1]));
	assert_true(isnan(series_row(&s, SERIES_VM_HUGETLB)[0])); /* a recording before schema 3: unknown */
	assert_true(isnan(series_row(&s, SERIES_VM_IO_WRITE)[0]));
	assert_true(near(series_row(&s, SERIES_VM_IO_WRITE)[1], 10 * MiB, 1e-6)); /* 100 MiB in 10 s */
	assert_true(isnan(series_row(&s, SERIES_VM_IO_READ)[1]));   /* unknown: no rate, never 0 */
	assert_true(near(series_row(&s, SERIES_VM_NET_RX)[1], 100, 1e-9));
	assert_true(isnan(series_row(&s, SERIES_VM_NET_TX)[1]));    /* went down: a reset, no rate */
	series_free(&s);
}

/* A VM's disks as rates on the times of their rows: per device read and written over the interval
 * before each of its rows, NaN where it had no row or no rate; the first 6 devices by name. */
static void disk_rates_from_stored_points(void **state)
{
	(void)state;
	struct store_disk_point p[12] = {
		{.t = 10, .device = "cd0", .read_bytes = MAYBE(0), .write_bytes = MAYBE(0)},
		{.t = 30, .device = "cd0", .read_bytes = MAYBE(2000), .write_bytes = MAYBE(0)},
		{.t = 10, .device = "disk0", .read_bytes = MAYBE(100), .write_bytes = MAYBE(0)},
		{.t = 20, .device = "disk0", .read_bytes = UNKNOWN, .write_bytes = MAYBE((int64_t)(10 * MiB))},
		{.t = 30, .device = "disk0", .read_bytes = MAYBE(300), .write_bytes = MAYBE(5)}, /* reset */
	};
	struct store_disk_series d;
	assert_int_equal(disk_series_from_points(p, 0, &d), -ENODATA);
	assert_int_equal(disk_series_from_points(p, 5, &d), 0);
	assert_int_equal(d.ndevices, 2);
	assert_int_equal(d.more, 0);
	assert_string_equal(d.devices[0], "cd0");
	assert_string_equal(d.devices[1], "disk0");
	assert_int_equal(d.set.n, 3);
	assert_int_equal(d.set.k, 4);
	assert_true(d.set.t[0] == 10 && d.set.t[1] == 20 && d.set.t[2] == 30);
	const double *cd_read = series_row(&d.set, 0), *disk_read = series_row(&d.set, 2),
		     *disk_written = series_row(&d.set, 3);
	assert_true(isnan(cd_read[0]) && isnan(cd_read[1])); /* no interval before its first row; no row at 20 */
	assert_true(near(cd_read[2], 100, 1e-9));             /* 2000 B over the 20 s since its row before */
	assert_true(near(disk_written[1], MiB, 1e-6));
	assert_true(isnan(disk_written[2]));                  /* went down: a reset, no rate */
	assert_true(isnan(disk_read[1]) && isnan(disk_read[2])); /* unknown at 20: no rate on either side */
	series_free(&d.set);
	for (size_t i = 0; i < 8; i++) /* eight disks, one row each: six drawn, two more */
		p[i] = (struct store_disk_point){.t = 10, .device = {(char)('a' + i)}, .write_bytes = MAYBE(1)};
	assert_int_equal(disk_series_from_points(p, 8, &d), 0);
	assert_int_equal(d.ndevices, 6);
	assert_int_equal(d.more, 2);
	assert_string_equal(d.devices[5], "f");
	assert_true(d.set.n == 1 && isnan(series_row(&d.set, 11)[0]));
	series_free(&d.set);
}

/* Memory cost as recorded; PSS where a recording (before schema 3) has no cost; unknown when neither. */
static void vm_cost_from_stored_points(void **state)
{
	(void)state;
	struct store_vm_point p[3] = {
		{.t = 1, .pss = MAYBE((int64_t)(300 * MiB)), .memory_cost = MAYBE((int64_t)(364 * MiB))},
		{.t = 2, .pss = MAYBE((int64_t)(300 * MiB)), .memory_cost = UNKNOWN},
		{.t = 3, .pss = UNKNOWN, .memory_cost = UNKNOWN},
	};
	struct series_set s;
	assert_int_equal(vm_series_from_points(p, 3, 4096, &s), 0);
	assert_true(series_row(&s, SERIES_VM_COST)[0] == 364 * MiB);
	assert_true(series_row(&s, SERIES_VM_COST)[1] == 300 * MiB);
	assert_true(isnan(series_row(&s, SERIES_VM_COST)[2]));
	series_free(&s);
}

/* A VM's points onto the host's times: a cell's mean, NaN for a cell without a point (the VM had
 * not started), the outer cells half a step wide, points beyond them left out. */
static void resample_onto_a_grid(void **state)
{
	(void)state;
	const double grid[] = {10, 20, 30, 40};
	const double t[] = {1, 4, 16, 24, 26, 31, 45, 46};
	const double y[] = {99, 1, 2, 4, NAN, 8, 16, 99};
	double out[4];
	series_resample(t, y, 8, grid, 4, out);
	assert_true(isnan(out[0]));    /* 1 and 4 are before 5, where the first cell starts */
	assert_true(out[1] == 3);      /* 16 and 24: (2 + 4) / 2; 26's NaN skipped */
	assert_true(out[2] == 8);
	assert_true(out[3] == 16);     /* 45 is on the last cell's end, 46 beyond it */
	series_resample(t, y, 0, grid, 4, out);
	assert_true(isnan(out[0]) && isnan(out[3]));
}

/* The report's chart of a VM: its huge pages as a band of their own, and in the note, only for
 * a VM that holds some (the chart of any other VM is as it was). */
static char *vm_chart(maybe_i64 hugetlb)
{
	struct store_vm_point p[2] = {
		{.t = 100, .rss = MAYBE((int64_t)(40 * MiB)), .overhead = MAYBE((int64_t)(40 * MiB)), .hugetlb = hugetlb},
		{.t = 110, .rss = MAYBE((int64_t)(40 * MiB)), .overhead = MAYBE((int64_t)(40 * MiB)), .hugetlb = hugetlb},
	};
	struct series_set s;
	assert_int_equal(vm_series_from_points(p, 2, 4096, &s), 0);
	char *out = NULL;
	size_t len;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	struct report_vm vm = {.name = "hp", .uuid = "", .vmm = "qemu", .pid = 7};
	report_html_vm_chart(f, &vm, &s, 100, 110);
	fclose(f);
	series_free(&s);
	return out;
}

static void vm_chart_huge_pages(void **state)
{
	(void)state;
	char *out = vm_chart(MAYBE((int64_t)(64 * MiB)));
	assert_non_null(strstr(out, "guest RAM on huge pages"));
	assert_non_null(strstr(out, "huge pages 64.0 MiB"));
	free(out);
	out = vm_chart(MAYBE(0));
	assert_null(strstr(out, "huge pages"));
	free(out);
	out = vm_chart(UNKNOWN);
	assert_null(strstr(out, "huge pages"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(short_series_is_kept),
		cmocka_unit_test(equal_count_buckets),
		cmocka_unit_test(equal_time_keeps_a_pause),
		cmocka_unit_test(a_bucket_without_values_is_nan),
		cmocka_unit_test(anchor_is_the_median_residual),
		cmocka_unit_test(line_over_its_span_only),
		cmocka_unit_test(host_series_from_stored_points),
		cmocka_unit_test(vm_chart_huge_pages),
		cmocka_unit_test(vm_series_from_stored_points),
		cmocka_unit_test(vm_cost_from_stored_points),
		cmocka_unit_test(disk_rates_from_stored_points),
		cmocka_unit_test(resample_onto_a_grid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
