#include "out/prom/prom_metrics.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kvm/kvm_halt.h"
#include "core/sample/capacity.h"
#include "out/prom/prom_detail.h"

/* KSM sysfs files exposed as they are (pages and counts), in base units where they have one. */
struct ksm_metric {
	const char *name;
	enum prom_type type;
	size_t offset; /* of a maybe_i64 in struct ksm_sysfs */
	double scale;  /* 0: integer as read; else multiply (milliseconds -> seconds) */
	const char *help;
};

#define KSM_FIELD(f) offsetof(struct ksm_sysfs, f)

static const struct ksm_metric ksm_metrics[] = {
	{"vmhost_ksm_run", PROM_GAUGE, KSM_FIELD(run), 0,
	 "KSM state: 0 stopped, 1 running, 2 unmerging (/sys/kernel/mm/ksm/run)."},
	{"vmhost_ksm_pages_to_scan", PROM_GAUGE, KSM_FIELD(pages_to_scan), 0, "Pages ksmd scans per wake-up."},
	{"vmhost_ksm_sleep_seconds", PROM_GAUGE, KSM_FIELD(sleep_millisecs), 0.001, "ksmd's sleep between wake-ups."},
	{"vmhost_ksm_pages_shared", PROM_GAUGE, KSM_FIELD(pages_shared), 0, "KSM pages in use (one per merged content)."},
	{"vmhost_ksm_pages_sharing", PROM_GAUGE, KSM_FIELD(pages_sharing), 0,
	 "Mappings of KSM pages beyond the first: pages saved."},
	{"vmhost_ksm_pages_unshared", PROM_GAUGE, KSM_FIELD(pages_unshared), 0,
	 "Pages KSM checks that are unique so far."},
	{"vmhost_ksm_pages_volatile", PROM_GAUGE, KSM_FIELD(pages_volatile), 0,
	 "Pages that change too fast to merge."},
	{"vmhost_ksm_zero_pages", PROM_GAUGE, KSM_FIELD(ksm_zero_pages), 0,
	 "Empty pages KSM mapped to the shared zero page (use_zero_pages)."},
	{"vmhost_ksm_general_profit_bytes", PROM_GAUGE, KSM_FIELD(general_profit), 0,
	 "Bytes KSM saves after its own metadata (rmap items); negative when it costs more than it saves."},
	{"vmhost_ksm_full_scans_total", PROM_COUNTER, KSM_FIELD(full_scans), 0, "Full scans of all mergeable memory."},
	{"vmhost_ksm_pages_scanned_total", PROM_COUNTER, KSM_FIELD(pages_scanned), 0, "Pages ksmd has scanned."},
	{"vmhost_ksm_pages_skipped_total", PROM_COUNTER, KSM_FIELD(pages_skipped), 0,
	 "Pages smart scan skipped."},
	{"vmhost_ksm_max_page_sharing", PROM_GAUGE, KSM_FIELD(max_page_sharing), 0,
	 "Most mappings one KSM page takes before another is chained."},
	{"vmhost_ksm_stable_node_chains", PROM_GAUGE, KSM_FIELD(stable_node_chains), 0,
	 "Contents that hit max_page_sharing and are chained."},
	{"vmhost_ksm_stable_node_dups", PROM_GAUGE, KSM_FIELD(stable_node_dups), 0, "KSM pages in chains."},
	{"vmhost_ksm_merge_across_nodes", PROM_GAUGE, KSM_FIELD(merge_across_nodes), 0,
	 "1 when pages merge across NUMA nodes."},
	{"vmhost_ksm_use_zero_pages", PROM_GAUGE, KSM_FIELD(use_zero_pages), 0,
	 "1 when empty pages are mapped to the zero page."},
	{"vmhost_ksm_smart_scan", PROM_GAUGE, KSM_FIELD(smart_scan), 0, "1 when smart scan is on."},
	{"vmhost_ksm_advisor_max_cpu_ratio", PROM_GAUGE, KSM_FIELD(advisor_max_cpu), 0.01,
	 "The kernel advisor's CPU ceiling, as a ratio of one CPU."},
	{"vmhost_ksm_advisor_target_scan_seconds", PROM_GAUGE, KSM_FIELD(advisor_target_scan_time), 1,
	 "The full-scan time the kernel advisor aims at."},
};

static void ksm_families(struct prom *p, const struct snapshot *s)
{
	const struct ksm_sysfs *k = &s->host.ksm;
	if (!k->present)
		return;
	for (size_t i = 0; i < sizeof(ksm_metrics) / sizeof(ksm_metrics[0]); i++) {
		const struct ksm_metric *m = &ksm_metrics[i];
		const maybe_i64 *v = (const maybe_i64 *)((const char *)k + m->offset);
		prom_family(p, m->name, m->type, m->help);
		if (!v->known)
			continue;
		if (m->scale)
			prom_double(p, NULL, 0, (double)v->v * m->scale);
		else
			prom_int(p, NULL, 0, v->v);
	}
	if (k->advisor_mode[0]) {
		static const char *const modes[] = {"none", "scan-time"};
		prom_family(p, "vmhost_ksm_advisor_mode", PROM_GAUGE, "1 for the kernel advisor's selected mode.");
		for (size_t i = 0; i < 2; i++) {
			struct prom_label l = {"mode", modes[i]};
			prom_int(p, &l, 1, !strcmp(k->advisor_mode, modes[i]));
		}
	}
	prom_family(p, "vmhost_ksm_saved_bytes", PROM_GAUGE,
		    "Bytes KSM saves host-wide: (pages_sharing + ksm_zero_pages) x page size.");
	prom_maybe(p, NULL, 0, ksm_saved_bytes(k, s->host.page_size_bytes));
	prom_family(p, "vmhost_ksmd_cpu_seconds_total", PROM_COUNTER, "CPU time ksmd has used.");
	if (s->ksmd_cpu_ns.known)
		prom_double(p, NULL, 0, (double)s->ksmd_cpu_ns.v / 1e9);
}

