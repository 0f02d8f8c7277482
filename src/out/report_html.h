/* The sections of `vmhost report`'s page (out/html.h is the page itself): the header and cards,
 * the host and KVM charts, the growth table, one chart per VM, the footer. Series come in the
 * layouts of core/sample/series.h. Nothing here reads the database. */
#ifndef VMHOST_OUT_REPORT_HTML_H
#define VMHOST_OUT_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "core/sample/series.h"
#include "core/sample/trend.h"
#include "parse/parse.h"

#define REPORT_MAX_POINTS 600  /* per chart: about one per 1.5 px of plot width */
#define REPORT_MAX_VM_CHARTS 40

/* One VM series as the page shows it. */
struct report_vm {
	const char *name, *uuid, *vmm; /* "" when unknown */
	int pid;
	maybe_i64 guest_ram_bytes;
	double first_seconds, last_seconds;
	size_t samples;
	const struct growth_result *growth; /* NULL: not in the growth window */
};

/* The page's start: title, the time range and how much it holds. */
void report_html_begin(FILE *f, const char *title, double since, double until, size_t host_samples, size_t vms);
/* Figures at a glance: VMs, flagged ones, host memory, KSM savings and ksmd CPU. */
void report_html_cards(FILE *f, size_t vms, size_t flagged, const struct series_set *host);
/* Host memory, KSM savings and ksmd CPU (enum series_host_row). */
void report_html_host(FILE *f, const struct series_set *host, double since, double until);
/* KVM exits per second, all VMs (one row). */
void report_html_kvm(FILE *f, const struct series_set *exits, double since, double until);
/* How the verdicts are made, and the table of every VM series. */
void report_html_growth(FILE *f, const struct growth_params *p, double window_seconds, const struct report_vm *vms,
			size_t n);
/* The heading of the VM charts. */
void report_html_vms_begin(FILE *f);
/* One VM's memory stacked, and its fitted trend when flagged (enum series_vm_row). */
void report_html_vm_chart(FILE *f, const struct report_vm *vm, const struct series_set *s, double since,
			  double until);
/* What was not charted, the footer, the page's end. */
void report_html_end(FILE *f, size_t vms, size_t charted, const char *db);

#endif
