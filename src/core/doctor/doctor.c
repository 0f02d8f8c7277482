#include "core/doctor/doctor.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/stats.h"
#include "core/model/guest_view.h"
#include "core/sample/capacity.h"
#include "parse/elements.h"

#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * MiB)

/* Thresholds, each explained in docs/doctor.md. */
#define KSM_CPU_MIN_PERCENT 5.0                     /* ksmd below this is background noise */
#define KSM_GAIN_BYTES_PER_CPU_PERCENT (32.0 * MiB) /* profit worth each percent of a CPU */
#define KSM_STILL_MERGING_BYTES_PER_SECOND (1.0 * MiB) /* savings still rising: no verdict yet */
#define KSM_STOPPED_MIN_GUESTS 2                    /* merging needs at least two guests */
#define EXITS_MIN_PER_SECOND 1000.0                 /* fewer exits cost nothing worth a finding */
#define EXITS_MIN_LIFETIME 1000000                  /* the same without an interval */
#define EXITS_DOMINANT_SHARE 0.6                    /* one kind of exit is most of them */
#define VCPU_DELAY_SHARE 0.10                       /* of the time vCPUs wanted a CPU */
#define VCPU_DELAY_MIN_BUSY_PERCENT 5.0             /* run + wait over the interval, of one CPU */
#define VCPU_DELAY_MIN_BUSY_SECONDS 1.0             /* the same without an interval */
#define CGROUP_NEAR_LIMIT_SHARE 0.90
#define SWAP_MIN_BYTES (64.0 * MiB)
#define HUGEPAGES_UNUSED_MIN_BYTES (1.0 * GiB)
#define SMAPS_SLOW_SECONDS 0.010                    /* per VM and read */
#define BALLOON_INFLATED_SHARE 0.5                  /* the balloon leaves the guest under half its RAM */
#define KSM_NO_YIELD_MAX 0.01                       /* of the pages ksmd tracks for a VM, merged */
#define KSM_NO_YIELD_MIN_BYTES (256.0 * MiB)        /* tracked: less is not worth a finding */
#define KSM_NO_YIELD_MIN_SCANS 2                    /* the unstable tree merges on a page's second scan */
#define TAP_DROPPED_SHARE 0.01                      /* of a tap's packets in one direction */
#define TAP_DROPPED_MIN 100                         /* fewer drops are noise */
#define SMALL_PAGES_MIN_GUEST_BYTES (2.0 * GiB)     /* smaller guests gain too little from huge pages */
#define SMALL_PAGES_MIN_ANON_SHARE 0.5              /* of guest RAM populated: an idle new guest has none */
#define SMALL_PAGES_MAX_THP_SHARE 0.05              /* of its anonymous memory on THP: ~none */
#define SMALL_PAGES_KSM_SHARE 0.10                  /* KSM merged this much of it: KSM split the huge pages */
#define NUMA_REMOTE_SHARE 0.25                      /* of its memory on nodes its vCPUs do not run on */
#define NUMA_REMOTE_MIN_BYTES (256.0 * MiB)         /* less is not worth moving */
#define GROWTH_WRITES_MIN_SHARE 1.0                 /* written over the growth: a write cache can explain it */
#define HALT_POLL_MIN_SHARE 0.05                    /* of one CPU over the interval: less is noise */
#define HALT_POLL_MIN_SECONDS 1.0                   /* the same without an interval */
#define KSM_COPY_STALL_PER_GIB_SAVED 0.01           /* copy stalls a second per GiB KSM saves: 1% of a thread */
#define KSM_COPY_STALL_MIN_SHARE 0.005              /* of one thread over the interval: less is noise */
#define FREE_PAGE_REPORTING_MIN_BYTES (1.0 * GiB)  /* free and resident a restart would give back: a guest's worth */
#define FREE_IN_SWAP_MIN_BYTES SWAP_MIN_BYTES       /* as vm-swapping: less may be the VMM's start-up pages */

const char *doctor_severity_name(enum doctor_severity s)
{
	return s == DOCTOR_CRITICAL ? "critical" : s == DOCTOR_WARNING ? "warning" : "info";
}

int doctor_severity_parse(const char *s, enum doctor_severity *ret)
{
	for (int i = DOCTOR_INFO; i <= DOCTOR_CRITICAL; i++)
		if (!strcmp(s, doctor_severity_name(i))) {
			*ret = i;
			return 0;
		}
	return -EINVAL;
}

/* The counter of each exit kind (DOCTOR_EXIT_*), its name in evidence and what it usually means. */
static const struct {
	const char *counter, *kind, *why;
} exit_kinds[DOCTOR_EXIT_NKINDS] = {
	[DOCTOR_EXIT_IO] = {"io_exits", "I/O",
			    "port I/O exits: an emulated device (IDE, legacy serial, PIT) is polled; use virtio devices "
			    "(virtio-blk, virtio-net, virtio-serial) and virtio drivers in the guest"},
	[DOCTOR_EXIT_MMIO] = {"mmio_exits", "MMIO",
			      "MMIO exits: an emulated device or a virtio device without ioeventfd; use virtio-*-pci "
			      "with ioeventfd=on and check the guest loaded virtio drivers"},
	[DOCTOR_EXIT_HALT] = {"halt_exits", "halt",
			      "halt exits: the guest idles with HLT and each wake-up costs an exit; harmless when idle, "
			      "for latency-sensitive guests raise halt_poll_ns or use the guest's cpuidle-haltpoll"},
	[DOCTOR_EXIT_EMULATION] = {"insn_emulation", "emulation",
				   "KVM emulates the guest's instructions in software: a guest left in real mode "
				   "(firmware, boot loader) where unrestricted_guest is off or the hypervisor below "
				   "(nested, PVM) lacks it; check kvm-unrestricted-guest-off and that the guest boots "
				   "past its firmware"},
};

const char *doctor_exit_counter(int kind) { return exit_kinds[kind].counter; }

/* ---- building findings ---- */

/* Appends a finding of rule r about the VM pid, vm (0, NULL: the host) with its one-line summary and
 * returns it, for evidence_* and advise to fill; NULL when out of memory (out->err says so). */
static struct doctor_finding *finding_add(struct doctor_findings *out, const struct doctor_rule *r, pid_t pid,
					  const char *vm, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static struct doctor_finding *finding_add(struct doctor_findings *out, const struct doctor_rule *r, pid_t pid,
					  const char *vm, const char *fmt, ...)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? 2 * out->cap : 16;
		struct doctor_finding *v = realloc(out->v, cap * sizeof(*v));
		if (!v) {
			out->err = -ENOMEM;
			return NULL;
		}
		out->v = v;
		out->cap = cap;
	}
	struct doctor_finding *f = &out->v[out->n++];
	memset(f, 0, sizeof(*f));
	f->id = r->id;
	f->severity = r->severity;
	f->pid = pid;
	snprintf(f->vm, sizeof(f->vm), "%s", vm ? vm : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->summary, sizeof(f->summary), fmt, ap);
	va_end(ap);
	return f;
}

/* The finding's next evidence item, named key; NULL when f is NULL or full (the evidence is then
 * left out, the finding kept). */
static struct doctor_item *evidence_slot(struct doctor_finding *f, const char *key, enum doctor_value kind)
{
	if (!f || f->nev == DOCTOR_MAX_EVIDENCE)
		return NULL;
	struct doctor_item *it = &f->ev[f->nev++];
	*it = (struct doctor_item){.key = key, .kind = kind, .f = NAN};
	return it;
}

static void evidence_int(struct doctor_finding *f, const char *key, maybe_i64 v)
{
	struct doctor_item *it = evidence_slot(f, key, DV_INT);
	if (it)
		it->i = v;
}

static void evidence_bytes(struct doctor_finding *f, const char *key, maybe_i64 v)
{
	struct doctor_item *it = evidence_slot(f, key, DV_BYTES);
	if (it)
		it->i = v;
}

static void evidence_num(struct doctor_finding *f, const char *key, enum doctor_value kind, double v)
{
	struct doctor_item *it = evidence_slot(f, key, kind);
	if (it)
		it->f = v;
}

static void evidence_str(struct doctor_finding *f, const char *key, const char *s)
{
	struct doctor_item *it = evidence_slot(f, key, DV_STR);
	if (it)
		snprintf(it->s, sizeof(it->s), "%s", s);
}

static void advise(struct doctor_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void advise(struct doctor_finding *f, const char *fmt, ...)
{
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->advice, sizeof(f->advice), fmt, ap);
	va_end(ap);
}

static maybe_i64 bytes_of(double v) { return isfinite(v) ? MAYBE((int64_t)llround(v)) : UNKNOWN; }

static bool is_vm(const struct vm *vm) { return vm->cfg.vmm != VMM_PROCESS; }

/* ---- KSM ---- */

