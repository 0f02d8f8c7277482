/* io's platform pieces beyond reading: the one clock and its timespec; files replaced whole
 * (io/file.h) and the private state directory (io/state.h), against planted links and a
 * directory swapped for a link while written; the owner checks of lock files and of a file the
 * user writes for itself (io_lock, io_open_owned: REVIEW S-M3, S-M5). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/clock.h"
#include "io/file.h"
#include "io/state.h"
#include "testutil.h"

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void test_clock_timespec(void **state)
{
	(void)state;
	struct timespec ts = clock_timespec(12.25);
	assert_int_equal(ts.tv_sec, 12);
	assert_int_equal(ts.tv_nsec, 250000000L);
	ts = clock_timespec(0);
	assert_int_equal(ts.tv_sec, 0);
	assert_int_equal(ts.tv_nsec, 0);
	ts = clock_timespec(3.9999999999999);
	assert_true(ts.tv_nsec < 1000000000L);
	assert_true(ts.tv_sec == 3 || ts.tv_sec == 4);
}

static void test_clocks_move(void **state)
{
	(void)state;
	double m0 = clock_monotonic_seconds(), c0 = clock_thread_cpu_seconds();
	volatile uint64_t spin = 0;
	while (clock_thread_cpu_seconds() - c0 < 0.01)
		spin++;
	assert_true(clock_monotonic_seconds() - m0 >= 0.01);
	assert_true(clock_wall_seconds() > 1.7e9); /* after 2023 */
}

static void test_replace_commit_and_abort(void **state)
{
	(void)state;
	char *dir = tmp_tree_new("iofile"), path[512];
	snprintf(path, sizeof(path), "%s/out.html", dir);
	put(path, "old");
	struct io_replace rp;
	assert_int_equal(io_replace_path(path, 0644, &rp), 0);
	assert_int_equal(io_replace_write(&rp, "half", 4), 0);
	assert_string_equal(slurp(path), "old"); /* nothing seen before the commit */
	io_replace_abort(&rp);
	assert_string_equal(slurp(path), "old");
	assert_int_equal(entries(dir), 1); /* the temporary file is gone */

	assert_int_equal(io_replace_path(path, 0644, &rp), 0);
	FILE *f = io_replace_stream(&rp);
	assert_non_null(f);
	fprintf(f, "new %d", 42);
	assert_int_equal(io_replace_commit(&rp), 0);
	assert_string_equal(slurp(path), "new 42");
	assert_int_equal(entries(dir), 1);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644); /* main's umask 022 */
	tmp_tree_free(dir);
}

