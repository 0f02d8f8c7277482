/* store.c and the reading of old schemas, with real SQLite in a temporary directory: one writer
 * at a time beside readers, foreign and missing files refused, every older schema migrated in
 * place by a writer, schema 4 refused by readers as older, schema 5 read as it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_schema.h"
#include "store/store_series.h"
#include "store/store_share.h"
#include "store_testutil.h"

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

/* old_database with one VM (id 1) and one sample of it: columns and values after vm_id, t_ms. */
static struct history_vm_point *one_old_sample(int version, const char *columns, const char *values, size_t *ret_n)
{
	char rows[512];
	snprintf(rows, sizeof(rows),
		 "INSERT INTO vms (id, pid, start_ticks, boot_ms, vmm) VALUES (1, 7, 9, 0, 'qemu');"
		 "INSERT INTO vm_samples (vm_id, t_ms, %s) VALUES (1, 1799999995000, %s);",
		 columns, values);
	return old_database(version, rows, ret_n);
}

/* A database written by vmhost with schema 1 (before the CPU and cgroup columns) is migrated
 * in place by the next writer; its old rows read back with the new figures unknown. */
static void schema_1_is_migrated(void **state)
{
	(void)state;
	size_t np;
	struct history_vm_point *p = one_old_sample(1, "rss", "4096", &np);
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
	struct history_vm_point *p = one_old_sample(2, "rss, pss, cpu_ms", "4096, 4096, 5", &np);
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

/* Schema 6 (before the stalls): its rows read back with them unknown, and the next writer's
 * samples carry them: vm0's 10 ms of copies and 20 ms of reclaim a second are 3% of one thread in
 * the report's row; the old VM's have none. */
static void schema_6_is_migrated(void **state)
{
	(void)state;
	size_t np;
	struct history_vm_point *p = one_old_sample(6, "rss, cpu_ms", "4096, 5", &np);
	assert_int_equal(np, 1);
	assert_true(p[0].cpu_ms.known);
	for (int k = 0; k < STALL_NKINDS; k++)
		assert_false(p[0].stall_us[k].known);
	assert_false(p[0].wpcopy_count.known);
	free(p);
	struct store *s;
	assert_int_equal(store_open_read(db, &s), 0);
	assert_int_equal(store_vm_points(s, 2, 0, 2e9, &p, &np), 0); /* vm0 of the new writer: 2 samples */
	assert_int_equal(np, 2);
	assert_true(p[1].stall_us[STALL_WPCOPY].known && p[1].stall_us[STALL_WPCOPY].v == 1000000100000);
	assert_true(p[1].wpcopy_count.known && p[1].wpcopy_count.v == 10000001000);
	assert_true(p[1].stall_us[STALL_IRQ].known && p[1].stall_us[STALL_IRQ].v == 0);
	free(p);
	struct series_set set;
	assert_int_equal(store_vm_series(s, 2, 0, 2e9, 4096, NULL, 100, &set), 0);
	assert_true(fabs(series_row(&set, SERIES_VM_STALL)[1] - 3.0) < 1e-3);
	series_free(&set);
	assert_int_equal(store_vm_series(s, 1, 0, 2e9, 4096, NULL, 100, &set), 0); /* the old VM's row */
	assert_true(isnan(series_row(&set, SERIES_VM_STALL)[set.n - 1]));
	series_free(&set);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(one_writer_at_a_time, setup, teardown),
		cmocka_unit_test_setup_teardown(foreign_files_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_1_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_2_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_3_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_4_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_5_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_5_is_read_as_it_is, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_6_is_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_4_is_old_to_readers, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
