#include "out/vm_table.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "out/fmt.h"
#include "out/json.h"

static const char *or_null(const char *s) { return s && s[0] ? s : NULL; }

/* The vCPUs as a JSON array, written when the table is printed. */
static void vcpus_json(struct json *j, const char *key, const void *value)
{
	const struct vm_cpu *cpu = value;
	json_array_begin(j, key);
	for (size_t i = 0; i < cpu->nvcpus; i++) {
		const struct vcpu *v = &cpu->vcpus[i];
		json_object_begin(j, NULL);
		json_int(j, "index", v->index);
		json_int(j, "tid", v->tid);
		json_double(j, "cpu_seconds", v->cpu_seconds);
		json_double(j, "delay_seconds", v->delay_seconds);
		json_double(j, "cpu_percent", v->cpu_percent);
		json_double(j, "delay_percent", v->delay_percent);
		json_double(j, "sched_wait_seconds", v->sched_wait_seconds);
		json_double(j, "wait_seconds", v->delay_seconds); /* deprecated aliases, for one release */
		json_double(j, "wait_percent", v->delay_percent);
		json_double(j, "stall_seconds", v->stall_seconds);
		json_object_end(j);
	}
	json_array_end(j);
}

/* The VM's taps as a JSON array (as the host sees them: rx is what the guest sent). */
static void ifaces_json(struct json *j, const char *key, const void *value)
{
	const struct vm_io *io = value;
	json_array_begin(j, key);
	for (size_t i = 0; i < io->nifaces; i++) {
		const struct vm_iface *f = &io->ifaces[i];
		json_object_begin(j, NULL);
		json_string(j, "name", f->name);
		json_maybe(j, "rx_bytes", f->rx_bytes);
		json_maybe(j, "tx_bytes", f->tx_bytes);
		json_maybe(j, "rx_packets", f->rx_packets);
		json_maybe(j, "tx_packets", f->tx_packets);
		json_maybe(j, "rx_dropped", f->rx_dropped);
		json_maybe(j, "tx_dropped", f->tx_dropped);
		json_maybe(j, "rx_errors", f->rx_errors);
		json_maybe(j, "tx_errors", f->tx_errors);
		json_double(j, "rx_bytes_per_second", f->rx_bytes_per_second);
		json_double(j, "tx_bytes_per_second", f->tx_bytes_per_second);
		json_string(j, "unavailable", f->why[0] ? f->why : NULL);
		json_object_end(j);
	}
	json_array_end(j);
}

/* The VM's disks as a JSON array, as QEMU counts them (query-blockstats or libvirt's block stats). */
static void disks_json(struct json *j, const char *key, const void *value)
{
	const struct vm_disks *d = value;
	json_array_begin(j, key);
	for (size_t i = 0; i < d->n; i++) {
		const struct vm_disk *k = &d->d[i];
		json_object_begin(j, NULL);
		json_string(j, "device", k->device);
		json_string(j, "node_name", or_null(k->node_name));
		json_string(j, "cache", or_null(k->cache));
		json_string(j, "aio", or_null(k->aio));
		json_maybe(j, "read_bytes", k->read_bytes);
		json_maybe(j, "write_bytes", k->write_bytes);
		json_maybe(j, "read_ops", k->read_ops);
		json_maybe(j, "write_ops", k->write_ops);
		json_maybe(j, "flush_ops", k->flush_ops);
		/* QEMU counts nanoseconds: all of them, as a total must add up. */
		json_fixed(j, "read_seconds", k->read_seconds, 9);
		json_fixed(j, "write_seconds", k->write_seconds, 9);
		json_fixed(j, "flush_seconds", k->flush_seconds, 9);
		json_double(j, "read_latency_seconds", vm_disk_latency(k->read_seconds, k->read_ops));
		json_double(j, "write_latency_seconds", vm_disk_latency(k->write_seconds, k->write_ops));
		json_object_end(j);
	}
	json_array_end(j);
}

/* Bytes per node as {"0": bytes, ...}. */
static void nodes_json(struct json *j, const char *key, const int64_t *bytes, size_t n)
{
	json_object_begin(j, key);
	for (size_t i = 0; i < n; i++) {
		char node[24];
		snprintf(node, sizeof(node), "%zu", i);
		json_int(j, node, bytes[i]);
	}
	json_object_end(j);
}

/* Where the VM's memory sits (its scope's numa_stat, or with --exact its numa_maps, whose huge
 * pages are also apart) and the nodes its vCPUs may run on: {"nodes": {"0": bytes, ...},
 * "vcpu_nodes": [0], ...}, each unknown one null with its reason. */
