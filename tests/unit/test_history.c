/* core/sample/history.c: the report's chart rows from recorded rows (memory stacked, counters per
 * second, CPU as percent of one CPU, a VM's disks, a counter recorded only where it changed), and
 * the VM chart out/report_html.c draws from them. */
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

#include <stdio.h>

#include "core/sample/history.h"
#include "out/report/report_html.h"

#define MiB (1024.0 * 1024.0)

static bool near(double a, double b, double tol) { return fabs(a - b) <= tol; }

static void host_series_from_stored_points(void **state)
{
	(void)state;
	struct history_host_point p[3] = {
		{.t = 100, .mem_total = MAYBE(8LL << 30), .mem_available = MAYBE(6LL << 30), .swap_total = MAYBE(100),
		 .swap_free = MAYBE(40), .page_size = MAYBE(4096), .ksm_pages_sharing = MAYBE(1000),
		 .ksm_zero_pages = MAYBE(24), .ksmd_cpu_ns = MAYBE(5000000000)},
		{.t = 110, .mem_total = MAYBE(8LL << 30), .page_size = MAYBE(16384), .ksm_pages_sharing = MAYBE(1000),
		 .ksmd_cpu_ns = MAYBE(6000000000)},
		{.t = 120, .mem_total = MAYBE(8LL << 30), .ksmd_cpu_ns = MAYBE(1000)}, /* ksmd restarted */
	};
	struct series_set s;
	int64_t page = 0;
	assert_int_equal(history_host_series(p, 3, &s, &page), 0);
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
	struct history_vm_point p[2] = {
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
	assert_int_equal(history_vm_series(p, 2, 4096, &s), 0);
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
	struct history_disk_point p[12] = {
		{.t = 10, .device = "cd0", .read_bytes = MAYBE(0), .write_bytes = MAYBE(0)},
		{.t = 30, .device = "cd0", .read_bytes = MAYBE(2000), .write_bytes = MAYBE(0)},
		{.t = 10, .device = "disk0", .read_bytes = MAYBE(100), .write_bytes = MAYBE(0)},
		{.t = 20, .device = "disk0", .read_bytes = UNKNOWN, .write_bytes = MAYBE((int64_t)(10 * MiB))},
		{.t = 30, .device = "disk0", .read_bytes = MAYBE(300), .write_bytes = MAYBE(5)}, /* reset */
	};
	struct history_disk_series d;
	assert_int_equal(history_disk_series(p, 0, &d), -ENODATA);
	assert_int_equal(history_disk_series(p, 5, &d), 0);
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
		p[i] = (struct history_disk_point){.t = 10, .device = {(char)('a' + i)}, .write_bytes = MAYBE(1)};
	assert_int_equal(history_disk_series(p, 8, &d), 0);
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
	struct history_vm_point p[3] = {
		{.t = 1, .pss = MAYBE((int64_t)(300 * MiB)), .memory_cost = MAYBE((int64_t)(364 * MiB))},
		{.t = 2, .pss = MAYBE((int64_t)(300 * MiB)), .memory_cost = UNKNOWN},
		{.t = 3, .pss = UNKNOWN, .memory_cost = UNKNOWN},
	};
	struct series_set s;
	assert_int_equal(history_vm_series(p, 3, 4096, &s), 0);
	assert_true(series_row(&s, SERIES_VM_COST)[0] == 364 * MiB);
	assert_true(series_row(&s, SERIES_VM_COST)[1] == 300 * MiB);
	assert_true(isnan(series_row(&s, SERIES_VM_COST)[2]));
	series_free(&s);
}

/* The report's chart of a VM: its huge pages as a band of their own, and in the note, only for
 * a VM that holds some (the chart of any other VM is as it was). */
static char *vm_chart(maybe_i64 hugetlb)
{
	struct history_vm_point p[2] = {
		{.t = 100, .rss = MAYBE((int64_t)(40 * MiB)), .overhead = MAYBE((int64_t)(40 * MiB)), .hugetlb = hugetlb},
		{.t = 110, .rss = MAYBE((int64_t)(40 * MiB)), .overhead = MAYBE((int64_t)(40 * MiB)), .hugetlb = hugetlb},
	};
	struct series_set s;
	assert_int_equal(history_vm_series(p, 2, 4096, &s), 0);
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


/* A counter recorded only where it changed (a KVM counter): its rate over the time since the row
 * before, on the later row's time; a value that went down is a reset, NaN, never a negative rate. */
static void rate_between_changed_rows(void **state)
{
	(void)state;
	const double t[] = {100, 110, 130, 140};
	const int64_t v[] = {1000, 2000, 2000, 500};
	struct series_set s;
	assert_int_equal(history_rate_series(t, v, 1, &s), -ENODATA);
	assert_int_equal(history_rate_series(t, v, 4, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.k, 1);
	assert_true(s.t[0] == 110 && s.t[1] == 130 && s.t[2] == 140);
	assert_true(near(series_row(&s, 0)[0], 100, 1e-9)); /* 1000 in 10 s */
	assert_true(series_row(&s, 0)[1] == 0);             /* unchanged over 20 s */
	assert_true(isnan(series_row(&s, 0)[2]));           /* went down: a reset */
	series_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_series_from_stored_points),
		cmocka_unit_test(vm_chart_huge_pages),
		cmocka_unit_test(vm_series_from_stored_points),
		cmocka_unit_test(vm_cost_from_stored_points),
		cmocka_unit_test(disk_rates_from_stored_points),
		cmocka_unit_test(rate_between_changed_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