static void host_families(struct prom *p, const struct snapshot *s)
{
	const struct meminfo *m = &s->host.mem;
	if (s->host.mem_known) {
		prom_family(p, "vmhost_host_mem_total_bytes", PROM_GAUGE, "Host memory (MemTotal).");
		prom_maybe(p, NULL, 0, m->mem_total);
		prom_family(p, "vmhost_host_mem_available_bytes", PROM_GAUGE,
			    "Memory available for new work without swapping (MemAvailable).");
		prom_maybe(p, NULL, 0, m->mem_available);
		prom_family(p, "vmhost_host_mem_free_bytes", PROM_GAUGE, "Unused host memory (MemFree).");
		prom_maybe(p, NULL, 0, m->mem_free);
		prom_family(p, "vmhost_host_swap_total_bytes", PROM_GAUGE, "Host swap space (SwapTotal).");
		prom_maybe(p, NULL, 0, m->swap_total);
		prom_family(p, "vmhost_host_swap_free_bytes", PROM_GAUGE, "Unused host swap (SwapFree).");
		prom_maybe(p, NULL, 0, m->swap_free);
		prom_family(p, "vmhost_host_anon_huge_bytes", PROM_GAUGE,
			    "Anonymous memory in transparent huge pages (AnonHugePages).");
		prom_maybe(p, NULL, 0, m->anon_huge_pages);
	}
	prom_family(p, "vmhost_host_page_size_bytes", PROM_GAUGE, "The host's page size.");
	prom_int(p, NULL, 0, s->host.page_size_bytes);
}

/* Figures of one VM: a getter per family keeps the families' samples together. */
typedef maybe_i64 (*vm_value)(const struct vm *vm, int64_t page_size);

static maybe_i64 vm_guest_ram(const struct vm *vm, int64_t ps) { (void)ps; return vm->cfg.guest_ram_bytes; }
static maybe_i64 vm_resident(const struct vm *vm, int64_t ps) { (void)ps; return vm->mem.rss; }
static maybe_i64 vm_swap(const struct vm *vm, int64_t ps) { (void)ps; return vm->mem.swap; }
static maybe_i64 vm_pss(const struct vm *vm, int64_t ps) { (void)ps; return vm->pss_bytes; }
static maybe_i64 vm_overhead(const struct vm *vm, int64_t ps) { (void)ps; return vm->overhead_bytes; }
static maybe_i64 vm_hugetlb(const struct vm *vm, int64_t ps) { (void)ps; return vm->mem.hugetlb; }
static maybe_i64 vm_cost(const struct vm *vm, int64_t ps) { (void)ps; return vm_memory_cost(vm); }
static maybe_i64 vm_thp(const struct vm *vm, int64_t ps) { (void)ps; return vm->thp_bytes; }
static maybe_i64 vm_ksm_profit(const struct vm *vm, int64_t ps) { (void)ps; return vm->mem.ksm_profit; }
static maybe_i64 pages(maybe_i64 n, int64_t ps) { return n.known ? MAYBE(n.v * ps) : UNKNOWN; }
static maybe_i64 vm_ksm_merged(const struct vm *vm, int64_t ps) { return pages(vm->mem.ksm_merging_pages, ps); }
static maybe_i64 vm_ksm_zero(const struct vm *vm, int64_t ps) { return pages(vm->mem.ksm_zero_pages, ps); }
static maybe_i64 vm_helpers(const struct vm *vm, int64_t ps) { (void)ps; return MAYBE((int64_t)vm->nhelpers); }
static maybe_i64 vm_ksm_rmap(const struct vm *vm, int64_t ps) { (void)ps; return vm->mem.ksm_rmap_items; }

static const struct vm_metric {
	const char *name;
	vm_value value;
	const char *help;
} vm_metrics[] = {
	{"vmhost_vm_guest_ram_bytes", vm_guest_ram, "RAM the guest was given at start, backends and DIMMs included."},
	{"vmhost_vm_pss_bytes", vm_pss,
	 "Proportional set size of the VMM and its helpers: RSS with shared pages divided among their users "
	 "(cheap estimate, docs/accounting.md)."},
	{"vmhost_vm_hugetlb_bytes", vm_hugetlb,
	 "hugetlbfs memory the VM maps (status HugetlbPages): not in RSS or PSS."},
	{"vmhost_vm_memory_cost_bytes", vm_cost,
	 "What the VM's memory costs the host: PSS plus its huge pages (shared ones divided among their mappers "
	 "where known)."},
	{"vmhost_vm_swap_bytes", vm_swap, "Swapped-out memory of the VMM and its helpers."},
	{"vmhost_vm_thp_bytes", vm_thp,
	 "Anonymous memory of the VM on transparent huge pages (its scope's memory.stat anon_thp, v1 rss_huge)."},
	{"vmhost_vm_ksm_merged_bytes", vm_ksm_merged, "Memory of the VM that maps KSM pages (ksm_merging_pages x page size)."},
	{"vmhost_vm_ksm_zero_bytes", vm_ksm_zero, "Memory of the VM that KSM mapped to the zero page."},
	{"vmhost_vm_ksm_rmap_items", vm_ksm_rmap,
	 "Pages of the VM that ksmd tracks and scans (ksm_rmap_items), whether they merge or not."},
	{"vmhost_vm_ksm_profit_bytes", vm_ksm_profit,
	 "What KSM saves on this VM after its metadata (ksm_process_profit); may be negative."},
	{"vmhost_vm_overhead_bytes", vm_overhead,
	 "Resident memory of the VMM outside guest RAM (cheap estimate: RSS beyond guest RAM)."},
	{"vmhost_vm_helpers", vm_helpers, "Helper processes (swtpm, virtiofsd, ...) counted with the VM."},
	{"vmhost_vm_resident_bytes", vm_resident,
	 "Resident memory of the VMM and its helpers (VmRSS: vmhost_vm_rss_bytes by type, summed)."},
};