static void numa_json(struct json *j, const char *key, const void *value)
{
	const struct vm *vm = value;
	const struct vm_cgroup *cg = &vm->cg;
	const struct vm_numa *n = &vm->numa;
	bool exact = n->maps_known || n->maps_why[0];
	json_object_begin(j, key);
	if (n->maps_known)
		nodes_json(j, "nodes", n->maps.bytes, n->maps.nnodes);
	else if (!exact && cg->numa_known)
		nodes_json(j, "nodes", cg->numa_bytes, cg->numa_nodes);
	else
		json_null(j, "nodes");
	json_string(j, "nodes_source", n->maps_known ? "numa_maps" : !exact && cg->numa_known ? "numa_stat" : NULL);
	json_string(j, "nodes_unavailable", exact ? or_null(n->maps_why)
					    : cg->numa_known ? NULL
					    : vm->vm_scope ? "no memory.numa_stat in its cgroup scope"
							   : "no cgroup scope of its own");
	if (n->maps_known)
		nodes_json(j, "hugetlb_nodes", n->maps.hugetlb_bytes, n->maps.nnodes);
	else
		json_null(j, "hugetlb_nodes");
	if (n->vcpu_nodes_known) {
		json_array_begin(j, "vcpu_nodes");
		for (int i = 0; i < NUMA_NODES_MAX; i++)
			if (n->vcpu_nodes >> i & 1)
				json_int(j, NULL, i);
		json_array_end(j);
	} else {
		json_null(j, "vcpu_nodes");
	}
	json_string(j, "vcpu_nodes_unavailable", n->vcpu_nodes_known ? NULL : n->vcpu_nodes_why);
	json_object_end(j);
}