static void check_ksm_cpu(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	const struct ksm_rates *k = &e->ksm_rates;
	if (!e->ksm_rates_known || !(k->ksmd_cpu_percent >= KSM_CPU_MIN_PERCENT))
		return;
	maybe_i64 gain = k->general_profit.known ? k->general_profit : k->saved_bytes;
	maybe_i64 before = ksm_saved_bytes(&e->ksm_before.k, e->host.page_size_bytes);
	if (!gain.known || !before.known || !k->saved_bytes.known || !(k->interval_seconds > 0))
		return;
	double rising = (double)(k->saved_bytes.v - before.v) / k->interval_seconds;
	if ((double)gain.v >= KSM_GAIN_BYTES_PER_CPU_PERCENT * k->ksmd_cpu_percent ||
	    rising >= KSM_STILL_MERGING_BYTES_PER_SECOND)
		return;
	struct doctor_finding *f = finding_add(out, r, 0, NULL, "ksmd spends %.1f%% of a CPU for little or no gain",
				       k->ksmd_cpu_percent);
	evidence_num(f, "ksmd_cpu_percent", DV_PERCENT, k->ksmd_cpu_percent);
	evidence_bytes(f, "general_profit_bytes", k->general_profit);
	evidence_bytes(f, "saved_bytes", k->saved_bytes);
	evidence_num(f, "saved_bytes_per_second", DV_FLOAT, rising);
	evidence_num(f, "pages_scanned_per_second", DV_FLOAT, k->pages_scanned_per_second);
	evidence_int(f, "pages_to_scan", e->ksm_after.k.pages_to_scan);
	evidence_int(f, "sleep_millisecs", e->ksm_after.k.sleep_millisecs);
	evidence_num(f, "interval_seconds", DV_SECONDS, k->interval_seconds);
	advise(f, "scan less: echo 100 > /sys/kernel/mm/ksm/pages_to_scan; echo 200 > "
		  "/sys/kernel/mm/ksm/sleep_millisecs (or 'vmhost ksm tune --cpu-budget 2'); stop KSM "
		  "(echo 2 > /sys/kernel/mm/ksm/run) when the guests share nothing");
}

static void check_ksm_stopped(const struct doctor_rule *r, const struct doctor_evidence *e,
			      struct doctor_findings *out)
{
	const struct ksm_sysfs *k = &e->host.ksm;
	if (!ksm_is_off(k))
		return;
	int64_t guests = 0;
	maybe_i64 ram = MAYBE(0);
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		const char *why = is_vm(vm) ? ksm_unmergeable_reason(&vm->cfg, &vm->mem, k) : NULL;
		if (why && !strcmp(why, "ksm-stopped")) {
			guests++;
			ram = maybe_add(ram, vm->cfg.guest_ram_bytes);
		}
	}
	if (guests < KSM_STOPPED_MIN_GUESTS)
		return;
	struct doctor_finding *f = finding_add(out, r, 0, NULL,
					       "KSM is stopped while %lld guests offer their RAM to it",
				       (long long)guests);
	evidence_int(f, "run", k->run);
	evidence_int(f, "mergeable_guests", MAYBE(guests));
	evidence_bytes(f, "guest_ram_bytes", ram);
	evidence_bytes(f, "mem_available_bytes", e->host.mem.mem_available);
	evidence_bytes(f, "mem_total_bytes", e->host.mem.mem_total);
	evidence_str(f, "same_image", "not estimated: vmhost does not read guest disks; 'vmhost bench ksm' measures the gain");
	advise(f, "if the guests run the same OS image, start KSM: echo 1 > /sys/kernel/mm/ksm/run (or "
		  "'vmhost ksm tune', which keeps ksmd within a CPU budget)");
}

static void check_ksm_tuners(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	const struct ksm_sysfs *k = &e->host.ksm;
	bool advisor = !strcmp(k->advisor_mode, "scan-time");
	if (!e->ksmtuned_pid || (!advisor && !e->vmhost_tune_pid))
		return;
	struct doctor_finding *f = finding_add(out, r, e->ksmtuned_pid, NULL, "ksmtuned and %s both tune pages_to_scan",
				       e->vmhost_tune_pid ? "'vmhost ksm tune'" : "the kernel's KSM advisor");
	evidence_int(f, "ksmtuned_pid", MAYBE(e->ksmtuned_pid));
	evidence_int(f, "vmhost_tune_pid", e->vmhost_tune_pid ? MAYBE(e->vmhost_tune_pid) : UNKNOWN);
	evidence_str(f, "advisor_mode", k->advisor_mode[0] ? k->advisor_mode : "(none in this kernel)");
	evidence_int(f, "pages_to_scan", k->pages_to_scan);
	evidence_int(f, "sleep_millisecs", k->sleep_millisecs);
	advise(f, "keep one tuner: stop ksmtuned (systemctl disable --now ksmtuned)%s",
	       e->vmhost_tune_pid ? "" : ", or echo none > /sys/kernel/mm/ksm/advisor_mode");
}

static void check_unmergeable(const struct doctor_rule *r, const struct doctor_evidence *e,
			      struct doctor_findings *out)
{
	const struct ksm_sysfs *k = &e->host.ksm;
	if (!ksm_is_running(k))
		return;
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		const char *why = is_vm(vm) ? ksm_unmergeable_reason(&vm->cfg, &vm->mem, k) : NULL;
		if (!why)
			continue;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
						       "KSM runs but cannot merge this VM's RAM (%s)",
					       why);
		evidence_str(f, "ksm_unmergeable_reason", why);
		evidence_bytes(f, "guest_ram_bytes", vm->cfg.guest_ram_bytes);
		evidence_int(f, "ksm_mergeable", ksm_vm_mergeable(&vm->cfg, &vm->mem, k));
		if (!strcmp(why, "hugetlbfs")) { /* what those huge pages cost, as RSS and PSS do not say */
			evidence_bytes(f, "hugetlb_bytes", vm->mem.hugetlb);
			evidence_bytes(f, "memory_cost_bytes", vm_memory_cost(vm));
		}
		if (!strcmp(why, "mem-merge-off"))
			advise(f, "drop mem-merge=off from -machine (libvirt: remove <nosharepages/>) if its memory may be "
				  "shared with other guests");
		else if (!strcmp(why, "hugetlbfs"))
			advise(f, "hugetlbfs pages never merge: keep huge pages for this VM, or back its RAM with anonymous "
				  "memory (THP) if merging saves more");
		else if (!strcmp(why, "shared-memory"))
			advise(f, "shared (share=on, memfd) RAM never merges: use share=off where no vhost-user or "
				  "virtiofs device needs it");
		else
			advise(f, "the VMM does not mark its RAM mergeable: QEMU -machine mem-merge=on; other VMMs: "
				  "prctl(PR_SET_MEMORY_MERGE) from a wrapper, or leave KSM to the guests that can merge");
	}
}

/* A VM ksmd scans for nothing: its pages stay unmerged scan after scan, yet cost ksmd its share. */
static void check_no_yield(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	const struct ksm_sysfs *k = &e->host.ksm;
	if (!ksm_is_running(k) || !k->full_scans.known || k->full_scans.v < KSM_NO_YIELD_MIN_SCANS)
		return;
	double ksmd_percent = e->ksm_rates_known ? e->ksm_rates.ksmd_cpu_percent : NAN;
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		double yield = ksm_vm_yield(&vm->mem);
		if (!is_vm(vm) || ksm_unmergeable_reason(&vm->cfg, &vm->mem, k) || !(yield < KSM_NO_YIELD_MAX))
			continue;
		double tracked = (double)vm->mem.ksm_rmap_items.v * (double)e->host.page_size_bytes;
		if (tracked < KSM_NO_YIELD_MIN_BYTES)
			continue;
		double share = ksmd_vm_cpu_share(&vm->mem, k);
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
					       "ksmd scans %.1f GiB of this VM for nothing (%.2f%% of it merged)",
					       tracked / GiB, yield * 100.0);
		evidence_int(f, "ksm_rmap_items", vm->mem.ksm_rmap_items);
		evidence_bytes(f, "ksm_scanned_bytes", bytes_of(tracked));
		evidence_int(f, "ksm_merging_pages", vm->mem.ksm_merging_pages);
		evidence_int(f, "ksm_zero_pages", vm->mem.ksm_zero_pages);
		evidence_num(f, "ksm_yield_percent", DV_PERCENT, yield * 100.0);
		evidence_num(f, "ksmd_cpu_share_percent", DV_PERCENT, share * 100.0);
		evidence_num(f, "ksmd_cpu_percent", DV_PERCENT, ksmd_percent);
		evidence_int(f, "full_scans", k->full_scans);
		advise(f, "turn merging off for it (QEMU -machine mem-merge=off, or libvirt "
			  "<memoryBacking><nosharepages/></memoryBacking>): saves ~%.0f%% of ksmd's CPU",
		       isfinite(share) ? share * 100.0 : 0.0);
	}
}

/* A guest that pays more for KSM than KSM saves it: stalled on copies of merged pages it writes
 * (delay accounting's write-protect copies, over the interval) beyond a share of a thread per GiB
 * saved. Needs an interval and delay accounting on; a VM KSM does not touch is left alone. */
