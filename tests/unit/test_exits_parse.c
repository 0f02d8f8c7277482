/* parse/kvm_debugfs and the change arithmetic of core/kvm: pure functions. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "core/kvm/kvm.h"
#include "parse/kvm_debugfs.h"

static void test_counter_values(void **state)
{
	(void)state;
	uint64_t v = 7;
	assert_int_equal(parse_kvm_counter("123\n", 4, &v), 0);
	assert_int_equal(v, 123);
	assert_int_equal(parse_kvm_counter("0\n", 2, &v), 0);
	assert_int_equal(v, 0);
	const char *max = "18446744073709551615\n";
	assert_int_equal(parse_kvm_counter(max, strlen(max), &v), 0);
	assert_true(v == UINT64_MAX);
	const char *over = "18446744073709551616\n";
	assert_int_equal(parse_kvm_counter(over, strlen(over), &v), -ERANGE);
	/* A cut read, an empty file, garbage, a sign, a table: never a number. */
	assert_int_equal(parse_kvm_counter("123", 3, &v), -EINVAL);
	assert_int_equal(parse_kvm_counter("", 0, &v), -EINVAL);
	assert_int_equal(parse_kvm_counter("\n", 1, &v), -EINVAL);
	assert_int_equal(parse_kvm_counter("-5\n", 3, &v), -EINVAL);
	assert_int_equal(parse_kvm_counter("12 3\n", 5, &v), -EINVAL);
	const char *table = "Rmap_Count:\t0\t1\nLevel=4K:\t3086676\t878\n";
	assert_int_equal(parse_kvm_counter(table, strlen(table), &v), -EINVAL);
}

static void test_dir_names(void **state)
{
	(void)state;
	pid_t pid;
	int fd;
	assert_int_equal(parse_kvm_vm_dir("1234-12", &pid, &fd), 0);
	assert_int_equal(pid, 1234);
	assert_int_equal(fd, 12);
	assert_int_equal(parse_kvm_vm_dir("12345-0", &pid, &fd), 0);
	assert_int_equal(pid, 12345);
	static const char *const bad[] = {"1234", "-12", "12-", "0-3", "01-2", "12-3x", "a-1", "12--3",
					  "exits", "99999999999-1", "1-2-3"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_kvm_vm_dir(bad[i], &pid, &fd), -EINVAL);
	int id;
	assert_int_equal(parse_kvm_vcpu_dir("vcpu0", &id), 0);
	assert_int_equal(id, 0);
	assert_int_equal(parse_kvm_vcpu_dir("vcpu15", &id), 0);
	assert_int_equal(id, 15);
	assert_int_equal(parse_kvm_vcpu_dir("vcpu", &id), -EINVAL);
	assert_int_equal(parse_kvm_vcpu_dir("vcpu1a", &id), -EINVAL);
	assert_int_equal(parse_kvm_vcpu_dir("cpu1", &id), -EINVAL);
	assert_true(kvm_counter_name_ok("halt_wait_ns"));
	assert_false(kvm_counter_name_ok("tsc-offset"));
	assert_false(kvm_counter_name_ok(""));
	assert_false(kvm_counter_name_ok("../exits"));
}

static void test_kinds(void **state)
{
	(void)state;
	assert_int_equal(kvm_stat_kind("exits"), KVM_STAT_EVENTS);
	assert_int_equal(kvm_stat_kind("halt_exits"), KVM_STAT_EVENTS);
	assert_int_equal(kvm_stat_kind("remote_tlb_flush"), KVM_STAT_EVENTS);
	assert_int_equal(kvm_stat_kind("halt_wait_ns"), KVM_STAT_TIME_NS);
	assert_int_equal(kvm_stat_kind("halt_poll_success_ns"), KVM_STAT_TIME_NS);
	assert_int_equal(kvm_stat_kind("pages_4k"), KVM_STAT_GAUGE);
	assert_int_equal(kvm_stat_kind("blocking"), KVM_STAT_GAUGE);
	assert_int_equal(kvm_stat_kind("max_mmu_rmap_size"), KVM_STAT_GAUGE);
	assert_int_equal(kvm_stat_kind("halt_wait_hist"), KVM_STAT_IGNORED);
	assert_int_equal(kvm_stat_kind("mmu_rmaps_stat"), KVM_STAT_IGNORED);
	assert_string_equal(kvm_stat_kind_name(KVM_STAT_TIME_NS), "time_ns");
}

