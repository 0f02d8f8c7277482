/* What a KSM writer changed is written down before it changes it (REVIEW S-M4): the saved-settings
 * file's text (core/tune/ksm_saved.h: its format, and a parser that takes nothing else, a file cut
 * at any byte included) and the guard that keeps it (core/tune/ksm_guard.h): written before the
 * change, removed by a clean end or a restoring signal (a crash's too), left by SIGKILL and put
 * back by the next guard or ksm_guard_restore_left. The guard runs on a KSM tree of its own (a
 * temporary directory standing for /sys) with a test build's VMHOST_RUNTIME_DIR for the file. */
#include <errno.h>
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

#include "core/tune/ksm_guard.h"
#include "core/tune/ksm_saved.h"
#include "io/file.h"
#include "io/state.h"
#include "testutil.h"

static struct ksm_saved sample(void)
{
	struct ksm_saved s = {.dir = "/sys/kernel/mm/ksm", .pid = 4242, .n = 3};
	snprintf(s.set[0].name, sizeof(s.set[0].name), "run");
	snprintf(s.set[0].value, sizeof(s.set[0].value), "0");
	snprintf(s.set[1].name, sizeof(s.set[1].name), "pages_to_scan");
	snprintf(s.set[1].value, sizeof(s.set[1].value), "123");
	snprintf(s.set[2].name, sizeof(s.set[2].name), "advisor_mode");
	snprintf(s.set[2].value, sizeof(s.set[2].value), "scan-time");
	return s;
}

/* s is written as want, which reads back into *back. */
static void formats_as(const struct ksm_saved *s, const char *want, struct ksm_saved *back)
{
	char text[4096];
	int len = ksm_saved_format(s, text, sizeof(text));
	assert_true(len > 0);
	assert_string_equal(text, want);
	assert_int_equal(ksm_saved_parse(text, (size_t)len, back), 0);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct ksm_saved s = sample(), back;
	char text[4096];
	int len;
	formats_as(&s, "vmhost ksm saved 1\npid 4242\ndir /sys/kernel/mm/ksm\nset run 0\n"
		       "set pages_to_scan 123\nset advisor_mode scan-time\nend\n", &back);
	assert_int_equal(back.pid, 4242);
	assert_string_equal(back.dir, s.dir);
	assert_int_equal(back.n, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(back.set[i].name, s.set[i].name);
		assert_string_equal(back.set[i].value, s.set[i].value);
	}
	s.n = 0; /* no setting yet: still a file */
	len = ksm_saved_format(&s, text, sizeof(text));
	assert_int_equal(ksm_saved_parse(text, (size_t)len, &back), 0);
	assert_int_equal(back.n, 0);
	s = sample();
	assert_int_equal(ksm_saved_format(&s, text, 20), -ENOSPC);
}

/* What the parser would not read back is not written. */
static void test_format_refuses(void **state)
{
	(void)state;
	char text[4096];
	struct ksm_saved s = sample();
	snprintf(s.set[1].name, sizeof(s.set[1].name), "../../../etc/x");
	assert_int_equal(ksm_saved_format(&s, text, sizeof(text)), -EINVAL);
	s = sample();
	snprintf(s.set[1].value, sizeof(s.set[1].value), "1 2");
	assert_int_equal(ksm_saved_format(&s, text, sizeof(text)), -EINVAL);
	s = sample();
	snprintf(s.set[1].name, sizeof(s.set[1].name), "run");
	assert_int_equal(ksm_saved_format(&s, text, sizeof(text)), -EINVAL);
	static const char *const dirs[] = {"sys/kernel/mm/ksm", "/sys/../etc/kernel/mm/ksm", "/etc", "/sys/kernel/mm/ksm/"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		s = sample();
		snprintf(s.dir, sizeof(s.dir), "%s", dirs[i]);
		assert_int_equal(ksm_saved_format(&s, text, sizeof(text)), -EINVAL);
	}
	s = sample();
	s.pid = 0;
	assert_int_equal(ksm_saved_format(&s, text, sizeof(text)), -EINVAL);
}

static int parse(const char *text)
{
	struct ksm_saved s;
	return ksm_saved_parse(text, strlen(text), &s);
}

/* Each of the n texts is refused as a file that does not read. */
static void none_read(const char *const *texts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (parse(texts[i]) != -EBADMSG)
			fail_msg("read: %s", texts[i]);
}

