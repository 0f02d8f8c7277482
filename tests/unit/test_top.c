/* core/top: the view two readings give (rates only for the same process: pid and start time),
 * sorting by each column, the name filter, helpers under their VM; out/top_view: the columns
 * that fit a width and the --batch frame. Readings are built by hand. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/sample/top.h"
#include "out/top_view.h"

struct vm_spec {
	pid_t pid;
	uint64_t start;
	const char *name;
	double cpu_seconds;
	int64_t rss; /* the other byte figures derive from it, so each column orders the VMs */
};

static void reading(struct top_reading *r, double t, const struct vm_spec *s, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->monotonic_seconds = t;
	r->ksmd_cpu_ns = UNKNOWN;
	r->vms.vms = calloc(n ? n : 1, sizeof(struct vm));
	assert_non_null(r->vms.vms);
	r->vms.n = n;
	for (size_t i = 0; i < n; i++) {
		struct vm *vm = &r->vms.vms[i];
		vm->pid = s[i].pid;
		vm->start_ticks = s[i].start;
		snprintf(vm->cfg.name, sizeof(vm->cfg.name), "%s", s[i].name);
		vm->cpu = (struct vm_cpu){.cpu_seconds = s[i].cpu_seconds, .vcpu_delay_seconds = NAN, .cpu_percent = NAN,
					  .vcpu_delay_percent = NAN};
		vm->mem.rss = MAYBE(s[i].rss);
		vm->pss_bytes = MAYBE(s[i].rss / 2);
		vm->ksm_saved_bytes = MAYBE(s[i].rss / 3);
		vm->overhead_bytes = MAYBE(s[i].rss / 4);
		vm->cg.memory_bytes = MAYBE(s[i].rss * 2);
		for (int k = 0; k < PRESSURE_NKINDS; k++) {
			vm->cg.have_pressure[k] = true;
			vm->cg.pressure[k].some_avg10 = (double)s[i].rss / 1000.0 + k;
		}
	}
}

static void add_helper(struct top_reading *r, size_t vm, pid_t pid, uint64_t start, const char *comm, double cpu)
{
	r->helpers = realloc(r->helpers, (r->nhelpers + 1) * sizeof(*r->helpers));
	assert_non_null(r->helpers);
	struct top_helper *h = &r->helpers[r->nhelpers++];
	*h = (struct top_helper){.vm = vm, .pid = pid, .start_ticks = start, .rss_bytes = MAYBE(pid * 1000),
				 .cpu_seconds = cpu};
	snprintf(h->comm, sizeof(h->comm), "%s", comm);
}

static void add_exits(struct top_reading *r, pid_t pid, uint64_t start, double rate)
{
	r->exits = realloc(r->exits, (r->nexits + 1) * sizeof(*r->exits));
	assert_non_null(r->exits);
	r->exits[r->nexits++] = (struct top_exits){pid, start, rate, rate / 10}; /* polling with the exits */
}

static const struct top_row *row_of(const struct top_view *v, pid_t pid)
{
	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[i].pid == pid)
			return &v->rows[i];
	fail_msg("no row for pid %d", (int)pid);
	return NULL;
}