#define VM_LABELS 3

static void vm_labels(const struct vm *vm, char *pid, size_t cap, struct prom_label *l)
{
	/* by hand, as it runs once per family and VM of the document */
	char digits[16];
	size_t n = 0;
	for (unsigned v = (unsigned)vm->pid; n < sizeof(digits) && (v || !n); v /= 10)
		digits[n++] = (char)('0' + v % 10);
	for (size_t i = 0; i < n && i + 1 < cap; i++)
		pid[i] = digits[n - 1 - i];
	pid[n < cap ? n : cap - 1] = '\0';
	l[0] = (struct prom_label){"vm", vm->cfg.name};
	l[1] = (struct prom_label){"pid", pid};
	l[2] = (struct prom_label){"uuid", vm->cfg.uuid};
}

/* A figure that may be unknown (NaN): left out, never a made-up 0. */
static void prom_known(struct prom *p, const struct prom_label *l, size_t n, double v)
{
	if (isfinite(v))
		prom_double(p, l, n, v);
}

/* What each VM costs besides memory: CPU of the VMM, each vCPU's run and wait time, its cgroup. */
static void vm_cost_families(struct prom *p, const struct vm_list *l)
{
	char pid[16], vcpu[16];
	struct prom_label labels[VM_LABELS + 2];
	prom_family(p, "vmhost_vm_cpu_seconds_total", PROM_COUNTER,
		    "CPU time of the VMM (every thread) and its helpers (/proc/PID/stat).");
	for (size_t i = 0; i < l->n; i++) {
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		prom_known(p, labels, VM_LABELS, l->vms[i].cpu.cpu_seconds);
	}
	prom_family(p, "vmhost_vm_vcpus_delay_seconds_total", PROM_COUNTER,
		    "Run-queue delay of all the VM's vCPU threads, summed (vmhost_vm_vcpu_delay_seconds_total by vCPU).");
	for (size_t i = 0; i < l->n; i++) {
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		prom_known(p, labels, VM_LABELS, l->vms[i].cpu.vcpu_delay_seconds);
	}
	static const char *const vcpu_names[] = {"vmhost_vm_vcpu_seconds_total", "vmhost_vm_vcpu_delay_seconds_total"};
	static const char *const vcpu_helps[] = {
		"CPU time of one vCPU thread (schedstat).",
		"Run-queue delay of one vCPU thread: runnable but waiting for a host CPU (schedstat; libvirt's vcpu.N.delay)."};
	for (int f = 0; f < 2; f++) {
		prom_family(p, vcpu_names[f], PROM_COUNTER, vcpu_helps[f]);
		for (size_t i = 0; i < l->n; i++) {
			const struct vm_cpu *c = &l->vms[i].cpu;
			vm_labels(&l->vms[i], pid, sizeof(pid), labels);
			for (size_t v = 0; v < c->nvcpus; v++) {
				snprintf(vcpu, sizeof(vcpu), "%d", c->vcpus[v].index);
				labels[VM_LABELS] = (struct prom_label){"vcpu", vcpu};
				prom_known(p, labels, VM_LABELS + 1, f ? c->vcpus[v].delay_seconds : c->vcpus[v].cpu_seconds);
			}
		}
	}
	prom_family(p, "vmhost_vm_cgroup_memory_bytes", PROM_GAUGE,
		    "Memory charged to the VM's cgroup scope (v2 memory.current, v1 memory.usage_in_bytes); KSM-blind.");
	for (size_t i = 0; i < l->n; i++) {
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		prom_maybe(p, labels, VM_LABELS, l->vms[i].cg.memory_bytes);
	}
	prom_family(p, "vmhost_vm_cgroup_memory_limit_bytes", PROM_GAUGE,
		    "The VM's cgroup memory limit (memory.max, memory.limit_in_bytes); absent when unlimited.");
	for (size_t i = 0; i < l->n; i++) {
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		prom_maybe(p, labels, VM_LABELS, l->vms[i].cg.limit_bytes);
	}
	prom_family(p, "vmhost_vm_oom_kills_total", PROM_COUNTER,
		    "Processes the OOM killer killed in the VM's cgroup scope (memory.events oom_kill).");
	for (size_t i = 0; i < l->n; i++) {
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		prom_maybe(p, labels, VM_LABELS, l->vms[i].cg.oom_kills);
	}
	prom_family(p, "vmhost_vm_pressure_seconds_total", PROM_COUNTER,
		    "Stall time of the VM's cgroup scope (PSI totals): some = at least one task stalled, full = all.");
	for (size_t i = 0; i < l->n; i++) {
		const struct vm_cgroup *cg = &l->vms[i].cg;
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		for (int k = 0; k < PRESSURE_NKINDS; k++) {
			if (!cg->have_pressure[k])
				continue;
			labels[VM_LABELS] = (struct prom_label){"resource", pressure_kind_names[k]};
			labels[VM_LABELS + 1] = (struct prom_label){"kind", "some"};
			prom_known(p, labels, VM_LABELS + 2, cg->pressure[k].some_seconds);
			labels[VM_LABELS + 1] = (struct prom_label){"kind", "full"};
			prom_known(p, labels, VM_LABELS + 2, cg->pressure[k].full_seconds);
		}
	}
	prom_family(p, "vmhost_vm_stall_seconds_total", PROM_COUNTER,
		    "Time the VMM's threads stalled, summed over them (delay accounting, kernel.task_delayacct=1): "
		    "wpcopy = copy-on-write copies (KSM's merged pages written), swapin, reclaim, thrashing, compact, irq.");
	for (size_t i = 0; i < l->n; i++) {
		const struct stalls *st = &l->vms[i].stalls.all;
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		for (int k = 0; st->known && k < STALL_NKINDS; k++) {
			labels[VM_LABELS] = (struct prom_label){"kind", stall_kind_names[k]};
			prom_known(p, labels, VM_LABELS + 1, st->seconds[k]);
		}
	}
}

