/* The one option parser of the commands (cmd/opts.c): getopt's strings built from a table, every
 * kind of value converted and stored in fields of each width, the table's own usage errors, and
 * the end of the reading (help, leftover arguments). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Before cmocka, which defines a fail() macro of its own. */
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "core/base/convert.h"
#include "testutil.h"

#include <cmocka.h>

struct demo {
	bool flag;
	const char *name;
	double seconds, seconds0, number, size_double;
	int count_int;
	unsigned count_unsigned;
	long count_long;
	size_t count_size;
	uint64_t bytes;
	int calls;
	const char *called_with;
};

static int count_call(struct ctx *ctx, void *opts, const char *arg)
{
	struct demo *d = opts;
	d->calls++;
	d->called_with = arg;
	if (arg && !strcmp(arg, "refuse"))
		return usage_error(ctx, "--call refuses '%s'", arg);
	return EXIT_OK;
}

static const struct opt demo_table[] = {
	{OPT("flag", 'f', OPT_FLAG), OPT_AT(struct demo, flag)},
	{OPT("name", 'n', OPT_STRING), OPT_AT(struct demo, name)},
	{OPT("seconds", 's', OPT_SECONDS), OPT_AT(struct demo, seconds), .lo = 0.5, .hi = 10,
	 .error = "--seconds takes 0.5 to 10 seconds, not '%s'"},
	{OPT("seconds0", 0, OPT_SECONDS0), OPT_AT(struct demo, seconds0), .error = "--seconds0: '%s'"},
	{OPT("number", 0, OPT_NUMBER), OPT_AT(struct demo, number), .lo = -1, .hi = 1,
	 .error = "--number takes -1 to 1, not '%s'"},
	{OPT("int", 'i', OPT_COUNT), OPT_AT(struct demo, count_int), .lo = 2, .hi = 100,
	 .error = "--int takes 2 to 100, not '%s'"},
	{OPT("unsigned", 0, OPT_COUNT), OPT_AT(struct demo, count_unsigned), .error = "--unsigned: '%s'"},
	{OPT("long", 0, OPT_COUNT), OPT_AT(struct demo, count_long), .error = "--long: '%s'"},
	{OPT("size_t", 0, OPT_COUNT), OPT_AT(struct demo, count_size), .error = "--size_t: '%s'"},
	{OPT("bytes", 'b', OPT_SIZE), OPT_AT(struct demo, bytes), .lo = 1 << 20, .error = "--bytes: '%s'"},
	{OPT("size-double", 0, OPT_SIZE), OPT_AT(struct demo, size_double), .error = "--size-double: '%s'"},
	{OPT("percent", 0, OPT_NUMBER), OPT_AT(struct demo, number), .lo = 0, .hi = 100,
	 .error = "--percent takes 0 to 100% of a CPU (%d, %n), not '%s'"},
	{OPT("call", 'c', OPT_CALL), .call = count_call},
	{OPT("flag-call", 0, OPT_FLAG), .call = count_call},
	{OPT("help", 'h', OPT_HELP)},
};

static int helps_printed;
static void demo_help(void) { helps_printed++; }

struct run {
	int rc;
	struct demo d;
	char err[1024];
};

/* Parses the NULL-terminated words after "demo" with stderr captured. */
static void parse(struct run *r, unsigned flags, ...)
{
	char *argv[32] = {"demo"};
	int argc = 1;
	va_list ap;
	va_start(ap, flags);
	for (char *w; argc < 31 && (w = va_arg(ap, char *));)
		argv[argc++] = w;
	va_end(ap);
	struct ctx ctx = {.command = "demo"};
	memset(r, 0, sizeof(*r));
	const struct opts_spec spec = OPTS_SPEC(demo_table, flags, demo_help);
	helps_printed = 0;
	int saved;
	FILE *f = stderr_away(&saved);
	r->rc = opts_parse(&ctx, &spec, argc, argv, &r->d);
	stderr_back(saved, f, r->err, sizeof(r->err));
}

