#include "core/sample/calibrate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/proc.h"
#include "core/sample/snapshot.h"

struct entry {
	pid_t pid;
	uint64_t start_ticks;
	double when; /* monotonic seconds of the exact read; 0 = never */
	struct pss_calibration cal;
	bool seen;
};

struct calib_cache {
	struct entry *e;
	size_t n, cap;
};

struct calib_cache *calib_new(void) { return calloc(1, sizeof(struct calib_cache)); }

void calib_free(struct calib_cache *c)
{
	if (c)
		free(c->e);
	free(c);
}

/* Room for more entries, made before any entry is pointed to (a realloc moves them all). */
static int reserve(struct calib_cache *c, size_t more)
{
	if (c->n + more <= c->cap)
		return 0;
	size_t cap = c->cap ? c->cap : 32;
	while (cap < c->n + more)
		cap *= 2;
	struct entry *e = realloc(c->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	c->e = e;
	c->cap = cap;
	return 0;
}

/* The VM's entry, a new one when it has none (reserve() made the room). */
static struct entry *lookup(struct calib_cache *c, const struct vm *vm)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].pid == vm->pid && c->e[i].start_ticks == vm->start_ticks)
			return &c->e[i];
	c->e[c->n] = (struct entry){.pid = vm->pid, .start_ticks = vm->start_ticks};
	return &c->e[c->n++];
}

/* The VM calibrated longest ago (never-calibrated first) not yet tried in this pass, or vms->n.
 * Helpers' memory is not in one smaps_rollup, so VMs with helpers keep the host-wide weights. */
static size_t pick_oldest(const struct vm_list *vms, struct entry *const *ent, const bool *tried)
{
	size_t pick = vms->n;
	for (size_t i = 0; i < vms->n; i++) {
		if (!ent[i] || tried[i] || vms->vms[i].nhelpers || vms->vms[i].pss_method == METHOD_EXACT)
			continue;
		if (pick == vms->n || ent[i]->when < ent[pick]->when)
			pick = i;
	}
	return pick;
}

/* One exact read: the VM's weights from its smaps_rollup against its counters. */
static void calibrate_one(const struct io_root *root, const struct host *host, const struct vm *vm,
			  struct entry *e)
{
	struct smaps_rollup sr;
	struct mem_counters now_mem;
	unsigned denied = 0;
	double when = clock_monotonic_seconds();
	if (proc_read_counters(root, vm->pid, &now_mem, &denied) == 0 &&
	    proc_read_smaps_rollup(root, vm->pid, &sr) == 0) {
		struct pss_calibration cal = pss_calibrate(&now_mem, &sr, host->page_size_bytes);
		if (cal.valid)
			e->cal = cal;
	}
	e->when = when; /* a failed read waits its turn again too */
}

/* Forgets VMs that are gone. */
static void drop_unseen(struct calib_cache *c)
{
	size_t w = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].seen)
			c->e[w++] = c->e[i];
	c->n = w;
}

int calib_apply(struct calib_cache *c, const struct io_root *root, const struct host *host, struct vm_list *vms,
		double budget_seconds)
{
	struct entry **ent = calloc(vms->n ? vms->n : 1, sizeof(*ent));
	bool *tried = calloc(vms->n ? vms->n : 1, sizeof(*tried));
	if (!ent || !tried || reserve(c, vms->n) < 0) {
		free(ent);
		free(tried);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->n; i++)
		c->e[i].seen = false;
	for (size_t i = 0; i < vms->n; i++) {
		ent[i] = lookup(c, &vms->vms[i]);
		ent[i]->seen = true;
	}
	/* Exact reads, oldest calibration first, within the time budget. */
	double start = clock_monotonic_seconds();
	int done = 0;
	for (size_t pick; (pick = pick_oldest(vms, ent, tried)) < vms->n; done++) {
		if (done > 0 && clock_monotonic_seconds() - start >= budget_seconds)
			break;
		tried[pick] = true;
		calibrate_one(root, host, &vms->vms[pick], ent[pick]);
	}
	for (size_t i = 0; i < vms->n; i++) {
		struct vm *vm = &vms->vms[i];
		if (!ent[i] || !ent[i]->cal.valid || vm->pss_method == METHOD_EXACT || vm->nhelpers)
			continue;
		vm->pss_bytes = pss_estimate(&vm->mem, &host->ksm, host->page_size_bytes, &ent[i]->cal);
		vm->ksm_saved_bytes = ksm_vm_saved(&vm->mem, &host->ksm, host->page_size_bytes, &ent[i]->cal);
	}
	free(ent);
	free(tried);
	drop_unseen(c);
	return done;
}