/* A link at the target is replaced, not written through; so is a link at the old fixed name. */
static void test_replace_no_link_followed(void **state)
{
	(void)state;
	char *dir = tmp_tree_new("iofile"), path[512], victim[512], planted[512];
	snprintf(path, sizeof(path), "%s/out.html", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(planted, sizeof(planted), "%s/out.html.tmp", dir);
	put(victim, "not yours");
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(symlink(victim, planted), 0);
	struct io_replace rp;
	assert_int_equal(io_replace_path(path, 0600, &rp), 0);
	assert_int_equal(io_replace_write(&rp, "page", 4), 0);
	assert_int_equal(io_replace_commit(&rp), 0);
	assert_string_equal(slurp(victim), "not yours");
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(slurp(path), "page");
	assert_int_equal(entries(dir), 3);
	assert_int_equal(io_replace_path("/nonexistent-vmhost/x", 0600, &rp), -ENOENT);
	assert_int_equal(io_replace_at(AT_FDCWD, "a/b", 0600, &rp), -EINVAL);
	tmp_tree_free(dir);
}

/* The state directory must be ours, not a link, not writable by others. */
static void test_state_dir_checked(void **state)
{
	(void)state;
	char *dir = tmp_tree_new("iofile"), sub[512], link[512], *got;
	size_t len;
	snprintf(sub, sizeof(sub), "%s/run", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(io_state_write(sub, "memo", "hello", 5), 0);
	assert_int_equal(io_state_read(sub, "memo", 100, &got, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(got, "hello", 5);
	free(got);
	assert_int_equal(io_state_read(sub, "memo", 4, &got, &len), -EFBIG);
	assert_int_equal(io_state_read(sub, "none", 100, &got, &len), -ENOENT);
	assert_int_equal(entries(sub), 1);
	assert_int_equal(symlink(sub, link), 0);
	assert_int_equal(io_state_read(link, "memo", 100, &got, &len), -EPERM);
	assert_int_equal(io_state_write(link, "memo", "x", 1), -EPERM);
	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(io_state_read(sub, "memo", 100, &got, &len), -EPERM);
	assert_int_equal(io_state_write(sub, "memo", "x", 1), -EPERM);
	assert_int_equal(entries(sub), 1);
	tmp_tree_free(dir);
}

/* A lock lives in a private directory (made 0700), is a 0600 file of ours, and is refused when
 * the directory or the file is a link, another user's or writable by others; a holder that
 * removes it leaves the next taker a new file. */
static void test_lock_checked(void **state)
{
	(void)state;
	char *dir = tmp_tree_new("iofile"), locks[512], path[600], link[600];
	snprintf(locks, sizeof(locks), "%s/locks", dir);
	/* a.lock, and a link to it, b.lock */
	for (int i = 0; i < 2; i++)
		snprintf(i ? link : path, sizeof(path), "%s/%c.lock", locks, 'a' + i);
	int fd = io_lock(path, 0);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(stat(locks, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(io_lock(path, 0), -EBUSY);
	io_lock_remove(path, fd);
	assert_int_equal(access(path, F_OK), -1);
	fd = io_lock(path, 0);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(io_lock(link, 0), -EPERM);
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(io_lock(path, 0), -EPERM);
	assert_int_equal(chmod(path, 0600), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(io_lock(path, 0), -EPERM);
		assert_int_equal(chown(path, 0, 0), 0);
	}
	assert_int_equal(chmod(locks, 0770), 0);
	assert_int_equal(io_lock(path, 0), -EPERM);
	assert_int_equal(chmod(locks, 0700), 0);
	fd = io_lock(path, 0);
	assert_true(fd >= 0);
	assert_int_equal(io_lock_fd(fd, 0), 0); /* the same open file: already its holder */
	close(fd);
	tmp_tree_free(dir);
}

/* A file the user writes for itself: made with its mode, and refused when it is a link (nothing
 * made behind it), another user's, writable by others or no regular file (a FIFO: no hang). */
static void test_open_owned(void **state)
{
	(void)state;
	char *dir = tmp_tree_new("iofile"), db[512], link[512], victim[512], fifo[512];
	char *const paths[] = {db, link, victim, fifo};
	static const char *const names[] = {"vmhost.db", "link.db", "victim", "fifo.db"};
	for (size_t i = 0; i < 4; i++)
		snprintf(paths[i], sizeof(db), "%s/%s", dir, names[i]);
	int fd = io_open_owned(db, 0644);
	assert_true(fd >= 0);
	close(fd);
	struct stat st;
	assert_int_equal(stat(db, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(io_open_owned(link, 0644), -ELOOP);
	assert_int_equal(access(victim, F_OK), -1);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(io_open_owned(fifo, 0644), -EINVAL);
	assert_int_equal(chmod(db, 0646), 0);
	assert_int_equal(io_open_owned(db, 0644), -EPERM);
	assert_int_equal(chmod(db, 0664), 0); /* group write: a user's private group may have it */
	fd = io_open_owned(db, 0644);
	assert_true(fd >= 0);
	close(fd);
	if (geteuid() == 0) {
		assert_int_equal(chown(db, 65534, 65534), 0);
		assert_int_equal(io_open_owned(db, 0644), -EPERM);
	}
	tmp_tree_free(dir);
}

struct swapper {
	char dir[512], link[512];
	volatile int stop;
	unsigned swaps;
};

/* Swaps the state directory with a link to another directory, over and over (RENAME_EXCHANGE). */
static void *swap_loop(void *arg)
{
	struct swapper *s = arg;
	while (!s->stop)
		s->swaps += renameat2(AT_FDCWD, s->dir, AT_FDCWD, s->link, RENAME_EXCHANGE) == 0;
	return NULL;
}

/* A directory checked once and then used by path could be swapped for a link between the check
 * and the writes; through the one fd, nothing ever lands in the link's target. */
static void test_state_dir_swapped(void **state)
{
	(void)state;
	char *top = tmp_tree_new("iofile"), evil[600];
	struct swapper s = {0};
	snprintf(s.dir, sizeof(s.dir), "%s/run", top);
	snprintf(s.link, sizeof(s.link), "%s/swap", top);
	snprintf(evil, sizeof(evil), "%s/evil", top);
	assert_int_equal(mkdir(s.dir, 0700), 0);
	assert_int_equal(mkdir(evil, 0700), 0);
	assert_int_equal(symlink(evil, s.link), 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, swap_loop, &s), 0);
	unsigned written = 0, tries = 0;
	/* 1.5 s: the path-based writer this replaced leaked a file into evil/ every time here */
	for (double t0 = clock_monotonic_seconds(); clock_monotonic_seconds() - t0 < 1.5; tries++)
		written += io_state_write(s.dir, "memo", "data", 4) == 0;
	s.stop = 1;
	pthread_join(th, NULL);
	print_message("%u of %u writes done, %u swaps\n", written, tries, s.swaps);
	assert_true(written > 0);
	assert_true(s.swaps > 0);
	assert_int_equal(entries(evil), 0);
	tmp_tree_free(top);
}

int main(void)
{
	umask(022);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_timespec),
		cmocka_unit_test(test_clocks_move),
		cmocka_unit_test(test_replace_commit_and_abort),
		cmocka_unit_test(test_replace_no_link_followed),
		cmocka_unit_test(test_state_dir_checked),
		cmocka_unit_test(test_lock_checked),
		cmocka_unit_test(test_open_owned),
		cmocka_unit_test(test_state_dir_swapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
