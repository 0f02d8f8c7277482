/* core/model/guest_view.h's reclaim: what the host could take back from a VM, worked by hand
 * (docs/accounting.md "Reclaimable memory"): the bound around guest-free resident pages, the droppable cache, each
 * action's bytes, the worst case in swap, and every reason a figure is unknown instead. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/model/guest_view.h"

#define MiB (1ll << 20)

/* A 512 MiB guest that boots into 80 MiB (50 MiB of it within its MemTotal of 482), allocates and
 * frees 200 MiB: 270 MiB resident, nothing merged or swapped, reporting every 5 s, reporting off. */
static struct reclaim_input freed_200(void)
{
	return (struct reclaim_input){
		.guest_ram = MAYBE(512 * MiB), .balloon = MAYBE(512 * MiB), .guest_total = MAYBE(482 * MiB),
		.guest_free = MAYBE(432 * MiB), .guest_available = MAYBE(440 * MiB), .guest_resident = MAYBE(270 * MiB),
		.ksm_merged = MAYBE(0), .ksm_zero = MAYBE(0), .swap = MAYBE(0), .stats_age_seconds = 1.0,
		.polling_seconds = MAYBE(5), .free_page_reporting = 0,
	};
}

/* Free and resident within [r - (b - f), r - (t - f)] = [190, 220] MiB: 205 +- 15; droppable cache
 * 8 MiB, all of it resident (nothing merged or swapped). What an action surely reaches: the lower
 * side less the guest kernel's reservation (b - t = 30 MiB), 160 MiB. */
static void freed_memory(void **state)
{
	(void)state;
	struct reclaim_input in = freed_200();
	struct reclaim r;
	reclaim_compute(&in, &r);
	assert_true(r.known);
	assert_int_equal(r.by_balloon.v, 160 * MiB);
	assert_int_equal(r.by_free_page_reporting.v, 160 * MiB);
	assert_int_equal(r.by_drop_caches.v, 8 * MiB);
	assert_int_equal(r.bytes, 213 * MiB);
	assert_int_equal(r.error_bound_bytes, 15 * MiB);
	assert_int_equal(r.guest_resident_bytes.v, 270 * MiB);
	assert_int_equal(r.free_in_swap_bytes.v, 0);
	assert_int_equal(r.stats_polling_seconds.v, 5);
	assert_int_equal(r.free_page_reporting, 0);
	/* Reporting on: nothing more to gain by turning it on; unknown when the command line is. */
	in.free_page_reporting = 1;
	reclaim_compute(&in, &r);
	assert_int_equal(r.by_free_page_reporting.v, 0);
	assert_int_equal(r.by_balloon.v, 160 * MiB);
	in.free_page_reporting = -1;
	reclaim_compute(&in, &r);
	assert_false(r.by_free_page_reporting.known);
}

/* Reporting on, after the guest handed its free memory back: resident is what it uses (80 MiB,
 * its kernel's reservation included): the figure falls to [0, 30] MiB, near zero, and no action
 * surely reaches any of it. */
static void reported_back(void **state)
{
	(void)state;
	struct reclaim_input in = freed_200();
	in.free_page_reporting = 1;
	in.guest_resident = MAYBE(80 * MiB);
	in.guest_available = MAYBE(432 * MiB);
	struct reclaim r;
	reclaim_compute(&in, &r);
	assert_true(r.known);
	assert_int_equal(r.bytes, 15 * MiB);
	assert_int_equal(r.error_bound_bytes, 15 * MiB);
	assert_int_equal(r.by_balloon.v, 0);
	assert_int_equal(r.by_drop_caches.v, 0);
}

/* KSM and swap widen the bound: a used page may sit merged, on the zero page or in swap instead of
 * resident. Merged pages are not the VM's to give back: they leave the resident figure. */
static void merged_and_swapped(void **state)
{
	(void)state;
	struct reclaim_input in = freed_200();
	in.ksm_merged = MAYBE(20 * MiB);
	in.ksm_zero = MAYBE(4 * MiB);
	in.swap = MAYBE(6 * MiB);
	struct reclaim r;
	reclaim_compute(&in, &r);
	/* r = 250; lo = 250 - 80 = 170; hi = 250 - (50 - 30) = 230: 200 +- 30; reached 170 - 30. */
	assert_int_equal(r.guest_resident_bytes.v, 250 * MiB);
	assert_int_equal(r.by_balloon.v, 140 * MiB);
	/* cache: 8 MiB, of which 30 may be elsewhere: [0, 8]: 4 +- 4. */
	assert_int_equal(r.by_drop_caches.v, 4 * MiB);
	assert_int_equal(r.bytes, 204 * MiB);
	assert_int_equal(r.error_bound_bytes, 34 * MiB);
	assert_int_equal(r.free_in_swap_bytes.v, 6 * MiB); /* the worst case: all of the swap is guest-free */
}

/* The bounds hold whatever the truth: for every split of the guest's pages between host states,
 * the free resident pages fall within bytes +- bound, and no action is said to reach more of them
 * than there are (a brute force over small page counts; no MemAvailable: bytes is the free part). */