/* Three VMs whose every figure orders them b > c > a; a fourth with nothing known. */
static void three_vms(struct top_reading *a, struct top_reading *b, struct top_view *v)
{
	const struct vm_spec before[] = {
		{10, 1, "alpha", 100, 1000}, {20, 1, "bravo", 100, 3000}, {30, 1, "charlie", 100, 2000},
		{40, 1, "delta", 100, 500},
	};
	const struct vm_spec after[] = {
		{10, 1, "alpha", 101, 1000}, {20, 1, "bravo", 103, 3000}, {30, 1, "charlie", 102, 2000},
		{40, 1, "delta", 100, 500},
	};
	reading(a, 10, before, 4);
	reading(b, 11, after, 4);
	/* delta: nothing known but its name, pid and CPU (0) */
	struct vm *d = &b->vms.vms[3];
	d->mem.rss = d->pss_bytes = d->ksm_saved_bytes = d->overhead_bytes = d->cg.memory_bytes = UNKNOWN;
	for (int k = 0; k < PRESSURE_NKINDS; k++)
		d->cg.have_pressure[k] = false;
	add_exits(b, 10, 1, 1.0);
	add_exits(b, 20, 1, 3.0);
	add_exits(b, 30, 1, 2.0);
	for (size_t i = 0; i < 3; i++) /* wait: bravo 3%, charlie 2%, alpha 1% */
		b->vms.vms[i].cpu.vcpu_delay_percent = NAN;
	assert_int_equal(top_view_build(a, b, v), 0);
	v->rows[0].v[TOP_DELAY] = 1;
	v->rows[1].v[TOP_DELAY] = 3;
	v->rows[2].v[TOP_DELAY] = 2;
	v->rows[3].v[TOP_CPU] = NAN;
}

static void expect_order(const struct top_view *v, enum top_col c, bool reverse, const pid_t *want, size_t n)
{
	size_t order[16];
	assert_int_equal(top_view_order(v, c, reverse, NULL, order), n);
	for (size_t i = 0; i < n; i++) {
		if (v->rows[order[i]].pid != want[i])
			fail_msg("sort by %s%s: position %zu is pid %d, want %d", top_col_key(c), reverse ? " reversed" : "", i,
				 (int)v->rows[order[i]].pid, (int)want[i]);
	}
}

static void test_sort_each_column(void **state)
{
	(void)state;
	struct top_reading a, b;
	struct top_view v;
	three_vms(&a, &b, &v);
	assert_true(fabs(row_of(&v, 20)->v[TOP_CPU] - 300.0) < 1e-9);
	const enum top_col numeric[] = {TOP_CPU, TOP_DELAY, TOP_RSS, TOP_PSS, TOP_KSM_SAVED, TOP_OVERHEAD,
					TOP_EXITS, TOP_CG_MEM, TOP_MEM_PSI, TOP_CPU_PSI, TOP_IO_PSI, TOP_POLL};
	for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++) {
		/* largest first, unknown (delta) last; reversed: smallest first, unknown still last */
		expect_order(&v, numeric[i], false, (const pid_t[]){20, 30, 10, 40}, 4);
		expect_order(&v, numeric[i], true, (const pid_t[]){10, 30, 20, 40}, 4);
	}
	expect_order(&v, TOP_NAME, false, (const pid_t[]){10, 20, 30, 40}, 4);
	expect_order(&v, TOP_NAME, true, (const pid_t[]){40, 30, 20, 10}, 4);
	expect_order(&v, TOP_PID, false, (const pid_t[]){40, 30, 20, 10}, 4);
	for (int c = 0; c < TOP_NCOLS; c++) {
		enum top_col back;
		assert_int_equal(top_col_parse(top_col_key((enum top_col)c), &back), 0);
		assert_int_equal(back, c);
	}
	enum top_col none, old;
	assert_int_equal(top_col_parse("memory", &none), -EINVAL);
	assert_int_equal(top_col_parse("wait", &old), 0); /* the deprecated name of delay */
	assert_int_equal(old, TOP_DELAY);
	top_view_free(&v);
	top_reading_free(&a);
	top_reading_free(&b);
}

