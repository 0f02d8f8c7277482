/* core/sample/capacity: how many more guests fit, worked by hand (docs/capacity.md): now, after
 * reclaim, with sharing, on huge pages, and every unknown with its reason; and the report's
 * sentence (out/capacity_view). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/sample/capacity.h"
#include "out/capacity_view.h"

#define MiB (1ll << 20)
#define GiB (1ll << 30)

/* A 64 GiB host with 30 GiB available; three QEMUs, overhead 200 (exact), 300 (exact) and 100 MiB
 * (an estimate: left out while exact figures exist); the first two guests report, giving back
 * 3 +- 1 GiB and 1 GiB +- 512 MiB; the third does not. */
struct fixture {
	struct host host;
	struct vm vms[4];
	struct guest_view views[3];
	struct vm_list list;
};

static void make(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->host.mem_known = true;
	f->host.mem.mem_total = MAYBE(64 * GiB);
	f->host.mem.mem_available = MAYBE(30 * GiB);
	f->host.hugepages_known = true;
	const int64_t over[3] = {200 * MiB, 300 * MiB, 100 * MiB};
	for (int i = 0; i < 3; i++) {
		struct vm *vm = &f->vms[i];
		vm->pid = 100 + i;
		vm->cfg.vmm = VMM_QEMU;
		vm->overhead_bytes = MAYBE(over[i]);
		vm->overhead_method = i < 2 ? METHOD_EXACT : METHOD_ESTIMATE;
		vm->guest = &f->views[i];
	}
	f->views[0].reclaim = (struct reclaim){.known = true, .bytes = 3 * GiB, .error_bound_bytes = 1 * GiB};
	f->views[1].reclaim = (struct reclaim){.known = true, .bytes = 1 * GiB, .error_bound_bytes = 512 * MiB};
	f->views[2].reclaim = (struct reclaim){.known = false, .why = "polling off"};
	/* A plain --pid process: neither a VM whose overhead counts nor one whose reclaim is unknown. */
	f->vms[3] = (struct vm){.pid = 200, .cfg.vmm = VMM_PROCESS, .overhead_bytes = UNKNOWN};
	f->list = (struct vm_list){.vms = f->vms, .n = 4};
}

static struct capacity_opts opts_4g(void)
{
	return (struct capacity_opts){.size_bytes = 4 * GiB, .reserve_percent = 10, .overhead_bytes = UNKNOWN,
				      .kind = VMM_QEMU, .shared_bytes = UNKNOWN};
}

/* Room: 30 GiB less 6.4 GiB of reserve = 23.6 GiB; each guest 4 GiB + 250 MiB (the median of the
 * two exact figures): 5 now; reclaim 2 GiB + 512 MiB more: 26.1 GiB, 6; sharing 1 GiB of each: 7. */
static void now_after_reclaim_with_sharing(void **state)
{
	(void)state;
	struct fixture f;
	make(&f);
	struct capacity_opts o = opts_4g();
	struct capacity c;
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_int_equal(c.reserve_bytes.v, 6871947674); /* 6.4 GiB, rounded */
	assert_int_equal(c.overhead_bytes_per_vm.v, 250 * MiB);
	assert_int_equal(c.overhead_vms, 2);
	assert_int_equal(c.fit_now.v, 5);
	assert_string_equal(c.limited_by, "memory");
	assert_int_equal(c.reclaimable_bytes.v, 2 * GiB + 512 * MiB);
	assert_int_equal(c.reclaim_vms, 2);
	assert_int_equal(c.reclaim_unknown_vms, 1);
	assert_int_equal(c.fit_after_reclaim.v, 6);
	assert_false(c.fit_with_sharing.known);
	assert_non_null(strstr(c.sharing_why, "--image"));
	o.shared_bytes = MAYBE(1 * GiB);
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_int_equal(c.fit_with_sharing.v, 8);
	char line[256];
	capacity_sentence(line, sizeof(line), &c);
	assert_string_equal(line, "room for 5 more 4.00 GiB guests now, 6 after reclaim, 8 with sharing");
	/* A guest that would share more than its RAM shares its RAM: it still costs its overhead. */
	o.shared_bytes = MAYBE(8 * GiB);
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_int_equal(c.fit_with_sharing.v, (23 * GiB + 6 * GiB / 10 + 2 * GiB + 512 * MiB) / (250 * MiB));
}

