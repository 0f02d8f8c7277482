/* The sections of `vmhost report`'s page (out/report/html.h is the page itself): the header and cards,
 * the host's memory stacked by VM, the flagged VMs, KSM and KVM charts, the table of every VM,
 * a section of charts per VM (closed unless flagged), the footer and its script. Series come in the
 * layouts of core/sample/series.h. Nothing here reads the database. */
#ifndef VMHOST_OUT_REPORT_HTML_H
#define VMHOST_OUT_REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/sample/series.h"
#include "core/sample/trend.h"
#include "parse/maybe.h"

#define REPORT_MAX_POINTS 600 /* per host chart: about one per 1.5 px of plot width */
#define REPORT_VM_POINTS 150  /* per VM chart and sparkline: 100 VMs' sections stay within a few MB */

/* One VM series as the page shows it. */
struct report_vm {
	const char *name, *uuid, *vmm; /* "" when unknown */
	int pid;
	long long id; /* its section is #vm-ID */
	maybe_i64 guest_ram_bytes;
	double first_seconds, last_seconds;
	size_t samples;
	const struct growth_result *growth; /* NULL: not in the growth window */
	const struct series_set *series;    /* enum series_vm_row; NULL: not read */
	bool charted;                       /* it has a section of charts on the page */
	/* memory cost and overhead at the host series' times (NaN: not running), or NULL */
	const double *cost_on_host, *overhead_on_host;
};

/* Whether the VM ran at the recording's last sample, until. */
bool report_vm_running_at(const struct report_vm *v, double until);

/* The page's start: title, the time range and how much it holds. */
void report_html_begin(FILE *f, const char *title, double since, double until, size_t host_samples, size_t vms);
/* Figures at a glance: VMs, flagged ones, host memory, KSM savings and ksmd CPU. */
void report_html_cards(FILE *f, size_t vms, size_t flagged, const struct series_set *host);
/* The capacity sentence under the cards ("room for 6 more 4.00 GiB guests now", out/capacity_view.h),
 * said to be the last sample's and without reclaim, which the recording does not hold; "" writes
 * nothing. */
void report_html_capacity(FILE *f, const char *sentence);
/* The host's memory stacked: the 8 VMs that cost most, the others, VMM overhead and KSM's savings,
 * under the host's used memory (enum series_host_row). */
void report_html_host(FILE *f, const struct series_set *host, const struct report_vm *vms, size_t n, double since,
		      double until);
/* The VMs flagged for growing overhead, linked to their sections, and how the verdicts are made. */
void report_html_flagged(FILE *f, const struct growth_params *p, double window_seconds, const struct report_vm *vms,
			 size_t n);
/* The busiest VMs at the last sample (until), named on the first screen: up to REPORT_BUSIEST by
 * CPU and as many by vCPU delay, each at least REPORT_BUSY_PERCENT of a CPU, as indexes into vms,
 * the most first (a VM busy by both is in both). report_html_busiest names those report_busiest
 * picked, linked to their sections. */
#define REPORT_BUSIEST 3
#define REPORT_BUSY_PERCENT 5.0
struct report_busy {
	size_t cpu[REPORT_BUSIEST], delay[REPORT_BUSIEST];
	size_t ncpu, ndelay;
};
void report_busiest(const struct report_vm *vms, size_t n, double until, struct report_busy *ret);
void report_html_busiest(FILE *f, const struct report_vm *vms, const struct report_busy *busy);
/* What KSM saves beside what ksmd costs. */
void report_html_ksm(FILE *f, const struct series_set *host, double since, double until);
/* KVM exits per second, all VMs (one row). */
void report_html_kvm(FILE *f, const struct series_set *exits, double since, double until);
/* Every VM in a sortable, filterable table (the page's script) with sparklines, in the given order,
 * and the heading of their sections (charted of them; a charted VM's name links to its section). */
void report_html_table(FILE *f, const struct report_vm *vms, size_t n, size_t charted);

/* A VM's section, open when it is flagged: report_html_vm_begin, its charts, report_html_vm_end. */
void report_html_vm_begin(FILE *f, const struct report_vm *vm);
/* Its memory stacked, and its fitted trend when flagged (enum series_vm_row). */
void report_html_vm_chart(FILE *f, const struct report_vm *vm, const struct series_set *s, double since,
			  double until);
/* Its CPU and vCPU delay, where recorded. */
void report_html_vm_cpu(FILE *f, const struct report_vm *vm, const struct series_set *s, double since, double until);
/* The VM's disk and network rates, next to its memory, where the recording has them (schema 4). */
void report_html_vm_io(FILE *f, const struct report_vm *vm, const struct series_set *s, double since, double until);
/* Its disks as QEMU counts them (record --io), bytes a second: rows 2 d (read) and 2 d + 1
 * (written) of s for devices[d]; more: the VM's other disks, not drawn. */
void report_html_vm_disks(FILE *f, const struct report_vm *vm, const struct series_set *s, const char (*devices)[64],
			  size_t ndevices, size_t more, double since, double until);
/* One rate of its own (one row: KVM exits, I/O ...), titled "NAME: what". */
void report_html_vm_rate(FILE *f, const struct report_vm *vm, const char *what, const char *note,
			 const struct series_set *rate, double since, double until);
void report_html_vm_end(FILE *f);

/* The footer, the page's script, the page's end. */
void report_html_end(FILE *f, size_t vms, const char *db);

#endif
