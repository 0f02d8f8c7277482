/* The machine-wide KSM lock is one file, /run/lock/vmhost-ksm.lock, the one tests take with
 * flock(1): made (with /run/lock, mode 1777) when missing, and when it cannot be had, an error,
 * never a second lock somewhere else. Runs in a private mount namespace with tmpfs over /run
 * and /tmp (root only; otherwise skipped, exit 77). */
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
#include <unistd.h>

#include <cmocka.h>

#include "core/tune/ksm_guard.h"

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
	assert_int_equal(stat("/run/lock", &st), -1);
	assert_int_equal(ksm_lock(false), 0);
	assert_int_equal(stat("/run/lock", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 01777);
	assert_int_equal(lstat(KSM_LOCK_PATH, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(access("/tmp/vmhost-ksm.lock", F_OK), -1);
	ksm_unlock();
}

/* What flock(1) on the path holds (the tests' convention) is what ksm_lock waits for. */
static void test_same_lock_as_tests(void **state)
{
	(void)state;
	fresh_run(0);
	assert_int_equal(mkdir("/run/lock", 01777), 0);
	int held = open(KSM_LOCK_PATH, O_RDWR | O_CREAT, 0644);
	assert_true(held >= 0);
	assert_int_equal(flock(held, LOCK_EX), 0);
	assert_int_equal(ksm_lock(false), -EBUSY);
	close(held);
	assert_int_equal(ksm_lock(false), 0);
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

/* A link planted at the lock's name in the world-writable /run/lock is not followed. */
static void test_link_not_followed(void **state)
{
	(void)state;
	fresh_run(0);
	assert_int_equal(mkdir("/run/lock", 01777), 0);
	assert_int_equal(symlink("/run/victim", KSM_LOCK_PATH), 0);
	assert_true(ksm_lock(false) < 0);
	assert_int_equal(access("/run/victim", F_OK), -1);
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
		cmocka_unit_test_teardown(test_unusable_is_an_error, unlock),
		cmocka_unit_test_teardown(test_link_not_followed, unlock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