const struct col vm_cols[VMC_NCOLS] = {
	[VMC_PID] = {"pid", "PID", COL_INT, 0, 0},
	[VMC_NAME] = {"name", "NAME", COL_STR, 0, 0},
	[VMC_VMM] = {"vmm", "VMM", COL_STR, 0, 0},
	[VMC_UUID] = {"uuid", "UUID", COL_STR, COL_JSON_ONLY, 0},
	[VMC_CGROUP] = {"cgroup", "CGROUP", COL_STR, COL_JSON_ONLY, 0},
	[VMC_HELPERS] = {"helpers", "HELPERS", COL_INT, COL_JSON_ONLY, 0},
	[VMC_GUEST_RAM] = {"guest_ram_bytes", "GUEST RAM", COL_BYTES, 0, 0},
	[VMC_RSS] = {"rss_bytes", "RSS", COL_BYTES, 0, 0},
	[VMC_RSS_ANON] = {"rss_anon_bytes", "ANON", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_RSS_FILE] = {"rss_file_bytes", "FILE", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_RSS_SHMEM] = {"rss_shmem_bytes", "SHMEM", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_SWAP] = {"swap_bytes", "SWAP", COL_BYTES, 0, 0},
	[VMC_KSM_MERGING] = {"ksm_merging_pages", "KSM PAGES", COL_INT, 0, 0},
	[VMC_KSM_ZERO] = {"ksm_zero_pages", "KSM ZERO", COL_INT, COL_JSON_ONLY, 0},
	[VMC_KSM_PROFIT] = {"ksm_profit_bytes", "KSM PROFIT", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_KSM_SAVED] = {"ksm_saved_bytes", "KSM SAVES", COL_BYTES, 0, 0},
	[VMC_PSS] = {"pss_bytes", "PSS", COL_BYTES, 0, 0},
	[VMC_PSS_METHOD] = {"pss_method", "PSS BY", COL_STR, COL_JSON_ONLY, 0},
	[VMC_PSS_BOUND] = {"pss_error_bound_bytes", "PSS +-", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_HUGETLB] = {"hugetlb_bytes", "HUGETLB", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_HUGETLB_PRIVATE] = {"hugetlb_private_bytes", "HUGETLB PRIVATE", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_HUGETLB_SHARED] = {"hugetlb_shared_bytes", "HUGETLB SHARED", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_MEMORY_COST] = {"memory_cost_bytes", "COST", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_OVERHEAD] = {"overhead_bytes", "OVERHEAD", COL_BYTES, 0, 0},
	[VMC_OVERHEAD_METHOD] = {"overhead_method", "OVERHEAD BY", COL_STR, COL_JSON_ONLY, 0},
	[VMC_CPU_PCT] = {"cpu_percent", "CPU%", COL_FLOAT, 0, 1},
	[VMC_DELAY_PCT] = {"vcpu_delay_percent", "DELAY%", COL_FLOAT, 0, 1},
	[VMC_CPU] = {"cpu_seconds", "CPU TIME", COL_FLOAT, COL_JSON_ONLY, 2},
	[VMC_VCPU_DELAY] = {"vcpu_delay_seconds", "VCPU DELAY", COL_FLOAT, COL_JSON_ONLY, 2},
	[VMC_WAIT_PCT_ALIAS] = {"vcpu_wait_percent", "", COL_FLOAT, COL_JSON_ONLY | COL_ALIAS, 1},
	[VMC_VCPU_WAIT_ALIAS] = {"vcpu_wait_seconds", "", COL_FLOAT, COL_JSON_ONLY | COL_ALIAS, 2},
	[VMC_VCPUS] = {"vcpus", "VCPUS", COL_STR, COL_JSON_ONLY, 0, vcpus_json},
	[VMC_CG_MEM] = {"cgroup_memory_bytes", "CGROUP MEM", COL_BYTES, 0, 0},
	[VMC_CG_LIMIT] = {"cgroup_memory_limit_bytes", "LIMIT", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_OOM] = {"oom_kills", "OOM KILLS", COL_INT, COL_JSON_ONLY, 0},
	[VMC_CG_HUGETLB] = {"cgroup_hugetlb_bytes", "CGROUP HUGETLB", COL_BYTES, COL_JSON_ONLY, 0},
#define PRESSURE_COLS(k, name)                                                                            \
	[VMC_PRESSURE + 4 * (k) + 0] = {"pressure." name ".some_avg10", "", COL_FLOAT, COL_JSON_ONLY, 2},       \
	[VMC_PRESSURE + 4 * (k) + 1] = {"pressure." name ".full_avg10", "", COL_FLOAT, COL_JSON_ONLY, 2},       \
	[VMC_PRESSURE + 4 * (k) + 2] = {"pressure." name ".some_seconds", "", COL_FLOAT, COL_JSON_ONLY, 2},     \
	[VMC_PRESSURE + 4 * (k) + 3] = {"pressure." name ".full_seconds", "", COL_FLOAT, COL_JSON_ONLY, 2}
	PRESSURE_COLS(PRESSURE_MEMORY, "memory"),
	PRESSURE_COLS(PRESSURE_CPU, "cpu"),
	PRESSURE_COLS(PRESSURE_IO, "io"),
#undef PRESSURE_COLS
	[VMC_KSM_MERGEABLE] = {"ksm_mergeable", "MERGEABLE", COL_STR, COL_JSON_ONLY, 0},
	[VMC_KSM_REASON] = {"ksm_unmergeable_reason", "NOT MERGED BECAUSE", COL_STR, COL_JSON_ONLY, 0},
	[VMC_BALLOON] = {"balloon_bytes", "BALLOON", COL_BYTES, 0, 0},
	[VMC_GUEST_AVAIL] = {"guest_available_bytes", "GUEST AVAIL", COL_BYTES, 0, 0},
	[VMC_GUEST_FREE] = {"guest_free_bytes", "GUEST FREE", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_GUEST_CACHES] = {"guest_caches_bytes", "GUEST CACHES", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_GUEST_WHY] = {"guest_unavailable", "GUEST VIEW", COL_STR, COL_JSON_ONLY, 0},
	[VMC_KSM_RMAP] = {"ksm_rmap_items", "KSM TRACKED", COL_INT, COL_JSON_ONLY, 0},
	[VMC_KSM_YIELD] = {"ksm_yield", "KSM YIELD", COL_FLOAT, COL_JSON_ONLY, 3},
	[VMC_KSMD_SHARE] = {"ksmd_cpu_share", "KSMD SHARE", COL_FLOAT, COL_JSON_ONLY, 3},
	[VMC_IO_READ] = {"io.read_bytes", "IO READ", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_IO_WRITE] = {"io.write_bytes", "IO WRITE", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_IO_RCHAR] = {"io.read_chars", "IO RCHAR", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_IO_WCHAR] = {"io.write_chars", "IO WCHAR", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_IO_READ_RATE] = {"io.read_bytes_per_second", "READ/S", COL_FLOAT, COL_JSON_ONLY, 0},
	[VMC_IO_WRITE_RATE] = {"io.write_bytes_per_second", "WRITE/S", COL_FLOAT, COL_JSON_ONLY, 0},
	[VMC_IO_CG_READ] = {"io.cgroup_read_bytes", "CGROUP READ", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_IO_CG_WRITE] = {"io.cgroup_write_bytes", "CGROUP WRITE", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_IO_WHY] = {"io_unavailable", "IO", COL_STR, COL_JSON_ONLY, 0},
	[VMC_IFACES] = {"interfaces", "INTERFACES", COL_STR, COL_JSON_ONLY, 0, ifaces_json},
	[VMC_IFACES_WHY] = {"interfaces_unavailable", "INTERFACES", COL_STR, COL_JSON_ONLY, 0},
	[VMC_THP] = {"thp_bytes", "THP", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_NUMA] = {"numa", "NUMA", COL_STR, COL_JSON_ONLY, 0, numa_json},
	[VMC_DISKS] = {"disks", "DISKS", COL_STR, COL_JSON_ONLY, 0, disks_json},
	[VMC_DISKS_SOURCE] = {"disks_source", "DISKS FROM", COL_STR, COL_JSON_ONLY, 0},
	[VMC_DISKS_WHY] = {"disks_unavailable", "DISKS", COL_STR, COL_JSON_ONLY, 0},
	[VMC_HALT_POLL] = {"halt_poll_seconds", "HALT POLL", COL_FLOAT, COL_JSON_ONLY, 3},
	[VMC_BALLOON_MAX] = {"balloon_maximum_bytes", "BALLOON MAX", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_UID] = {"uid", "UID", COL_INT, COL_JSON_ONLY, 0},
	[VMC_MONITOR_SOURCE] = {"monitor.source", "MONITOR", COL_STR, COL_JSON_ONLY, 0},
	[VMC_MONITOR_TRUSTED] = {"monitor.trusted", "MONITOR TRUSTED", COL_BOOL, COL_JSON_ONLY, 0},
	[VMC_MONITOR_WHY] = {"monitor.why", "MONITOR WHY", COL_STR, COL_JSON_ONLY, 0},
#define STALL_COL(k, name) [VMC_STALLS + (k)] = {"stalls." name "_seconds", "", COL_FLOAT, COL_JSON_ONLY, 6}
	STALL_COL(STALL_WPCOPY, "wpcopy"), STALL_COL(STALL_SWAPIN, "swapin"), STALL_COL(STALL_RECLAIM, "reclaim"),
	STALL_COL(STALL_THRASHING, "thrashing"), STALL_COL(STALL_COMPACT, "compact"), STALL_COL(STALL_IRQ, "irq"),
#undef STALL_COL
	[VMC_STALLS + STALL_NKINDS] = {"stalls.wpcopy_count", "", COL_INT, COL_JSON_ONLY, 0},
	[VMC_STALLS + STALL_NKINDS + 1] = {"stalls.stall_percent", "STALL%", COL_FLOAT, COL_JSON_ONLY, 2},
	[VMC_STALLS_WHY] = {"stalls_why", "STALLS", COL_STR, COL_JSON_ONLY, 0},
	[VMC_KSM_NET_SAVED] = {"ksm_net.saved_bytes", "", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_KSM_NET_KSMD] = {"ksm_net.ksmd_cpu_seconds", "", COL_FLOAT, COL_JSON_ONLY, 6},
	[VMC_KSM_NET_COPY] = {"ksm_net.copy_stall_seconds", "", COL_FLOAT, COL_JSON_ONLY, 6},
	[VMC_RECLAIM] = {"reclaimable.bytes", "RECLAIM", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_RECLAIM_BOUND] = {"reclaimable.error_bound_bytes", "RECLAIM +-", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_RECLAIM_AGE] = {"reclaimable.stats_age_seconds", "STATS AGE", COL_FLOAT, COL_JSON_ONLY, 1},
	[VMC_RECLAIM_BALLOON] = {"reclaimable.by.balloon", "BY BALLOON", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_RECLAIM_FPR] = {"reclaimable.by.free_page_reporting", "BY REPORTING", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_RECLAIM_CACHES] = {"reclaimable.by.drop_caches", "BY DROP CACHES", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_RECLAIM_FPR_ON] = {"reclaimable.free_page_reporting", "REPORTING", COL_BOOL, COL_JSON_ONLY, 0},
	[VMC_RECLAIM_POLLING] = {"reclaimable.stats_polling_seconds", "STATS POLL", COL_INT, COL_JSON_ONLY, 0},
	[VMC_RECLAIM_RESIDENT] = {"reclaimable.guest_resident_bytes", "GUEST RESIDENT", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_RECLAIM_FREE_IN_SWAP] = {"reclaimable.free_in_swap_bytes", "FREE IN SWAP", COL_BYTES, COL_JSON_ONLY, 0},
	[VMC_RECLAIM_WHY] = {"reclaimable_why", "RECLAIM WHY", COL_STR, COL_JSON_ONLY, 0},
	[VMC_SWAP_PSS] = {"swap_pss_bytes", "SWAP PSS", COL_BYTES, COL_JSON_ONLY, 0},
};

