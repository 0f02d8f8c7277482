/* The database schema: one migration per version, applied in order by store_open(). Never edit
 * a released migration; add the next one (and bump STORE_SCHEMA_VERSION in store.h). */
#ifndef VMHOST_STORE_SCHEMA_H
#define VMHOST_STORE_SCHEMA_H

/* store_migrations[v] takes a database from version v to v + 1. */
static const char *const store_migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE samples ("
	" t_ms INTEGER PRIMARY KEY," /* Unix ms; for a mean, the middle of its bucket */
	" resolution INTEGER NOT NULL DEFAULT 0," /* 0 raw, else seconds per mean */
	" gather_us INTEGER,"
	" mem_total INTEGER, mem_available INTEGER, mem_free INTEGER, swap_total INTEGER, swap_free INTEGER,"
	" page_size INTEGER,"
	" ksm_run INTEGER, ksm_pages_shared INTEGER, ksm_pages_sharing INTEGER, ksm_pages_unshared INTEGER,"
	" ksm_pages_volatile INTEGER, ksm_zero_pages INTEGER, ksm_full_scans INTEGER, ksm_pages_scanned INTEGER,"
	" ksm_general_profit INTEGER, ksm_pages_to_scan INTEGER, ksm_sleep_millisecs INTEGER, ksmd_cpu_ns INTEGER,"
	" vm_count INTEGER, skipped INTEGER);"
	"CREATE TABLE vms ("
	" id INTEGER PRIMARY KEY,"
	" pid INTEGER NOT NULL, start_ticks INTEGER NOT NULL,"
	" boot_ms INTEGER NOT NULL," /* host boot time seen at first sample: tells reboots apart */
	" started_ms INTEGER, uuid TEXT, name TEXT, vmm TEXT NOT NULL, guest_ram_bytes INTEGER);"
	"CREATE INDEX vms_identity ON vms (pid, start_ticks);"
	"CREATE TABLE vm_samples ("
	" vm_id INTEGER NOT NULL REFERENCES vms (id), t_ms INTEGER NOT NULL,"
	" resolution INTEGER NOT NULL DEFAULT 0,"
	" populated INTEGER, exact INTEGER,"
	" rss INTEGER, rss_anon INTEGER, rss_file INTEGER, rss_shmem INTEGER, swap INTEGER,"
	" ksm_merging_pages INTEGER, ksm_zero_pages INTEGER, ksm_profit INTEGER, ksm_saved INTEGER, pss INTEGER,"
	" overhead INTEGER,"
	" PRIMARY KEY (vm_id, t_ms)) WITHOUT ROWID;"
	/* KVM counters (debugfs): sparse, a row only when a value changed (and at each writer's
	 * first sample). vm_id 0 is the host: the sampler's running totals
	 * (core/kvm_delta's increase; a VM exiting does not lower them), the global files for gauges. */
	"CREATE TABLE kvm_counters (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, kind TEXT NOT NULL);"
	"CREATE TABLE kvm_samples ("
	" vm_id INTEGER NOT NULL, counter_id INTEGER NOT NULL REFERENCES kvm_counters (id), t_ms INTEGER NOT NULL,"
	" resolution INTEGER NOT NULL DEFAULT 0, value INTEGER NOT NULL,"
	" PRIMARY KEY (vm_id, counter_id, t_ms)) WITHOUT ROWID;",
	/* 1 -> 2: what each VM costs besides memory (CPU and vCPU wait so far, in ms; its cgroup) */
	"ALTER TABLE vm_samples ADD COLUMN cpu_ms INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN vcpu_wait_ms INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN cgroup_memory INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN cgroup_limit INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN oom_kills INTEGER;",
	/* 2 -> 3: the VM's huge pages (status HugetlbPages) and what its memory costs (PSS plus them) */
	"ALTER TABLE vm_samples ADD COLUMN hugetlb INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN memory_cost INTEGER;",
	/* 3 -> 4: the VM's I/O: /proc/PID/io storage bytes of the VMM and its helpers, and its taps'
	 * bytes and drops summed (as the host sees them: rx is what the guest sent); all counters */
	"ALTER TABLE vm_samples ADD COLUMN io_read INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN io_write INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN net_rx INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN net_tx INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN net_dropped INTEGER;",
	/* 4 -> 5: the sharing maps of `vmhost share`: a row per run, per VM of it (vm: its place in
	 * the run) and per pair of VMs sharing pages (a's pages whose content b also holds; a = b: the
	 * pages a duplicates within itself). Pages of the run's page_size; bytes where named so. */
	"CREATE TABLE share_runs ("
	" id INTEGER PRIMARY KEY, t_ms INTEGER NOT NULL, sample_n INTEGER NOT NULL, page_size INTEGER NOT NULL,"
	" host_pages INTEGER NOT NULL, zero_pages INTEGER NOT NULL, mergeable_savings INTEGER NOT NULL,"
	" ksm_saved INTEGER, vm_count INTEGER NOT NULL);"
	"CREATE TABLE share_vms ("
	" run_id INTEGER NOT NULL REFERENCES share_runs (id), vm INTEGER NOT NULL, pid INTEGER NOT NULL, name TEXT,"
	" pages INTEGER NOT NULL, zero_pages INTEGER NOT NULL, unique_pages INTEGER NOT NULL,"
	" error_bound_pages INTEGER NOT NULL, sketch_bytes INTEGER NOT NULL, partial_reason TEXT,"
	" PRIMARY KEY (run_id, vm)) WITHOUT ROWID;"
	"CREATE TABLE share_pairs ("
	" run_id INTEGER NOT NULL REFERENCES share_runs (id), a INTEGER NOT NULL, b INTEGER NOT NULL,"
	" pages INTEGER NOT NULL, PRIMARY KEY (run_id, a, b)) WITHOUT ROWID;",
	/* 5 -> 6: the vCPUs' delay under the name it has everywhere else (it was "wait"); each QEMU's
	 * disks as QEMU counts them (record --io): a row per disk per sample, counters (bytes,
	 * operations, and the nanoseconds they took), null where unknown */
	"ALTER TABLE vm_samples RENAME COLUMN vcpu_wait_ms TO vcpu_delay_ms;"
	"CREATE TABLE vm_disk_samples ("
	" vm_id INTEGER NOT NULL REFERENCES vms (id), t_ms INTEGER NOT NULL, device TEXT NOT NULL,"
	" resolution INTEGER NOT NULL DEFAULT 0,"
	" read_bytes INTEGER, write_bytes INTEGER, read_ops INTEGER, write_ops INTEGER, flush_ops INTEGER,"
	" read_time_ns INTEGER, write_time_ns INTEGER, flush_time_ns INTEGER,"
	" PRIMARY KEY (vm_id, t_ms, device)) WITHOUT ROWID;",
	/* 6 -> 7: what memory pressure and KSM cost each VM: its VMM's threads' stall time by kind
	 * (delay accounting, in microseconds) and its copy-on-write copies; counters, null where
	 * delay accounting was not read */
	"ALTER TABLE vm_samples ADD COLUMN stall_wpcopy_us INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN stall_swapin_us INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN stall_reclaim_us INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN stall_thrashing_us INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN stall_compact_us INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN stall_irq_us INTEGER;"
	"ALTER TABLE vm_samples ADD COLUMN wpcopy_count INTEGER;",
};