static void test_filter_and_helpers(void **state)
{
	(void)state;
	struct top_reading a, b;
	struct top_view v;
	const struct vm_spec vms[] = {{10, 1, "web-1", 1, 1000}, {20, 1, "db", 1, 3000}, {30, 1, "Web-2", 1, 2000}};
	reading(&a, 1, vms, 3);
	reading(&b, 2, vms, 3);
	add_helper(&a, 1, 21, 5, "swtpm", 1.0);
	add_helper(&a, 1, 22, 5, "virtiofsd", 1.0);
	add_helper(&b, 1, 21, 5, "swtpm", 1.1);     /* 10% */
	add_helper(&b, 1, 22, 5, "virtiofsd", 1.5); /* 50% */
	add_helper(&b, 0, 11, 5, "virtiofsd", 0);   /* new: no rate */
	assert_int_equal(top_view_build(&a, &b, &v), 0);
	assert_int_equal(v.nrows, 6);
	assert_true(row_of(&v, 21)->helper);
	assert_true(fabs(row_of(&v, 22)->v[TOP_CPU] - 50.0) < 1e-6);
	assert_true(isnan(row_of(&v, 11)->v[TOP_CPU]));
	size_t order[8];
	/* by RSS: db (its helpers under it, busiest first by RSS too), Web-2, web-1 and its helper */
	size_t n = top_view_order(&v, TOP_RSS, false, NULL, order);
	const pid_t want[] = {20, 22, 21, 30, 10, 11};
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v.rows[order[i]].pid, want[i]);
	/* by CPU: helpers sorted among themselves the same way */
	n = top_view_order(&v, TOP_CPU, false, NULL, order);
	for (size_t i = 0; i < n; i++)
		if (v.rows[order[i]].pid == 20)
			assert_int_equal(v.rows[order[i + 1]].pid, 22);
	/* filter: any case, substring; a helper's name keeps its VM (with all its helpers) */
	n = top_view_order(&v, TOP_RSS, false, "WEB", order);
	assert_int_equal(n, 3);
	assert_int_equal(v.rows[order[0]].pid, 30);
	assert_int_equal(v.rows[order[1]].pid, 10);
	assert_int_equal(v.rows[order[2]].pid, 11);
	n = top_view_order(&v, TOP_RSS, false, "swtpm", order);
	assert_int_equal(n, 3);
	assert_int_equal(v.rows[order[0]].pid, 20);
	assert_int_equal(top_view_order(&v, TOP_RSS, false, "nothing", order), 0);
	assert_int_equal(top_view_order(&v, TOP_RSS, false, "", order), 6);
	top_view_free(&v);
	top_reading_free(&a);
	top_reading_free(&b);
}

/* A VM that vanished, one that appeared, one whose pid was reused by another VM, a helper's pid
 * reused: none shows the figures of the process it replaced. */
static void test_churn(void **state)
{
	(void)state;
	struct top_reading a, b;
	struct top_view v;
	const struct vm_spec before[] = {{100, 1, "old", 10, 1000}, {200, 5, "stays", 10, 1000}, {300, 2, "gone", 10, 1000}};
	const struct vm_spec after[] = {{100, 9, "new-on-old-pid", 50, 4000}, {200, 5, "stays", 11, 1000},
					{400, 7, "appeared", 20, 1000}};
	reading(&a, 100, before, 3);
	reading(&b, 101, after, 3);
	a.ksmd_cpu_ns = MAYBE(1000000000);
	b.ksmd_cpu_ns = MAYBE(1250000000);
	b.host.ksm = (struct ksm_sysfs){.present = true, .pages_shared = MAYBE(100), .pages_sharing = MAYBE(300),
					.pages_unshared = MAYBE(500), .pages_volatile = MAYBE(100)};
	b.vms.vms[1].mem.ksm_rmap_items = MAYBE(400); /* "stays": 40% of the pages ksmd tracks */
	add_helper(&a, 0, 150, 2, "swtpm", 5);
	add_helper(&b, 0, 150, 3, "swtpm", 9); /* pid reused by another process */
	add_exits(&b, 100, 1, 5000);           /* the old VM's, e.g. from a stale read: not the new one's */
	add_exits(&b, 200, 5, 42);
	assert_int_equal(top_view_build(&a, &b, &v), 0);
	assert_int_equal(v.nvms, 3);
	const struct top_row *reused = row_of(&v, 100), *stays = row_of(&v, 200), *appeared = row_of(&v, 400);
	assert_string_equal(reused->name, "new-on-old-pid");
	assert_true(isnan(reused->v[TOP_CPU]));
	assert_true(isnan(reused->v[TOP_EXITS]));
	assert_true(isnan(row_of(&v, 150)->v[TOP_CPU]));
	assert_true(fabs(stays->v[TOP_CPU] - 100.0) < 1e-9);
	assert_true(fabs(stays->v[TOP_EXITS] - 42) < 1e-9);
	assert_true(isnan(appeared->v[TOP_CPU]));
	assert_true(fabs(reused->v[TOP_RSS] - 4000) < 1e-9); /* its own memory figures */
	for (size_t i = 0; i < v.nrows; i++)
		assert_string_not_equal(v.rows[i].name, "gone");
	assert_true(fabs(v.ksmd_cpu_percent - 25.0) < 1e-9);
	assert_true(fabs(stays->v[TOP_KSMD] - 10.0) < 1e-9); /* 40% of ksmd's 25% */
	assert_true(isnan(appeared->v[TOP_KSMD]));            /* its rmap items unknown */
	assert_true(fabs(v.seconds - 1.0) < 1e-9);
	top_view_free(&v);
	/* The first view has no rates at all. */
	assert_int_equal(top_view_build(NULL, &a, &v), 0);
	assert_true(v.seconds == 0 && isnan(row_of(&v, 200)->v[TOP_CPU]) && isnan(v.ksmd_cpu_percent));
	top_view_free(&v);
	top_reading_free(&a);
	top_reading_free(&b);
}