void vm_cols_hugetlb(struct col *cols, const struct vm_list *vms)
{
	for (size_t i = 0; i < vms->n; i++) {
		if (vms->vms[i].mem.hugetlb.known && vms->vms[i].mem.hugetlb.v > 0) {
			cols[VMC_HUGETLB].flags &= ~(unsigned)COL_JSON_ONLY;
			cols[VMC_MEMORY_COST].flags &= ~(unsigned)COL_JSON_ONLY;
			return;
		}
	}
}

static void vm_io_row(struct table *t, const struct vm_io *io)
{
	table_set_maybe(t, VMC_IO_READ, io->read_bytes);
	table_set_maybe(t, VMC_IO_WRITE, io->write_bytes);
	table_set_maybe(t, VMC_IO_RCHAR, io->read_chars);
	table_set_maybe(t, VMC_IO_WCHAR, io->write_chars);
	table_set_float(t, VMC_IO_READ_RATE, io->read_bytes_per_second);
	table_set_float(t, VMC_IO_WRITE_RATE, io->write_bytes_per_second);
	table_set_maybe(t, VMC_IO_CG_READ, io->cgroup_read_bytes);
	table_set_maybe(t, VMC_IO_CG_WRITE, io->cgroup_write_bytes);
	table_set_str(t, VMC_IO_WHY, io->why[0] ? io->why : NULL);
	table_set_value(t, VMC_IFACES, io->ifaces_known ? io : NULL); /* null: the fds could not be read */
	table_set_str(t, VMC_IFACES_WHY, io->ifaces_known ? NULL : io->ifaces_why);
}

