/* vmhost's metric families: one snapshot written with the Prometheus writer (docs/serve.md
 * lists every family). */
#ifndef VMHOST_OUT_PROM_METRICS_H
#define VMHOST_OUT_PROM_METRICS_H

#include <stdint.h>

#include "core/kvm/kvm.h"
#include "core/kvm/kvm_host.h"
#include "core/sample/snapshot.h"
#include "out/prom/prom.h"

/* KVM's counters beside a snapshot (core/kvm/kvm.h). */
struct prom_kvm {
	bool available;                 /* false: only vmhost_kvm_available 0 is written */
	const struct kvm_sample *sample; /* read with the snapshot; it names its own counters */
	/* [nhost]: per counter, what vmhost has seen happen host-wide since it started (events; ns
	 * for times), summed from the per-VM changes so that a VM exiting is not a counter reset. */
	const maybe_i64 *host;
	size_t nhost;
	const bool *selected; /* [nhost]: counters to export (--kvm-events); NULL: all */
};

/* How much of each VM a document holds (serve --detail; docs/serve.md lists the basic set). */
enum prom_detail {
	PROM_DETAIL_FULL,  /* every family */
	PROM_DETAIL_BASIC, /* at most 10 series a VM, and the families an option asked for */
	PROM_DETAIL_HOST,  /* no per-VM series: what is left of a document cut to fit its cap */
};

struct prom_meta {
	uint64_t snapshots_total; /* snapshots gathered since the server started, this one included */
	enum prom_detail detail;
	bool kvm_events_chosen; /* --kvm-events: basic keeps the KVM events it names, not exits alone */
	bool cut;               /* detail is less than asked: the document would have passed its cap */
	const char *version;
	const struct prom_kvm *kvm; /* NULL: KVM was not looked at (no kvm families at all) */
	const struct kvm_host *kvm_host; /* the module and its parameters; NULL: not read */
	const int64_t *capacity_sizes;   /* [ncapacity_sizes], distinct: vmhost_host_capacity_vms (serve --capacity-size) */
	size_t ncapacity_sizes;
};

/* Writes every family of the snapshot into p (p is not finished). */
void prom_write_snapshot(struct prom *p, const struct snapshot *s, const struct prom_meta *meta);

#endif
