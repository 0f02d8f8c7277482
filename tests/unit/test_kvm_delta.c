/* core/kvm_delta: deltas, resets, VMs appearing (also by start time) and going away, filters,
 * gauges and the host-wide running increase, on two reads of the exits-intel fixture whose later
 * read is changed in memory. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/kvm/kvm_delta.h"
#include "core/kvm/kvm_halt.h"
#include "testutil.h"

struct two_reads {
	char proc[PATH_MAX], sys[PATH_MAX];
	struct io_root root;
	struct kvm_reader *kr;
	struct kvm_sample a, b;
	size_t nvms_b; /* b's own count, restored before it is freed */
	size_t exits, pages_4k, halt_wait_ns;
};

static int setup(void **state)
{
	struct two_reads *t = calloc(1, sizeof(*t));
	if (!t)
		return -1;
	t->root = fixture_root("exits-intel", t->proc, t->sys, sizeof(t->proc));
	enum kvm_avail why;
	if (kvm_reader_open(&t->root, &t->kr, &why) < 0 || kvm_reader_sample(t->kr, &t->a) < 0 ||
	    kvm_reader_sample(t->kr, &t->b) < 0)
		return -1;
	t->b.monotonic_seconds = t->a.monotonic_seconds + 2.0;
	t->nvms_b = t->b.nvms;
	t->exits = (size_t)kvm_counter_index(t->kr, "exits");
	t->pages_4k = (size_t)kvm_counter_index(t->kr, "pages_4k");
	t->halt_wait_ns = (size_t)kvm_counter_index(t->kr, "halt_wait_ns");
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct two_reads *t = *state;
	t->b.nvms = t->nvms_b;
	kvm_sample_free(&t->a);
	kvm_sample_free(&t->b);
	kvm_reader_close(t->kr);
	free(t);
	return 0;
}

/* The position of counter i in d.sel. */
static size_t pos(const struct kvm_delta *d, size_t i)
{
	for (size_t s = 0; s < d->nsel; s++)
		if (d->sel[s] == i)
			return s;
	fail_msg("counter %zu not selected", i);
	return 0;
}

static void bump(struct kvm_sample *s, size_t vm, size_t i, int64_t by)
{
	s->vms[vm].values[i].v += by;
	s->total[i].v += by;
}

static void test_steady(void **state)
{
	struct two_reads *t = *state;
	bump(&t->b, 0, t->exits, 100);
	bump(&t->b, 1, t->exits, 300);
	bump(&t->b, 2, t->halt_wait_ns, 500000000); /* half a second of halt in two */
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	assert_int_equal(d.nvms, 4);
	assert_int_equal(d.ngone, 0);
	assert_false(d.filtered);
	assert_true(fabs(d.seconds - 2.0) <= 1e-9);
	size_t e = pos(&d, t->exits), h = pos(&d, t->halt_wait_ns);
	assert_false(d.vms[0].appeared);
	assert_int_equal(d.vms[0].changes[e].delta.v, 100);
	assert_true(fabs(d.vms[1].changes[e].per_second - 150.0) <= 1e-9);
	assert_true(d.total[e].delta.known);
	assert_int_equal(d.total[e].delta.v, 400);
	assert_true(fabs(d.total[e].per_second - 200.0) <= 1e-9);
	assert_int_equal(d.total[e].total.v, t->b.total[t->exits].v); /* the kernel's global file */
	assert_int_equal(d.increase[e].v, 400);
	assert_int_equal(d.increase[h].v, 500000000);
	kvm_delta_free(&d);
}

/* Halt polling from the counters every source names alike: success + fail per second of wall time,
 * of one CPU; unknown (NaN, not 0) once one of the two is missing. */