/* One figure of every VM. */
static void vm_metric_family(struct prom *p, const struct vm_list *l, const struct vm_metric *m, enum prom_type type,
			     int64_t ps)
{
	char pid[16];
	struct prom_label labels[VM_LABELS];
	if (!prom_family(p, m->name, type, m->help))
		return; /* --detail basic leaves it out */
	for (size_t i = 0; i < l->n; i++) {
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		prom_maybe(p, labels, VM_LABELS, m->value(&l->vms[i], ps));
	}
}

static maybe_i64 vm_io_read_bytes(const struct vm *vm, int64_t ps) { (void)ps; return vm->io.read_bytes; }
static maybe_i64 vm_io_written(const struct vm *vm, int64_t ps) { (void)ps; return vm->io.write_bytes; }

static const struct vm_metric vm_io_metrics[] = {
	{"vmhost_vm_io_read_bytes_total", vm_io_read_bytes,
	 "Bytes the VMM and its helpers read from storage (/proc/PID/io read_bytes)."},
	{"vmhost_vm_io_write_bytes_total", vm_io_written,
	 "Bytes the VMM and its helpers caused to be written to storage (/proc/PID/io write_bytes)."},
};

/* One counter of each tap of every VM (NULL direction: no direction label). */
static void iface_family(struct prom *p, const struct vm_list *l, size_t offset, const char *direction)
{
	char pid[16];
	struct prom_label labels[VM_LABELS + 2];
	for (size_t i = 0; i < l->n; i++) {
		const struct vm_io *io = &l->vms[i].io;
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		for (size_t k = 0; k < io->nifaces; k++) {
			labels[VM_LABELS] = (struct prom_label){"interface", io->ifaces[k].name};
			labels[VM_LABELS + 1] = (struct prom_label){"direction", direction};
			prom_maybe(p, labels, VM_LABELS + 1 + (direction != NULL),
				   *(const maybe_i64 *)((const char *)&io->ifaces[k] + offset));
		}
	}
}

/* Disk and network counters of each VM: the VMM's /proc/PID/io and its taps as the host sees them. */
static void vm_io_families(struct prom *p, const struct vm_list *l)
{
	for (size_t f = 0; f < sizeof(vm_io_metrics) / sizeof(vm_io_metrics[0]); f++)
		vm_metric_family(p, l, &vm_io_metrics[f], PROM_COUNTER, 0);
	prom_family(p, "vmhost_vm_net_receive_bytes_total", PROM_COUNTER,
		    "Bytes the host received on the VM's tap: what the guest sent.");
	iface_family(p, l, offsetof(struct vm_iface, rx_bytes), NULL);
	prom_family(p, "vmhost_vm_net_transmit_bytes_total", PROM_COUNTER,
		    "Bytes the host sent on the VM's tap: what the guest was sent.");
	iface_family(p, l, offsetof(struct vm_iface, tx_bytes), NULL);
	prom_family(p, "vmhost_vm_net_dropped_total", PROM_COUNTER,
		    "Packets dropped on the VM's tap, by the host's direction (receive: from the guest).");
	iface_family(p, l, offsetof(struct vm_iface, rx_dropped), "receive");
	iface_family(p, l, offsetof(struct vm_iface, tx_dropped), "transmit");
}

/* One figure of each disk of every VM whose disks were read (serve --io), by op when op is given. */
static void disk_family(struct prom *p, const struct vm_list *l, size_t offset, const char *op, bool seconds)
{
	char pid[16];
	struct prom_label labels[VM_LABELS + 2];
	for (size_t i = 0; i < l->n; i++) {
		const struct vm_disks *d = l->vms[i].disks;
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		for (size_t k = 0; d && d->known && k < d->n; k++) {
			const char *figure = (const char *)&d->d[k] + offset;
			labels[VM_LABELS] = (struct prom_label){"device", d->d[k].device};
			labels[VM_LABELS + 1] = (struct prom_label){"op", op};
			if (seconds)
				prom_known(p, labels, VM_LABELS + 1 + (op != NULL), *(const double *)figure);
			else
				prom_maybe(p, labels, VM_LABELS + 1 + (op != NULL), *(const maybe_i64 *)figure);
		}
	}
}

/* Each VM's disks as QEMU counts them (query-blockstats, or libvirt's block stats): bytes,
 * operations and the time they took; latency is the time's rate over the operations'. */