static void test_columns_fit(void **state)
{
	(void)state;
	enum top_col shown[TOP_NCOLS];
	assert_int_equal(top_view_columns(0, shown), TOP_NCOLS);
	size_t n80 = top_view_columns(80, shown), prev = 0;
	assert_true(n80 >= 8); /* name, cpu, wait, rss, pss, ksm, overhead, exits */
	bool name = false, exits = false;
	for (size_t i = 0; i < n80; i++) {
		name |= shown[i] == TOP_NAME;
		exits |= shown[i] == TOP_EXITS;
	}
	assert_true(name && exits);
	for (size_t w = 20; w <= 200; w += 10) { /* more columns as it widens, never fewer */
		size_t n = top_view_columns(w, shown);
		assert_true(n >= prev);
		prev = n;
	}
	assert_int_equal(prev, TOP_NCOLS);
}

static void test_batch_frame(void **state)
{
	(void)state;
	struct top_reading a, b;
	struct top_view v;
	three_vms(&a, &b, &v);
	snprintf(v.rows[0].name, sizeof(v.rows[0].name), "tab\there");
	size_t order[8], n = top_view_order(&v, TOP_CPU, false, NULL, order);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	top_view_batch(f, &v, order, n, 1700000000.5, 1);
	fclose(f);
	assert_non_null(strstr(buf, "vm\t20\t20\tbravo\t300.0\t3.0\t3000\t1500\t1000\t750\t3.0\t6000\t3.0\t4.0\t5.0"));
	assert_non_null(strstr(buf, "vm\t40\t40\tdelta\tn/a\tn/a\tn/a"));
	assert_non_null(strstr(buf, "\ttab\\x09here\t")); /* a control character never splits a field */
	char *save = NULL, *line = strtok_r(buf, "\n", &save);
	assert_true(!strncmp(line, "# vmhost top time_unix=1700000000.500 interval_seconds=1.000", 60));
	line = strtok_r(NULL, "\n", &save);
	assert_true(!strncmp(line, "# host mem_total_bytes=", 23));
	line = strtok_r(NULL, "\n", &save);
	assert_string_equal(line, "kind\tpid\tvm_pid\tname\tcpu\tdelay\trss\tpss\tksm\toverhead\texits\tcgroup\tmempsi\tcpupsi\tiopsi\tcost"
				  "\tksmd\tread\twrite\tnetrx\tnettx\tpoll\tstall");
	size_t rows = 0;
	while ((line = strtok_r(NULL, "\n", &save))) {
		size_t tabs = 0;
		for (char *p = line; *p; p++)
			tabs += *p == '\t';
		assert_int_equal(tabs, 22);
		rows++;
	}
	assert_int_equal(rows, 4);
	free(buf);
	top_view_free(&v);
	top_reading_free(&a);
	top_reading_free(&b);
}

