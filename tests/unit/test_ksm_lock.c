/* The machine-wide KSM lock is one file, /run/vmhost/ksm.lock, the one tests take with flock(1):
 * in root's private directory (made, mode 0700, when missing), opened without following a link
 * and used only when the directory and the file are root's alone, so no other user can open,
 * plant or hold it (REVIEW S-M3: in /run/lock, mode 1777, any user could); when it cannot be
 * had, an error, never a second lock somewhere else. Runs in a private mount namespace with tmpfs
 * over /run and /tmp (root only; otherwise skipped, exit 77). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/tune/ksm_guard.h"

#define NOBODY 65534

static void fresh_run(unsigned long flags)
{
	umount2("/run", MNT_DETACH);
	assert_int_equal(mount("tmpfs", "/run", "tmpfs", flags, "mode=0755"), 0);
}

static void test_missing_dir_made(void **state)
{
	(void)state;
	fresh_run(0);
	struct stat st;
	assert_int_equal(stat("/run/vmhost", &st), -1);
	assert_int_equal(ksm_lock(false), 0);
	assert_int_equal(stat("/run/vmhost", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(lstat(KSM_LOCK_PATH, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(access("/run/lock", F_OK), -1);
	assert_int_equal(access("/tmp/vmhost-ksm.lock", F_OK), -1);
	ksm_unlock();
}

/* What flock(1) on the path holds (the tests' convention: it creates the file 0644) is what
 * ksm_lock waits for. */
static void test_same_lock_as_tests(void **state)
{
	(void)state;
	fresh_run(0);
	assert_int_equal(mkdir("/run/vmhost", 0700), 0);
	int held = open(KSM_LOCK_PATH, O_RDONLY | O_CREAT, 0644);
	assert_true(held >= 0);
	assert_int_equal(flock(held, LOCK_EX), 0);
	assert_int_equal(ksm_lock(false), -EBUSY);
	close(held);
	assert_int_equal(ksm_lock(false), 0);
	ksm_unlock();
}

/* The lock vmhost used to take, held by anyone, stops nothing now. */
static void test_old_path_ignored(void **state)
{
	(void)state;
	fresh_run(0);
	assert_int_equal(mkdir("/run/lock", 01777), 0);
	int held = open("/run/lock/vmhost-ksm.lock", O_RDONLY | O_CREAT, 0644);
	assert_true(held >= 0);
	assert_int_equal(flock(held, LOCK_EX), 0);
	assert_int_equal(ksm_lock(false), 0);
	close(held);
	ksm_unlock();
}

static void test_unusable_is_an_error(void **state)
{
	(void)state;
	fresh_run(MS_RDONLY);
	int r = ksm_lock(false);
	assert_true(r < 0);
	assert_int_equal(access("/tmp/vmhost-ksm.lock", F_OK), -1);
	ksm_unlock();
}

/* A link at the lock's name, or at the directory's, is not followed. */
static void test_link_not_followed(void **state)
{
	(void)state;
	fresh_run(0);
	assert_int_equal(mkdir("/run/vmhost", 0700), 0);
	assert_int_equal(symlink("/run/victim", KSM_LOCK_PATH), 0);
	assert_int_equal(ksm_lock(false), -EPERM);
	assert_int_equal(access("/run/victim", F_OK), -1);
	fresh_run(0);
	assert_int_equal(mkdir("/run/elsewhere", 0700), 0);
	assert_int_equal(symlink("/run/elsewhere", "/run/vmhost"), 0);
	assert_int_equal(ksm_lock(false), -EPERM);
	assert_int_equal(access("/run/elsewhere/ksm.lock", F_OK), -1);
	ksm_unlock();
}

/* ksm_lock refused while path is uid's with mode; then root's again, with mode_after. */
static void refused_as(const char *path, uid_t uid, mode_t mode, mode_t mode_after)
{
	assert_int_equal(chown(path, uid, uid), 0);
	assert_int_equal(chmod(path, mode), 0);
	assert_int_equal(ksm_lock(false), -EPERM);
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(chmod(path, mode_after), 0);
}

/* A directory or a lock file another user owns or may write is refused, never used. */
static void test_others_refused(void **state)
{
	(void)state;
	fresh_run(0);
	assert_int_equal(mkdir("/run/vmhost", 0700), 0);
	refused_as("/run/vmhost", NOBODY, 0700, 0700);
	refused_as("/run/vmhost", 0, 0777, 0700);
	int fd = open(KSM_LOCK_PATH, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	refused_as(KSM_LOCK_PATH, NOBODY, 0600, 0644);
	refused_as(KSM_LOCK_PATH, 0, 0666, 0644);
	assert_int_equal(ksm_lock(false), 0); /* 0644, root's: what flock(1) makes */
	ksm_unlock();
}

/* nobody can neither open the lock to hold it nor make a file beside it. */
static void test_nobody_cannot_hold(void **state)
{
	(void)state;
	fresh_run(0);
	assert_int_equal(ksm_lock(false), 0);
	ksm_unlock();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
			_exit(2);
		int held = open(KSM_LOCK_PATH, O_RDONLY);
		int made = open("/run/vmhost/planted", O_RDWR | O_CREAT, 0644);
		_exit(held < 0 && errno == EACCES && made < 0 ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(ksm_lock(false), 0);
	ksm_unlock();
}

static int unlock(void **state)
{
	(void)state;
	ksm_unlock();
	return 0;
}

int main(void)
{
	unsetenv("VMHOST_KSM_LOCKED");
	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777") < 0) {
		printf("skipped: needs root and a mount namespace\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_missing_dir_made, unlock),
		cmocka_unit_test_teardown(test_same_lock_as_tests, unlock),
		cmocka_unit_test_teardown(test_old_path_ignored, unlock),
		cmocka_unit_test_teardown(test_unusable_is_an_error, unlock),
		cmocka_unit_test_teardown(test_link_not_followed, unlock),
		cmocka_unit_test_teardown(test_others_refused, unlock),
		cmocka_unit_test_teardown(test_nobody_cannot_hold, unlock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
