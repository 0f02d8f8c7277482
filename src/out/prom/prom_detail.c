/* serve --detail: which per-VM families a document keeps, and the families that describe the
 * document itself (the cost a host's series put on Prometheus, and a cut when it would not fit). */
#include "out/prom/prom_detail.h"

#include <string.h>

/* The basic set: at most 10 series a VM whatever its vCPUs, disks or taps (cost, RSS, PSS, KSM,
 * CPU, delay, exits, I/O bytes, and the VM's info series). */
static const struct prom_keep basic_set[] = {
	{"vmhost_vm_info", NULL, NULL},
	{"vmhost_vm_memory_cost_bytes", NULL, NULL},
	{"vmhost_vm_resident_bytes", NULL, NULL},
	{"vmhost_vm_pss_bytes", NULL, NULL},
	{"vmhost_vm_ksm_profit_bytes", NULL, NULL},
	{"vmhost_vm_cpu_seconds_total", NULL, NULL},
	{"vmhost_vm_vcpus_delay_seconds_total", NULL, NULL},
	{"vmhost_kvm_events_total", "event", "exits"},
	{"vmhost_vm_io_read_bytes_total", NULL, NULL},
	{"vmhost_vm_io_write_bytes_total", NULL, NULL},
};

/* Families only an option writes (--io, --kvm-reasons, --kvm-reasons-time): asked for, so kept. */
static const struct prom_keep asked_set[] = {
	{"vmhost_vm_disk_read_bytes_total", NULL, NULL},
	{"vmhost_vm_disk_write_bytes_total", NULL, NULL},
	{"vmhost_vm_disk_operations_total", NULL, NULL},
	{"vmhost_vm_disk_io_seconds_total", NULL, NULL},
	{"vmhost_kvm_exit_reasons_total", NULL, NULL},
	{"vmhost_kvm_exit_reason_seconds_total", NULL, NULL},
	{"vmhost_kvm_exit_reason_timed_total", NULL, NULL},
};

#define NBASIC (sizeof(basic_set) / sizeof(basic_set[0]))
#define NASKED (sizeof(asked_set) / sizeof(asked_set[0]))
_Static_assert(NBASIC + NASKED <= PROM_DETAIL_KEEP_MAX, "PROM_DETAIL_KEEP_MAX is too small");

void prom_detail_keep(struct prom *p, const struct prom_meta *meta, struct prom_keep *buf)
{
	p->keep = NULL;
	p->nkeep = 0;
	if (meta->detail == PROM_DETAIL_FULL)
		return;
	p->keep = buf;
	if (meta->detail == PROM_DETAIL_HOST)
		return;
	memcpy(buf, basic_set, sizeof(basic_set));
	memcpy(buf + NBASIC, asked_set, sizeof(asked_set));
	p->nkeep = NBASIC + NASKED;
	for (size_t i = 0; meta->kvm_events_chosen && i < NBASIC; i++)
		if (!strcmp(buf[i].family, "vmhost_kvm_events_total"))
			buf[i].label = buf[i].value = NULL;
}

void prom_scrape_families(struct prom *p, const struct snapshot *s, const struct prom_meta *meta)
{
	p->keep = NULL;
	prom_family(p, "vmhost_scrape_vms", PROM_GAUGE,
		    "VMs whose series this document holds (vmhost_vms of them unless it was cut).");
	prom_int(p, NULL, 0, meta->detail == PROM_DETAIL_HOST ? 0 : (int64_t)s->vms.n);
	prom_family(p, "vmhost_scrape_cut", PROM_GAUGE,
		    "1 when per-VM series were left out so that the document stays under serve's 64 MiB cap "
		    "(to --detail basic's set, or to none: vmhost_scrape_vms 0), else 0.");
	prom_int(p, NULL, 0, meta->cut);
	prom_family(p, "vmhost_scrape_series", PROM_GAUGE, "Series in this document, these of its own included.");
	prom_int(p, NULL, 0, (int64_t)p->series + 2); /* this one and vmhost_scrape_bytes */
	prom_family(p, "vmhost_scrape_bytes", PROM_GAUGE, "This document's size in bytes, as served (uncompressed).");
	prom_size_sample(p);
}