/* Disk and network columns: rates over the interval of the VM's counters; the taps summed; a VM
 * whose taps are unknown has no network rate (n/a, never 0). */
static void test_io_rates(void **state)
{
	(void)state;
	const struct vm_spec spec[] = {{10, 1, "alpha", 100, 1000}, {20, 1, "bravo", 100, 1000}};
	struct top_reading a, b;
	struct top_view v;
	reading(&a, 10, spec, 2);
	reading(&b, 12, spec, 2);
	for (size_t i = 0; i < 2; i++) {
		struct top_reading *r = i ? &b : &a;
		for (size_t k = 0; k < 2; k++) {
			struct vm_io *io = &r->vms.vms[k].io;
			vm_io_unknown(io);
			io->read_bytes = MAYBE(0);
			io->write_bytes = MAYBE((int64_t)i * 4096 * 1000); /* 2 s: 2048000 a second */
			io->ifaces_known = k == 0;
			io->nifaces = k == 0 ? 2 : 0;
			for (size_t t = 0; t < io->nifaces; t++) {
				snprintf(io->ifaces[t].name, sizeof(io->ifaces[t].name), "tap%d", (int)t);
				io->ifaces[t].rx_bytes = MAYBE((int64_t)i * 1000);
				io->ifaces[t].tx_bytes = MAYBE(5);
			}
		}
	}
	assert_int_equal(top_view_build(&a, &b, &v), 0);
	assert_true(v.rows[0].v[TOP_DISK_WRITE] == 2048000 && v.rows[0].v[TOP_DISK_READ] == 0);
	assert_true(v.rows[0].v[TOP_NET_RX] == 1000 && v.rows[0].v[TOP_NET_TX] == 0); /* two taps of 500 a second */
	assert_true(isnan(v.rows[1].v[TOP_NET_RX]) && isnan(v.rows[1].v[TOP_NET_TX]));
	top_view_free(&v);
	top_reading_free(&a);
	top_reading_free(&b);
}

/* The live frame (out/screen.h): the header's time is the one given (out/ reads no clock), the
 * terminal's escapes only on a full screen, exits/s in the one rate format (fmt_rate). */
static void test_full_screen_frame(void **state)
{
	(void)state;
	struct top_reading a, b;
	struct top_view v;
	three_vms(&a, &b, &v);
	v.rows[1].v[TOP_EXITS] = 12345;
	size_t order[8], n = top_view_order(&v, TOP_CPU, false, NULL, order);
	setenv("TZ", "UTC", 1);
	tzset();
	for (int full = 0; full < 2; full++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		assert_non_null(f);
		struct top_frame fr = {.now_unix = 1700000000.9, .interval_seconds = 2, .full_screen = full,
				       .sort = TOP_CPU, .filter = "", .exits_why = ""};
		top_view_frame(f, &v, order, n, &fr);
		fclose(f);
		const char *title = full ? "\033[Hvmhost top  22:13:20  every 2s  4 VMs\033[K\n"
					 : "vmhost top  22:13:20  every 2s  4 VMs\n";
		assert_true(!strncmp(buf, title, strlen(title)));
		assert_true(full ? strstr(buf, "\033[J") != NULL : strchr(buf, '\033') == NULL);
		assert_non_null(strstr(buf, " 12.3k")); /* bravo's exits/s */
		free(buf);
	}
	top_view_free(&v);
	top_reading_free(&a);
	top_reading_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sort_each_column),
		cmocka_unit_test(test_io_rates),
		cmocka_unit_test(test_filter_and_helpers),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_columns_fit),
		cmocka_unit_test(test_batch_frame),
		cmocka_unit_test(test_full_screen_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
