/* The report's sharing map (`vmhost share`'s latest run): a heat map of the pages each pair of VMs
 * holds alike, clusters side by side, with when it was taken, its sample and error, and the
 * savings KSM could reach against what it saves. Compact at 100 VMs: a path per colour, the
 * figures in one attribute for the page's script to show on hover. */
#ifndef VMHOST_OUT_REPORT_SHARE_H
#define VMHOST_OUT_REPORT_SHARE_H

#include <stdio.h>

#include "core/share/share_run.h"

#define SHARE_BINS 8 /* colours of the heat map */

struct report_share {
	const struct share_run *run; /* NULL: none in the database */
	const size_t *order;         /* the VMs on both axes (share_run_order); NULL: the run's */
	const long long *sections;   /* per VM of the run its section in the page (#vm-ID), -1 none; or NULL */
	double ksm_saved_now_bytes;  /* KSM's savings at the recording's last sample; NaN unknown */
	const char *db;              /* named in the line on how to make a map */
};

/* The section: the map, or one line on how to make one. */
void report_html_share(FILE *f, const struct report_share *s);

#endif