/* Downsampling: the value columns and how a bucket's mean is formed (gauges: rounded mean;
 * counters: the last value; flags: true only if true throughout). */
#define MEAN(c) "CAST(ROUND(AVG(" c ")) AS INTEGER)"
static const char store_sample_columns[] =
	"gather_us, mem_total, mem_available, mem_free, swap_total, swap_free, page_size, ksm_run,"
	" ksm_pages_shared, ksm_pages_sharing, ksm_pages_unshared, ksm_pages_volatile, ksm_zero_pages,"
	" ksm_full_scans, ksm_pages_scanned, ksm_general_profit, ksm_pages_to_scan, ksm_sleep_millisecs,"
	" ksmd_cpu_ns, vm_count, skipped";
static const char store_sample_means[] =
	MEAN("gather_us") "," MEAN("mem_total") "," MEAN("mem_available") "," MEAN("mem_free") ","
	MEAN("swap_total") "," MEAN("swap_free") ", MAX(page_size), MAX(ksm_run),"
	MEAN("ksm_pages_shared") "," MEAN("ksm_pages_sharing") "," MEAN("ksm_pages_unshared") ","
	MEAN("ksm_pages_volatile") "," MEAN("ksm_zero_pages") ", MAX(ksm_full_scans), MAX(ksm_pages_scanned),"
	MEAN("ksm_general_profit") "," MEAN("ksm_pages_to_scan") "," MEAN("ksm_sleep_millisecs") ","
	" MAX(ksmd_cpu_ns), MAX(vm_count), SUM(skipped)";