static void check_ksm_copy_stalls(const struct doctor_rule *r, const struct doctor_evidence *e,
				  struct doctor_findings *out)
{
	double seconds = e->interval_seconds;
	for (size_t i = 0; seconds > 0 && i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		const struct mem_counters *m = &vm->mem;
		bool ksm = (m->ksm_rmap_items.known && m->ksm_rmap_items.v > 0) ||
			   (m->ksm_merging_pages.known && m->ksm_merging_pages.v > 0);
		double share = vm->stalls.copy_stall_seconds / seconds; /* of one thread */
		double saved_gib = vm->ksm_saved_bytes.known ? (double)vm->ksm_saved_bytes.v / GiB : 0;
		if (!is_vm(vm) || !ksm || !(share >= KSM_COPY_STALL_MIN_SHARE) ||
		    share <= KSM_COPY_STALL_PER_GIB_SAVED * saved_gib)
			continue;
		double per_gib = saved_gib > 0 ? share * 1000.0 / saved_gib : NAN;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
					       "its guest stalled %.1f%% of a thread on copies of pages KSM merged, while KSM "
					       "saves it %.0f MiB",
					       share * 100.0, saved_gib * 1024.0);
		evidence_num(f, "copy_stall_seconds", DV_SECONDS, vm->stalls.copy_stall_seconds);
		evidence_num(f, "copy_stall_percent", DV_PERCENT, share * 100.0);
		evidence_bytes(f, "ksm_saved_bytes", vm->ksm_saved_bytes);
		evidence_num(f, "copy_stall_ms_per_second_per_gib_saved", DV_FLOAT, per_gib);
		evidence_num(f, "ksmd_cpu_seconds", DV_SECONDS, vm->stalls.ksmd_cpu_seconds);
		evidence_num(f, "stall_percent", DV_PERCENT, vm->stalls.stall_percent);
		evidence_int(f, "wpcopy_count", vm->stalls.all.known ? MAYBE(vm->stalls.all.count[STALL_WPCOPY]) : UNKNOWN);
		advise(f, "turn merging off for it (QEMU -machine mem-merge=off, or libvirt "
			  "<memoryBacking><nosharepages/></memoryBacking>): its guest writes over what KSM merges");
	}
}

static void check_merge_across_nodes(const struct doctor_rule *r, const struct doctor_evidence *e,
				     struct doctor_findings *out)
{
	const struct ksm_sysfs *k = &e->host.ksm;
	if (!ksm_is_running(k) || !k->merge_across_nodes.known || k->merge_across_nodes.v != 1 || e->numa_nodes < 2)
		return;
	struct doctor_finding *f = finding_add(out, r, 0, NULL, "KSM merges pages across %d NUMA nodes", e->numa_nodes);
	evidence_int(f, "merge_across_nodes", k->merge_across_nodes);
	evidence_int(f, "numa_nodes", MAYBE(e->numa_nodes));
	evidence_int(f, "pages_sharing", k->pages_sharing);
	advise(f, "guests then read merged pages from a remote node; for NUMA-pinned guests: echo 2 > "
		  "/sys/kernel/mm/ksm/run; echo 0 > /sys/kernel/mm/ksm/merge_across_nodes; echo 1 > "
		  "/sys/kernel/mm/ksm/run");
}

static void check_zero_pages(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	const struct ksm_sysfs *k = &e->host.ksm;
	if (!ksm_is_running(k) || !k->use_zero_pages.known || k->use_zero_pages.v != 0 || !k->stable_node_dups.known ||
	    k->stable_node_dups.v <= 0)
		return;
	struct doctor_finding *f = finding_add(out, r, 0, NULL,
				       "KSM chains pages shared beyond max_page_sharing (empty pages, most likely)");
	evidence_int(f, "use_zero_pages", k->use_zero_pages);
	evidence_int(f, "stable_node_chains", k->stable_node_chains);
	evidence_int(f, "stable_node_dups", k->stable_node_dups);
	evidence_int(f, "max_page_sharing", k->max_page_sharing);
	advise(f, "map empty pages to the kernel's zero page instead of KSM chains: echo 1 > "
		  "/sys/kernel/mm/ksm/use_zero_pages");
}

/* ---- growth ---- */

/* Growth that a write cache explains: the VM wrote at least what it grew over the same samples
 * (a cache cannot hold more than passed through it). */
static bool grew_with_writes(const struct doctor_growth *g)
{
	return g->written_bytes.known && g->growth_bytes > 0 &&
	       (double)g->written_bytes.v >= GROWTH_WRITES_MIN_SHARE * g->growth_bytes;
}

static void check_growth(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	for (size_t i = 0; e->growth_known && i < e->ngrowth; i++) {
		const struct doctor_growth *g = &e->growth[i];
		bool writes = grew_with_writes(g);
		double wrote = writes ? (double)g->written_bytes.v : 0;
		struct doctor_finding *f =
			writes ? finding_add(out, r, g->pid, g->name,
				     "memory beyond guest RAM grew %.0f MiB while it wrote %.*f %s (%.1f MiB per hour)",
				     g->growth_bytes / MiB, wrote < GiB ? 0 : 1, wrote < GiB ? wrote / MiB : wrote / GiB,
				     wrote < GiB ? "MiB" : "GiB", g->bytes_per_hour / MiB)
			       : finding_add(out, r, g->pid, g->name, "memory beyond guest RAM grows %.1f MiB per hour",
				     g->bytes_per_hour / MiB);
		evidence_bytes(f, "overhead_growth_bytes_per_hour", bytes_of(g->bytes_per_hour));
		evidence_bytes(f, "growth_bytes", bytes_of(g->growth_bytes));
		evidence_bytes(f, "overhead_bytes", g->overhead_bytes);
		evidence_bytes(f, "written_bytes", g->written_bytes);
		evidence_num(f, "since_seconds", DV_TIME, g->first_seconds);
		evidence_int(f, "samples", MAYBE((int64_t)g->samples));
		if (writes)
			advise(f, "growth that follows the VM's writes is its disk's write cache: give the disk cache=none "
				  "(O_DIRECT, the guest's page cache does the caching) or bound the cache (qcow2 "
				  "l2-cache-size/cache-clean-interval, RBD rbd_cache_size, writeback cache size), then "
				  "'vmhost report --db FILE' to see it level off");
		else
			advise(f, "the VMM leaks or caches: 'vmhost report --db FILE --out r.html' charts it; check its block "
				  "cache (cache=none or a bounded l2-cache-size) and plan a restart or live migration");
	}
}

/* ---- KVM ---- */

static bool param_off(const char *v) { return v && (!strcmp(v, "N") || !strcmp(v, "0")); }

static void check_kvm_param(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	const char *v = e->kvm.loaded ? kvm_host_param(&e->kvm, r->arg) : NULL;
	if (!param_off(v))
		return;
	struct doctor_finding *f = finding_add(out, r, 0, NULL, "%s: %s is off", e->kvm.module, r->arg);
	evidence_str(f, "module", e->kvm.module);
	evidence_str(f, "parameter", r->arg);
	evidence_str(f, "value", v);
	evidence_int(f, "vms", MAYBE((int64_t)e->vms.n));
	advise(f, "every guest runs slower without it (shadow paging, TLB flushes or emulated interrupts): "
		  "echo 'options %s %s=1' > /etc/modprobe.d/vmhost-kvm.conf, then reload %s with no VM running; "
		  "if it stays off, the CPU or the hypervisor below lacks it", e->kvm.module, r->arg, e->kvm.module);
}

static void check_nested(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	const char *v = e->kvm.loaded && e->kvm.vendor == KVM_VENDOR_INTEL ? kvm_host_param(&e->kvm, "nested") : NULL;
	if (!v || (strcmp(v, "Y") && strcmp(v, "1")))
		return;
	int64_t vms = 0;
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		if (!is_vm(vm))
			continue;
		if (vm->cfg.cpu_nested != VM_NESTED_NO)
			return; /* this guest may run guests of its own */
		vms++;
	}
	if (!vms)
		return;
	struct doctor_finding *f = finding_add(out, r, 0, NULL,
					       "nested virtualization is on but none of %lld VM%s offers VMX",
				       (long long)vms, vms == 1 ? "" : "s");
	evidence_str(f, "module", e->kvm.module);
	evidence_str(f, "nested", v);
	evidence_int(f, "vms", MAYBE(vms));
	evidence_int(f, "vms_offering_vmx", MAYBE(0));
	advise(f, "nested VMX is attack surface no guest here uses: echo 'options %s nested=0' > "
		  "/etc/modprobe.d/vmhost-kvm.conf and reload %s with no VM running (a guest given -cpu host "
		  "or +vmx later needs it back)", e->kvm.module, e->kvm.module);
}

static const struct vm *find_vm(const struct doctor_evidence *e, pid_t pid)
{
	for (size_t i = 0; i < e->vms.n; i++)
		if (e->vms.vms[i].pid == pid)
			return &e->vms.vms[i];
	return NULL;
}