static void test_values_stored(void **state)
{
	(void)state;
	struct run r;
	parse(&r, 0, "-f", "--name", "x", "-s", "2.5", "--seconds0", "0", "--number", "-0.5", "-i", "7",
	      "--unsigned", "4000000000", "--long", "9000000000000000000", "--size_t", "12", "-b", "2M",
	      "--size-double", "1k", NULL);
	assert_int_equal(r.rc, OPTS_GO);
	assert_string_equal(r.err, "");
	assert_true(r.d.flag);
	assert_string_equal(r.d.name, "x");
	assert_true(r.d.seconds == 2.5 && r.d.seconds0 == 0 && r.d.number == -0.5);
	assert_int_equal(r.d.count_int, 7);
	assert_int_equal(r.d.count_unsigned, 4000000000u);
	assert_true(r.d.count_long == 9000000000000000000L);
	assert_int_equal(r.d.count_size, 12);
	assert_int_equal(r.d.bytes, 2 << 20);
	assert_true(r.d.size_double == 1024);
	assert_int_equal(helps_printed, 0);
	/* Long names by unambiguous prefix, short letters clustered, "--name=VALUE". */
	parse(&r, 0, "--nam=y", "-fi3", NULL);
	assert_int_equal(r.rc, OPTS_GO);
	assert_true(r.d.flag);
	assert_string_equal(r.d.name, "y");
	assert_int_equal(r.d.count_int, 3);
}

