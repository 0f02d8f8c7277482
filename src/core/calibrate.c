#include "core/calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/snapshot.h"

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

static struct entry *lookup(struct calib_cache *c, const struct vm *vm)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].pid == vm->pid && c->e[i].start_ticks == vm->start_ticks)
			return &c->e[i];
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		struct entry *e = realloc(c->e, cap * sizeof(*e));
		if (!e)
			return NULL;
		c->e = e;
		c->cap = cap;
	}
	c->e[c->n] = (struct entry){.pid = vm->pid, .start_ticks = vm->start_ticks};
	return &c->e[c->n++];
}

int calib_apply(struct calib_cache *c, const struct io_root *root, const struct host *host, struct vm_list *vms,
		double budget_seconds)
{
	for (size_t i = 0; i < c->n; i++)
		c->e[i].seen = false;
	struct entry **ent = calloc(vms->n ? vms->n : 1, sizeof(*ent));
	bool *tried = calloc(vms->n ? vms->n : 1, sizeof(*tried));
	if (!ent || !tried) {
		free(ent);
		free(tried);
		return -1;
	}
	for (size_t i = 0; i < vms->n; i++)
		if ((ent[i] = lookup(c, &vms->vms[i])))
			ent[i]->seen = true;
	/* Exact reads, oldest calibration first, within the time budget. Helpers' memory is not in
	 * one smaps_rollup, so VMs with helpers keep the host-wide weights. */
	double start = clock_monotonic_seconds();
	int done = 0;
	for (;;) {
		size_t pick = vms->n;
		for (size_t i = 0; i < vms->n; i++) {
			if (!ent[i] || vms->vms[i].nhelpers || vms->vms[i].pss_method == METHOD_EXACT)
				continue;
			if (tried[i])
				continue;
			if (pick == vms->n || ent[i]->when < ent[pick]->when)
				pick = i;
		}
		if (pick == vms->n || (done > 0 && clock_monotonic_seconds() - start >= budget_seconds))
			break;
		struct vm *vm = &vms->vms[pick];
		struct smaps_rollup sr;
		struct mem_counters now_mem;
		unsigned denied = 0;
		double when = clock_monotonic_seconds();
		tried[pick] = true;
		if (proc_read_counters(root, vm->pid, &now_mem, &denied) == 0 &&
		    proc_read_smaps_rollup(root, vm->pid, &sr) == 0) {
			struct pss_calibration cal = pss_calibrate(&now_mem, &sr, host->page_size_bytes);
			if (cal.valid)
				ent[pick]->cal = cal;
		}
		ent[pick]->when = when; /* a failed read waits its turn again too */
		done++;
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
	/* Forget VMs that are gone. */
	size_t w = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].seen)
			c->e[w++] = c->e[i];
	c->n = w;
	return done;
}
