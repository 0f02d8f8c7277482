/* The output of vmhost share (the sharing map of this host's VMs) and vmhost share plan (several
 * hosts' sketches read together), in every form from one place: the JSON document, the CSV of the
 * table each has (share: one row per VM; share plan: one row per move of the plan), both from the
 * same cells (out/table.h), and the human text. */
#ifndef VMHOST_OUT_SHARE_VIEW_H
#define VMHOST_OUT_SHARE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/share/fleet.h"
#include "core/share/share_map.h"
#include "out/doc.h"
#include "parse/maybe.h"

struct share_view {
	const struct sketch *sketches; /* [n], of the VMs of map */
	size_t n;
	const struct share_map *map;
	int64_t page_size_bytes;
	maybe_i64 saved_now_bytes, ksm_saved_bytes; /* core/share/share_saved.h, core/model/ksm.h */
};

/* The map in form: JSON {"vms": [...], "host": {...}}; CSV a row per VM (its pairs as JSON text);
 * human the table, the pairs and the host's line. 0 or -ENOMEM (nothing printed). */
int share_view_print(FILE *f, enum doc_form form, const struct share_view *v);

struct share_plan_view {
	const struct plan_host *hosts;  /* [plan->nhosts]: their labels and sketches */
	const char *const *sources;     /* [plan->nhosts]: where each came from, as shown */
	const struct share_plan *plan;
	const char *vm;                 /* --vm: only the VM of that name or pid; NULL every VM */
};

/* Whether the view's --vm names a VM of the plan (true without --vm). */
bool share_plan_view_finds_vm(const struct share_plan_view *v);

/* The plan in form: JSON {"hosts", "vms", "plan": {"moves", ...}}; CSV a row per move; human a block
 * per VM and the moves. 0 or -ENOMEM (nothing printed). */
int share_plan_view_print(FILE *f, enum doc_form form, const struct share_plan_view *v);

#endif