static void test_refused_values(void **state)
{
	(void)state;
	struct run r;
	static const struct {
		const char *opt, *arg, *err;
	} cases[] = {
		{"--seconds", "0.25", "vmhost: demo: usage: --seconds takes 0.5 to 10 seconds, not '0.25' (see 'vmhost help demo')\n"},
		{"--seconds", "11", "vmhost: demo: usage: --seconds takes 0.5 to 10 seconds, not '11' (see 'vmhost help demo')\n"},
		{"-s", "abc", "vmhost: demo: usage: --seconds takes 0.5 to 10 seconds, not 'abc' (see 'vmhost help demo')\n"},
		{"--seconds0", "-1", "vmhost: demo: usage: --seconds0: '-1' (see 'vmhost help demo')\n"},
		{"--number", "1.5", "vmhost: demo: usage: --number takes -1 to 1, not '1.5' (see 'vmhost help demo')\n"},
		{"--number", "nan", "vmhost: demo: usage: --number takes -1 to 1, not 'nan' (see 'vmhost help demo')\n"},
		{"--int", "1", "vmhost: demo: usage: --int takes 2 to 100, not '1' (see 'vmhost help demo')\n"},
		{"--int", "101", "vmhost: demo: usage: --int takes 2 to 100, not '101' (see 'vmhost help demo')\n"},
		{"--int", "5x", "vmhost: demo: usage: --int takes 2 to 100, not '5x' (see 'vmhost help demo')\n"},
		{"--long", "0", "vmhost: demo: usage: --long: '0' (see 'vmhost help demo')\n"},
		{"--bytes", "1023k", "vmhost: demo: usage: --bytes: '1023k' (see 'vmhost help demo')\n"},
		{"--bytes", "-1M", "vmhost: demo: usage: --bytes: '-1M' (see 'vmhost help demo')\n"},
		/* The table's text is not a format: its other '%'s print as they are (they were read as
		 * conversions, "%d" and "%n" taking arguments never passed). */
		{"--percent", "101", "vmhost: demo: usage: --percent takes 0 to 100% of a CPU (%d, %n), not '101' (see "
				     "'vmhost help demo')\n"},
		{"--percent", "%s%n", "vmhost: demo: usage: --percent takes 0 to 100% of a CPU (%d, %n), not '%s%n' (see "
				      "'vmhost help demo')\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parse(&r, 0, cases[i].opt, cases[i].arg, NULL);
		assert_int_equal(r.rc, EXIT_USAGE);
		assert_string_equal(r.err, cases[i].err);
	}
}

static void test_unknown_and_leftovers(void **state)
{
	(void)state;
	struct run r;
	parse(&r, 0, "--bogus", NULL);
	assert_int_equal(r.rc, EXIT_USAGE);
	assert_string_equal(r.err, "vmhost: demo: usage: unknown option '--bogus' (see 'vmhost help demo')\n");
	/* An ambiguous prefix (--flag, --flag-call) is unknown. */
	parse(&r, 0, "--fl", NULL);
	assert_int_equal(r.rc, EXIT_USAGE);
	assert_string_equal(r.err, "vmhost: demo: usage: unknown option '--fl' (see 'vmhost help demo')\n");
	/* A long-only option has no letter: -u is unknown. */
	parse(&r, 0, "-u", "3", NULL);
	assert_int_equal(r.rc, EXIT_USAGE);
	assert_string_equal(r.err, "vmhost: demo: usage: unknown option '-u' (see 'vmhost help demo')\n");
	/* An argument missing at the end is the option's word, as getopt leaves it. */
	parse(&r, 0, "--name", NULL);
	assert_int_equal(r.rc, EXIT_USAGE);
	assert_string_equal(r.err, "vmhost: demo: usage: unknown option '--name' (see 'vmhost help demo')\n");
	parse(&r, 0, "-f", "word", "-f", NULL);
	assert_int_equal(r.rc, EXIT_USAGE);
	assert_string_equal(r.err, "vmhost: demo: usage: unexpected argument 'word' (see 'vmhost help demo')\n");
	/* OPTS_REST: the words after the options are the caller's, from optind. */
	parse(&r, OPTS_REST, "-f", "--", "cmd", "arg", NULL);
	assert_int_equal(r.rc, OPTS_GO);
	assert_int_equal(optind, 3);
}

static void test_help(void **state)
{
	(void)state;
	struct run r;
	/* By default the whole line is read: an error after --help is still an error, no help. */
	parse(&r, 0, "--help", "--bogus", NULL);
	assert_int_equal(r.rc, EXIT_USAGE);
	assert_int_equal(helps_printed, 0);
	parse(&r, 0, "-f", "-h", NULL);
	assert_int_equal(r.rc, EXIT_OK); /* the help printed, the command not to run */
	assert_int_equal(helps_printed, 1);
	assert_true(r.d.flag);
	/* A word left before --help (main puts it last) is an error, and no help. */
	parse(&r, 0, "word", "--help", NULL);
	assert_int_equal(r.rc, EXIT_USAGE);
	assert_int_equal(helps_printed, 0);
	assert_string_equal(r.err, "vmhost: demo: usage: unexpected argument 'word' (see 'vmhost help demo')\n");
}

static int checks_run;
/* Refuses a name with a flag: options that do not go together. */
static int demo_check(struct ctx *ctx, void *opts, int argc, char **argv)
{
	(void)argc, (void)argv;
	const struct demo *d = opts;
	checks_run++;
	if (d->flag && d->name)
		return usage_error(ctx, "--flag and --name do not go together");
	return EXIT_OK;
}

/* The check runs after the reading, before the help; with OPTS_HELP_ANYWAY the help prints even
 * beside an error, which still decides the exit code. */
static void test_check_and_help_anyway(void **state)
{
	(void)state;
	char *argv[] = {"demo", "-f", "--help", "--name", "x", NULL};
	struct ctx ctx = {.command = "demo"};
	struct demo d = {0};
	const struct opts_spec checked = OPTS_SPEC_CHECKED(demo_table, 0, demo_help, demo_check),
			       anyway = OPTS_SPEC_CHECKED(demo_table, OPTS_HELP_ANYWAY, demo_help, demo_check);
	helps_printed = checks_run = 0;
	char err[1024];
	int saved;
	FILE *f = stderr_away(&saved);
	int rc = opts_parse(&ctx, &checked, 5, argv, &d);
	assert_int_equal(rc, EXIT_USAGE);
	assert_int_equal(checks_run, 1);
	assert_int_equal(helps_printed, 0);
	memset(&d, 0, sizeof(d));
	rc = opts_parse(&ctx, &anyway, 5, argv, &d);
	assert_int_equal(rc, EXIT_USAGE);
	assert_int_equal(helps_printed, 1);
	/* An unknown option beside --help: no check, the help all the same. */
	char *bogus[] = {"demo", "--help", "--bogus", NULL};
	memset(&d, 0, sizeof(d));
	rc = opts_parse(&ctx, &anyway, 3, bogus, &d);
	assert_int_equal(rc, EXIT_USAGE);
	assert_int_equal(checks_run, 2);
	assert_int_equal(helps_printed, 2);
	stderr_back(saved, f, err, sizeof(err));
}

static void test_callbacks(void **state)
{
	(void)state;
	struct run r;
	parse(&r, 0, "-c", "a", "--flag-call", "--call=b", NULL);
	assert_int_equal(r.rc, OPTS_GO);
	assert_int_equal(r.d.calls, 3);
	assert_string_equal(r.d.called_with, "b");
	parse(&r, 0, "--call", "refuse", "--flag", NULL);
	assert_int_equal(r.rc, EXIT_USAGE);
	assert_false(r.d.flag); /* the reading stopped there */
	assert_string_equal(r.err, "vmhost: demo: usage: --call refuses 'refuse' (see 'vmhost help demo')\n");
}

/* bench accounting ignored a word after its options and went on to its (root, minutes-long)
 * experiment; like every command it now refuses it. A root without KSM: before the fix the
 * command stopped there instead (exit 1). */
static void test_bench_accounting_refuses_argument(void **state)
{
	(void)state;
	struct ctx ctx = {.command = "bench accounting", .root = {.proc = "/nonexistent", .sys = "/nonexistent"}};
	char *argv[] = {"accounting", "--quick", "extra", NULL};
	char err[512];
	int saved;
	FILE *f = stderr_away(&saved);
	int rc = cmd_bench_accounting(&ctx, 3, argv);
	stderr_back(saved, f, err, sizeof(err));
	assert_int_equal(rc, EXIT_USAGE);
	assert_string_equal(err, "vmhost: bench accounting: usage: unexpected argument 'extra' (see 'vmhost help bench "
				 "accounting')\n");
}

/* A table whose field does not fit its kind is refused before any reading (exit 1, a bug). */
static void test_unfit_table(void **state)
{
	(void)state;
	static const struct opt bad_seconds[] = {{OPT("s", 's', OPT_SECONDS), OPT_AT(struct demo, count_int)}},
				bad_size[] = {{OPT("b", 'b', OPT_SIZE), OPT_AT(struct demo, count_int)}},
				bad_flag[] = {{OPT("f", 'f', OPT_FLAG), OPT_AT(struct demo, name)}};
	const struct opts_spec specs[] = {OPTS_SPEC(bad_seconds, 0, NULL), OPTS_SPEC(bad_size, 0, NULL),
					  OPTS_SPEC(bad_flag, 0, NULL)};
	char *argv[] = {"demo", NULL};
	struct ctx ctx = {.command = "demo"};
	struct demo d = {0};
	char err[512];
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		int saved;
		FILE *f = stderr_away(&saved);
		int rc = opts_parse(&ctx, &specs[i], 1, argv, &d);
		stderr_back(saved, f, err, sizeof(err));
		assert_int_equal(rc, EXIT_FAIL);
		assert_non_null(strstr(err, "a field unfit for its kind"));
	}
}