static void bound_holds(void **state)
{
	(void)state;
	const int64_t b = 16, t = 14; /* pages: guest RAM, its MemTotal (2 reserved) */
	for (int64_t f = 0; f <= t; f++)           /* free pages */
		for (int64_t fr = 0; fr <= f; fr++)     /* of them resident and private */
			for (int64_t um = 0; um <= b - f; um++) /* used pages merged, zero, swapped or untouched */
				for (int64_t res_untouched = 0; res_untouched <= um && res_untouched <= b - t; res_untouched++) {
					/* Untouched used pages only among the reserved ones; the rest of um is merged. */
					int64_t merged = um - res_untouched;
					int64_t r = fr + (b - f - um) + merged; /* resident incl. merged */
					struct reclaim_input in = {
						.guest_ram = MAYBE(b), .balloon = MAYBE(b), .guest_total = MAYBE(t),
						.guest_free = MAYBE(f), .guest_resident = MAYBE(r), .ksm_merged = MAYBE(merged),
						.ksm_zero = MAYBE(0), .swap = MAYBE(0), .stats_age_seconds = 0,
						.polling_seconds = MAYBE(1), .free_page_reporting = 0};
					struct reclaim out;
					reclaim_compute(&in, &out);
					assert_true(out.known);
					if (fr < out.bytes - out.error_bound_bytes || fr > out.bytes + out.error_bound_bytes ||
					    out.by_balloon.v > fr)
						fail_msg("f %lld fr %lld merged %lld untouched %lld: %lld +- %lld, reached %lld",
							 (long long)f, (long long)fr, (long long)merged, (long long)res_untouched,
							 (long long)out.bytes, (long long)out.error_bound_bytes,
							 (long long)out.by_balloon.v);
				}
}

/* No figure, each with its reason: polling off (with the way to turn it on), never reported, a
 * stale report, huge pages, residency unknown. The settings still say what they are. */
static void unknown_with_reason(void **state)
{
	(void)state;
	struct reclaim r;
	struct reclaim_input in = freed_200();
	in.polling_seconds = MAYBE(0);
	in.stats_age_seconds = 300;
	reclaim_compute(&in, &r);
	assert_false(r.known);
	assert_non_null(strstr(r.why, "polling is off"));
	assert_non_null(strstr(r.why, "300 s old"));
	assert_non_null(strstr(r.why, "virsh dommemstat DOMAIN --period"));
	assert_non_null(strstr(r.why, "Proxmox"));
	assert_int_equal(r.stats_polling_seconds.v, 0);
	assert_false(r.by_balloon.known);

	in = freed_200();
	in.stats_age_seconds = NAN;
	in.guest_free = UNKNOWN;
	reclaim_compute(&in, &r);
	assert_false(r.known);
	assert_non_null(strstr(r.why, "never reported"));

	in = freed_200();
	in.stats_age_seconds = 13; /* polling every 5 s: older than 12 s is stale */
	reclaim_compute(&in, &r);
	assert_false(r.known);
	assert_non_null(strstr(r.why, "13 s old"));
	in.stats_age_seconds = 11;
	reclaim_compute(&in, &r);
	assert_true(r.known);
	in.polling_seconds = UNKNOWN; /* libvirt's: 60 s */
	in.stats_age_seconds = 59;
	reclaim_compute(&in, &r);
	assert_true(r.known);
	in.stats_age_seconds = 61;
	reclaim_compute(&in, &r);
	assert_false(r.known);

	in = freed_200();
	in.ram_hugetlb = true;
	reclaim_compute(&in, &r);
	assert_false(r.known);
	assert_non_null(strstr(r.why, "huge pages"));

	in = freed_200();
	in.guest_resident = UNKNOWN;
	in.resident_why = "its pagemap may not be read";
	reclaim_compute(&in, &r);
	assert_false(r.known);
	assert_non_null(strstr(r.why, "its pagemap may not be read"));

	reclaim_unknown(&r, "no virtio-balloon device on the command line");
	assert_string_equal(r.why, "no virtio-balloon device on the command line");
	assert_false(r.guest_resident_bytes.known);
}

/* An inflated balloon: the guest has b = 256 of its 512 MiB; pages within the balloon are not its.
 * No MemAvailable: no cache figure, and bytes is the free part alone. */
static void inflated_without_available(void **state)
{
	(void)state;
	struct reclaim_input in = freed_200();
	in.balloon = MAYBE(256 * MiB);
	in.guest_total = MAYBE(226 * MiB);
	in.guest_free = MAYBE(176 * MiB);
	in.guest_available = UNKNOWN;
	in.guest_resident = MAYBE(150 * MiB);
	struct reclaim r;
	reclaim_compute(&in, &r);
	/* lo = 150 - 80 = 70, hi = 150 - 50 = 100; reached 70 - 30. */
	assert_int_equal(r.by_balloon.v, 40 * MiB);
	assert_false(r.by_drop_caches.known);
	assert_int_equal(r.bytes, 85 * MiB);
	assert_int_equal(r.error_bound_bytes, 15 * MiB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(freed_memory),        cmocka_unit_test(reported_back),
		cmocka_unit_test(merged_and_swapped),  cmocka_unit_test(bound_holds),
		cmocka_unit_test(unknown_with_reason), cmocka_unit_test(inflated_without_available),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