static void test_halt_poll(void **state)
{
	struct two_reads *t = *state;
	struct kvm_halt_index ix;
	kvm_halt_index(t->kr, &ix);
	assert_true(ix.success_ns >= 0 && ix.fail_ns >= 0 && ix.wait_ns >= 0 && ix.attempted >= 0 && ix.successful >= 0);
	struct kvm_halt_index by_name;
	kvm_halt_index_of_sample(&t->b, &by_name);
	assert_memory_equal(&ix, &by_name, sizeof(ix));
	bump(&t->b, 0, (size_t)ix.success_ns, 300000000); /* 0.3 s caught, 0.1 s gave up, in 2 s */
	bump(&t->b, 0, (size_t)ix.fail_ns, 100000000);
	bump(&t->b, 0, (size_t)ix.wait_ns, 1000000000);
	bump(&t->b, 0, (size_t)ix.attempted, 4000);
	bump(&t->b, 0, (size_t)ix.successful, 3000);
	maybe_i64 at_b = kvm_halt_poll_ns(&ix, t->b.vms[0].values);
	assert_true(at_b.known);
	assert_int_equal(at_b.v, t->b.vms[0].values[ix.success_ns].v + t->b.vms[0].values[ix.fail_ns].v);
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	struct kvm_halt h;
	kvm_halt_change(&ix, d.sel, d.nsel, d.vms[0].changes, &h);
	assert_true(fabs(h.poll_per_second - 0.2) < 1e-9);
	assert_true(fabs(h.success_per_second - 0.15) < 1e-9);
	assert_true(fabs(h.fail_per_second - 0.05) < 1e-9);
	assert_true(fabs(h.wait_per_second - 0.5) < 1e-9);
	assert_true(h.poll_ns.known && h.poll_ns.v == at_b.v);
	assert_true(h.polls.known && h.polls.v == 4000 && h.successful_polls.known && h.successful_polls.v == 3000);
	kvm_halt_change(&ix, d.sel, d.nsel, d.vms[1].changes, &h); /* did not poll: 0, known */
	assert_true(h.poll_per_second == 0);
	t->b.vms[0].values[ix.fail_ns] = UNKNOWN; /* a source without the fail counter */
	assert_false(kvm_halt_poll_ns(&ix, t->b.vms[0].values).known);
	kvm_delta_free(&d);
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	kvm_halt_change(&ix, d.sel, d.nsel, d.vms[0].changes, &h);
	assert_true(isnan(h.poll_per_second) && isnan(h.fail_per_second) && !h.poll_ns.known);
	assert_true(fabs(h.success_per_second - 0.15) < 1e-9);
	struct kvm_halt_index none = {-1, -1, -1, -1, -1}; /* the counters absent from the set */
	kvm_halt_change(&none, d.sel, d.nsel, d.vms[0].changes, &h);
	assert_true(isnan(h.poll_per_second) && isnan(h.wait_per_second) && !h.polls.known);
	kvm_delta_free(&d);
}

static void test_reset(void **state)
{
	struct two_reads *t = *state;
	bump(&t->b, 0, t->exits, 100);
	t->b.vms[1].values[t->exits] = MAYBE(5); /* cleared, then 5 exits */
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	size_t e = pos(&d, t->exits);
	assert_true(d.vms[1].changes[e].reset);
	assert_false(d.vms[1].changes[e].delta.known);
	assert_true(isnan(d.vms[1].changes[e].per_second));
	assert_true(d.total[e].reset);             /* the total says so */
	assert_false(d.total[e].delta.known);      /* and has no exact delta */
	assert_int_equal(d.increase[e].v, 100 + 5); /* a running count takes the restart from zero */
	assert_false(d.vms[0].changes[e].reset);
	kvm_delta_free(&d);
}

static void test_appeared_by_start_time(void **state)
{
	struct two_reads *t = *state;
	/* Same pid and fd, another process: its counters started at zero. */
	t->a.vms[0].start_ticks = 1000;
	t->b.vms[0].start_ticks = 2000;
	t->b.vms[0].values[t->exits] = MAYBE(640);
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	size_t e = pos(&d, t->exits);
	assert_true(d.vms[0].appeared);
	assert_int_equal(d.vms[0].changes[e].delta.v, 640);
	assert_false(d.total[e].reset); /* fewer exits than the old process had is not a reset */
	assert_int_equal(d.increase[e].v, 640);
	kvm_delta_free(&d);
	/* Unknown start times (0) never make a VM new. */
	t->a.vms[0].start_ticks = 0;
	assert_true(kvm_vm_appeared(NULL, &t->b.vms[0]));
	assert_false(kvm_vm_appeared(&t->a.vms[0], &t->b.vms[0]));
}

static void test_first_read(void **state)
{
	struct two_reads *t = *state;
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, NULL, &t->b, NULL, &d), 0);
	size_t e = pos(&d, t->exits);
	assert_true(d.seconds == 0);
	int64_t sum = 0;
	for (size_t v = 0; v < d.nvms; v++) {
		assert_true(d.vms[v].appeared);
		sum += t->b.vms[v].values[t->exits].v;
	}
	assert_int_equal(d.increase[e].v, sum); /* everything since the VMs started */
	kvm_delta_free(&d);
}