/* A host already inside its reserve fits none, limited by the reserve; reclaim may still make room. */
static void inside_the_reserve(void **state)
{
	(void)state;
	struct fixture f;
	make(&f);
	f.host.mem.mem_available = MAYBE(6 * GiB);
	struct capacity_opts o = opts_4g();
	struct capacity c;
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_int_equal(c.fit_now.v, 0);
	assert_string_equal(c.limited_by, "reserve");
	assert_int_equal(c.fit_after_reclaim.v, 0); /* 6 + 2.5 - 6.4 = 2.1 GiB: not one 4 GiB guest */
	o.size_bytes = 1 * GiB;
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_int_equal(c.fit_after_reclaim.v, 1);
	char line[256];
	capacity_sentence(line, sizeof(line), &c);
	assert_string_equal(line, "room for 0 more 1.00 GiB guests now, 1 after reclaim");
}

/* Guests on huge pages: their RAM from the free pool (3 x 4 GiB), only the overhead from the rest. */
static void on_huge_pages(void **state)
{
	(void)state;
	struct fixture f;
	make(&f);
	f.host.hugepages[0] = (struct hugepage_pool){.page_bytes = 2 * MiB, .total = MAYBE(8192), .free = MAYBE(6144)};
	f.host.nhugepages = 1;
	struct capacity_opts o = opts_4g();
	o.hugetlb = true;
	o.shared_bytes = MAYBE(GiB);
	struct capacity c;
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_int_equal(c.fit_now.v, 3);
	assert_string_equal(c.limited_by, "hugepages");
	assert_int_equal(c.fit_after_reclaim.v, 3);
	assert_false(c.fit_with_sharing.known);
	assert_non_null(strstr(c.sharing_why, "huge pages"));
}

/* Unknown, with the reason: no VM to measure the overhead on (or the user's figure instead), no
 * MemAvailable, no guest that reports (reclaim unknown, not 0), no VM at all (nothing to reclaim). */
static void unknowns(void **state)
{
	(void)state;
	struct fixture f;
	make(&f);
	struct capacity_opts o = opts_4g();
	o.kind = VMM_FIRECRACKER;
	struct capacity c;
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_false(c.fit_now.known);
	assert_null(c.limited_by);
	assert_non_null(strstr(c.why, "no running firecracker VM"));
	char line[512];
	capacity_sentence(line, sizeof(line), &c);
	assert_non_null(strstr(line, "room for more 4.00 GiB guests: unknown (no running firecracker VM"));
	o.overhead_bytes = MAYBE(100 * MiB);
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_int_equal(c.fit_now.v, 5);
	assert_int_equal(c.overhead_vms, 0);

	f.views[0].reclaim.known = f.views[1].reclaim.known = false;
	o = opts_4g();
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_int_equal(c.fit_now.v, 5);
	assert_false(c.reclaimable_bytes.known);
	assert_false(c.fit_after_reclaim.known);

	f.list.n = 0;
	o.overhead_bytes = MAYBE(100 * MiB);
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_int_equal(c.reclaimable_bytes.v, 0);
	assert_int_equal(c.fit_after_reclaim.v, c.fit_now.v);

	f.host.mem.mem_available = UNKNOWN;
	capacity_compute(&f.host, &f.list, &o, &c);
	assert_false(c.fit_now.known);
	assert_non_null(strstr(c.why, "MemAvailable"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(now_after_reclaim_with_sharing),
		cmocka_unit_test(inside_the_reserve),
		cmocka_unit_test(on_huge_pages),
		cmocka_unit_test(unknowns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