/* What memory pressure and KSM cost the guest: its stalls (null with the reason where delay
 * accounting is not read) and KSM's net worth (its costs over an interval only). */
static void vm_stalls_row(struct table *t, const struct vm *vm)
{
	const struct vm_stalls *s = &vm->stalls;
	if (s->all.known) {
		for (int k = 0; k < STALL_NKINDS; k++)
			table_set_float(t, VMC_STALLS + (size_t)k, s->all.seconds[k]);
		if (s->all.count[STALL_WPCOPY] >= 0)
			table_set_int(t, VMC_STALLS + STALL_NKINDS, s->all.count[STALL_WPCOPY]);
		table_set_float(t, VMC_STALLS + STALL_NKINDS + 1, s->stall_percent);
	} else {
		table_set_str(t, VMC_STALLS_WHY, s->why[0] ? s->why : "not read");
	}
	table_set_maybe(t, VMC_KSM_NET_SAVED, vm->ksm_saved_bytes);
	table_set_float(t, VMC_KSM_NET_KSMD, s->ksmd_cpu_seconds);
	table_set_float(t, VMC_KSM_NET_COPY, s->copy_stall_seconds);
}

/* Whose process the VM is, and whether vmhost speaks to its monitor (and why not). */
static void vm_owner_row(struct table *t, const struct vm *vm)
{
	table_set_maybe(t, VMC_UID, vm->mem.uid);
	table_set_str(t, VMC_MONITOR_SOURCE, vm_monitor_source_name(vm->monitor.source));
	if (vm->monitor.trusted >= 0)
		table_set_bool(t, VMC_MONITOR_TRUSTED, vm->monitor.trusted);
	table_set_str(t, VMC_MONITOR_WHY, or_null(vm->monitor.why));
}

/* Known-or-not columns of a struct: each column's field, by its offset. */
struct maybe_col {
	size_t col, offset;
};
static void set_maybes(struct table *t, const void *base, const struct maybe_col *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		table_set_maybe(t, c[i].col, *(const maybe_i64 *)((const char *)base + c[i].offset));
}

/* The guest's view (NULL: not asked), and what the host could take back: null as a whole, with the
 * reason, where the guest does not report. */
