/* What KSM saves now, against what the sharing map (core/share/sketch.h) says could be saved: the
 * one formula behind share's "is saved now", its JSON saved_bytes and the map kept for the report. */
#ifndef VMHOST_CORE_SHARE_SAVED_H
#define VMHOST_CORE_SHARE_SAVED_H

#include "core/model/host.h"
#include "core/share/share_map.h"
#include "parse/maybe.h"

/* KSM's pages_sharing and the VMs' empty pages already on the zero page (KSM's ksm_zero_pages among
 * them, and those the kernel freed when it split a huge page, which no KSM counter shows), in
 * bytes. Unknown without KSM's counters. */
maybe_i64 share_saved_now_bytes(const struct share_map *m, const struct host *h);

#endif