static void vm_disk_families(struct prom *p, const struct vm_list *l)
{
	static const struct {
		const char *op;
		size_t ops, seconds;
	} ops[] = {
		{"read", offsetof(struct vm_disk, read_ops), offsetof(struct vm_disk, read_seconds)},
		{"write", offsetof(struct vm_disk, write_ops), offsetof(struct vm_disk, write_seconds)},
		{"flush", offsetof(struct vm_disk, flush_ops), offsetof(struct vm_disk, flush_seconds)},
	};
	prom_family(p, "vmhost_vm_disk_read_bytes_total", PROM_COUNTER, "Bytes the guest read from the disk (QEMU's count).");
	disk_family(p, l, offsetof(struct vm_disk, read_bytes), NULL, false);
	prom_family(p, "vmhost_vm_disk_write_bytes_total", PROM_COUNTER, "Bytes the guest wrote to the disk (QEMU's count).");
	disk_family(p, l, offsetof(struct vm_disk, write_bytes), NULL, false);
	prom_family(p, "vmhost_vm_disk_operations_total", PROM_COUNTER, "Read, write and flush requests the disk served.");
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		disk_family(p, l, ops[k].ops, ops[k].op, false);
	prom_family(p, "vmhost_vm_disk_io_seconds_total", PROM_COUNTER,
		    "Time the disk's requests took, summed; over the operations' rate it is the latency.");
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		disk_family(p, l, ops[k].seconds, ops[k].op, true);
}

/* vmhost_vm_reclaimable_bytes{by}: what the host could take back from each VM by each action, where
 * a visit read the guest's view and it reports (docs/accounting.md); absent otherwise. */
static void vm_reclaim_family(struct prom *p, const struct vm_list *l)
{
	char pid[16];
	struct prom_label labels[VM_LABELS + 1];
	if (!prom_family(p, "vmhost_vm_reclaimable_bytes", PROM_GAUGE,
			 "Guest RAM resident on the host that the host could take back by each action (by: balloon "
			 "inflated to what the guest uses, free_page_reporting turned on, drop_caches in the guest), as of "
			 "the guest's last balloon statistics report; absent where the guest does not report."))
		return; /* --detail basic leaves it out */
	for (size_t i = 0; i < l->n; i++) {
		const struct reclaim *r = l->vms[i].guest ? &l->vms[i].guest->reclaim : NULL;
		if (!r || !r->known)
			continue;
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		const maybe_i64 by[] = {r->by_balloon, r->by_free_page_reporting, r->by_drop_caches};
		static const char *const actions[] = {"balloon", "free_page_reporting", "drop_caches"};
		for (size_t k = 0; k < 3; k++) {
			labels[VM_LABELS] = (struct prom_label){"by", actions[k]};
			prom_maybe(p, labels, VM_LABELS + 1, by[k]);
		}
	}
}

static void vm_families(struct prom *p, const struct snapshot *s)
{
	const struct vm_list *l = &s->vms;
	int64_t ps = s->host.page_size_bytes;
	char pid[16];
	struct prom_label labels[VM_LABELS + 2];

	prom_family(p, "vmhost_vm_info", PROM_INFO,
		    "One series per VM (or --pid process): its VMM and cgroup; the value is always 1.");
	for (size_t i = 0; i < l->n; i++) {
		const struct vm *vm = &l->vms[i];
		vm_labels(vm, pid, sizeof(pid), labels);
		labels[VM_LABELS] = (struct prom_label){"vmm", vmm_kind_name(vm->cfg.vmm)};
		labels[VM_LABELS + 1] = (struct prom_label){"cgroup", vm->cgroup};
		prom_int(p, labels, VM_LABELS + 2, 1);
	}

	prom_family(p, "vmhost_vm_rss_bytes", PROM_GAUGE,
		    "Resident memory of the VMM and its helpers by type (RssAnon, RssFile, RssShmem).");
	for (size_t i = 0; i < l->n; i++) {
		const struct vm *vm = &l->vms[i];
		vm_labels(vm, pid, sizeof(pid), labels);
		const maybe_i64 by_type[] = {vm->mem.rss_anon, vm->mem.rss_file, vm->mem.rss_shmem};
		static const char *const types[] = {"anon", "file", "shmem"};
		for (size_t t = 0; t < 3; t++) {
			labels[VM_LABELS] = (struct prom_label){"type", types[t]};
			prom_maybe(p, labels, VM_LABELS + 1, by_type[t]);
		}
	}

	for (size_t f = 0; f < sizeof(vm_metrics) / sizeof(vm_metrics[0]); f++)
		vm_metric_family(p, l, &vm_metrics[f], PROM_GAUGE, ps);
	prom_family(p, "vmhost_vm_ksmd_cpu_share_ratio", PROM_GAUGE,
		    "The VM's share of ksmd's CPU: its rmap items over all of them (0..1).");
	for (size_t i = 0; i < l->n; i++) {
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		prom_known(p, labels, VM_LABELS, ksmd_vm_cpu_share(&l->vms[i].mem, &s->host.ksm));
	}
	vm_cost_families(p, l);
	vm_io_families(p, l);
	vm_disk_families(p, l);
	vm_reclaim_family(p, l);
	prom_family(p, "vmhost_vm_numa_bytes", PROM_GAUGE,
		    "Anonymous and shared memory of the VM's cgroup scope on each NUMA node (memory.numa_stat).");
	for (size_t i = 0; i < l->n; i++) {
		const struct vm_cgroup *cg = &l->vms[i].cg;
		char node[24];
		vm_labels(&l->vms[i], pid, sizeof(pid), labels);
		for (size_t k = 0; cg->numa_known && k < cg->numa_nodes; k++) {
			snprintf(node, sizeof(node), "%zu", k);
			labels[VM_LABELS] = (struct prom_label){"node", node};
			prom_int(p, labels, VM_LABELS + 1, cg->numa_bytes[k]);
		}
	}
}

/* A guest size as a label: in the largest binary unit it is a whole number of ("4GiB", "1536MiB"),
 * else in bytes; the same size however it was typed. */
static void capacity_size_label(int64_t bytes, char *buf, size_t cap)
{
	static const char *const units[] = {"TiB", "GiB", "MiB", "KiB"};
	for (int u = 0; u < 4; u++) {
		int64_t unit = (int64_t)1 << (10 * (4 - u));
		if (bytes >= unit && bytes % unit == 0) {
			snprintf(buf, cap, "%lld%s", (long long)(bytes / unit), units[u]);
			return;
		}
	}
	snprintf(buf, cap, "%lld", (long long)bytes);
}

