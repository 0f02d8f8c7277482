/* The report's sharing map (`vmhost share`'s latest run): a heat map of the pages each pair of VMs
 * holds alike, clusters side by side, with when it was taken, its sample and error, and the
 * savings KSM could reach against what it saves. Compact at 100 VMs: a path per colour, the
 * figures in one attribute for the page's script to show on hover. */
#ifndef VMHOST_OUT_REPORT_SHARE_H
#define VMHOST_OUT_REPORT_SHARE_H

#include <stdio.h>

#include "core/share/share_run.h"

#define SHARE_BINS 8 /* colours of the heat map */

/* The section; run NULL: one line on how to make one (db names the database). order: the VMs'
 * order on both axes (share_run_order), NULL for the run's; sections: per VM of the run the id of
 * its section in the page (#vm-ID), -1 for none, or NULL. */
void report_html_share(FILE *f, const struct share_run *run, const size_t *order, const long long *sections,
		       const char *db);

/* The colour of a cell of pages (0: none, else 1..SHARE_BINS) against the map's largest. */
int report_share_bin(int64_t pages, int64_t max_pages);

#endif