static void test_parse_refuses(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"vmhost ksm saved 2\npid 1\ndir /sys/kernel/mm/ksm\nend\n",
		"pid 1\nvmhost ksm saved 1\ndir /sys/kernel/mm/ksm\nend\n",
		"vmhost ksm saved 1\npid -1\ndir /sys/kernel/mm/ksm\nend\n",
		"vmhost ksm saved 1\npid 1x\ndir /sys/kernel/mm/ksm\nend\n",
		"vmhost ksm saved 1\npid 1\ndir sys/kernel/mm/ksm\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /x/../kernel/mm/ksm\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /etc/cron.d\nend\n",
		"vmhost ksm saved 1\npid 1\nset run 0\ndir /sys/kernel/mm/ksm\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nset ../run 0\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nset Run 0\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nset run\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nset run 0 1\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nset run \x01\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nset run 0\nset run 1\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nset run 0\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nend\nset run 0\n",
		"vmhost ksm saved 1\r\npid 1\ndir /sys/kernel/mm/ksm\nend\n",
	};
	none_read(bad, sizeof(bad) / sizeof(bad[0]));
	/* a NUL inside, and one setting more than the most */
	struct ksm_saved s;
	assert_int_equal(ksm_saved_parse("vmhost ksm saved 1\0pid 1\n", 25, &s), -EBADMSG);
	char many[8192];
	size_t len = (size_t)snprintf(many, sizeof(many), "vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\n");
	for (int i = 0; i <= KSM_SAVED_MAX; i++)
		len += (size_t)snprintf(many + len, sizeof(many) - len, "set k%d 1\n", i);
	len += (size_t)snprintf(many + len, sizeof(many) - len, "end\n");
	assert_int_equal(ksm_saved_parse(many, len, &s), -EBADMSG);
}

/* A file cut at any byte (a torn write, were one possible) never reads as a shorter list. */
static void test_cut_anywhere(void **state)
{
	(void)state;
	struct ksm_saved s = sample(), back;
	char text[4096];
	int len = ksm_saved_format(&s, text, sizeof(text));
	for (int cut = 0; cut < len - 1; cut++)
		if (ksm_saved_parse(text, (size_t)cut, &back) != -EBADMSG)
			fail_msg("read when cut at %d: %.*s", cut, cut, text);
	assert_int_equal(ksm_saved_parse(text, (size_t)len - 1, &back), 0); /* only the last newline */
}

/* ---- the guard and its file ---- */

struct tree {
	char *dir;
	char sys[512], proc[512], run[512], knob[600], file[600], delayacct[600];
	struct io_root root;
};

static void tree_new(struct tree *t)
{
	t->dir = tmp_tree_new("ksmsaved");
	snprintf(t->sys, sizeof(t->sys), "%s/sys", t->dir);
	snprintf(t->run, sizeof(t->run), "%s/run", t->dir);
	snprintf(t->knob, sizeof(t->knob), "%s/kernel/mm/ksm/pages_to_scan", t->sys);
	snprintf(t->file, sizeof(t->file), "%s/" KSM_SAVED_FILE, t->run);
	mkdirf("%s/kernel/mm/ksm", t->sys);
	put(t->knob, "100\n");
	/* a proc tree of its own for the one sysctl a guard may change */
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->dir);
	snprintf(t->delayacct, sizeof(t->delayacct), "%s/sys/kernel/task_delayacct", t->proc);
	mkdirf("%s/sys/kernel", t->proc);
	put(t->delayacct, "0\n");
	t->root = (struct io_root){.proc = t->proc, .sys = t->sys};
	setenv("VMHOST_RUNTIME_DIR", t->run, 1);
}

static void tree_free(struct tree *t)
{
	unsetenv("VMHOST_RUNTIME_DIR");
	tmp_tree_free(t->dir);
}

static int tree_setup(void **state)
{
	struct tree *t = malloc(sizeof(*t));
	if (!t)
		return -1;
	tree_new(t);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	tree_free(*state);
	free(*state);
	return 0;
}

static char *slurp(const char *path)
{
	char *text;
	size_t len;
	assert_int_equal(io_read_path(path, 1 << 16, &text, &len), 0);
	return text;
}

static int knob(const struct tree *t)
{
	char *text = slurp(t->knob);
	int v = atoi(text);
	free(text);
	return v;
}

/* The tree's kernel.task_delayacct. */
static int delayacct(const struct tree *t)
{
	char *text = slurp(t->delayacct);
	int v = atoi(text);
	free(text);
	return v;
}