static void vm_guest_row(struct table *t, const struct guest_view *g)
{
	static const struct maybe_col view[] = {
		{VMC_BALLOON, offsetof(struct guest_view, balloon_bytes)},
		{VMC_BALLOON_MAX, offsetof(struct guest_view, maximum_bytes)},
		{VMC_GUEST_AVAIL, offsetof(struct guest_view, available_bytes)},
		{VMC_GUEST_FREE, offsetof(struct guest_view, free_bytes)},
		{VMC_GUEST_CACHES, offsetof(struct guest_view, caches_bytes)},
	};
	static const struct maybe_col reclaim[] = {
		{VMC_RECLAIM_BALLOON, offsetof(struct reclaim, by_balloon)},
		{VMC_RECLAIM_FPR, offsetof(struct reclaim, by_free_page_reporting)},
		{VMC_RECLAIM_CACHES, offsetof(struct reclaim, by_drop_caches)},
		{VMC_RECLAIM_POLLING, offsetof(struct reclaim, stats_polling_seconds)},
		{VMC_RECLAIM_RESIDENT, offsetof(struct reclaim, guest_resident_bytes)},
		{VMC_RECLAIM_FREE_IN_SWAP, offsetof(struct reclaim, free_in_swap_bytes)},
	};
	if (!g) {
		table_set_str(t, VMC_RECLAIM_WHY, "not asked: --guest reads what each guest reports");
		return;
	}
	set_maybes(t, g, view, sizeof(view) / sizeof(view[0]));
	table_set_str(t, VMC_GUEST_WHY, g->why[0] ? g->why : NULL);
	const struct reclaim *r = &g->reclaim;
	if (!r->known) {
		table_set_str(t, VMC_RECLAIM_WHY, r->why);
		return;
	}
	table_set_int(t, VMC_RECLAIM, r->bytes);
	table_set_int(t, VMC_RECLAIM_BOUND, r->error_bound_bytes);
	table_set_float(t, VMC_RECLAIM_AGE, r->stats_age_seconds);
	set_maybes(t, r, reclaim, sizeof(reclaim) / sizeof(reclaim[0]));
	if (r->free_page_reporting >= 0)
		table_set_bool(t, VMC_RECLAIM_FPR_ON, r->free_page_reporting);
}