/* The converters the options share with the KSM tuner's config file (core/base/convert.h): the
 * whole word, within bounds; one vocabulary of yes and no. */
static void test_converters(void **state)
{
	(void)state;
	double d = -1;
	int64_t v = -1;
	bool b = false;
	assert_int_equal(convert_number("0.5", 0, 1, &d), 0);
	assert_true(d == 0.5);
	assert_int_equal(convert_number("1.5", 0, 1, &d), -EINVAL);
	assert_int_equal(convert_number("inf", 0, INFINITY, &d), -EINVAL);
	assert_int_equal(convert_number("0.5s", 0, 1, &d), -EINVAL);
	assert_int_equal(convert_number("", 0, 1, &d), -EINVAL);
	assert_true(d == 0.5); /* untouched when refused */
	assert_int_equal(convert_whole("+42", 1, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(convert_whole("4.2", 1, 100, &v), -EINVAL);
	assert_int_equal(convert_whole("101", 1, 100, &v), -EINVAL);
	assert_int_equal(convert_whole("99999999999999999999", 1, INT64_MAX, &v), -EINVAL);
	assert_int_equal(convert_whole("42 ", 1, 100, &v), -EINVAL);
	assert_int_equal(v, 42);
	static const char *const yes[] = {"yes", "true", "on", "1"}, *const no[] = {"no", "false", "off", "0"};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(convert_bool(yes[i], &b), 0);
		assert_true(b);
		assert_int_equal(convert_bool(no[i], &b), 0);
		assert_false(b);
	}
	assert_int_equal(convert_bool("Yes", &b), -EINVAL);
	assert_int_equal(convert_bool("", &b), -EINVAL);
}

/* main's commands and dispatch's subcommands by one prefix match: a name given whole wins, a
 * prefix of one name finds it, of two is ambiguous, of none finds nothing. */
static void test_subcommand_match(void **state)
{
	(void)state;
	static const struct subcommand table[] = {{"share", NULL, ""}, {"serve", NULL, ""}, {"s", NULL, ""},
						  {"top", NULL, ""}};
	bool ambiguous;
	assert_ptr_equal(subcommand_match(table, 4, "t", &ambiguous), &table[3]);
	assert_false(ambiguous);
	assert_ptr_equal(subcommand_match(table, 4, "sh", &ambiguous), &table[0]);
	assert_ptr_equal(subcommand_match(table, 4, "s", &ambiguous), &table[2]);
	assert_false(ambiguous);
	assert_null(subcommand_match(table, 4, "", &ambiguous));
	assert_true(ambiguous);
	assert_null(subcommand_match(table, 2, "s", &ambiguous));
	assert_true(ambiguous);
	assert_null(subcommand_match(table, 4, "x", &ambiguous));
	assert_false(ambiguous);
	assert_null(subcommand_match(table, 4, "tops", &ambiguous));
	assert_false(ambiguous);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_stored),
		cmocka_unit_test(test_refused_values),
		cmocka_unit_test(test_unknown_and_leftovers),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_callbacks),
		cmocka_unit_test(test_check_and_help_anyway),
		cmocka_unit_test(test_bench_accounting_refuses_argument),
		cmocka_unit_test(test_unfit_table),
		cmocka_unit_test(test_subcommand_match),
		cmocka_unit_test(test_converters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