/* The child guards the tree, changes pages_to_scan (same width: the tree's files are not sysfs,
 * a shorter write would leave a tail) and kernel.task_delayacct, says so and waits for its death. */
static pid_t guarded_child(const struct tree *t)
{
	int fd;
	pid_t pid = fork_piped(&fd);
	if (pid == 0) {
		if (ksm_guard_begin(&t->root, NULL) < 0 || ksm_guard_set("pages_to_scan", "400") < 0 ||
		    ksm_guard_set_sysctl("kernel.task_delayacct", "1") < 0 || write(fd, "r", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	char c;
	assert_int_equal(read(fd, &c, 1), 1);
	close(fd);
	return pid;
}

static int kill_wait(pid_t pid, int sig)
{
	int status;
	assert_int_equal(kill(pid, sig), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	return WTERMSIG(status);
}

/* Written before the change, with the value from before it; gone after a clean end. */
static void test_written_first(void **state)
{
	struct tree *t = *state;
	assert_int_equal(ksm_guard_begin(&t->root, NULL), 0);
	assert_int_equal(access(t->file, F_OK), -1); /* nothing changed yet, nothing written */
	assert_int_equal(ksm_guard_set("pages_to_scan", "400"), 0);
	assert_int_equal(knob(t), 400);
	char *text = slurp(t->file);
	char want[700];
	snprintf(want, sizeof(want), "vmhost ksm saved 1\npid %d\ndir %s/kernel/mm/ksm\nset pages_to_scan 100\nend\n",
		 (int)getpid(), t->sys);
	assert_string_equal(text, want);
	free(text);
	struct stat st;
	assert_int_equal(stat(t->file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(ksm_guard_end(), 0);
	assert_int_equal(knob(t), 100);
	assert_int_equal(access(t->file, F_OK), -1);
}

/* SIGKILL: nothing restores, the file stays; the next guard (or restore_left) puts it back. */
static void test_sigkill_left_then_restored(void **state)
{
	struct tree *t = *state;
	pid_t pid = guarded_child(t);
	assert_int_equal(kill_wait(pid, SIGKILL), SIGKILL);
	assert_int_equal(knob(t), 400);
	assert_int_equal(delayacct(t), 1);
	assert_int_equal(access(t->file, F_OK), 0);
	assert_int_equal(ksm_guard_begin(&t->root, NULL), 1); /* the next writer puts it back first */
	assert_int_equal(knob(t), 100);
	assert_int_equal(delayacct(t), 0); /* the sysctl too, from the file's proc line */
	assert_int_equal(access(t->file, F_OK), -1);
	assert_int_equal(ksm_guard_set("pages_to_scan", "500"), 0);
	assert_int_equal(ksm_guard_end(), 0);
	assert_int_equal(knob(t), 100); /* its own restore: the values from before the first */

	pid = guarded_child(t);
	assert_int_equal(kill_wait(pid, SIGKILL), SIGKILL);
	struct ksm_saved left;
	assert_int_equal(ksm_guard_restore_left(&t->root, &left), 1);
	assert_int_equal(left.pid, pid);
	assert_int_equal(left.n, 2);
	assert_string_equal(left.set[0].name, "pages_to_scan");
	assert_string_equal(left.set[0].value, "100");
	assert_string_equal(left.set[1].name, "kernel.task_delayacct");
	assert_string_equal(left.set[1].value, "0");
	assert_string_equal(left.proc, t->proc);
	assert_int_equal(knob(t), 100);
	assert_int_equal(delayacct(t), 0);
	assert_int_equal(ksm_guard_restore_left(&t->root, &left), 0); /* nothing left now */
}

/* A crash or a closed pipe restores on its way out, and removes the file. */
static void test_crash_and_pipe_restore(void **state)
{
	(void)state;
	static const int sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGPIPE};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct tree t;
		tree_new(&t);
		pid_t pid = guarded_child(&t);
		assert_int_equal(kill_wait(pid, sigs[i]), sigs[i]);
		if (knob(&t) != 100 || delayacct(&t) != 0)
			fail_msg("signal %d: pages_to_scan %d, task_delayacct %d, not restored", sigs[i], knob(&t),
				 delayacct(&t));
		assert_int_equal(access(t.file, F_OK), -1);
		tree_free(&t);
	}
}

/* kernel.task_delayacct through the guard (bench ksm --delayacct): written down before it is
 * changed, with the proc directory it goes back to, put back by the end and by a stop signal
 * (SIGTERM: the handler restores, then the process dies by it); no other sysctl is taken. */
static void test_sysctl_guarded(void **state)
{
	struct tree *t = *state;
	assert_int_equal(ksm_guard_begin(&t->root, NULL), 0);
	assert_int_equal(ksm_guard_set_sysctl("kernel.hostname", "x"), -EINVAL);
	assert_int_equal(ksm_guard_set_sysctl("kernel.task_delayacct", "1"), 0);
	assert_int_equal(delayacct(t), 1);
	char *text = slurp(t->file);
	char want[1400];
	snprintf(want, sizeof(want), "vmhost ksm saved 1\npid %d\ndir %s/kernel/mm/ksm\nproc %s\nset kernel.task_delayacct 0\nend\n",
		 (int)getpid(), t->sys, t->proc);
	assert_string_equal(text, want);
	free(text);
	assert_int_equal(ksm_guard_end(), 0);
	assert_int_equal(delayacct(t), 0);
	assert_int_equal(access(t->file, F_OK), -1);
	pid_t pid = guarded_child(t);
	assert_int_equal(kill_wait(pid, SIGTERM), SIGTERM);
	assert_int_equal(delayacct(t), 0);
	assert_int_equal(knob(t), 100);
	assert_int_equal(access(t->file, F_OK), -1);
}

/* The sysctl lines: only the allowed names, only after a proc line right after dir. */
static void test_sysctl_format(void **state)
{
	(void)state;
	struct ksm_saved s = sample(), back;
	snprintf(s.proc, sizeof(s.proc), "/proc");
	snprintf(s.set[2].name, sizeof(s.set[2].name), "kernel.task_delayacct");
	snprintf(s.set[2].value, sizeof(s.set[2].value), "0");
	formats_as(&s, "vmhost ksm saved 1\npid 4242\ndir /sys/kernel/mm/ksm\nproc /proc\nset run 0\n"
		       "set pages_to_scan 123\nset kernel.task_delayacct 0\nend\n", &back);
	assert_string_equal(back.proc, "/proc");
	char text[4096];
	assert_string_equal(back.set[2].name, "kernel.task_delayacct");
	s.proc[0] = '\0'; /* a sysctl without the proc directory it goes back to */
	assert_int_equal(ksm_saved_format(&s, text, sizeof(text)), -EINVAL);
	static const char *const bad[] = {
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nset kernel.task_delayacct 0\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nproc /proc\nset kernel.hostname x\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nset run 0\nproc /proc\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nproc proc\nset kernel.task_delayacct 0\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nproc /etc\nset kernel.task_delayacct 0\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nproc /x/../proc\nset kernel.task_delayacct 0\nend\n",
		"vmhost ksm saved 1\npid 1\ndir /sys/kernel/mm/ksm\nproc /proc\nproc /proc\nend\n",
	};
	none_read(bad, sizeof(bad) / sizeof(bad[0]));
}

/* A file that does not read is neither used nor removed, and nothing is changed. */
static void test_damaged_file_stays(void **state)
{
	struct tree *t = *state;
	assert_int_equal(io_state_write(t->run, KSM_SAVED_FILE, "vmhost ksm saved 1\npid 1\n", 25), 0);
	assert_int_equal(ksm_guard_begin(&t->root, NULL), -EBADMSG);
	assert_int_equal(access(t->file, F_OK), 0);
	assert_int_equal(knob(t), 100);
}

/* A fixture tree's KSM is not the host's: without the runtime directory hook, nothing is kept. */
static void test_other_root_keeps_nothing(void **state)
{
	struct tree *t = *state;
	unsetenv("VMHOST_RUNTIME_DIR");
	assert_int_equal(ksm_guard_begin(&t->root, NULL), 0);
	assert_int_equal(ksm_guard_set("pages_to_scan", "400"), 0);
	assert_int_equal(access(t->run, F_OK), -1);
	assert_int_equal(ksm_guard_end(), 0);
	assert_int_equal(knob(t), 100);
}

int main(void)
{
	unsetenv("VMHOST_KSM_LOCKED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_format_refuses),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_cut_anywhere),
		cmocka_unit_test_setup_teardown(test_written_first, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_left_then_restored, tree_setup, tree_teardown),
		cmocka_unit_test(test_crash_and_pipe_restore),
		cmocka_unit_test_setup_teardown(test_damaged_file_stays, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_other_root_keeps_nothing, tree_setup, tree_teardown),
		cmocka_unit_test(test_sysctl_format),
		cmocka_unit_test_setup_teardown(test_sysctl_guarded, tree_setup, tree_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
