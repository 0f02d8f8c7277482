/* store under faults, with real SQLite: the wall clock set back (no recorded sample replaced),
 * the file deleted under the writer (a new database at the path, and another writer making one
 * there at the moment the old WAL is removed), SQLite's lock held by another program (-EAGAIN,
 * then writing again). unlink and unlinkat are wrapped (-Wl,--wrap) to place that writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/sqlite.h"

#include "core/sample/snapshot.h"
#include "store/store.h"
#include "serve_testutil.h"

static char dir[64], db[128];

static int setup(void **state)
{
	(void)state;
	return scratch_make(dir, db, "store-faults");
}

static int teardown(void **state)
{
	(void)state;
	return scratch_remove(dir);
}

/* A host-only snapshot at wall time wall, monotonic time mono; mem_total tells samples apart. */
static void host_snapshot(struct snapshot *s, double wall, double mono, int64_t mem_total)
{
	memset(s, 0, sizeof(*s));
	s->wall_seconds = wall;
	s->monotonic_seconds = mono;
	s->host.mem_known = true;
	s->host.mem.mem_total = MAYBE(mem_total);
	s->host.page_size_bytes = 4096;
	s->host.clock_ticks_per_second = 100;
}

static int write_at(struct store *s, double wall, double mono, int64_t mem_total)
{
	struct snapshot snap;
	host_snapshot(&snap, wall, mono, mem_total);
	return store_write_sample(s, &snap, NULL);
}

/* mem_total of every sample, in time order, from a reader; returns the count. */
static size_t read_totals(int64_t *out, size_t cap)
{
	struct store *r;
	assert_int_equal(store_open_read(db, &r), 0);
	struct history_host_point *h;
	size_t n;
	assert_int_equal(store_host_points(r, 0, 4e9, &h, &n), 0);
	for (size_t i = 0; i < n && i < cap; i++)
		out[i] = h[i].mem_total.v;
	free(h);
	store_close(r);
	return n;
}

static void clock_set_back_replaces_nothing(void **state)
{
	(void)state;
	struct store *s;
	assert_int_equal(store_open(db, &s), 0);
	assert_int_equal(write_at(s, 1.8e9, 100, 1), 0);
	assert_int_equal(write_at(s, 1.8e9 + 1, 101, 2), 0);
	/* The clock is stepped back two seconds: the same wall times come again. */
	assert_int_equal(write_at(s, 1.8e9, 102, 3), 0);
	assert_int_equal(write_at(s, 1.8e9 + 1, 103, 4), 0);
	/* ... and forward a day. */
	assert_int_equal(write_at(s, 1.8e9 + 86400, 104, 5), 0);
	store_close(s);
	int64_t t[8];
	assert_int_equal(read_totals(t, 8), 5);
	/* Each wall time holds its first sample; the repeats sit a millisecond after it. */
	assert_int_equal(t[0], 1);
	assert_int_equal(t[1], 3);
	assert_int_equal(t[2], 2);
	assert_int_equal(t[3], 4);
	assert_int_equal(t[4], 5);
}

static void deleted_file_is_recreated(void **state)
{
	(void)state;
	struct store *s;
	assert_int_equal(store_open(db, &s), 0);
	assert_int_equal(write_at(s, 1.8e9, 100, 1), 0);
	assert_int_equal(write_at(s, 1.8e9 + 1, 101, 2), 0);
	assert_int_equal(unlink(db), 0);
	assert_int_equal(write_at(s, 1.8e9 + 2, 102, 3), 1); /* said once */
	assert_int_equal(write_at(s, 1.8e9 + 3, 103, 4), 0);
	int64_t t[4];
	assert_int_equal(read_totals(t, 4), 2);
	assert_int_equal(t[0], 3);
	assert_int_equal(t[1], 4);
	/* The new file is ours: a second writer is still refused. */
	struct store *b;
	assert_int_equal(store_open(db, &b), -EBUSY);
	store_close(s);
}

/* Armed: at the first removal of a -wal file, another writer opens the database's path and
 * writes a sample (as a second recorder might just then), and stays open. */
static struct {
	bool armed;
	int opened; /* the other writer's store_open */
	struct store *other;
} race;

int __real_unlink(const char *path);
int __real_unlinkat(int dir_fd, const char *path, int flags);

static void race_in(const char *path)
{
	size_t n = strlen(path);
	if (!race.armed || n < 4 || strcmp(path + n - 4, "-wal"))
		return;
	race.armed = false;
	race.opened = store_open(db, &race.other);
	if (race.opened == 0)
		assert_int_equal(write_at(race.other, 1.8e9 + 10, 110, 10), 0);
}

int __wrap_unlink(const char *path)
{
	race_in(path);
	return __real_unlink(path);
}

int __wrap_unlinkat(int dir_fd, const char *path, int flags)
{
	race_in(path);
	return __real_unlinkat(dir_fd, path, flags);
}

/* The old database's WAL is removed only while its writer holds the lock of the file now at the
 * path: a writer that made a new database there meanwhile keeps its WAL (or could not start). */
static void deleted_file_race_keeps_new_wal(void **state)
{
	(void)state;
	struct store *s;
	assert_int_equal(store_open(db, &s), 0);
	assert_int_equal(write_at(s, 1.8e9, 100, 1), 0);
	assert_int_equal(unlink(db), 0);
	race = (typeof(race)){.armed = true, .opened = 1};
	int r = write_at(s, 1.8e9 + 2, 102, 3);
	assert_false(race.armed); /* the old WAL was removed */
	char wal[200];
	snprintf(wal, sizeof(wal), "%s-wal", db);
	if (race.opened == 0) {
		assert_int_equal(access(wal, F_OK), 0); /* the other writer's WAL is still there */
		assert_int_equal(r, -EBUSY);             /* and the path is its own */
		int64_t t[4];
		assert_int_equal(read_totals(t, 4), 1);
		assert_int_equal(t[0], 10);
		store_close(race.other);
	} else {
		assert_int_equal(race.opened, -EBUSY); /* the path was already ours again */
		assert_int_equal(r, 1);
	}
	store_close(s);
}

static void foreign_lock_drops_and_recovers(void **state)
{
	(void)state;
	struct store *s;
	assert_int_equal(store_open(db, &s), 0);
	assert_int_equal(write_at(s, 1.8e9, 100, 1), 0);
	sqlite3 *other;
	assert_int_equal(sqlite_load(NULL, 0), 0); /* loaded by store_open, or here */
	assert_int_equal(sq.open_v2(db, &other, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
	assert_int_equal(sq.exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(write_at(s, 1.8e9 + 1, 101, 2), -EAGAIN);
	assert_non_null(strstr(store_strerror(-EAGAIN), "locked by another program"));
	assert_int_equal(sq.exec(other, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sq.close_v2(other);
	assert_int_equal(write_at(s, 1.8e9 + 2, 102, 3), 0);
	store_close(s);
	int64_t t[4];
	assert_int_equal(read_totals(t, 4), 2);
	assert_int_equal(t[0], 1);
	assert_int_equal(t[1], 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(clock_set_back_replaces_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(deleted_file_is_recreated, setup, teardown),
		cmocka_unit_test_setup_teardown(deleted_file_race_keeps_new_wal, setup, teardown),
		cmocka_unit_test_setup_teardown(foreign_lock_drops_and_recovers, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
