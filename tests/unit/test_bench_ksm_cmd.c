/* vmhost bench ksm run in-process on a fixture tree, with the experiment replaced by a made-up
 * result (linked with --wrap=bench_ksm_run): the command frees the result on every way out,
 * also when its table cannot be made (--wrap=table_new), which it once leaked. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Before cmocka, which defines a fail() macro of its own. */
#include "cmd/cmd.h"
#include "core/bench/bench_ksm.h"
#include "out/table.h"
#include "testutil.h"

#include <cmocka.h>

static struct bench_ksm_result *made;  /* what the fake experiment returned */
static int freed;                      /* bench_ksm_result_free calls with it */
static int table_failures;             /* the next N table_new calls fail */

int __wrap_bench_ksm_run(const struct io_root *root, const struct bench_ksm_config *c, bench_ksm_event_fn on_event,
			 void *arg, struct bench_ksm_result **ret)
{
	(void)root, (void)on_event, (void)arg;
	struct bench_ksm_result *r;
	int e = bench_ksm_result_new(c, &r);
	if (e < 0)
		return e;
	for (int p = 0; p < BENCH_KSM_NPOLICIES; p++) {
		struct bench_ksm_run *run = &r->runs[0][p];
		run->available = c->policy_on[p];
		run->steady_cpu_percent = NAN;
		for (int i = 0; run->available && i < 3; i++)
			assert_int_equal(bench_ksm_series_add(&run->s, i, 1000.0 * i, i), 0);
		bench_ksm_run_finish(run, c->steady_seconds);
	}
	made = r;
	*ret = r;
	return 0;
}

void __real_bench_ksm_result_free(struct bench_ksm_result *r);
void __wrap_bench_ksm_result_free(struct bench_ksm_result *r)
{
	if (r && r == made)
		freed++;
	__real_bench_ksm_result_free(r);
}

struct table *__real_table_new(const struct col *cols, size_t ncols);
struct table *__wrap_table_new(const struct col *cols, size_t ncols)
{
	if (table_failures > 0) {
		table_failures--;
		return NULL;
	}
	return __real_table_new(cols, ncols);
}

/* Runs cmd_bench_ksm with stdout and stderr captured into out and err. */
static int run_bench(struct ctx *ctx, char *out, char *err, size_t cap, int argc, char **argv)
{
	fflush(stdout);
	fflush(stderr);
	int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
	FILE *fo = tmpfile(), *fe = tmpfile();
	assert_non_null(fo);
	assert_non_null(fe);
	dup2(fileno(fo), STDOUT_FILENO);
	dup2(fileno(fe), STDERR_FILENO);
	int rc = cmd_bench_ksm(ctx, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	FILE *fs[] = {fo, fe};
	char *bufs[] = {out, err};
	for (int i = 0; i < 2; i++) {
		rewind(fs[i]);
		size_t n = fread(bufs[i], 1, cap - 1, fs[i]);
		bufs[i][n] = '\0';
		fclose(fs[i]);
	}
	return rc;
}

static char dir[64];
static char proc[4200], sys[4200];

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0)
		return 0; /* the tests skip: without root the command stops at the privilege check */
	char cmd[8400];
	if (tmp_tree_make(dir, sizeof(dir), "bench-ksm") < 0)
		return -1;
	/* A copy of the fixture tree: the command writes its baseline settings there. */
	snprintf(cmd, sizeof(cmd), "cp -r '%s/ksm-new/proc' '%s/ksm-new/sys' '%s/'", fixtures_dir(), fixtures_dir(), dir);
	if (system(cmd) != 0)
		return -1;
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	setenv("VMHOST_KSM_LOCKED", "1", 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return geteuid() != 0 || tmp_tree_remove(dir) == 0 ? 0 : -1;
}

static int bench(enum out_format format, char *out, char *err, size_t cap)
{
	struct ctx ctx = {.root = {.proc = proc, .sys = sys}, .format = format, .command = "bench ksm"};
	char *argv[] = {"ksm", "--guests", "2", "--guest-size", "4M", "--duration", "2", "--steady", "1", NULL};
	made = NULL;
	freed = 0;
	return run_bench(&ctx, out, err, cap, 9, argv);
}

static void table_failure_frees_the_result(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: bench ksm needs root\n");
		skip();
	}
	static char out[16384], err[16384];
	table_failures = 1;
	int rc = bench(OUT_JSON, out, err, sizeof(out));
	if (rc != EXIT_FAIL || !strstr(err, "output"))
		fail_msg("rc %d, stderr: %s", rc, err);
	assert_int_equal(table_failures, 0);
	assert_non_null(made);
	assert_int_equal(freed, 1);
}

static void results_printed_and_freed(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: bench ksm needs root\n");
		skip();
	}
	static char out[16384], err[16384];
	table_failures = 0;
	int rc = bench(OUT_CSV, out, err, sizeof(out));
	if (rc != EXIT_OK)
		fail_msg("rc %d, stderr: %s", rc, err);
	if (!strstr(out, "kernel-default") || !strstr(out, "vmhost"))
		fail_msg("expected a row per policy in: %s", out);
	assert_int_equal(freed, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_failure_frees_the_result),
		cmocka_unit_test(results_printed_and_freed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