static void check_exits(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	for (size_t i = 0; i < e->nexits; i++) {
		const struct doctor_exits *x = &e->exits[i];
		double total = (double)x->exits.v;
		bool busy = x->over_interval ? total / x->seconds >= EXITS_MIN_PER_SECOND : total >= EXITS_MIN_LIFETIME;
		if (!busy || total <= 0)
			continue;
		/* An exit kind first; emulation (counted per instruction, not per exit) when none dominates. */
		int top = -1;
		for (int k = 0; k < DOCTOR_EXIT_NKINDS && (top < 0 || k != DOCTOR_EXIT_EMULATION); k++)
			if (x->kinds[k].known && (double)x->kinds[k].v >= EXITS_DOMINANT_SHARE * total &&
			    (top < 0 || x->kinds[k].v > x->kinds[top].v))
				top = k;
		if (top < 0)
			continue;
		double share = (double)x->kinds[top].v / total;
		char rate[160] = "";
		if (x->over_interval)
			snprintf(rate, sizeof(rate), " at %.0f exits/s", total / x->seconds);
		const char *slash = strchr(x->top_reason, '/');
		double hit = x->top_reason_count.known && slash ? (double)x->top_reason_count.v / total : 0;
		if (hit >= EXITS_DOMINANT_SHARE) /* --reasons: which port or MMIO access */
			snprintf(rate + strlen(rate), sizeof(rate) - strlen(rate), ", %.0f%% of them %s %s", 100 * hit,
				 !strncmp(x->top_reason, "kvm_pio/", 8) ? "port" : "MMIO", slash + 1);
		struct doctor_finding *f =
			top == DOCTOR_EXIT_EMULATION
				? finding_add(out, r, x->pid, x->name,
					      "KVM emulates %.1f guest instructions per exit%s", share, rate)
				: finding_add(out, r, x->pid, x->name,
					      "%.0f%% of its KVM exits%s are %s exits", 100.0 * share, rate,
				      exit_kinds[top].kind);
		evidence_str(f, "kind", exit_kinds[top].kind);
		evidence_int(f, "exits", x->exits);
		for (int k = 0; k < DOCTOR_EXIT_NKINDS; k++)
			evidence_int(f, exit_kinds[k].counter, x->kinds[k]);
		if (x->over_interval)
			evidence_num(f, "exits_per_second", DV_FLOAT, total / x->seconds);
		if (x->top_reason_count.known) {
			evidence_str(f, "top_reason", x->top_reason);
			evidence_int(f, "top_reason_count", x->top_reason_count);
			evidence_int(f, "port_accesses", x->pio_count);
			evidence_int(f, "mmio_accesses", x->mmio_count);
		}
		const struct vm *vm = find_vm(e, x->pid);
		if (x->over_interval && vm)
			evidence_num(f, "vm_cpu_percent", DV_PERCENT, vm->cpu.cpu_percent); /* what the exits cost the host */
		evidence_str(f, "over", x->over_interval ? "interval" : "lifetime");
		advise(f, "%s", exit_kinds[top].why);
	}
}

/* The vCPU threads' CPU over the window of x (seconds), NaN unknown: polling runs in them. */
static double vcpu_cpu_seconds(const struct vm *vm, const struct doctor_exits *x)
{
	double sum = vm && vm->cpu.nvcpus ? 0 : NAN;
	for (size_t k = 0; vm && k < vm->cpu.nvcpus; k++)
		sum += x->over_interval ? vm->cpu.vcpus[k].cpu_percent / 100 * x->seconds : vm->cpu.vcpus[k].cpu_seconds;
	return sum;
}

static void check_halt_poll(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	for (size_t i = 0; i < e->nexits; i++) {
		const struct doctor_exits *x = &e->exits[i];
		double poll = x->halt_poll_ns.known ? (double)x->halt_poll_ns.v / 1e9 : NAN;
		double vcpu = vcpu_cpu_seconds(find_vm(e, x->pid), x), guest = vcpu - poll;
		if (!(poll >= (x->over_interval ? HALT_POLL_MIN_SHARE * x->seconds : HALT_POLL_MIN_SECONDS)) ||
		    !isfinite(guest) || poll <= guest)
			continue;
		struct doctor_finding *f =
			x->over_interval
				? finding_add(out, r, x->pid, x->name,
				      "KVM spent %.0f%% of a host CPU polling its halted vCPUs, more than the %.0f%% they ran the guest",
				      100 * poll / x->seconds, 100 * (guest > 0 ? guest : 0) / x->seconds)
				: finding_add(out, r, x->pid, x->name,
				      "KVM spent %.1f s of host CPU polling its halted vCPUs, more than the %.1f s they ran the guest",
				      poll, guest > 0 ? guest : 0);
		evidence_num(f, "halt_poll_seconds", DV_SECONDS, poll);
		evidence_num(f, "halt_poll_fail_seconds", DV_SECONDS, (double)x->halt_poll_fail_ns.v / 1e9);
		evidence_num(f, "vcpu_cpu_seconds", DV_SECONDS, vcpu);
		if (x->over_interval)
			evidence_num(f, "halt_poll_percent", DV_PERCENT, 100 * poll / x->seconds);
		const char *max = kvm_host_param(&e->kvm, "halt_poll_ns"), *shrink = kvm_host_param(&e->kvm, "halt_poll_ns_shrink");
		evidence_str(f, "halt_poll_ns", max ? max : "unknown");
		evidence_str(f, "halt_poll_ns_shrink", shrink ? shrink : "unknown");
		evidence_str(f, "over", x->over_interval ? "interval" : "lifetime");
		advise(f, "KVM spins up to halt_poll_ns (%s ns) after each halt in case the wake-up comes soon, here mostly "
			  "for nothing: lower it (echo 50000 > /sys/module/kvm/parameters/halt_poll_ns; 0 is off; every VM) or "
			  "back off sooner (halt_poll_ns_shrink, now %s). Per VM (no halt-poll setting in QEMU 7.2 or "
			  "libvirt 9.0): a guest with cpuidle-haltpoll and libvirt <kvm><poll-control state='on'/> polls "
			  "inside instead",
		       max ? max : "?", shrink ? shrink : "?");
	}
}

/* How to open a VM's counters, by what the reader said was in the way. */
static const char *unreadable_fix(const char *why)
{
	if (strstr(why, "libvirt"))
		return "libvirt holds its monitor: vmhost reads it through libvirt, so libvirtd must run and answer "
		       "(virsh -c qemu:///system domstats --vm NAME; another URI: --libvirt-uri), or mount debugfs "
		       "(mount -t debugfs none /sys/kernel/debug)";
	if (strstr(why, "QMP") || strstr(why, "qmp") || strstr(why, "monitor"))
		return "give QEMU a QMP socket vmhost may visit (-qmp unix:/run/NAME.qmp,server=on,wait=off; or "
		       "vmhost exits --qmp-socket PID=PATH for one elsewhere), or mount debugfs (mount -t debugfs none "
		       "/sys/kernel/debug)";
	return "mount debugfs as root (mount -t debugfs none /sys/kernel/debug): every KVM VM has a directory there; "
	       "for QEMU a QMP socket (query-stats) or libvirt also work";
}

static void check_unreadable(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	for (size_t i = 0; i < e->nunreadable; i++) {
		const struct doctor_unreadable *u = &e->unreadable[i];
		struct doctor_finding *f = finding_add(out, r, u->pid, u->name,
						       "its KVM counters (exits, halt polling) cannot be read");
		evidence_str(f, "why", u->why);
		advise(f, "%s", unreadable_fix(u->why));
	}
}

static void check_vcpu_delay(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	bool interval = e->interval_seconds > 0;
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		double run = 0, delay = 0;
		for (size_t k = 0; k < vm->cpu.nvcpus; k++) {
			const struct vcpu *c = &vm->cpu.vcpus[k];
			run += interval ? c->cpu_percent : c->cpu_seconds;
			delay += interval ? c->delay_percent : c->delay_seconds;
		}
		double busy = run + delay;
		if (!vm->cpu.nvcpus || !isfinite(busy) ||
		    busy < (interval ? VCPU_DELAY_MIN_BUSY_PERCENT : VCPU_DELAY_MIN_BUSY_SECONDS) ||
		    delay < VCPU_DELAY_SHARE * busy)
			continue;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
					       "its vCPUs were delayed (runnable, waiting for a host CPU) %.0f%% of the time they wanted one",
					       100.0 * delay / busy);
		evidence_num(f, "vcpu_delay_share_percent", DV_PERCENT, 100.0 * delay / busy);
		evidence_int(f, "vcpus", MAYBE((int64_t)vm->cpu.nvcpus));
		if (interval) {
			evidence_num(f, "vcpu_cpu_percent", DV_PERCENT, run);
			evidence_num(f, "vcpu_delay_percent", DV_PERCENT, delay);
		} else {
			evidence_num(f, "vcpu_cpu_seconds", DV_SECONDS, run);
			evidence_num(f, "vcpu_delay_seconds", DV_SECONDS, delay);
		}
		evidence_str(f, "over", interval ? "interval" : "lifetime");
		advise(f, "the guest sees this as steal time: give the host's CPUs fewer runnable threads (fewer vCPUs, "
			  "see vcpus-overcommit), pin its vCPUs apart from busy ones (virsh vcpupin, cpuset), or move it");
	}
}

