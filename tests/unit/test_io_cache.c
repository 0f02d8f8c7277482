/* io's kept-open files: a read through the cache answers what a fresh open would, on real
 * processes. A process that exits reads as gone, a pid reused by another process reads as the new
 * one (forced with ns_last_pid, root only), a thread that exits is gone; files of what is no
 * longer read are closed at the sweep; regular files (fixture trees) are never kept. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/io.h"
#include "testthread.h"

static struct io_root cached(struct io_cache **c)
{
	assert_int_equal(io_cache_new(c), 0);
	return (struct io_root){.proc = "/proc", .sys = "/sys", .cache = *c};
}

static void rename_me(int sig)
{
	(void)sig;
	prctl(PR_SET_NAME, "vmh-renamed");
}

/* A child that names itself, says so on a pipe and waits to be killed (SIGUSR1 renames it). */
static pid_t child_named(const char *name)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGUSR1, rename_me);
		prctl(PR_SET_NAME, name);
		(void)!write(p[1], "x", 1);
		for (;;)
			pause();
	}
	char x;
	assert_int_equal(read(p[0], &x, 1), 1);
	close(p[0]);
	close(p[1]);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_reads_as_fresh_and_keeps_the_file(void **state)
{
	(void)state;
	struct io_cache *c;
	struct io_root root = cached(&c);
	pid_t pid = child_named("vmh-cache-a");
	char buf[256];
	for (int i = 0; i < 3; i++) {
		assert_int_equal(io_read(&root, IO_PROC, buf, sizeof(buf), "%d/comm", pid), 12);
		assert_string_equal(buf, "vmh-cache-a\n");
	}
	size_t open;
	uint64_t hits;
	io_cache_stats(c, &open, &hits);
	assert_int_equal(open, 1);
	assert_int_equal(hits, 2);
	/* what the kernel says now, not at the open: the child renamed under the kept file */
	kill(pid, SIGUSR1);
	for (int i = 0; i < 200 && strcmp(buf, "vmh-renamed\n"); i++) {
		usleep(5000);
		assert_true(io_read(&root, IO_PROC, buf, sizeof(buf), "%d/comm", pid) > 0);
	}
	assert_string_equal(buf, "vmh-renamed\n");
	char *cmd;
	size_t len;
	assert_int_equal(io_read_alloc(&root, IO_PROC, &cmd, &len, "%d/cmdline", pid), 0);
	assert_true(len > 0);
	free(cmd);
	assert_int_equal(io_read_alloc(&root, IO_PROC, &cmd, &len, "%d/cmdline", pid), 0);
	free(cmd);
	io_cache_stats(c, &open, &hits);
	assert_int_equal(open, 2);
	stop(pid);
	/* the process is gone: the kept file fails, the path is asked again and is gone too */
	assert_int_equal(io_read(&root, IO_PROC, buf, sizeof(buf), "%d/comm", pid), -ENOENT);
	io_cache_free(c);
}

static void test_a_reused_pid_reads_as_the_new_process(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: needs root (ns_last_pid needs CAP_SYS_ADMIN)\n");
		skip();
		return;
	}
	struct io_cache *c;
	struct io_root root = cached(&c);
	char buf[256];
	pid_t a = 0, b = -1, *tids;
	size_t ntids;
	/* other processes on the host may take the pid first: a few tries */
	for (int tries = 0; tries < 20 && b != a; tries++) {
		a = child_named("vmh-cache-old");
		assert_int_equal(io_read(&root, IO_PROC, buf, sizeof(buf), "%d/comm", a), 14);
		assert_string_equal(buf, "vmh-cache-old\n");
		assert_int_equal(io_list_tasks(&root, a, &tids, &ntids), 0);
		free(tids);
		stop(a);
		char last[32];
		snprintf(last, sizeof(last), "%d", a - 1);
		assert_int_equal(io_write(&root, IO_PROC, last, "sys/kernel/ns_last_pid"), 0);
		b = child_named("vmh-cache-new");
		if (b != a)
			stop(b);
	}
	assert_int_equal(b, a);
	assert_int_equal(io_read(&root, IO_PROC, buf, sizeof(buf), "%d/comm", a), 14);
	assert_string_equal(buf, "vmh-cache-new\n");
	/* its task directory, kept from the old process, lists the new one's thread */
	assert_int_equal(io_list_tasks(&root, a, &tids, &ntids), 0);
	assert_int_equal(ntids, 1);
	assert_int_equal(tids[0], b);
	free(tids);
	stop(b);
	assert_int_equal(io_list_tasks(&root, a, &tids, &ntids), -ENOENT);
	io_cache_free(c);
}