static void test_change(void **state)
{
	(void)state;
	struct kvm_change c = kvm_change(KVM_STAT_EVENTS, MAYBE(100), MAYBE(350), 0.5, false);
	assert_true(c.delta.known);
	assert_int_equal(c.delta.v, 250);
	assert_int_equal(c.total.v, 350);
	assert_true(fabs(c.per_second - 500.0) < 1e-9);
	assert_false(c.reset);

	/* A counter that went down was reset: no delta, no rate, never negative. */
	c = kvm_change(KVM_STAT_EVENTS, MAYBE(1000), MAYBE(10), 1.0, false);
	assert_true(c.reset);
	assert_false(c.delta.known);
	assert_true(isnan(c.per_second));
	assert_int_equal(c.total.v, 10);

	/* A VM created between the reads started from zero. */
	c = kvm_change(KVM_STAT_EVENTS, UNKNOWN, MAYBE(42), 2.0, true);
	assert_int_equal(c.delta.v, 42);
	assert_true(fabs(c.per_second - 21.0) < 1e-9);

	/* Unknown before (and not new): unknown delta. */
	c = kvm_change(KVM_STAT_EVENTS, UNKNOWN, MAYBE(42), 2.0, false);
	assert_false(c.delta.known);
	assert_true(isnan(c.per_second));
	c = kvm_change(KVM_STAT_EVENTS, MAYBE(1), UNKNOWN, 2.0, false);
	assert_false(c.total.known);

	/* Times: ns per second; 0.25 s over 0.5 s is half the interval. */
	c = kvm_change(KVM_STAT_TIME_NS, MAYBE(1000000000), MAYBE(1250000000), 0.5, false);
	assert_int_equal(c.delta.v, 250000000);
	assert_true(fabs(c.per_second / 1e9 - 0.5) < 1e-9);

	/* Gauges go up and down: a negative delta is not a reset, and there is no rate. */
	c = kvm_change(KVM_STAT_GAUGE, MAYBE(500), MAYBE(300), 1.0, false);
	assert_false(c.reset);
	assert_int_equal(c.delta.v, -200);
	assert_true(isnan(c.per_second));
	c = kvm_change(KVM_STAT_GAUGE, UNKNOWN, MAYBE(300), 1.0, true);
	assert_false(c.delta.known);
}

static void test_change_sum(void **state)
{
	(void)state;
	struct kvm_change sum = kvm_change_zero();
	struct kvm_change a = kvm_change(KVM_STAT_EVENTS, MAYBE(10), MAYBE(30), 2.0, false);
	struct kvm_change b = kvm_change(KVM_STAT_EVENTS, MAYBE(5), MAYBE(25), 2.0, false);
	kvm_change_add(&sum, &a);
	kvm_change_add(&sum, &b);
	assert_int_equal(sum.total.v, 55);
	assert_int_equal(sum.delta.v, 40);
	assert_true(fabs(sum.per_second - 20.0) < 1e-9);
	/* a part over another interval (a paced VM's 10 s): no delta, its rate still summed */
	struct kvm_change paced = kvm_change(KVM_STAT_EVENTS, MAYBE(0), MAYBE(100), 10.0, false);
	paced.delta = UNKNOWN;
	struct kvm_change mixed = sum;
	kvm_change_add(&mixed, &paced);
	assert_false(mixed.delta.known);
	assert_true(fabs(mixed.per_second - 30.0) < 1e-9);
	struct kvm_change r = kvm_change(KVM_STAT_EVENTS, MAYBE(50), MAYBE(1), 2.0, false);
	kvm_change_add(&sum, &r);
	assert_true(sum.reset);
	assert_false(sum.delta.known);
	assert_true(isnan(sum.per_second));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_values), cmocka_unit_test(test_dir_names), cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_change), cmocka_unit_test(test_change_sum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