/* serve --capacity-size: vmhost capacity's figures (core/sample/capacity.h) on this snapshot, with
 * the default reserve and the overhead the snapshot has (the cheap estimate); unknown ones absent. */
static void capacity_family(struct prom *p, const struct snapshot *s, const struct prom_meta *meta)
{
	if (!meta->ncapacity_sizes)
		return;
	prom_family(p, "vmhost_host_capacity_vms", PROM_GAUGE,
		    "More guests of size this host can take: now (MemAvailable less 10% of MemTotal, each costing size "
		    "and the median QEMU overhead estimate) and after_reclaim (adding what the guests would give back); "
		    "absent when unknown (docs/capacity.md).");
	char size[32];
	struct prom_label l[2] = {{"size", size}, {"when", NULL}};
	for (size_t i = 0; i < meta->ncapacity_sizes; i++) {
		struct capacity_opts o = {.size_bytes = meta->capacity_sizes[i], .reserve_percent = CAPACITY_RESERVE_PERCENT,
					  .overhead_bytes = UNKNOWN, .kind = VMM_QEMU, .shared_bytes = UNKNOWN};
		struct capacity c;
		capacity_compute(&s->host, &s->vms, &o, &c);
		capacity_size_label(o.size_bytes, size, sizeof(size));
		l[1].value = "now";
		prom_maybe(p, l, 2, c.fit_now);
		l[1].value = "after_reclaim";
		prom_maybe(p, l, 2, c.fit_after_reclaim);
	}
}

/* KVM: per-VM and host-wide counter families, one per kind (docs/serve.md, "KVM counters").
 * The event label is the kernel's counter name (a fixed set per kernel, so the cardinality is
 * bounded); times drop their "_ns" as they are exported in seconds. Gauges are not exported. */
struct kvm_family {
	enum kvm_stat_kind kind;
	const char *vm_name, *vm_help, *host_name, *host_help;
};

static const struct kvm_family kvm_families_list[] = {
	{KVM_STAT_EVENTS, "vmhost_kvm_events_total",
	 "KVM events of the VM (exits, halt_exits, pf_taken, ...) from debugfs; event is the kernel's counter name.",
	 "vmhost_kvm_host_events_total",
	 "KVM events of the host's VMs: the kernel's sum when vmhost started plus every VM's events since "
	 "(a VM exiting does not lower it)."},
	{KVM_STAT_TIME_NS, "vmhost_kvm_time_seconds_total",
	 "Time KVM counted for the VM (halt_wait, halt_poll_success, ...: the kernel's *_ns counters without _ns).",
	 "vmhost_kvm_host_time_seconds_total",
	 "Time KVM counted for the host's VMs (*_ns counters without _ns), kept like vmhost_kvm_host_events_total."},
	{KVM_STAT_REASON, "vmhost_kvm_exit_reasons_total",
	 "The VM's exits by tracepoint (event: kvm_exit, kvm_userspace_exit, kvm_pio, kvm_mmio) and reason, "
	 "counted since vmhost first saw the VM (serve --kvm-reasons).",
	 NULL, NULL},
};

static const char *kvm_event_label(const char *name, enum kvm_stat_kind kind, char *buf, size_t cap)
{
	size_t n = strlen(name);
	if (kind == KVM_STAT_TIME_NS && n > 3 && !strcmp(name + n - 3, "_ns")) {
		snprintf(buf, cap, "%.*s", (int)(n - 3), name);
		return buf;
	}
	return name;
}

static void kvm_value(struct prom *p, const struct prom_label *l, size_t nl, enum kvm_stat_kind kind, int64_t v)
{
	if (kind == KVM_STAT_TIME_NS)
		prom_double(p, l, nl, (double)v / 1e9);
	else
		prom_int(p, l, nl, v);
}

static bool kvm_selected(const struct prom_kvm *k, size_t i)
{
	return !k->selected || (i < k->nhost && k->selected[i]);
}

struct kvm_order {
	pid_t pid;
	size_t idx; /* into kvm_sample.vms */
};