void vm_table_row(struct table *t, const struct vm *vm, const struct host *host)
{
	table_add_row(t);
	table_set_int(t, VMC_PID, vm->pid);
	table_set_str(t, VMC_NAME, or_null(vm->cfg.name));
	table_set_str(t, VMC_VMM, vmm_kind_name(vm->cfg.vmm));
	table_set_str(t, VMC_UUID, or_null(vm->cfg.uuid));
	table_set_str(t, VMC_CGROUP, or_null(vm->cgroup));
	table_set_int(t, VMC_HELPERS, (int64_t)vm->nhelpers);
	vm_owner_row(t, vm);
	table_set_maybe(t, VMC_GUEST_RAM, vm->cfg.guest_ram_bytes);
	table_set_maybe(t, VMC_RSS, vm->mem.rss);
	table_set_maybe(t, VMC_RSS_ANON, vm->mem.rss_anon);
	table_set_maybe(t, VMC_RSS_FILE, vm->mem.rss_file);
	table_set_maybe(t, VMC_RSS_SHMEM, vm->mem.rss_shmem);
	table_set_maybe(t, VMC_SWAP, vm->mem.swap);
	table_set_maybe(t, VMC_SWAP_PSS, vm->swap_pss_bytes);
	table_set_maybe(t, VMC_KSM_MERGING, vm->mem.ksm_merging_pages);
	table_set_maybe(t, VMC_KSM_ZERO, vm->mem.ksm_zero_pages);
	table_set_maybe(t, VMC_KSM_PROFIT, vm->mem.ksm_profit);
	table_set_maybe(t, VMC_KSM_SAVED, vm->ksm_saved_bytes);
	table_set_maybe(t, VMC_KSM_RMAP, vm->mem.ksm_rmap_items);
	table_set_float(t, VMC_KSM_YIELD, ksm_vm_yield(&vm->mem));
	table_set_float(t, VMC_KSMD_SHARE, ksmd_vm_cpu_share(&vm->mem, &host->ksm));
	table_set_maybe(t, VMC_PSS, vm->pss_bytes);
	table_set_str(t, VMC_PSS_METHOD, vm->pss_bytes.known ? measure_method_name(vm->pss_method) : NULL);
	table_set_maybe(t, VMC_PSS_BOUND, vm->pss_bound_bytes);
	table_set_maybe(t, VMC_HUGETLB, vm->mem.hugetlb);
	table_set_maybe(t, VMC_HUGETLB_PRIVATE, vm->hugetlb_private_bytes);
	table_set_maybe(t, VMC_HUGETLB_SHARED, vm->hugetlb_shared_bytes);
	table_set_maybe(t, VMC_MEMORY_COST, vm_memory_cost(vm));
	table_set_maybe(t, VMC_OVERHEAD, vm->overhead_bytes);
	table_set_str(t, VMC_OVERHEAD_METHOD,
		      vm->overhead_bytes.known ? measure_method_name(vm->overhead_method) : NULL);
	const struct vm_cpu *cpu = &vm->cpu;
	table_set_float(t, VMC_CPU_PCT, cpu->cpu_percent);
	table_set_float(t, VMC_DELAY_PCT, cpu->vcpu_delay_percent);
	table_set_float(t, VMC_CPU, cpu->cpu_seconds);
	table_set_float(t, VMC_VCPU_DELAY, cpu->vcpu_delay_seconds);
	table_set_float(t, VMC_WAIT_PCT_ALIAS, cpu->vcpu_delay_percent);
	table_set_float(t, VMC_VCPU_WAIT_ALIAS, cpu->vcpu_delay_seconds);
	table_set_value(t, VMC_VCPUS, cpu->vcpus_known ? cpu : NULL); /* null: the thread list was not read */
	const struct vm_cgroup *cg = &vm->cg;
	table_set_maybe(t, VMC_CG_MEM, cg->memory_bytes);
	table_set_maybe(t, VMC_CG_LIMIT, cg->limit_bytes);
	table_set_maybe(t, VMC_OOM, cg->oom_kills);
	table_set_maybe(t, VMC_CG_HUGETLB, cg->hugetlb_bytes);
	table_set_maybe(t, VMC_THP, vm->thp_bytes);
	table_set_float(t, VMC_HALT_POLL, vm->halt_poll_ns.known ? (double)vm->halt_poll_ns.v / 1e9 : NAN);
	table_set_value(t, VMC_NUMA, vm);
	for (int k = 0; k < PRESSURE_NKINDS; k++) {
		if (!cg->have_pressure[k])
			continue;
		const struct pressure *pr = &cg->pressure[k];
		table_set_float(t, VMC_PRESSURE + 4 * k + 0, pr->some_avg10);
		table_set_float(t, VMC_PRESSURE + 4 * k + 1, pr->full_avg10);
		table_set_float(t, VMC_PRESSURE + 4 * k + 2, pr->some_seconds);
		table_set_float(t, VMC_PRESSURE + 4 * k + 3, pr->full_seconds);
	}
	maybe_i64 mergeable = ksm_vm_mergeable(&vm->cfg, &vm->mem, &host->ksm);
	if (mergeable.known)
		table_set_bool(t, VMC_KSM_MERGEABLE, mergeable.v);
	table_set_str(t, VMC_KSM_REASON, ksm_unmergeable_reason(&vm->cfg, &vm->mem, &host->ksm));
	vm_io_row(t, &vm->io);
	const struct vm_disks *d = vm->disks;
	table_set_value(t, VMC_DISKS, d && d->known ? d : NULL); /* null: not asked, or not read */
	table_set_str(t, VMC_DISKS_SOURCE, d && d->known ? d->source : NULL);
	table_set_str(t, VMC_DISKS_WHY, !d ? "not asked: --io reads each QEMU's disks" : d->why[0] ? d->why : NULL);
	vm_stalls_row(t, vm);
	vm_guest_row(t, vm->guest);
}

/* The host's memory and KSM: the overview's two lines, mem's "host" and "ksm" objects. */
const char *const kvm_key_params[] = {"ept", "vpid", "enable_apicv", "unrestricted_guest", "pml", "nested"};
const size_t kvm_nkey_params = sizeof(kvm_key_params) / sizeof(kvm_key_params[0]);

static void kvm_params(struct doc *d, const char *key, const struct kvm_param *p, size_t n)
{
	doc_begin(d, key);
	for (size_t i = 0; i < n; i++)
		if (!p[i].error)
			doc_str(d, p[i].name, NULL, p[i].value);
	doc_end(d);
}

