/* `vmhost capacity`'s document and the report's sentence (capacity_view.h). */
#include "out/capacity_view.h"

#include <stdio.h>

#include "out/fmt.h"

void capacity_sentence(char *buf, size_t cap, const struct capacity *c)
{
	char size[32];
	fmt_bytes(size, sizeof(size), c->size_bytes);
	if (!c->fit_now.known) {
		snprintf(buf, cap, "room for more %s guests: unknown (%s)", size, c->why);
		return;
	}
	int w = snprintf(buf, cap, "room for %lld more %s guest%s now", (long long)c->fit_now.v, size,
			 c->fit_now.v == 1 ? "" : "s");
	if (c->fit_after_reclaim.known && w >= 0 && (size_t)w < cap)
		w += snprintf(buf + w, cap - (size_t)w, ", %lld after reclaim", (long long)c->fit_after_reclaim.v);
	if (c->fit_with_sharing.known && w >= 0 && (size_t)w < cap)
		snprintf(buf + w, cap - (size_t)w, ", %lld with sharing", (long long)c->fit_with_sharing.v);
}

void capacity_doc(struct doc *d, const struct capacity *c, double reserve_percent, const char *image)
{
	char line[512];
	capacity_sentence(line, sizeof(line), c);
	doc_begin(d, NULL);
	doc_text(d, "%s\n", line);
	doc_bytes(d, "size_bytes", NULL, MAYBE(c->size_bytes));
	doc_int(d, "fit_now", NULL, c->fit_now);
	doc_int(d, "fit_after_reclaim", NULL, c->fit_after_reclaim);
	doc_int(d, "fit_with_sharing", NULL, c->fit_with_sharing);
	doc_str(d, "limited_by", c->limited_by ? "  limited by %s" : NULL, c->limited_by);
	doc_str(d, "why", NULL, c->why[0] ? c->why : NULL);
	doc_bytes(d, "mem_available_bytes", c->limited_by ? ": MemAvailable %s" : NULL, c->mem_available_bytes);
	doc_bytes(d, "reserve_bytes", c->limited_by ? ", less a reserve of %s" : NULL, c->reserve_bytes);
	doc_float(d, "reserve_percent", c->limited_by ? " (%s%% of MemTotal)\n" : NULL, reserve_percent, 0);
	doc_bytes(d, "overhead_bytes_per_vm", "  each new guest: its RAM and %s of VMM overhead", c->overhead_bytes_per_vm);
	const char *measured = " (as given)\n";
	if (c->overhead_vms)
		measured = c->overhead_vms > 1 ? " (the median of %s VMs of its kind)\n" : " (measured on %s VM: the image)\n";
	doc_int(d, "overhead_vms", measured, MAYBE(c->overhead_vms));
	doc_bytes(d, "reclaimable_bytes", "  the guests would give back %s", c->reclaimable_bytes);
	doc_int(d, "reclaim_vms", " (VMs whose guests report: %s", MAYBE(c->reclaim_vms));
	doc_int(d, "reclaim_unknown_vms", c->reclaim_unknown_vms ? "; that do not: %s, mem --guest says why" : NULL,
		MAYBE(c->reclaim_unknown_vms));
	doc_text(d, ")\n");
	doc_str(d, "image", image ? "  a new guest like %s" : NULL, image);
	doc_bytes(d, "shared_bytes_per_vm", image && c->shared_bytes_per_vm.known ? " would share %s by KSM\n" : NULL,
		  c->shared_bytes_per_vm);
	doc_str(d, "sharing_why", image && c->sharing_why[0] ? ": %s\n" : NULL, c->sharing_why[0] ? c->sharing_why : NULL);
	doc_end(d);
}
