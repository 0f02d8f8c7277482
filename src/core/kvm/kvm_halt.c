/* Halt polling from KVM's counters: kvm_halt.h. */
#include "core/kvm/kvm_halt.h"

#include <math.h>
#include <string.h>

#include "parse/elements.h"

static const char *const halt_names[] = {"halt_poll_success_ns", "halt_poll_fail_ns", "halt_wait_ns",
					 "halt_attempted_poll", "halt_successful_poll"};

static void set_index(struct kvm_halt_index *ix, size_t which, int i)
{
	int *slot[] = {&ix->success_ns, &ix->fail_ns, &ix->wait_ns, &ix->attempted, &ix->successful};
	*slot[which] = i;
}

void kvm_halt_index(const struct kvm_reader *kr, struct kvm_halt_index *ret)
{
	for (size_t k = 0; k < ELEMENTSOF(halt_names); k++)
		set_index(ret, k, kr ? kvm_counter_index(kr, halt_names[k]) : -1);
}

void kvm_halt_index_of_sample(const struct kvm_sample *s, struct kvm_halt_index *ret)
{
	for (size_t k = 0; k < ELEMENTSOF(halt_names); k++) {
		int at = -1;
		for (size_t i = 0; i < s->ncounters && at < 0; i++)
			if (!strcmp(kvm_sample_counter_name(s, i), halt_names[k]))
				at = (int)i;
		set_index(ret, k, at);
	}
}

maybe_i64 kvm_halt_poll_ns(const struct kvm_halt_index *ix, const maybe_i64 *values)
{
	if (ix->success_ns < 0 || ix->fail_ns < 0)
		return UNKNOWN;
	maybe_i64 s = values[ix->success_ns], f = values[ix->fail_ns];
	return s.known && f.known ? MAYBE(s.v + f.v) : UNKNOWN;
}

/* The change of counter i among sel, or NULL when it is not selected (or absent: i < 0). */
static const struct kvm_change *change_of(int i, const size_t *sel, size_t nsel, const struct kvm_change *changes)
{
	for (size_t s = 0; i >= 0 && s < nsel; s++)
		if (sel[s] == (size_t)i)
			return &changes[s];
	return NULL;
}

static double rate_of(const struct kvm_change *c) { return c ? c->per_second / 1e9 : NAN; }

static maybe_i64 delta_of(const struct kvm_change *c) { return c ? c->delta : UNKNOWN; }

void kvm_halt_change(const struct kvm_halt_index *ix, const size_t *sel, size_t nsel,
		     const struct kvm_change *changes, struct kvm_halt *ret)
{
	const struct kvm_change *s = change_of(ix->success_ns, sel, nsel, changes),
				*f = change_of(ix->fail_ns, sel, nsel, changes);
	*ret = (struct kvm_halt){
		.success_per_second = rate_of(s),
		.fail_per_second = rate_of(f),
		.wait_per_second = rate_of(change_of(ix->wait_ns, sel, nsel, changes)),
		.poll_ns = s && f && s->total.known && f->total.known ? MAYBE(s->total.v + f->total.v) : UNKNOWN,
		.polls = delta_of(change_of(ix->attempted, sel, nsel, changes)),
		.successful_polls = delta_of(change_of(ix->successful, sel, nsel, changes)),
	};
	ret->poll_per_second = ret->success_per_second + ret->fail_per_second; /* NaN when either is */
}