static int kvm_order_cmp(const void *a, const void *b)
{
	const struct kvm_order *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static const struct vm *snapshot_vm(const struct snapshot *s, pid_t pid)
{
	for (size_t i = 0; i < s->vms.n; i++)
		if (s->vms.vms[i].pid == pid)
			return &s->vms.vms[i];
	return NULL;
}

/* The labels of a process's series (vm, pid, uuid); pid is the caller's buffer. */
static void kvm_vm_labels(struct prom_label *labels, const struct snapshot *s, const struct kvm_vm_sample *first,
			  char *pid, size_t cap)
{
	const struct vm *vm = snapshot_vm(s, first->pid);
	snprintf(pid, cap, "%d", (int)first->pid);
	labels[0] = (struct prom_label){"vm", vm ? vm->cfg.name : first->name};
	labels[1] = (struct prom_label){"pid", pid};
	labels[2] = (struct prom_label){"uuid", vm ? vm->cfg.uuid : ""};
}

/* "kvm_pio/0x80 out" as the labels event and reason after the VM's; the labels' count. */
static size_t kvm_reason_labels(struct prom_label *labels, const char *name, char *ev, size_t cap)
{
	const char *slash = strchr(name, '/');
	if (!slash) {
		labels[VM_LABELS] = (struct prom_label){"event", name};
		return VM_LABELS + 1;
	}
	snprintf(ev, cap, "%.*s", (int)(slash - name), name);
	labels[VM_LABELS] = (struct prom_label){"event", ev};
	labels[VM_LABELS + 1] = (struct prom_label){"reason", slash + 1};
	return VM_LABELS + 2;
}

/* vmhost_vm_halt_poll_seconds_total: host CPU spent polling the VM's halted vCPUs (success and
 * fail), the VM's series absent where its source has no halt polling counters. */
static void kvm_halt_family(struct prom *p, const struct snapshot *s, const struct kvm_sample *ks,
			    const struct kvm_order *order)
{
	struct kvm_halt_index ix;
	kvm_halt_index_of_sample(ks, &ix);
	char pid[16];
	struct prom_label labels[VM_LABELS];
	prom_family(p, "vmhost_vm_halt_poll_seconds_total", PROM_COUNTER,
		    "Host CPU time KVM spent polling the VM's halted vCPUs for a wake-up (halt_poll_success_ns + "
		    "halt_poll_fail_ns; the kvm module's halt_poll_ns caps each poll).");
	for (size_t g = 0, end; g < ks->nvms; g = end) {
		maybe_i64 sum = MAYBE(0);
		for (end = g; end < ks->nvms && order[end].pid == order[g].pid; end++) {
			maybe_i64 x = kvm_halt_poll_ns(&ix, ks->vms[order[end].idx].values);
			sum = x.known && sum.known ? MAYBE(sum.v + x.v) : UNKNOWN;
		}
		if (!sum.known)
			continue;
		kvm_vm_labels(labels, s, &ks->vms[order[g].idx], pid, sizeof(pid));
		prom_double(p, labels, VM_LABELS, (double)sum.v / 1e9);
	}
}

/* One per-VM family. A process with several KVM VMs (several debugfs directories) is one
 * series, their sum: the labels name the process, not its file descriptors. */
static void kvm_vm_family(struct prom *p, const struct prom_kvm *k, const struct snapshot *s,
			  const struct kvm_order *order, const struct kvm_family *f)
{
	const struct kvm_sample *ks = k->sample;
	char pid[16], ev[64];
	struct prom_label labels[VM_LABELS + 2];
	prom_family(p, f->vm_name, PROM_COUNTER, f->vm_help);
	for (size_t g = 0, end; g < ks->nvms; g = end) {
		for (end = g + 1; end < ks->nvms && order[end].pid == order[g].pid;)
			end++;
		kvm_vm_labels(labels, s, &ks->vms[order[g].idx], pid, sizeof(pid));
		for (size_t i = 0; i < ks->ncounters; i++) {
			if (kvm_sample_counter_kind(ks, i) != f->kind || !kvm_selected(k, i))
				continue;
			maybe_i64 sum = MAYBE(0);
			for (size_t v = g; v < end && sum.known; v++) {
				maybe_i64 x = ks->vms[order[v].idx].values[i];
				sum = x.known ? MAYBE(sum.v + x.v) : UNKNOWN;
			}
			if (!sum.known)
				continue;
			const char *name = kvm_sample_counter_name(ks, i);
			size_t nl = VM_LABELS + 1;
			if (f->kind == KVM_STAT_REASON)
				nl = kvm_reason_labels(labels, name, ev, sizeof(ev));
			else
				labels[VM_LABELS] = (struct prom_label){"event", kvm_event_label(name, f->kind, ev, sizeof(ev))};
			kvm_value(p, labels, nl, f->kind, sum.v);
		}
	}
}

/* A process's time for reason counter i, summed over its VMs: false when none timed it. */
static bool kvm_reason_time(const struct kvm_sample *ks, const struct kvm_order *order, size_t g, size_t end,
			    size_t i, struct kvm_exit_time *ret)
{
	bool any = false;
	*ret = (struct kvm_exit_time){0};
	for (size_t v = g; v < end; v++) {
		const struct kvm_vm_sample *vm = &ks->vms[order[v].idx];
		for (size_t t = 0; t < vm->ntimes; t++)
			if (vm->times[t].counter == i) {
				kvm_exit_time_add(ret, &vm->times[t].t);
				any = true;
			}
	}
	return any;
}

/* serve --kvm-reasons-time: the time per exit reason and the exits timed (their mean is the
 * ratio), the reasons with an exit ended since vmhost first saw the VM. */
static void kvm_time_families(struct prom *p, const struct prom_kvm *k, const struct snapshot *s,
			      const struct kvm_order *order)
{
	static const char *const names[2] = {"vmhost_kvm_exit_reason_seconds_total", "vmhost_kvm_exit_reason_timed_total"};
	static const char *const helps[2] = {
		"Time of the VM's exits by reason (serve --kvm-reasons-time, eBPF): kvm_exit to its thread's next kvm_entry "
		"(hosts that fire both), kvm_userspace_exit to its thread's next KVM_RUN (the VMM's handling and any wait "
		"for a CPU).",
		"The VM's exits timed in vmhost_kvm_exit_reason_seconds_total (an exit is timed once it ended): the mean is "
		"the ratio of the two."};
	const struct kvm_sample *ks = k->sample;
	char pid[16], ev[64];
	struct prom_label labels[VM_LABELS + 2];
	for (int fam = 0; fam < 2; fam++) {
		prom_family(p, names[fam], PROM_COUNTER, helps[fam]);
		for (size_t g = 0, end; g < ks->nvms; g = end) {
			for (end = g + 1; end < ks->nvms && order[end].pid == order[g].pid;)
				end++;
			kvm_vm_labels(labels, s, &ks->vms[order[g].idx], pid, sizeof(pid));
			for (size_t i = 0; i < ks->ncounters; i++) {
				struct kvm_exit_time t;
				if (kvm_sample_counter_kind(ks, i) != KVM_STAT_REASON || !kvm_selected(k, i) ||
				    !kvm_reason_time(ks, order, g, end, i, &t))
					continue;
				size_t nl = kvm_reason_labels(labels, kvm_sample_counter_name(ks, i), ev, sizeof(ev));
				if (fam == 0)
					prom_double(p, labels, nl, (double)t.ns / 1e9);
				else
					prom_int(p, labels, nl, (int64_t)t.count);
			}
		}
	}
}

static bool kvm_sample_timed(const struct kvm_sample *ks)
{
	for (size_t v = 0; v < ks->nvms; v++)
		if (ks->vms[v].times)
			return true;
	return false;
}

static void kvm_families(struct prom *p, const struct snapshot *s, const struct prom_kvm *k)
{
	prom_family(p, "vmhost_kvm_available", PROM_GAUGE,
		    "1 when KVM's counters are readable (<sys>/kernel/debug/kvm, or QMP query-stats for QEMU VMs "
		    "where debugfs is closed); 0 and no vmhost_kvm_* counters otherwise.");
	prom_int(p, NULL, 0, k->available);
	if (!k->available)
		return;
	const struct kvm_sample *ks = k->sample;
	struct kvm_order *order = malloc((ks->nvms ? ks->nvms : 1) * sizeof(*order));
	if (!order) {
		p->error = -ENOMEM;
		return;
	}
	for (size_t v = 0; v < ks->nvms; v++)
		order[v] = (struct kvm_order){ks->vms[v].pid, v};
	qsort(order, ks->nvms, sizeof(*order), kvm_order_cmp);
	char ev[64];
	for (size_t f = 0; f < sizeof(kvm_families_list) / sizeof(kvm_families_list[0]); f++) {
		const struct kvm_family *fam = &kvm_families_list[f];
		if (fam->kind == KVM_STAT_REASON && !kvm_sample_reasons_counted(ks))
			continue;
		kvm_vm_family(p, k, s, order, fam);
		if (fam->kind == KVM_STAT_REASON && kvm_sample_timed(ks))
			kvm_time_families(p, k, s, order);
		if (!fam->host_name)
			continue;
		prom_family(p, fam->host_name, PROM_COUNTER, fam->host_help);
		for (size_t i = 0; i < k->nhost && i < ks->ncounters; i++) {
			if (kvm_sample_counter_kind(ks, i) != fam->kind || !k->host[i].known || !kvm_selected(k, i))
				continue;
			struct prom_label l = {"event",
					       kvm_event_label(kvm_sample_counter_name(ks, i), fam->kind, ev, sizeof(ev))};
			kvm_value(p, &l, 1, fam->kind, k->host[i].v);
		}
	}
	kvm_halt_family(p, s, ks, order);
	free(order);
}

/* The KVM module and the parameters that decide a guest's speed, as labels of one info series. */
static void kvm_info_family(struct prom *p, const struct kvm_host *k)
{
	enum { NPARAMS = 6 };
	static const char *const params[NPARAMS] = {"ept", "vpid", "enable_apicv", "unrestricted_guest", "pml",
						    "nested"};
	prom_family(p, "vmhost_kvm_info", PROM_INFO,
		    "The loaded KVM module and its speed-deciding parameters (\"\" when it has none); absent when "
		    "KVM is not loaded.");
	if (!k->loaded)
		return;
	struct prom_label l[3 + NPARAMS] = {{"module", k->module}, {"vendor", kvm_vendor_name(k->vendor)},
					    {"device", k->device ? "1" : "0"}};
	for (int i = 0; i < NPARAMS; i++)
		l[3 + i] = (struct prom_label){params[i], kvm_host_param(k, params[i])};
	prom_int(p, l, 3 + NPARAMS, 1);
}

void prom_write_snapshot(struct prom *p, const struct snapshot *s, const struct prom_meta *meta)
{
	struct prom_keep keep[PROM_DETAIL_KEEP_MAX];
	prom_detail_keep(p, meta, keep);
	host_families(p, s);
	capacity_family(p, s, meta);
	if (meta->kvm_host)
		kvm_info_family(p, meta->kvm_host);
	ksm_families(p, s);
	vm_families(p, s);
	if (meta->kvm)
		kvm_families(p, s, meta->kvm);

	prom_family(p, "vmhost_vms", PROM_GAUGE, "VMs (and --pid processes) in the snapshot.");
	prom_int(p, NULL, 0, (int64_t)s->vms.n);
	prom_family(p, "vmhost_skipped_processes", PROM_GAUGE,
		    "Processes that vanished or could not be read while sampling.");
	prom_int(p, NULL, 0, s->vms.skipped);
	prom_family(p, "vmhost_permission_denied_processes", PROM_GAUGE,
		    "Processes whose KSM or memory files vmhost may not read (run it with the capabilities in docs/serve.md).");
	prom_int(p, NULL, 0, s->vms.denied);
	prom_family(p, "vmhost_scrape_duration_seconds", PROM_GAUGE,
		    "How long gathering the served snapshot took (reading /proc and /sys).");
	prom_double(p, NULL, 0, s->gather_seconds);
	prom_family(p, "vmhost_snapshot_timestamp_seconds", PROM_GAUGE,
		    "When the served snapshot was taken, Unix time; scrapes within --min-interval share it.");
	prom_double(p, NULL, 0, s->wall_seconds);
	prom_family(p, "vmhost_snapshots_total", PROM_COUNTER, "Snapshots gathered since the server started.");
	prom_int(p, NULL, 0, (int64_t)meta->snapshots_total);
	prom_family(p, "vmhost_build_info", PROM_INFO, "vmhost's version; the value is always 1.");
	struct prom_label v = {"version", meta->version};
	prom_int(p, &v, 1, 1);
	prom_scrape_families(p, s, meta);
}