/* One line for people (the parameters that matter), every parameter in JSON. */
static void kvm_block(struct doc *d, const struct kvm_host *k)
{
	if (!k->loaded) {
		doc_str(d, "kvm", NULL, NULL);
		doc_text(d, "kvm   not loaded\n");
		return;
	}
	doc_begin(d, "kvm");
	doc_str(d, "module", "kvm   %s", k->module);
	doc_str(d, "vendor", NULL, kvm_vendor_name(k->vendor));
	doc_bool(d, "device", NULL, k->device);
	if (!k->device)
		doc_text(d, " (loaded, but no /dev/kvm: no VM can use it)");
	size_t shown = 0;
	for (size_t i = 0; i < kvm_nkey_params; i++) {
		const char *v = kvm_host_param(k, kvm_key_params[i]);
		if (v)
			doc_text(d, "%s %s %s", shown++ ? "," : ":", kvm_key_params[i], v);
	}
	const char *halt = kvm_host_param(k, "halt_poll_ns");
	if (halt)
		doc_text(d, ", halt_poll_ns %s", halt);
	doc_text(d, "\n");
	kvm_params(d, "parameters", k->module_params, k->nmodule_params);
	kvm_params(d, "kvm_parameters", k->kvm_params, k->nkvm_params);
	doc_end(d);
}

/* Huge pages reserved, used and free over every pool; a line for people only when some are. */
static void hugepages_line(struct doc *d, const struct host *h)
{
	maybe_i64 total = host_hugetlb_total_bytes(h), free = host_hugetlb_free_bytes(h);
	maybe_i64 used = total.known && free.known ? MAYBE(total.v - free.v) : UNKNOWN;
	bool line = total.known && total.v > 0;
	doc_bytes(d, "hugetlb_total_bytes", line ? "huge  reserved %s" : NULL, total);
	size_t shown = 0;
	for (size_t i = 0; line && i < h->nhugepages; i++) {
		const struct hugepage_pool *p = &h->hugepages[i];
		char size[32];
		fmt_bytes(size, sizeof(size), p->page_bytes);
		if (p->total.known && p->total.v > 0)
			doc_text(d, "%s%lld x %s", shown++ ? ", " : " (", (long long)p->total.v, size);
	}
	if (shown)
		doc_text(d, ")");
	doc_bytes(d, "hugetlb_used_bytes", line ? ", used %s" : NULL, used);
	doc_bytes(d, "hugetlb_free_bytes", line ? ", free %s" : NULL, free);
	if (line)
		doc_text(d, "\n");
}

void vm_host_block(struct doc *d, const struct host *h, const struct kvm_host *kvm)
{
	const struct meminfo *m = &h->mem;
	doc_begin(d, "host");
	doc_bytes(d, "mem_total_bytes", "host  memory %s", m->mem_total);
	doc_bytes(d, "mem_available_bytes", ", available %s", m->mem_available);
	doc_bytes(d, "mem_free_bytes", NULL, m->mem_free);
	doc_bytes(d, "swap_total_bytes", NULL, m->swap_total);
	doc_bytes(d, "swap_free_bytes", NULL, m->swap_free);
	if (m->swap_total.known && m->swap_total.v > 0 && m->swap_free.known)
		doc_bytes(d, NULL, ", swap used %s", MAYBE(m->swap_total.v - m->swap_free.v));
	doc_int(d, "page_size_bytes", NULL, MAYBE(h->page_size_bytes));
	doc_text(d, "\n");
	hugepages_line(d, h);
	if (kvm)
		kvm_block(d, kvm);
	doc_end(d);

	const struct ksm_sysfs *k = &h->ksm;
	doc_begin(d, "ksm");
	if (!k->present)
		doc_text(d, "ksm   not available in this kernel\n");
	doc_int(d, "run", NULL, k->run);
	if (k->present)
		doc_str(d, NULL, "ksm   %s", ksm_run_word(k->run));
	bool pages = k->present && k->pages_shared.known && k->pages_sharing.known && k->pages_shared.v > 0;
	doc_bytes(d, "saved_bytes", k->present ? ", saves %s" : NULL, ksm_saved_bytes(k, h->page_size_bytes));
	doc_int(d, "pages_shared", pages ? " (%s pages shared" : NULL, k->pages_shared);
	doc_int(d, "pages_sharing", pages ? " by %s more mappings)" : NULL, k->pages_sharing);
	doc_int(d, "ksm_zero_pages", NULL, k->ksm_zero_pages);
	doc_bytes(d, "general_profit_bytes", k->present && k->general_profit.known ? ", profit after metadata %s" : NULL,
		  k->general_profit);
	if (k->present)
		doc_text(d, "\n");
	doc_text(d, "\n");
	doc_end(d);
}