static void check_overcommit(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	if (e->host_cpus <= 0)
		return;
	int64_t vcpus = 0, vms = 0;
	for (size_t i = 0; i < e->vms.n; i++) {
		vcpus += (int64_t)e->vms.vms[i].cpu.nvcpus;
		vms += e->vms.vms[i].cpu.nvcpus > 0;
	}
	if (vcpus <= e->host_cpus)
		return;
	struct doctor_finding *f = finding_add(out, r, 0, NULL,
					       "%lld vCPUs on %d host CPUs", (long long)vcpus, e->host_cpus);
	evidence_int(f, "vcpus", MAYBE(vcpus));
	evidence_int(f, "host_cpus", MAYBE(e->host_cpus));
	evidence_num(f, "ratio", DV_FLOAT, (double)vcpus / e->host_cpus);
	evidence_int(f, "vms", MAYBE(vms));
	advise(f, "fine while the guests idle; when they are busy their vCPUs wait (see vcpu-delay-high): give "
		  "guests fewer vCPUs or move some to another host");
}

/* ---- memory ---- */

/* The scope's figures, for the findings about it. */
static void ev_cgroup(struct doctor_finding *f, const struct vm *vm)
{
	evidence_bytes(f, "cgroup_memory_bytes", vm->cg.memory_bytes);
	evidence_bytes(f, "cgroup_memory_limit_bytes", vm->cg.limit_bytes);
	evidence_bytes(f, "guest_ram_bytes", vm->cfg.guest_ram_bytes);
	evidence_str(f, "cgroup", vm->cgroup ? vm->cgroup : "");
}

static void check_oom(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		if (!vm->cg.oom_kills.known || vm->cg.oom_kills.v <= 0)
			continue;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
						       "the kernel OOM-killed in this VM's cgroup %lld time%s",
					       (long long)vm->cg.oom_kills.v, vm->cg.oom_kills.v == 1 ? "" : "s");
		evidence_int(f, "oom_kills", vm->cg.oom_kills);
		ev_cgroup(f, vm);
		advise(f, "raise the scope's memory limit above guest RAM plus the VMM's overhead (libvirt "
			  "<memtune><hard_limit>, systemd MemoryMax=), or lower the guest's RAM");
	}
}

static void check_near_limit(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		const struct vm_cgroup *cg = &vm->cg;
		if (!cg->memory_bytes.known || !cg->limit_bytes.known || cg->limit_bytes.v <= 0 ||
		    (double)cg->memory_bytes.v < CGROUP_NEAR_LIMIT_SHARE * (double)cg->limit_bytes.v)
			continue;
		double pct = 100.0 * (double)cg->memory_bytes.v / (double)cg->limit_bytes.v;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
						       "its cgroup is at %.0f%% of its memory limit", pct);
		evidence_num(f, "used_percent", DV_PERCENT, pct);
		ev_cgroup(f, vm);
		advise(f, "the kernel reclaims (and then OOM-kills) inside the scope: raise its memory limit above guest "
			  "RAM plus overhead, or find what grows ('vmhost growth')");
	}
}

static void check_swap(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		if (!is_vm(vm) || !vm->mem.swap.known || (double)vm->mem.swap.v < SWAP_MIN_BYTES)
			continue;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name, "%.0f MiB of it is swapped out",
					       (double)vm->mem.swap.v / MiB);
		evidence_bytes(f, "swap_bytes", vm->mem.swap);
		evidence_bytes(f, "rss_bytes", vm->mem.rss);
		evidence_bytes(f, "guest_ram_bytes", vm->cfg.guest_ram_bytes);
		evidence_bytes(f, "mem_available_bytes", e->host.mem.mem_available);
		advise(f, "guest memory on host swap stalls the guest on every touch: free host memory (KSM, balloon, "
			  "fewer guests), or give the VM a memory limit it fits in");
	}
}

/* Dropped packets of one direction of a tap: share of what it carried there, or NaN below the floor. */
static double dropped_share(maybe_i64 dropped, maybe_i64 packets)
{
	if (!dropped.known || !packets.known || dropped.v < TAP_DROPPED_MIN)
		return NAN;
	double share = (double)dropped.v / (double)(dropped.v + packets.v);
	return share >= TAP_DROPPED_SHARE ? share : NAN;
}

static void check_tap_dropping(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		for (size_t k = 0; k < vm->io.nifaces; k++) {
			const struct vm_iface *t = &vm->io.ifaces[k];
			double to_guest = dropped_share(t->tx_dropped, t->tx_packets);
			double from_guest = dropped_share(t->rx_dropped, t->rx_packets);
			if (isnan(to_guest) && isnan(from_guest))
				continue;
			struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
							       "its tap %s dropped %.1f%% of the packets %s",
						       t->name, 100.0 * (isnan(to_guest) ? from_guest : to_guest),
						       isnan(to_guest) ? "the guest sent" : "sent to the guest");
			evidence_str(f, "interface", t->name);
			evidence_int(f, "tx_dropped", t->tx_dropped);
			evidence_int(f, "tx_packets", t->tx_packets);
			evidence_int(f, "rx_dropped", t->rx_dropped);
			evidence_int(f, "rx_packets", t->rx_packets);
			advise(f, "packets to the guest are dropped when it drains its queue too slowly: vhost=on, multiqueue "
				  "virtio-net (queues=N) and vCPUs that get a host CPU ('vcpu-wait-high'); drops from the guest "
				  "are the host's (bridge, firewall, txqueuelen)");
		}
	}
}

static void check_thp_never(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	if (strcmp(e->thp_mode, "never"))
		return;
	int64_t vms = 0;
	maybe_i64 ram = MAYBE(0);
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		if (is_vm(vm) && !ram_on_hugetlb(&vm->cfg, &vm->mem)) {
			vms++;
			ram = maybe_add(ram, vm->cfg.guest_ram_bytes);
		}
	}
	if (!vms)
		return;
	struct doctor_finding *f = finding_add(out, r, 0, NULL,
					       "guest RAM of %lld VM%s is on 4 KiB pages (THP is never)",
				       (long long)vms, vms == 1 ? "" : "s");
	evidence_str(f, "transparent_hugepage", e->thp_mode);
	evidence_int(f, "vms", MAYBE(vms));
	evidence_bytes(f, "guest_ram_bytes", ram);
	advise(f, "every guest TLB miss walks two 4 KiB page tables: echo madvise > "
		  "/sys/kernel/mm/transparent_hugepage/enabled (QEMU asks for huge pages with madvise)");
}

/* Guest RAM populated on 4 KiB pages while THP would serve it (the mode lets QEMU ask). */
static void check_small_pages(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	if (strcmp(e->thp_mode, "always") && strcmp(e->thp_mode, "madvise"))
		return;
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		maybe_i64 ram = vm->cfg.guest_ram_bytes, anon = vm->mem.rss_anon, thp = vm->thp_bytes;
		if (!is_vm(vm) || ram_on_hugetlb(&vm->cfg, &vm->mem) || !ram.known || !anon.known || !thp.known ||
		    (double)ram.v < SMALL_PAGES_MIN_GUEST_BYTES ||
		    (double)anon.v < SMALL_PAGES_MIN_ANON_SHARE * (double)ram.v ||
		    (double)thp.v > SMALL_PAGES_MAX_THP_SHARE * (double)anon.v)
			continue;
		double merged = vm->mem.ksm_merging_pages.known
					? (double)vm->mem.ksm_merging_pages.v * (double)e->host.page_size_bytes : 0;
		if (merged >= SMALL_PAGES_KSM_SHARE * (double)anon.v)
			continue; /* KSM splits the huge pages it merges from: a trade, not a mistake */
		double pct = 100.0 * (double)thp.v / (double)anon.v;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
					       "its %.1f GiB of guest RAM is on 4 KiB pages (%.1f%% on huge pages, THP %s)",
					       (double)ram.v / GiB, pct, e->thp_mode);
		evidence_bytes(f, "guest_ram_bytes", ram);
		evidence_bytes(f, "rss_anon_bytes", anon);
		evidence_bytes(f, "thp_bytes", thp);
		evidence_str(f, "thp_source", vm->cg.thp_bytes.known ? "cgroup memory.stat" : "smaps_rollup AnonHugePages");
		evidence_num(f, "thp_percent", DV_PERCENT, pct);
		evidence_str(f, "transparent_hugepage", e->thp_mode);
		evidence_int(f, "ksm_merging_pages", vm->mem.ksm_merging_pages);
		advise(f, "every guest TLB miss walks 4 KiB tables on both sides (kvm_stat's largepages 0): back guest "
			  "RAM with huge pages (QEMU -object memory-backend-file,mem-path=/dev/hugepages,prealloc=on; "
			  "libvirt <memoryBacking><hugepages/></memoryBacking>), or let THP serve it: a VMM that "
			  "madvises its RAM (QEMU does), THP defrag madvise, and enough free contiguous memory at start");
	}
}