static void test_a_thread_that_exits_is_gone(void **state)
{
	(void)state;
	struct io_cache *c;
	struct io_root root = cached(&c);
	struct test_thread t;
	test_thread_start(&t, "vmh-cache-thr");
	char buf[64];
	assert_int_equal(io_read(&root, IO_PROC, buf, sizeof(buf), "self/task/%d/comm", t.tid), 14);
	assert_string_equal(buf, "vmh-cache-thr\n");
	pid_t *tids;
	size_t n;
	assert_int_equal(io_list_tasks(&root, getpid(), &tids, &n), 0);
	bool listed = false;
	for (size_t i = 0; i < n; i++)
		listed |= tids[i] == t.tid;
	assert_true(listed);
	free(tids);
	test_thread_finish(&t);
	/* joined is not yet reaped: wait for the kernel to drop the thread (by a fresh look) */
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d", t.tid);
	for (int i = 0; i < 1000 && access(path, F_OK) == 0; i++)
		usleep(1000);
	/* listed again through the kept directory: without it */
	assert_int_equal(io_list_tasks(&root, getpid(), &tids, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(tids[i], t.tid);
	free(tids);
	/* the thread has exited: through the kept file as by a fresh open, it is not there */
	assert_int_equal(io_read(&root, IO_PROC, buf, sizeof(buf), "self/task/%d/comm", t.tid), -ENOENT);
	io_cache_free(c);
}

static void test_sweep_closes_what_was_not_read(void **state)
{
	(void)state;
	struct io_cache *c;
	struct io_root root = cached(&c);
	char buf[4096];
	assert_true(io_read(&root, IO_PROC, buf, sizeof(buf), "self/stat") > 0);
	assert_true(io_read(&root, IO_PROC, buf, sizeof(buf), "meminfo") > 0);
	size_t open;
	uint64_t hits;
	io_cache_sweep(c, 0);
	io_cache_stats(c, &open, &hits);
	assert_int_equal(open, 2); /* both read in the round before */
	assert_true(io_read(&root, IO_PROC, buf, sizeof(buf), "meminfo") > 0);
	io_cache_sweep(c, 0);
	io_cache_stats(c, &open, &hits);
	assert_int_equal(open, 1); /* self/stat was not read this round */
	assert_int_equal(hits, 1);
	io_cache_sweep(c, 0);
	io_cache_stats(c, &open, &hits);
	assert_int_equal(open, 0);
	io_cache_free(c);
}

/* A file read every few rounds stays open over keep rounds without a read, not one more. */
static void test_sweep_keeps_what_is_read_every_few_rounds(void **state)
{
	(void)state;
	struct io_cache *c;
	struct io_root root = cached(&c);
	char buf[4096];
	size_t open;
	uint64_t hits;
	assert_true(io_read(&root, IO_PROC, buf, sizeof(buf), "meminfo") > 0);
	for (int round = 0; round < 3; round++) {
		io_cache_sweep(c, 3);
		io_cache_stats(c, &open, &hits);
		assert_int_equal(open, 1);
	}
	assert_true(io_read(&root, IO_PROC, buf, sizeof(buf), "meminfo") > 0);
	io_cache_stats(c, &open, &hits);
	assert_int_equal(hits, 1); /* read again without an open */
	for (int round = 0; round < 4; round++)
		io_cache_sweep(c, 3);
	io_cache_stats(c, &open, &hits);
	assert_int_equal(open, 1);
	io_cache_sweep(c, 3);
	io_cache_stats(c, &open, &hits);
	assert_int_equal(open, 0); /* not read in the last 4 rounds */
	io_cache_free(c);
}

static void test_regular_files_are_opened_afresh(void **state)
{
	(void)state;
	char dir[] = "/tmp/vmhost-io-cache-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[512], next[512];
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	snprintf(next, sizeof(next), "%s/meminfo.new", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("old\n", f);
	fclose(f);
	struct io_cache *c;
	assert_int_equal(io_cache_new(&c), 0);
	struct io_root root = {.proc = dir, .sys = dir, .cache = c};
	char buf[64];
	assert_int_equal(io_read(&root, IO_PROC, buf, sizeof(buf), "meminfo"), 4);
	/* replaced by rename, as a fixture writer does: the new content */
	assert_non_null(f = fopen(next, "w"));
	fputs("new!\n", f);
	fclose(f);
	assert_int_equal(rename(next, path), 0);
	assert_int_equal(io_read(&root, IO_PROC, buf, sizeof(buf), "meminfo"), 5);
	assert_string_equal(buf, "new!\n");
	size_t open;
	uint64_t hits;
	io_cache_stats(c, &open, &hits);
	assert_int_equal(open, 0);
	/* too big for the buffer: -EFBIG, as without the cache */
	assert_int_equal(io_read(&root, IO_PROC, buf, 3, "meminfo"), -EFBIG);
	io_cache_free(c);
	unlink(path);
	rmdir(dir);
}

static void test_too_big_through_a_kept_file(void **state)
{
	(void)state;
	struct io_cache *c;
	struct io_root root = cached(&c);
	char small[16], big[1 << 16];
	assert_int_equal(io_read(&root, IO_PROC, small, sizeof(small), "self/status"), -EFBIG);
	ssize_t n = io_read(&root, IO_PROC, big, sizeof(big), "self/status");
	assert_true(n > 100);
	assert_int_equal((size_t)n, strlen(big));
	io_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_as_fresh_and_keeps_the_file),
		cmocka_unit_test(test_a_reused_pid_reads_as_the_new_process),
		cmocka_unit_test(test_a_thread_that_exits_is_gone),
		cmocka_unit_test(test_sweep_closes_what_was_not_read),
		cmocka_unit_test(test_sweep_keeps_what_is_read_every_few_rounds),
		cmocka_unit_test(test_regular_files_are_opened_afresh),
		cmocka_unit_test(test_too_big_through_a_kept_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
