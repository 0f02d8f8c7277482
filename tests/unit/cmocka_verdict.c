/* Linked into every unit test with --wrap=_skip,--wrap=_cmocka_run_group_tests
 * (tests/CMakeLists.txt): cmocka counts a skipped test as passed, and its group runner returns
 * the number failed, so a program whose tests skipped passed in CTest. Here skip() is counted and
 * the runner's result becomes the verdict CTest reads: 1 when a test failed, else 77
 * (SKIP_RETURN_CODE: skipped) when one skipped, else 0. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

void __real__skip(const char *const file, const int line);
int __real__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
				   const size_t num_tests, CMFixtureFunction group_setup,
				   CMFixtureFunction group_teardown);

static int tests_skipped;

void __wrap__skip(const char *const file, const int line)
{
	tests_skipped++;
	__real__skip(file, line);
}

int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
				   const size_t num_tests, CMFixtureFunction group_setup,
				   CMFixtureFunction group_teardown)
{
	int failed = __real__cmocka_run_group_tests(group_name, tests, num_tests, group_setup,
						    group_teardown);
	if (failed != 0)
		return 1;
	return tests_skipped > 0 ? 77 : 0;
}