/* "0" or "0,2": the nodes of a mask. */
static void node_list(uint64_t mask, char *buf, size_t cap)
{
	size_t w = 0;
	buf[0] = '\0';
	for (int n = 0; n < NUMA_NODES_MAX && w < cap; n++)
		if (mask >> n & 1)
			w += (size_t)snprintf(buf + w, cap - w, "%s%d", w ? "," : "", n);
}

/* Where the VM's memory sits: numa_maps (--exact) or its scope's numa_stat; 0 nodes unknown. */
static size_t vm_node_bytes(const struct vm *vm, const int64_t **ret)
{
	*ret = vm->numa.maps_known ? vm->numa.maps.bytes : vm->cg.numa_bytes;
	return vm->numa.maps_known ? vm->numa.maps.nnodes : vm->cg.numa_known ? vm->cg.numa_nodes : 0;
}

static void check_numa_remote(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	for (size_t i = 0; e->numa_nodes >= 2 && i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		const int64_t *bytes;
		size_t n = vm_node_bytes(vm, &bytes);
		if (!is_vm(vm) || !n || !vm->numa.vcpu_nodes_known || !vm->numa.vcpu_nodes)
			continue;
		double total = 0, remote = 0;
		uint64_t remote_nodes = 0;
		for (size_t k = 0; k < n; k++) {
			total += (double)bytes[k];
			if (!(vm->numa.vcpu_nodes >> k & 1) && bytes[k] > 0) {
				remote += (double)bytes[k];
				remote_nodes |= UINT64_C(1) << k;
			}
		}
		if (!(total > 0) || remote < NUMA_REMOTE_MIN_BYTES || remote < NUMA_REMOTE_SHARE * total)
			continue;
		char mem[128], cpu[128];
		node_list(remote_nodes, mem, sizeof(mem));
		node_list(vm->numa.vcpu_nodes, cpu, sizeof(cpu));
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
					       "%.0f%% of its %.1f GiB on node%s %s, its vCPUs on node%s %s",
					       100.0 * remote / total, total / GiB, strchr(mem, ',') ? "s" : "", mem,
					       strchr(cpu, ',') ? "s" : "", cpu);
		evidence_num(f, "remote_percent", DV_PERCENT, 100.0 * remote / total);
		evidence_bytes(f, "remote_bytes", bytes_of(remote));
		evidence_bytes(f, "memory_bytes", bytes_of(total));
		evidence_str(f, "memory_nodes", mem);
		evidence_str(f, "vcpu_nodes", cpu);
		evidence_str(f, "source", vm->numa.maps_known ? "numa_maps" : "numa_stat");
		evidence_bytes(f, "guest_ram_bytes", vm->cfg.guest_ram_bytes);
		advise(f, "every access from its vCPUs to that memory crosses the interconnect: bind its memory to its "
			  "vCPUs' node%s (libvirt <numatune><memory mode='strict' nodeset='%s'/>, QEMU under numactl "
			  "--cpunodebind=%s --membind=%s; move what is there with migratepages %d %s %s), or let its "
			  "vCPUs run where the memory is", strchr(cpu, ',') ? "s" : "", cpu, cpu, cpu, (int)vm->pid, mem, cpu);
	}
}

static void check_hugepages(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	const struct meminfo *m = &e->host.mem;
	if (!m->hugepages_total.known || !m->hugepages_free.known || !m->hugepage_size.known ||
	    m->hugepages_total.v <= 0)
		return;
	double unused = (double)m->hugepages_free.v * (double)m->hugepage_size.v;
	if (unused < HUGEPAGES_UNUSED_MIN_BYTES)
		return;
	int64_t users = 0;
	maybe_i64 held = MAYBE(0); /* by the VMs: status HugetlbPages */
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		if (!is_vm(vm))
			continue;
		users += ram_on_hugetlb(&vm->cfg, &vm->mem);
		held = held.known && vm->mem.hugetlb.known ? MAYBE(held.v + vm->mem.hugetlb.v) : UNKNOWN;
	}
	struct doctor_finding *f = finding_add(out, r, 0, NULL,
					       "%.1f GiB of reserved huge pages are unused", unused / GiB);
	evidence_int(f, "hugepages_total", m->hugepages_total);
	evidence_int(f, "hugepages_free", m->hugepages_free);
	evidence_bytes(f, "hugepage_size_bytes", m->hugepage_size);
	evidence_bytes(f, "unused_bytes", bytes_of(unused));
	evidence_int(f, "vms_on_hugetlbfs", MAYBE(users));
	evidence_bytes(f, "vms_hugetlb_bytes", held);
	advise(f, "reserved huge pages are lost to everything else: lower vm.nr_hugepages (sysctl -w "
		  "vm.nr_hugepages=N) to what the VMs use, or back guests with them (-object "
		  "memory-backend-file,mem-path=/dev/hugepages)");
}

static void check_balloon_inflated(const struct doctor_rule *r, const struct doctor_evidence *e,
				   struct doctor_findings *out)
{
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		if (!vm->guest || !vm->cfg.has_balloon)
			continue;
		maybe_i64 b = vm->guest->balloon_bytes, ram = vm->cfg.guest_ram_bytes;
		if (!b.known || !ram.known || ram.v <= 0 ||
		    (double)b.v >= BALLOON_INFLATED_SHARE * (double)ram.v)
			continue;
		double pct = 100.0 * (double)b.v / (double)ram.v;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
						       "its balloon leaves the guest %.0f%% of its RAM",
					       pct);
		evidence_bytes(f, "balloon_bytes", b);
		evidence_bytes(f, "guest_ram_bytes", ram);
		evidence_num(f, "balloon_percent", DV_PERCENT, pct);
		evidence_bytes(f, "guest_available_bytes", vm->guest->available_bytes);
		advise(f, "the guest runs on a fraction of its RAM: if that is what it needs, give it less (-m, virsh "
			  "setmaxmem) and save the page tables and migration time; if not, deflate: virsh setmem DOMAIN "
			  "SIZE, or QMP balloon with the guest's RAM");
	}
}

/* Why the guest's stats are missing or old, into buf, and which: "" none are missing (fresh stats,
 * or no balloon to ask). Polling off leaves the guest's last report in place, its figures frozen;
 * a report older than reclaim_stale_seconds is stale (guest_view.h: mem --guest's reclaimable is
 * null then too). */
static const char *balloon_stats_gap(const struct guest_view *g, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (!g->available_bytes.known)
		snprintf(buf, cap, "it has a balloon device but the guest reports no memory stats");
	else if (g->polling_seconds.known && g->polling_seconds.v == 0)
		snprintf(buf, cap, "its balloon's statistics polling is off: the guest's memory stats are %.0f s old",
			 g->stats_age_seconds);
	else if (g->stats_age_seconds > reclaim_stale_seconds(g->polling_seconds) && g->polling_seconds.known)
		snprintf(buf, cap, "the guest's last memory stats are %.0f s old, polled every %lld s: its balloon driver "
				   "stopped reporting", g->stats_age_seconds, (long long)g->polling_seconds.v);
	else if (g->stats_age_seconds > reclaim_stale_seconds(g->polling_seconds)) /* libvirt's: the interval unknown */
		snprintf(buf, cap, "the guest's last memory stats are %.0f s old: statistics polling is off, or its balloon "
				   "driver stopped reporting", g->stats_age_seconds);
	return buf;
}

static void check_balloon_stats(const struct doctor_rule *r, const struct doctor_evidence *e,
				struct doctor_findings *out)
{
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		/* libvirt gives a balloon size without a balloon device too: its current memory */
		if (!vm->guest || !vm->cfg.has_balloon || !vm->guest->balloon_bytes.known)
			continue;
		const struct guest_view *g = vm->guest;
		char summary[sizeof(((struct doctor_finding *)0)->summary)];
		if (!balloon_stats_gap(g, summary, sizeof(summary))[0])
			continue;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name, "%s", summary);
		evidence_bytes(f, "balloon_bytes", g->balloon_bytes);
		evidence_bytes(f, "guest_ram_bytes", vm->cfg.guest_ram_bytes);
		evidence_str(f, "balloon_id", vm->cfg.balloon_id[0] ? vm->cfg.balloon_id : "(anonymous)");
		evidence_num(f, "stats_age_seconds", DV_SECONDS, g->stats_age_seconds);
		evidence_int(f, "stats_polling_seconds", g->polling_seconds);
		/* The view's reason when it has no stats; else what mem --guest's reclaimable says. */
		evidence_str(f, "why", g->why[0] || g->reclaim.known ? g->why : g->reclaim.why);
		advise(f, "without fresh stats nobody can size the balloon from the guest's needs, nor say what the host "
			  "could take back (vmhost mem --guest's reclaimable): set the polling interval (virsh dommemstat "
			  "DOMAIN --period 10 --live --config, QMP qom-set guest-stats-polling-interval 10, or vmhost mem "
			  "--guest-poll 10) and load virtio_balloon in the guest");
	}
}

