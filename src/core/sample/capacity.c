/* How many more guests of a size fit: the formulas of capacity.h (docs/capacity.md). */
#include "core/sample/capacity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base/stats.h"

/* The median overhead of the VMs of kind (those measured exactly, when there are some: the
 * estimate is a lower bound while a guest is still touching its RAM), and how many it took. */
static maybe_i64 overhead_of_kind(const struct vm_list *vms, enum vmm_kind kind, unsigned *ret_n)
{
	double *v = malloc((vms->n ? vms->n : 1) * sizeof(*v));
	size_t n = 0;
	for (int exact = 1; v && exact >= 0 && n == 0; exact--)
		for (size_t i = 0; i < vms->n; i++) {
			const struct vm *vm = &vms->vms[i];
			if (vm->cfg.vmm == kind && vm->overhead_bytes.known &&
			    (!exact || vm->overhead_method == METHOD_EXACT))
				v[n++] = (double)vm->overhead_bytes.v;
		}
	*ret_n = (unsigned)n;
	double m = n ? median(v, n) : NAN;
	free(v);
	return isfinite(m) ? MAYBE((int64_t)llround(m)) : UNKNOWN;
}

/* What the guests would give back, every action to its end, at the lower side of each bound. */
static void reclaim_sum(const struct vm_list *vms, struct capacity *c)
{
	int64_t sum = 0;
	c->reclaim_vms = c->reclaim_unknown_vms = 0;
	for (size_t i = 0; i < vms->n; i++) {
		const struct vm *vm = &vms->vms[i];
		if (vm->cfg.vmm == VMM_PROCESS)
			continue;
		if (!vm->guest || !vm->guest->reclaim.known) {
			c->reclaim_unknown_vms++;
			continue;
		}
		const struct reclaim *r = &vm->guest->reclaim;
		sum += r->bytes > r->error_bound_bytes ? r->bytes - r->error_bound_bytes : 0;
		c->reclaim_vms++;
	}
	/* No VM: nothing to give back. VMs, none of whose guests report: unknown, not 0. */
	c->reclaimable_bytes = c->reclaim_vms || !c->reclaim_unknown_vms ? MAYBE(sum) : UNKNOWN;
}

/* Guests that fit in room, each costing per_vm (and, on huge pages, size of the free pool). */
static int64_t fit(int64_t room, int64_t per_vm, int64_t pool_fit)
{
	int64_t n = room > 0 && per_vm > 0 ? room / per_vm : 0;
	return pool_fit >= 0 && pool_fit < n ? pool_fit : n;
}

void capacity_compute(const struct host *h, const struct vm_list *vms, const struct capacity_opts *o,
		      struct capacity *ret)
{
	struct capacity c = {.size_bytes = o->size_bytes, .reserve_bytes = UNKNOWN, .mem_available_bytes = UNKNOWN,
			     .shared_bytes_per_vm = o->shared_bytes, .fit_now = UNKNOWN, .fit_after_reclaim = UNKNOWN,
			     .fit_with_sharing = UNKNOWN};
	const struct meminfo *m = &h->mem;
	if (h->mem_known && m->mem_total.known)
		c.reserve_bytes = MAYBE((int64_t)llround((double)m->mem_total.v * o->reserve_percent / 100.0));
	if (h->mem_known)
		c.mem_available_bytes = m->mem_available;
	c.overhead_vms = o->overhead_vms;
	c.overhead_bytes_per_vm = o->overhead_bytes.known ? o->overhead_bytes : overhead_of_kind(vms, o->kind, &c.overhead_vms);
	reclaim_sum(vms, &c);
	maybe_i64 pool = host_hugetlb_free_bytes(h);
	int64_t pool_fit = -1;
	if (!c.reserve_bytes.known || !c.mem_available_bytes.known)
		snprintf(c.why, sizeof(c.why), "the host's MemTotal or MemAvailable is unknown (/proc/meminfo)");
	else if (!c.overhead_bytes_per_vm.known)
		snprintf(c.why, sizeof(c.why), "no running %s VM to measure the VMM's overhead on: give --overhead SIZE",
			 vmm_kind_name(o->kind));
	else if (o->hugetlb && !pool.known)
		snprintf(c.why, sizeof(c.why), "the new guests' RAM is on huge pages, whose free pool is unknown");
	else if (o->hugetlb)
		pool_fit = o->size_bytes > 0 ? pool.v / o->size_bytes : 0;
	if (c.why[0]) {
		*ret = c;
		return;
	}
	int64_t room = c.mem_available_bytes.v - c.reserve_bytes.v, over = c.overhead_bytes_per_vm.v;
	int64_t per_vm = over + (o->hugetlb ? 0 : o->size_bytes);
	c.fit_now = MAYBE(fit(room, per_vm, pool_fit));
	c.limited_by = room <= 0 ? "reserve" : pool_fit >= 0 && pool_fit <= fit(room, per_vm, -1) ? "hugepages" : "memory";
	if (c.reclaimable_bytes.known)
		c.fit_after_reclaim = MAYBE(fit(room + c.reclaimable_bytes.v, per_vm, pool_fit));
	if (o->sharing_why && o->sharing_why[0])
		snprintf(c.sharing_why, sizeof(c.sharing_why), "%s", o->sharing_why);
	else if (!o->shared_bytes.known)
		snprintf(c.sharing_why, sizeof(c.sharing_why), "not asked: --image VM counts what a guest like VM shares");
	else if (o->hugetlb)
		snprintf(c.sharing_why, sizeof(c.sharing_why), "KSM does not merge huge pages");
	else if (!c.reclaimable_bytes.known)
		snprintf(c.sharing_why, sizeof(c.sharing_why), "what the guests would give back is unknown");
	else {
		int64_t shared = o->shared_bytes.v < o->size_bytes ? o->shared_bytes.v : o->size_bytes;
		c.fit_with_sharing = MAYBE(fit(room + c.reclaimable_bytes.v, per_vm - shared, pool_fit));
	}
	*ret = c;
}
