/* core/kvm/kvm_pace: which QEMUs are paced, when a paced one is read, and the line that says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "core/kvm/kvm_pace.h"

#define V(major, minor, micro) ((major) * 10000u + (minor) * 100u + (micro))

static void test_interrupting_versions(void **state)
{
	(void)state;
	assert_false(kvm_pace_interrupts(0));           /* unknown: not read yet */
	assert_false(kvm_pace_interrupts(V(7, 0, 0)));  /* no query-stats at all */
	assert_true(kvm_pace_interrupts(V(7, 1, 0)));
	assert_true(kvm_pace_interrupts(V(7, 2, 22)));  /* Debian 12's */
	assert_true(kvm_pace_interrupts(V(8, 0, 5)));
	assert_false(kvm_pace_interrupts(V(8, 1, 0)));  /* reads a stats fd it keeps */
	assert_false(kvm_pace_interrupts(V(9, 2, 0)));
}

static void test_due(void **state)
{
	(void)state;
	unsigned q72 = V(7, 2, 22);
	/* the first two reads (the first figures need two), whenever they come */
	assert_true(kvm_pace_due(q72, 10, 0, 0, 100));
	assert_true(kvm_pace_due(q72, 10, 1, 100, 101));
	/* then at most every 10 s: a refresh every second reads it once in ten */
	assert_false(kvm_pace_due(q72, 10, 2, 101, 102));
	assert_false(kvm_pace_due(q72, 10, 2, 101, 110.7));
	assert_true(kvm_pace_due(q72, 10, 2, 101, 110.85)); /* 2% early is on time */
	assert_true(kvm_pace_due(q72, 10, 7, 101, 111));
	assert_true(kvm_pace_due(q72, 10, 7, 101, 160));
	/* not paced: off, not interrupting, or its version not known yet */
	assert_true(kvm_pace_due(q72, 0, 5, 101, 101.5));
	assert_true(kvm_pace_due(V(8, 1, 0), 10, 5, 101, 101.5));
	assert_true(kvm_pace_due(V(9, 0, 0), 10, 5, 101, 101.5));
	assert_true(kvm_pace_due(0, 10, 5, 101, 101.5));
}

static void test_why(void **state)
{
	(void)state;
	char buf[128];
	kvm_pace_why(buf, sizeof(buf), V(7, 2, 22), 10);
	assert_string_equal(buf, "QEMU 7.2 interrupts every vCPU for query-stats: read every 10 s");
	kvm_pace_why(buf, sizeof(buf), V(8, 0, 0), 2.5);
	assert_string_equal(buf, "QEMU 8.0 interrupts every vCPU for query-stats: read every 2.5 s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interrupting_versions),
		cmocka_unit_test(test_due),
		cmocka_unit_test(test_why),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