/* What mem --guest says the host could take back from a VM: NULL unless its guest reported. */
static const struct reclaim *vm_reclaim(const struct vm *vm)
{
	return is_vm(vm) && vm->guest && vm->guest->reclaim.known ? &vm->guest->reclaim : NULL;
}

/* Free page reporting off while the guest holds much free memory the host keeps resident. */
static void check_reporting_off(const struct doctor_rule *r, const struct doctor_evidence *e,
				struct doctor_findings *out)
{
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		const struct reclaim *rc = vm_reclaim(vm);
		if (!rc || rc->free_page_reporting != 0 || !rc->by_free_page_reporting.known ||
		    (double)rc->by_free_page_reporting.v < FREE_PAGE_REPORTING_MIN_BYTES)
			continue;
		double gib = (double)rc->by_free_page_reporting.v / GiB;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
					       "its guest holds %.1f GiB free that the host keeps resident: free page "
					       "reporting is off", gib);
		evidence_bytes(f, "free_page_reporting_bytes", rc->by_free_page_reporting);
		evidence_bytes(f, "reclaimable_bytes", MAYBE(rc->bytes));
		evidence_bytes(f, "reclaimable_error_bound_bytes", MAYBE(rc->error_bound_bytes));
		evidence_bytes(f, "guest_resident_bytes", rc->guest_resident_bytes);
		evidence_bytes(f, "guest_free_bytes", vm->guest->free_bytes);
		evidence_bytes(f, "balloon_bytes", vm->guest->balloon_bytes);
		evidence_bytes(f, "guest_ram_bytes", vm->cfg.guest_ram_bytes);
		evidence_num(f, "stats_age_seconds", DV_SECONDS, rc->stats_age_seconds);
		evidence_str(f, "balloon_id", vm->cfg.balloon_id[0] ? vm->cfg.balloon_id : "(anonymous)");
		advise(f, "turn free page reporting on and the guest hands back what it frees, in 2 MiB blocks within "
			  "seconds, by itself: free-page-reporting=on on its balloon (-device "
			  "virtio-balloon-pci,...,free-page-reporting=on; libvirt <memballoon model='virtio' "
			  "freePageReporting='on'>), which takes a restart of the VM, and a guest kernel of 5.7 or later; "
			  "until then inflating the balloon by %.1f GiB returns as much (virsh setmem DOMAIN SIZE, QMP "
			  "balloon)", (double)(rc->by_balloon.known ? rc->by_balloon.v : 0) / GiB);
	}
}

/* The worst case: memory the guest does not use, swapped out by the host instead of given back. */
static void check_free_in_swap(const struct doctor_rule *r, const struct doctor_evidence *e,
			       struct doctor_findings *out)
{
	for (size_t i = 0; i < e->vms.n; i++) {
		const struct vm *vm = &e->vms.vms[i];
		const struct reclaim *rc = vm_reclaim(vm);
		if (!rc || !rc->free_in_swap_bytes.known || (double)rc->free_in_swap_bytes.v < FREE_IN_SWAP_MIN_BYTES)
			continue;
		struct doctor_finding *f = finding_add(out, r, vm->pid, vm->cfg.name,
					       "up to %.0f MiB of what the host swapped out of it may be memory its guest "
					       "holds free", (double)rc->free_in_swap_bytes.v / MiB);
		evidence_bytes(f, "free_in_swap_bytes", rc->free_in_swap_bytes);
		evidence_bytes(f, "swap_bytes", vm->mem.swap);
		evidence_bytes(f, "guest_free_bytes", vm->guest->free_bytes);
		evidence_bytes(f, "balloon_bytes", vm->guest->balloon_bytes);
		evidence_bytes(f, "guest_ram_bytes", vm->cfg.guest_ram_bytes);
		evidence_str(f, "free_page_reporting", rc->free_page_reporting == 1   ? "on"
						       : rc->free_page_reporting == 0 ? "off"
										   : "unknown");
		evidence_num(f, "stats_age_seconds", DV_SECONDS, rc->stats_age_seconds);
		evidence_bytes(f, "mem_available_bytes", e->host.mem.mem_available);
		advise(f, "the host paid swap I/O to keep memory the guest does not use: give it back instead; inflating "
			  "the balloon (virsh setmem DOMAIN SIZE, QMP balloon) discards swapped pages without reading them "
			  "back, and free page reporting (free-page-reporting=on, libvirt freePageReporting='on'; a "
			  "restart) hands freed pages back before the host swaps them");
	}
}

/* The median guest RAM of the VMs here: the size the host's room is counted in; unknown without. */
static maybe_i64 typical_guest_bytes(const struct vm_list *vms)
{
	double *v = malloc((vms->n ? vms->n : 1) * sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; v && i < vms->n; i++)
		if (is_vm(&vms->vms[i]) && vms->vms[i].cfg.guest_ram_bytes.known)
			v[n++] = (double)vms->vms[i].cfg.guest_ram_bytes.v;
	double m = n ? median(v, n) : NAN;
	free(v);
	return bytes_of(m);
}

/* The VM whose guest would give back the most (the lower side of its figure), NULL none. */
static const struct vm *most_reclaimable(const struct vm_list *vms, int64_t *ret_bytes)
{
	const struct vm *top = NULL;
	*ret_bytes = 0;
	for (size_t i = 0; i < vms->n; i++) {
		const struct reclaim *rc = vm_reclaim(&vms->vms[i]);
		int64_t lo = rc ? rc->bytes - rc->error_bound_bytes : 0;
		if (lo > *ret_bytes) {
			*ret_bytes = lo;
			top = &vms->vms[i];
		}
	}
	return top;
}

/* A host under its memory reserve now, whose guests would lift it back above by what they give back. */
static void check_reclaim_room(const struct doctor_rule *r, const struct doctor_evidence *e,
			       struct doctor_findings *out)
{
	maybe_i64 size = typical_guest_bytes(&e->vms);
	struct capacity_opts o = {.size_bytes = size.known ? size.v : 0, .reserve_percent = CAPACITY_RESERVE_PERCENT,
				  .overhead_bytes = UNKNOWN, .kind = VMM_QEMU, .shared_bytes = UNKNOWN};
	struct capacity c;
	capacity_compute(&e->host, &e->vms, &o, &c);
	if (!c.mem_available_bytes.known || !c.reserve_bytes.known || !c.reclaimable_bytes.known)
		return;
	int64_t under = c.reserve_bytes.v - c.mem_available_bytes.v;
	if (under <= 0 || c.reclaimable_bytes.v < under)
		return; /* no pressure, or reclaim alone would not end it */
	bool fits = size.known && c.fit_after_reclaim.known;
	char room[96] = "";
	if (fits)
		snprintf(room, sizeof(room), ": room for %lld more %.2f GiB guest%s after reclaim, %lld now",
			 (long long)c.fit_after_reclaim.v, (double)size.v / GiB, c.fit_after_reclaim.v == 1 ? "" : "s",
			 (long long)c.fit_now.v);
	struct doctor_finding *f = finding_add(out, r, 0, NULL,
					       "MemAvailable is %.1f GiB under the %.0f%% reserve and the guests could give "
					       "back %.1f GiB%s", (double)under / GiB, CAPACITY_RESERVE_PERCENT,
					       (double)c.reclaimable_bytes.v / GiB, room);
	evidence_bytes(f, "mem_available_bytes", c.mem_available_bytes);
	evidence_bytes(f, "mem_total_bytes", e->host.mem.mem_total);
	evidence_bytes(f, "reserve_bytes", c.reserve_bytes);
	evidence_bytes(f, "under_reserve_bytes", MAYBE(under));
	evidence_bytes(f, "reclaimable_bytes", c.reclaimable_bytes);
	evidence_int(f, "reclaim_vms", MAYBE(c.reclaim_vms));
	evidence_int(f, "reclaim_unknown_vms", MAYBE(c.reclaim_unknown_vms));
	evidence_bytes(f, "size_bytes", size);
	evidence_bytes(f, "overhead_bytes_per_vm", c.overhead_bytes_per_vm);
	evidence_int(f, "fit_now", fits ? c.fit_now : UNKNOWN);
	evidence_int(f, "fit_after_reclaim", fits ? c.fit_after_reclaim : UNKNOWN);
	int64_t top_bytes;
	const struct vm *top = most_reclaimable(&e->vms, &top_bytes);
	char most[300] = "";
	if (top)
		snprintf(most, sizeof(most), "; the most from %s (pid %d): %.1f GiB", top->cfg.name[0] ? top->cfg.name : "?",
			 (int)top->pid, (double)top_bytes / GiB);
	advise(f, "take back what the guests do not use before the host swaps (vmhost mem --guest: reclaimable per VM, "
		  "by action): inflate their balloons toward what they use (virsh setmem DOMAIN SIZE, QMP balloon), "
		  "turn free page reporting on (free-page-reporting=on; a restart), or drop the guests' caches (echo 3 > "
		  "/proc/sys/vm/drop_caches in the guest)%s", most);
}

/* ---- accounting cost ---- */

