/* store_share.c with real SQLite in a temporary directory: a sharing map written by a side writer
 * beside a recorder and read back whole, and old maps losing their pairs after 30 days. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "store/store.h"
#include "store/store_share.h"
#include "store_testutil.h"

/* Three VMs: a and b of one image, c apart; c partial. */
static void three_vm_run(struct share_run *r, double t)
{
	assert_int_equal(share_run_alloc(3, r), 0);
	r->t = t;
	r->sample_n = 64;
	r->page_size = 4096;
	r->host_pages = 3000;
	r->zero_pages = 100;
	r->mergeable_savings_bytes = 900 * 4096;
	r->ksm_saved_bytes = MAYBE(400 * 4096);
	const char *names[] = {"a", "b", ""};
	for (size_t i = 0; i < 3; i++) {
		r->vms[i] = (struct share_run_vm){.pid = (pid_t)(10 + i), .pages = 1000, .zero_pages = 30 + (int64_t)i,
						  .unique_pages = 200 + (int64_t)i, .error_bound_pages = 64,
						  .sketch_bytes = 128};
		snprintf(r->vms[i].name, sizeof(r->vms[i].name), "%s", names[i]);
	}
	snprintf(r->vms[2].partial_reason, sizeof(r->vms[2].partial_reason), "vm-exited");
	int64_t pairs[9] = {5, 800, 64, 790, 0, 0, 64, 0, 128};
	memcpy(r->pairs, pairs, sizeof(pairs));
}

/* A sharing map is written beside a recorder holding the database, and the latest run reads back
 * whole: every figure, names, unknown ksm_saved, the partial reason, pairs left out read as 0. */
static void share_run_beside_a_recorder(void **state)
{
	(void)state;
	struct store *rec, *side, *s;
	assert_int_equal(store_open(db, &rec), 0);
	assert_int_equal(store_open(db, &side), -EBUSY);
	assert_int_equal(store_open_side(db, &side), 0);
	struct share_run w, w2, r;
	three_vm_run(&w, 1.8e9);
	three_vm_run(&w2, 1.8e9 + 60);
	w2.ksm_saved_bytes = UNKNOWN;
	w2.pairs[1] = 801;
	assert_int_equal(store_share_write(side, &w), 0);
	write_samples(rec, 1.8e9, 10, 2, 1, 0);
	assert_int_equal(store_share_write(side, &w2), 0);
	store_close(side);
	store_close(rec);
	assert_int_equal(store_open_read(db, &s), 0);
	assert_int_equal(store_share_latest(s, &r), 0);
	store_close(s);
	assert_int_equal(r.n, 3);
	assert_true(fabs(r.t - (1.8e9 + 60)) < 1e-3);
	assert_int_equal(r.sample_n, 64);
	assert_int_equal(r.host_pages, 3000);
	assert_int_equal(r.mergeable_savings_bytes, 900 * 4096);
	assert_false(r.ksm_saved_bytes.known);
	assert_string_equal(r.vms[0].name, "a");
	assert_string_equal(r.vms[2].name, "");
	assert_string_equal(r.vms[2].partial_reason, "vm-exited");
	assert_string_equal(r.vms[0].partial_reason, "");
	assert_int_equal(r.vms[1].zero_pages, 31);
	assert_int_equal(r.vms[2].unique_pages, 202);
	assert_int_equal(r.vms[1].pid, 11);
	for (size_t i = 0; i < 9; i++)
		assert_int_equal(r.pairs[i], w2.pairs[i]);
	share_run_free(&r);
	share_run_free(&w);
	share_run_free(&w2);
}

/* A map's pairs (n x n rows) are kept 30 days; its run and VM rows stay. */
static void old_maps_lose_their_pairs(void **state)
{
	(void)state;
	struct store *s;
	struct share_run w;
	assert_int_equal(store_open_side(db, &s), 0);
	three_vm_run(&w, 1.8e9 - 31 * 86400.0);
	assert_int_equal(store_share_write(s, &w), 0);
	w.t = 1.8e9 - 29 * 86400.0;
	assert_int_equal(store_share_write(s, &w), 0);
	assert_int_equal(count_rows("SELECT count(*) FROM share_pairs"), 2 * 6);
	w.t = 1.8e9;
	assert_int_equal(store_share_write(s, &w), 0);
	store_close(s);
	assert_int_equal(count_rows("SELECT count(*) FROM share_pairs"), 2 * 6);
	assert_int_equal(count_rows("SELECT count(*) FROM share_pairs WHERE run_id = 1"), 0);
	assert_int_equal(count_rows("SELECT count(*) FROM share_runs"), 3);
	assert_int_equal(count_rows("SELECT count(*) FROM share_vms"), 9);
	share_run_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(share_run_beside_a_recorder, setup, teardown),
		cmocka_unit_test_setup_teardown(old_maps_lose_their_pairs, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