static void test_gone(void **state)
{
	struct two_reads *t = *state;
	bump(&t->b, 0, t->exits, 10);
	/* The last VM exits: the kernel's global file drops by its count, which is no reset. */
	size_t last = t->b.nvms - 1;
	t->b.total[t->exits].v -= t->b.vms[last].values[t->exits].v;
	t->b.nvms--;
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	size_t e = pos(&d, t->exits);
	assert_int_equal(d.ngone, 1);
	assert_string_equal(d.gone[0]->dir, t->a.vms[last].dir);
	assert_false(d.total[e].reset);
	assert_int_equal(d.total[e].delta.v, 10);
	assert_int_equal(d.increase[e].v, 10);
	kvm_delta_free(&d);
}

static bool only_db1(const struct kvm_vm_sample *vm, void *data)
{
	(void)data;
	return !strcmp(vm->name, "db1");
}

static bool exits_and_pages(const char *name, void *data)
{
	(void)data;
	return !strcmp(name, "exits") || !strcmp(name, "pages_4k");
}

static void test_filters_and_gauges(void **state)
{
	struct two_reads *t = *state;
	bump(&t->b, 0, t->exits, 100);
	bump(&t->b, 1, t->exits, 7);
	bump(&t->b, 1, t->pages_4k, -512);
	struct kvm_delta_filter f = {.vm = only_db1, .counter = exits_and_pages};
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, &f, &d), 0);
	assert_true(d.filtered);
	assert_int_equal(d.nsel, 2);
	assert_int_equal(d.nvms, 1);
	assert_int_equal(d.nlisted, 4);
	assert_string_equal(d.vms[0].vm->name, "db1");
	size_t e = pos(&d, t->exits), p = pos(&d, t->pages_4k);
	assert_int_equal(d.total[e].delta.v, 7);                  /* db1's, not the host's */
	assert_int_equal(d.total[e].total.v, t->b.vms[1].values[t->exits].v);
	assert_int_equal(d.total[p].delta.v, -512);               /* a gauge goes down freely */
	assert_false(d.total[p].reset);
	assert_true(isnan(d.total[p].per_second));
	assert_false(d.increase[p].known);                        /* nothing to count up */
	kvm_delta_free(&d);

	/* Unfiltered, a gauge's total is the kernel's global file. */
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	p = pos(&d, t->pages_4k);
	assert_int_equal(d.total[p].total.v, t->b.total[t->pages_4k].v);
	assert_int_equal(d.total[p].delta.v, -512);
	kvm_delta_free(&d);
}

static void test_unreadable_vm(void **state)
{
	struct two_reads *t = *state;
	bump(&t->b, 0, t->exits, 100);
	t->b.vms[2].values[t->exits] = UNKNOWN; /* its read failed */
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	size_t e = pos(&d, t->exits);
	assert_false(d.total[e].delta.known); /* never a made-up exact figure */
	assert_int_equal(d.increase[e].v, 100); /* the others are still counted */
	kvm_delta_free(&d);
}

static void test_no_vm_directories(void **state)
{
	struct two_reads *t = *state;
	size_t na = t->a.nvms;
	t->a.nvms = 0;
	t->b.nvms = 0;
	t->b.total[t->exits].v += 42;
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	size_t e = pos(&d, t->exits);
	assert_int_equal(d.total[e].delta.v, 42); /* the global files are all there is */
	assert_int_equal(d.increase[e].v, 42);
	kvm_delta_free(&d);
	t->b.total[t->exits].v -= 100;            /* a reset of the global file */
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	assert_true(d.total[e].reset);
	assert_int_equal(d.increase[e].v, t->b.total[t->exits].v);
	kvm_delta_free(&d);
	t->a.nvms = na;
}