static void check_smaps(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out)
{
	if (!e->nsmaps)
		return;
	double sum = 0;
	const struct doctor_smaps *slowest = &e->smaps[0];
	for (size_t i = 0; i < e->nsmaps; i++) {
		sum += e->smaps[i].seconds;
		slowest = e->smaps[i].seconds > slowest->seconds ? &e->smaps[i] : slowest;
	}
	double mean = sum / (double)e->nsmaps;
	/* The slowest read, not the mean: one VM's slow walk stalls that VM, however fast the small
	 * ones beside it are (a CI host with one big guest and a small one averaged under 10 ms). */
	if (slowest->seconds < (e->smaps_slow_seconds > 0 ? e->smaps_slow_seconds : SMAPS_SLOW_SECONDS))
		return;
	size_t vms = 0;
	for (size_t i = 0; i < e->vms.n; i++)
		vms += is_vm(&e->vms.vms[i]);
	struct doctor_finding *f = finding_add(out, r, 0, NULL,
					       "reading smaps_rollup takes up to %.1f ms per VM (%.1f on average)",
					     slowest->seconds * 1000, mean * 1000);
	evidence_int(f, "sampled_vms", MAYBE((int64_t)e->nsmaps));
	evidence_num(f, "mean_seconds", DV_SECONDS, mean);
	evidence_num(f, "max_seconds", DV_SECONDS, slowest->seconds);
	evidence_int(f, "slowest_pid", MAYBE(slowest->pid));
	evidence_bytes(f, "slowest_rss_bytes", slowest->rss_bytes);
	evidence_int(f, "vms", MAYBE((int64_t)vms));
	evidence_num(f, "all_vms_seconds", DV_SECONDS, mean * (double)vms);
	advise(f, "a poller that reads every VM's smaps_rollup (PSS) holds each VM's mm lock that long: use the "
		  "counters (vmhost mem, status and ksm_stat) or sampled PSS (vmhost mem --pss-budget) and read "
		  "smaps_rollup rarely");
}

const struct doctor_rule doctor_rules[] = {
	{"vm-oom-kills", DOCTOR_CRITICAL, NULL, check_oom, "OOM kills in a VM's cgroup"},
	{"kvm-ept-off", DOCTOR_WARNING, "ept", check_kvm_param, "kvm_intel ept off"},
	{"kvm-npt-off", DOCTOR_WARNING, "npt", check_kvm_param, "kvm_amd npt off"},
	{"kvm-vpid-off", DOCTOR_WARNING, "vpid", check_kvm_param, "kvm_intel vpid off"},
	{"kvm-apicv-off", DOCTOR_WARNING, "enable_apicv", check_kvm_param, "kvm_intel enable_apicv off"},
	{"kvm-unrestricted-guest-off", DOCTOR_WARNING, "unrestricted_guest", check_kvm_param,
	 "kvm_intel unrestricted_guest off"},
	{"vm-near-cgroup-limit", DOCTOR_WARNING, NULL, check_near_limit, "a VM's cgroup near its memory limit"},
	{"host-reclaim-would-make-room", DOCTOR_WARNING, NULL, check_reclaim_room,
	 "MemAvailable under the reserve while the guests could give back enough to end it"},
	{"vm-swapping", DOCTOR_WARNING, NULL, check_swap, "guest memory on host swap"},
	{"vm-tap-dropping", DOCTOR_WARNING, NULL, check_tap_dropping, "a VM's tap dropping packets"},
	{"vm-numa-remote-memory", DOCTOR_WARNING, NULL, check_numa_remote,
	 "a VM's memory on NUMA nodes its vCPUs do not run on"},
	{"vcpu-delay-high", DOCTOR_WARNING, NULL, check_vcpu_delay, "vCPUs waiting for host CPUs"},
	{"vm-overhead-growing", DOCTOR_WARNING, NULL, check_growth, "a VM flagged by 'vmhost growth' (--db)"},
	{"ksm-cpu-without-gain", DOCTOR_WARNING, NULL, check_ksm_cpu, "ksmd CPU for little or no gain"},
	{"vm-ksm-copy-stalls", DOCTOR_WARNING, NULL, check_ksm_copy_stalls,
	 "a guest stalled on copies of KSM's merged pages beyond what KSM saves it"},
	{"ksm-tuners-fighting", DOCTOR_WARNING, NULL, check_ksm_tuners, "ksmtuned and the KSM advisor or vmhost ksm tune both tuning"},
	{"hugepages-unused", DOCTOR_WARNING, NULL, check_hugepages, "reserved huge pages left unused"},
	{"accounting-smaps-slow", DOCTOR_WARNING, NULL, check_smaps, "smaps_rollup slow per VM"},
	{"vm-balloon-inflated", DOCTOR_INFO, NULL, check_balloon_inflated, "a balloon leaving the guest under half its RAM"},
	{"vm-balloon-no-stats", DOCTOR_INFO, NULL, check_balloon_stats,
	 "a balloon device without the guest's stats, or with polling off or stale"},
	{"vm-free-page-reporting-off", DOCTOR_INFO, NULL, check_reporting_off,
	 "free page reporting off while the guest holds much free memory resident on the host"},
	{"vm-guest-free-in-swap", DOCTOR_INFO, NULL, check_free_in_swap,
	 "guest-free memory the host may hold in swap (the worst case)"},
	{"ksm-stopped-with-guests", DOCTOR_INFO, NULL, check_ksm_stopped, "KSM stopped while guests could merge"},
	{"vm-ksm-unmergeable", DOCTOR_INFO, NULL, check_unmergeable, "a VM whose RAM KSM cannot merge, and why"},
	{"vm-ksm-no-yield", DOCTOR_INFO, NULL, check_no_yield, "a VM ksmd scans while none of its pages merge"},
	{"ksm-merge-across-nodes", DOCTOR_INFO, NULL, check_merge_across_nodes, "KSM merging across NUMA nodes"},
	{"ksm-zero-pages-chained", DOCTOR_INFO, NULL, check_zero_pages, "use_zero_pages off while KSM chains pages"},
	{"kvm-nested-unused", DOCTOR_INFO, NULL, check_nested, "nested on while no guest offers VMX"},
	{"vm-exits-dominated", DOCTOR_INFO, NULL, check_exits, "a VM's exits dominated by I/O, MMIO, halt or emulation"},
	{"vm-halt-polling", DOCTOR_INFO, NULL, check_halt_poll, "a VM whose halted vCPUs KVM polls more than they run"},
	{"vm-kvm-counters-unreadable", DOCTOR_INFO, NULL, check_unreadable, "a VM whose KVM counters no source can read"},
	{"vcpus-overcommit", DOCTOR_INFO, NULL, check_overcommit, "more vCPUs than host CPUs"},
	{"thp-never", DOCTOR_INFO, NULL, check_thp_never, "guest RAM on 4 KiB pages: THP never"},
	{"vm-ram-small-pages", DOCTOR_INFO, NULL, check_small_pages,
	 "a large guest's RAM on 4 KiB pages while THP could serve it"},
};
const size_t doctor_nrules = ELEMENTSOF(doctor_rules);

/* Old ids, accepted for one release (docs/doctor.md). */
static const struct {
	const char *old, *id;
} rule_aliases[] = {
	{"vcpu-wait-high", "vcpu-delay-high"},
};

const struct doctor_rule *doctor_rule_find(const char *id, bool *ret_deprecated)
{
	bool deprecated = false;
	for (size_t a = 0; a < ELEMENTSOF(rule_aliases); a++)
		if (!strcmp(id, rule_aliases[a].old)) {
			id = rule_aliases[a].id;
			deprecated = true;
		}
	for (size_t i = 0; i < doctor_nrules; i++)
		if (!strcmp(doctor_rules[i].id, id)) {
			if (ret_deprecated)
				*ret_deprecated = deprecated;
			return &doctor_rules[i];
		}
	return NULL;
}

int doctor_check(const struct doctor_evidence *e, struct doctor_findings *ret)
{
	struct doctor_findings f = {0};
	for (size_t i = 0; i < doctor_nrules; i++)
		doctor_rules[i].check(&doctor_rules[i], e, &f);
	if (f.err) {
		doctor_findings_free(&f);
		return f.err;
	}
	/* Severity first; within one, the order rules and VMs were checked in (a stable bucket pass). */
	struct doctor_finding *sorted = f.n ? malloc(f.n * sizeof(*sorted)) : NULL;
	if (f.n && !sorted) {
		doctor_findings_free(&f);
		return -ENOMEM;
	}
	size_t w = 0;
	for (int s = DOCTOR_CRITICAL; s >= DOCTOR_INFO; s--)
		for (size_t i = 0; i < f.n; i++)
			if ((int)f.v[i].severity == s)
				sorted[w++] = f.v[i];
	free(f.v);
	f.v = sorted;
	f.cap = f.n;
	*ret = f;
	return 0;
}

void doctor_findings_free(struct doctor_findings *f)
{
	free(f->v);
	f->v = NULL;
	f->n = f->cap = 0;
}