static const char store_vm_sample_columns[] =
	"populated, exact, rss, rss_anon, rss_file, rss_shmem, swap, ksm_merging_pages, ksm_zero_pages,"
	 " ksm_profit, ksm_saved, pss, overhead, cpu_ms, vcpu_delay_ms, cgroup_memory, cgroup_limit, oom_kills,"
	" hugetlb, memory_cost, io_read, io_write, net_rx, net_tx, net_dropped, stall_wpcopy_us, stall_swapin_us,"
	" stall_reclaim_us, stall_thrashing_us, stall_compact_us, stall_irq_us, wpcopy_count";
static const char store_vm_sample_means[] =
	"MIN(populated), MIN(exact)," MEAN("rss") "," MEAN("rss_anon") "," MEAN("rss_file") ","
	MEAN("rss_shmem") "," MEAN("swap") "," MEAN("ksm_merging_pages") "," MEAN("ksm_zero_pages") ","
	MEAN("ksm_profit") "," MEAN("ksm_saved") "," MEAN("pss") "," MEAN("overhead") ","
	" MAX(cpu_ms), MAX(vcpu_delay_ms)," MEAN("cgroup_memory") ", MAX(cgroup_limit), MAX(oom_kills),"
	MEAN("hugetlb") "," MEAN("memory_cost") ", MAX(io_read), MAX(io_write), MAX(net_rx), MAX(net_tx),"
	" MAX(net_dropped), MAX(stall_wpcopy_us), MAX(stall_swapin_us), MAX(stall_reclaim_us),"
	" MAX(stall_thrashing_us), MAX(stall_compact_us), MAX(stall_irq_us), MAX(wpcopy_count)";
static const char store_disk_sample_columns[] =
	"read_bytes, write_bytes, read_ops, write_ops, flush_ops, read_time_ns, write_time_ns, flush_time_ns";
static const char store_disk_sample_means[] =
	"MAX(read_bytes), MAX(write_bytes), MAX(read_ops), MAX(write_ops), MAX(flush_ops), MAX(read_time_ns),"
	" MAX(write_time_ns), MAX(flush_time_ns)";
#undef MEAN

/* The tables downsampled alike: a row's key besides t_ms (each followed by ", "), its values and
 * their means in the same order. */
struct store_sampled_table {
	const char *table, *keys, *columns, *means;
};
static const struct store_sampled_table store_sampled_tables[] = {
	{"samples", "", store_sample_columns, store_sample_means},
	{"vm_samples", "vm_id, ", store_vm_sample_columns, store_vm_sample_means},
	/* the bucket's maximum: a counter's last value, a gauge's peak */
	{"kvm_samples", "vm_id, counter_id, ", "value", "MAX(value)"},
	{"vm_disk_samples", "vm_id, device, ", store_disk_sample_columns, store_disk_sample_means},
};

#endif
