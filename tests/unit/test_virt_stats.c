/* parse/virt_stats and core/kvm/kvm_virt: libvirt's domain statistics as KVM counters, with the
 * field names `virsh domstats --vm --vcpu` gave for a type='kvm' domain on this host. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/kvm/kvm_virt.h"
#include "parse/virt_stats.h"

static void test_field_names(void **state)
{
	(void)state;
	char name[64];
	int vcpu = 7;
	assert_int_equal(parse_virt_kvm_stat("vcpu.0.exits.sum", &vcpu, name, sizeof(name)), 0);
	assert_int_equal(vcpu, 0);
	assert_string_equal(name, "exits");
	assert_int_equal(parse_virt_kvm_stat("vcpu.12.halt_poll_fail_ns.sum", &vcpu, name, sizeof(name)), 0);
	assert_true(vcpu == 12 && !strcmp(name, "halt_poll_fail_ns"));
	assert_int_equal(parse_virt_kvm_stat("vm.max_mmu_page_hash_collisions.max", &vcpu, name, sizeof(name)), 0);
	assert_true(vcpu == -1 && !strcmp(name, "max_mmu_page_hash_collisions"));
	assert_int_equal(parse_virt_kvm_stat("vm.pages_4k.cur", &vcpu, name, sizeof(name)), 0);
	/* Not KVM's: libvirt's own vCPU figures, the balloon, cpu-total. */
	const char *others[] = {"vcpu.0.time", "vcpu.0.delay", "vcpu.0.wait", "vcpu.current", "vcpu.maximum",
				"vcpu.0.state", "balloon.current", "cpu.haltpoll.success.time", "vcpu.x.exits.sum",
				"vcpu..exits.sum", "vm..sum", "vm.exits", "state.state"};
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++)
		assert_int_equal(parse_virt_kvm_stat(others[i], &vcpu, name, sizeof(name)), -ENOENT);
	assert_int_equal(parse_virt_kvm_stat("vm.remote_tlb_flush.sum", &vcpu, name, 8), -ENAMETOOLONG);
}

static struct virt_param param(const char *field, int64_t v)
{
	struct virt_param p = {.i = v, .d = (double)v};
	snprintf(p.field, sizeof(p.field), "%s", field);
	return p;
}

static void test_domain_values(void **state)
{
	(void)state;
	struct virt_param params[] = {
		param("vcpu.current", 2),           param("vcpu.0.time", 5000000),  param("vcpu.0.exits.sum", 598981),
		param("vcpu.1.exits.sum", 1000),    param("vcpu.0.delay", 8700000), param("vcpu.0.halt_wait_ns.sum", 42),
		param("vm.remote_tlb_flush.sum", 3), param("vcpu.1.halt_wait_ns.sum", 8),
	};
	struct virt_domain d = {.uuid = "8f1c0b34-1111-4222-8333-944455556666", .params = params,
				.nparams = sizeof(params) / sizeof(*params)};
	const char *names[] = {"exits", "halt_wait_ns", "remote_tlb_flush", "io_exits"};
	maybe_i64 v[4];
	kvm_virt_values(&d, names, 4, v);
	assert_true(v[0].known && v[0].v == 599981); /* summed over the vCPUs, as debugfs' VM directory */
	assert_true(v[1].known && v[1].v == 50);
	assert_true(v[2].known && v[2].v == 3);
	assert_false(v[3].known); /* the domain has none: unknown, not 0 */

	char found[8][64];
	enum kvm_stat_kind kinds[8];
	size_t n = kvm_virt_counters(&d, found, kinds, 8);
	assert_int_equal(n, 3); /* each name once */
	assert_string_equal(found[0], "exits");
	assert_int_equal(kinds[0], KVM_STAT_EVENTS);
	assert_string_equal(found[1], "halt_wait_ns");
	assert_int_equal(kinds[1], KVM_STAT_TIME_NS);
	assert_int_equal(kvm_virt_counters(&d, found, kinds, 1), 1);

	struct virt_domains all = {.v = &d, .n = 1};
	assert_ptr_equal(virt_domain_find(&all, "8F1C0B34-1111-4222-8333-944455556666"), &d);
	assert_null(virt_domain_find(&all, "00000000-0000-0000-0000-000000000000"));
	assert_null(virt_domain_find(&all, ""));
	assert_ptr_equal(virt_param_find(&d, "vcpu.0.delay"), &params[4]);
	assert_null(virt_param_find(&d, "vcpu.0"));      /* a whole field, not a prefix */
	assert_null(virt_param_find(&d, "balloon.current"));
	assert_null(virt_param_find(NULL, "vcpu.current"));
}

/* Per vCPU (exits --vcpu): each vCPU's own vcpu.N.NAME, vCPUs in ascending N whatever the order
 * libvirt gives them in, the VM's own (vm.NAME) unknown for a vCPU, halt polling among them with
 * the names `virsh domstats --vm --vcpu` gives on this host. */
static void test_domain_vcpus(void **state)
{
	(void)state;
	struct virt_param params[] = {
		param("vcpu.1.exits.sum", 1000),        param("vcpu.0.exits.sum", 598981),
		param("vcpu.0.halt_poll_success_ns.sum", 700), param("vcpu.0.halt_poll_fail_ns.sum", 300),
		param("vcpu.1.halt_poll_fail_ns.sum", 5), param("vm.remote_tlb_flush.sum", 3), param("vcpu.0.delay", 8700000),
	};
	struct virt_domain d = {.uuid = "8f1c0b34-1111-4222-8333-944455556666", .params = params,
				.nparams = sizeof(params) / sizeof(*params)};
	const char *names[] = {"exits", "halt_poll_success_ns", "halt_poll_fail_ns", "remote_tlb_flush"};
	int vcpus = -1, *index = NULL;
	maybe_i64 *per = NULL;
	assert_int_equal(kvm_virt_vcpus(&d, names, 4, &vcpus, &per, &index), 0);
	assert_int_equal(vcpus, 2);
	assert_true(index[0] == 0 && index[1] == 1);
	assert_true(per[0].known && per[0].v == 598981 && per[1].v == 700 && per[2].v == 300);
	assert_false(per[3].known); /* the VM's own counter is no vCPU's */
	assert_true(per[4].known && per[4].v == 1000);
	assert_false(per[5].known); /* vCPU 1 has no halt_poll_success_ns: unknown, not 0 */
	assert_true(per[6].known && per[6].v == 5);
	free(per);
	free(index);
	struct virt_domain none = {.params = params + 5, .nparams = 1}; /* vm.* only */
	assert_int_equal(kvm_virt_vcpus(&none, names, 4, &vcpus, &per, &index), 0);
	assert_int_equal(vcpus, 0);
	free(per);
	free(index);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_names),
		cmocka_unit_test(test_domain_values),
		cmocka_unit_test(test_domain_vcpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
