/* vmhost ksm tune's error paths, run in-process on a fixture tree: the message names the error
 * the failing call returned, not whatever errno holds by then (issue 10). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Before cmocka, which defines a fail() macro of its own. */
#include "cmd/cmd.h"
#include "core/tune/ksm_guard.h"
#include "testutil.h"

#include <cmocka.h>

/* Runs cmd_ksm_tune with stderr captured into buf. */
static int run_tune(struct ctx *ctx, char *buf, size_t cap, int argc, char **argv)
{
	int saved;
	FILE *f = stderr_away(&saved);
	int rc = cmd_ksm_tune(ctx, argc, argv);
	stderr_back(saved, f, buf, cap);
	return rc;
}

static void test_guard_failure_names_its_error(void **state)
{
	(void)state;
	if (geteuid() != 0) { /* without root the command stops earlier, at the privilege check */
		print_message("skipped: needs root to reach the tuner's guard\n");
		skip();
	}
	/* A copy of the fixture tree: should the tuner get as far as writing, the tree stays clean. */
	char *dir = tmp_tree_new("tune"), cmd[8192], proc[4200], sys[4200], lock[4200];
	snprintf(cmd, sizeof(cmd), "cp -r '%s/ksm-new/proc' '%s/ksm-new/sys' '%s/'", fixtures_dir(), fixtures_dir(), dir);
	assert_int_equal(system(cmd), 0);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	snprintf(lock, sizeof(lock), "%s/tune.lock", dir);
	setenv("VMHOST_TUNE_LOCK", lock, 1);
	setenv("VMHOST_KSM_LOCKED", "1", 1);
	struct ctx ctx = {.root = {.proc = proc, .sys = sys}, .format = OUT_HUMAN, .command = "ksm tune"};
	/* A guard already running in this process: the tuner's own begin is refused with -EBUSY,
	 * and errno says nothing about it. */
	assert_int_equal(ksm_guard_begin(&ctx.root, NULL), 0);
	char *argv[] = {"tune", "--duration", "0.1", NULL};
	char err[1024];
	errno = 0;
	int rc = run_tune(&ctx, err, sizeof(err), 3, argv);
	ksm_guard_end();
	tmp_tree_free(dir);
	assert_int_equal(rc, EXIT_FAIL);
	if (!strstr(err, strerror(EBUSY)))
		fail_msg("expected '%s' in: %s", strerror(EBUSY), err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guard_failure_names_its_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