/* Per vCPU: matched by index; a vCPU only in the later read (hotplugged) counts from zero. */
static void test_vcpus(void **state)
{
	struct two_reads *t = *state;
	size_t nc = t->a.ncounters;
	struct kvm_vcpu_sample va[1], vb[2];
	maybe_i64 a0[nc], b0[nc], b1[nc];
	for (size_t i = 0; i < nc; i++)
		a0[i] = b0[i] = b1[i] = UNKNOWN;
	a0[t->exits] = MAYBE(1000);
	b0[t->exits] = MAYBE(1600);
	b1[t->exits] = MAYBE(70);
	va[0] = (struct kvm_vcpu_sample){.index = 0, .values = a0};
	vb[0] = (struct kvm_vcpu_sample){.index = 0, .values = b0};
	vb[1] = (struct kvm_vcpu_sample){.index = 1, .values = b1};
	t->a.vms[0].vcpu = va;
	t->a.vms[0].nvcpu = 1;
	t->b.vms[0].vcpu = vb;
	t->b.vms[0].nvcpu = 2;
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	size_t e = pos(&d, t->exits);
	assert_int_equal(d.vms[0].nvcpus, 2);
	assert_int_equal(d.vms[0].vcpus[0].changes[e].delta.v, 600);
	assert_int_equal(d.vms[0].vcpus[1].index, 1);
	assert_int_equal(d.vms[0].vcpus[1].changes[e].delta.v, 70); /* hotplugged: from zero */
	assert_false(d.vms[0].vcpus[0].changes[pos(&d, t->pages_4k)].total.known);
	assert_int_equal(d.vms[1].nvcpus, 0);
	kvm_delta_free(&d);
	t->a.vms[0].vcpu = t->b.vms[0].vcpu = NULL; /* on the stack: not for kvm_sample_free */
	t->a.vms[0].nvcpu = t->b.vms[0].nvcpu = 0;
}

/* A paced VM (a QEMU 7.2 read every 10 s): held, its last change again over the time between its
 * last two reads, nothing added to increase; read again, its change over the time since its
 * reading in the earlier sample. The host total has the rates summed and no delta. */
static void test_paced(void **state)
{
	struct two_reads *t = *state;
	size_t nc = t->a.ncounters;
	struct kvm_vm_sample *va = &t->a.vms[0], *vb = &t->b.vms[0];
	int64_t x = va->values[t->exits].v;
	maybe_i64 before[nc];
	for (size_t i = 0; i < nc; i++)
		before[i] = va->values[i];
	before[t->exits] = MAYBE(x - 5000); /* 5000 exits in the 10 s before its last read */
	va->read_seconds = vb->read_seconds = t->a.monotonic_seconds - 0.5;
	vb->held = true;
	vb->before = before;
	vb->nbefore = nc;
	vb->before_seconds = vb->read_seconds - 10.0;
	bump(&t->b, 1, t->exits, 300); /* an unpaced VM: 150/s over the 2 s */
	struct kvm_delta d;
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	size_t e = pos(&d, t->exits);
	assert_true(d.vms[0].held);
	assert_true(fabs(d.vms[0].seconds - 10.0) <= 1e-9);
	assert_true(fabs(d.vms[0].age_seconds - 2.5) <= 1e-9);
	assert_int_equal(d.vms[0].changes[e].delta.v, 5000);
	assert_true(fabs(d.vms[0].changes[e].per_second - 500.0) <= 1e-9);
	assert_false(d.vms[1].held);
	assert_true(fabs(d.vms[1].seconds - 2.0) <= 1e-9);
	assert_int_equal(d.increase[e].v, 300);             /* the held VM adds nothing */
	assert_false(d.total[e].delta.known);               /* 5000 in 10 s and 300 in 2 s: no one delta */
	assert_true(fabs(d.total[e].per_second - 650.0) <= 1e-9);
	kvm_delta_free(&d);
	/* Read again 8 s after its reading in a: 4000 more exits over those 8 s. */
	vb->held = false;
	vb->read_seconds = va->read_seconds + 8.0;
	vb->values[t->exits] = MAYBE(x + 4000);
	assert_int_equal(kvm_delta_build(t->kr, &t->a, &t->b, NULL, &d), 0);
	assert_false(d.vms[0].held);
	assert_true(fabs(d.vms[0].seconds - 8.0) <= 1e-9);
	assert_int_equal(d.vms[0].changes[e].delta.v, 4000);
	assert_true(fabs(d.vms[0].changes[e].per_second - 500.0) <= 1e-9);
	assert_int_equal(d.increase[e].v, 4300);
	kvm_delta_free(&d);
	vb->before = NULL; /* on the stack: not for kvm_sample_free */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_steady, setup, teardown),
		cmocka_unit_test_setup_teardown(test_halt_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_appeared_by_start_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filters_and_gauges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_vm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_vm_directories, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vcpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paced, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
