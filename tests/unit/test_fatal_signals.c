/* The handlers that clean up on SIGINT, SIGTERM, SIGHUP end the process by that signal, as
 * their comments promise: a parent's waitpid sees WIFSIGNALED with it, not exit(128 + signal)
 * (which a shell shows alike, hence C). Each runs in a child on a KSM tree of its own (a
 * temporary directory standing for /sys), whose changed setting must be back after the death. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/bench/alloc_qemu.h"
#include "core/bench/bench_accounting.h"
#include "core/tune/ksm_guard.h"
#include "testutil.h"

struct tree {
	char dir[64], sys[128], knob[192];
};

static void tree_new(struct tree *t)
{
	assert_int_equal(tmp_tree_make(t->dir, sizeof(t->dir), "signals"), 0);
	snprintf(t->sys, sizeof(t->sys), "%s/sys", t->dir);
	mkdirf("%s/kernel/mm/ksm", t->sys);
	snprintf(t->knob, sizeof(t->knob), "%s/kernel/mm/ksm/pages_to_scan", t->sys);
	put(t->knob, "100\n");
}

static void tree_free(struct tree *t)
{
	assert_int_equal(tmp_tree_remove(t->dir), 0);
}

static int knob(const struct tree *t)
{
	FILE *f = fopen(t->knob, "r");
	int v = -1;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

enum guard { GUARD_KSM, GUARD_KSM_BENCH, GUARD_QEMU };

/* The child: its guard in place (and pages_to_scan changed under it), says so on the pipe, and
 * waits for the signal. Exit 3 when anything failed before. */
static void child(const struct tree *t, enum guard g, int ready)
{
	struct io_root root = {.proc = "/proc", .sys = t->sys};
	if (g == GUARD_QEMU)
		qemu_guard_signals();
	else if (ksm_guard_begin(&root, g == GUARD_KSM_BENCH ? bench_accounting_on_signal : NULL) < 0 ||
		 ksm_guard_set("pages_to_scan", "777") < 0)
		_exit(3);
	if (write(ready, "r", 1) != 1)
		_exit(3);
	for (;;)
		pause();
}

/* Forks the child, signals it once ready, and returns its wait status. */
static int die_by(const struct tree *t, enum guard g, int sig)
{
	int fd;
	pid_t pid = fork_piped(&fd);
	if (pid == 0)
		child(t, g, fd);
	char c;
	ssize_t n = read(fd, &c, 1);
	close(fd);
	if (n == 1)
		assert_int_equal(kill(pid, sig), 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(n, 1);
	return status;
}

static void expect_signaled(int status, int sig)
{
	if (WIFEXITED(status))
		print_error("exited with %d, not killed by signal %d\n", WEXITSTATUS(status), sig);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), sig);
}

static void ksm_guard_dies_by_the_signal(void **state)
{
	(void)state;
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct tree t;
		tree_new(&t);
		expect_signaled(die_by(&t, GUARD_KSM, sigs[i]), sigs[i]);
		assert_int_equal(knob(&t), 100); /* restored before dying */
		tree_free(&t);
	}
}

static void bench_accounting_dies_by_the_signal(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t);
	expect_signaled(die_by(&t, GUARD_KSM_BENCH, SIGTERM), SIGTERM);
	assert_int_equal(knob(&t), 100);
	tree_free(&t);
}

static void alloc_qemu_dies_by_the_signal(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t);
	expect_signaled(die_by(&t, GUARD_QEMU, SIGTERM), SIGTERM);
	expect_signaled(die_by(&t, GUARD_QEMU, SIGINT), SIGINT);
	tree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ksm_guard_dies_by_the_signal),
		cmocka_unit_test(bench_accounting_dies_by_the_signal),
		cmocka_unit_test(alloc_qemu_dies_by_the_signal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
