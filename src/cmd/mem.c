/* vmhost mem, and the host overview (vmhost with no command). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "core/kvm/kvm.h"
#include "core/kvm/kvm_halt.h"
#include "core/model/survey.h"
#include "out/fmt.h"
#include "out/text.h"
#include "out/vm_table.h"

struct mem_opts {
	pid_t pids[256];
	size_t npids;
	bool exact;
	double interval_seconds; /* 0: one reading, no rates */
	double pss_budget_seconds; /* spent sampling PSS of the VMs whose estimate may be off most */
	bool guest;                /* --guest: ask each QEMU for its balloon and the guest's stats */
	int guest_poll_seconds;    /* --guest-poll: set the balloon's stats polling interval first */
	bool io;                   /* --io: each QEMU's disks (QMP query-blockstats, or libvirt's) */
	const char *libvirt_uri;   /* --libvirt-uri; NULL: qemu:///system */
	bool io_columns;           /* --io-columns: the VMM's storage I/O in the human table too */
};

static int opt_pid(struct ctx *ctx, void *opts, const char *arg)
{
	struct mem_opts *o = opts;
	return opt_pid_add(ctx, arg, o->pids, &o->npids, sizeof(o->pids) / sizeof(o->pids[0]), "too many --pid options");
}

static int opt_guest_poll(struct ctx *ctx, void *opts, const char *arg)
{
	(void)ctx, (void)arg;
	((struct mem_opts *)opts)->guest = true;
	return EXIT_OK;
}

static const struct opt mem_opt_table[] = {
	{OPT("pid", 'p', OPT_CALL), .call = opt_pid},
	{OPT("exact", 'x', OPT_FLAG), OPT_AT(struct mem_opts, exact)},
	{OPT("interval", 'i', OPT_SECONDS), OPT_AT(struct mem_opts, interval_seconds),
	 .error = "--interval takes seconds (e.g. 1, 0.5), not '%s'"},
	{OPT("pss-budget", 'b', OPT_NUMBER), OPT_AT(struct mem_opts, pss_budget_seconds), .lo = 0, .hi = 60,
	 .error = "--pss-budget takes seconds (0 to 60, e.g. 0.005), not '%s'"},
	{OPT("guest", 'g', OPT_FLAG), OPT_AT(struct mem_opts, guest)},
	{OPT("io-columns", 0, OPT_FLAG), OPT_AT(struct mem_opts, io_columns)},
	{OPT("guest-poll", 'G', OPT_COUNT), OPT_AT(struct mem_opts, guest_poll_seconds), .lo = 1, .hi = 3600,
	 .error = "--guest-poll takes whole seconds (1 to 3600), not '%s'", .call = opt_guest_poll},
	{OPT("io", 'I', OPT_FLAG), OPT_AT(struct mem_opts, io)},
	{OPT("libvirt-uri", 'U', OPT_STRING), OPT_AT(struct mem_opts, libvirt_uri)},
	{OPT("help", 'h', OPT_HELP)},
};

static void mem_help(void)
{
	printf("usage: vmhost mem [--pid PID]... [--exact] [--interval SEC] [--guest] [--io] [--io-columns]\n"
	       "                  [--json|--csv] [--bytes]\n"
	       "\n"
	       "Per-VM memory: every QEMU (qemu-system-*, qemu-kvm, Proxmox kvm), cloud-hypervisor,\n"
	       "firecracker and crosvm process, with helpers (swtpm, virtiofsd) that share its cgroup scope.\n"
	       "\n"
	       "  GUEST RAM  RAM the guest was given (-m, memory backends, DIMMs)\n"
	       "  RSS        resident memory of the VMM process (anon + file + shmem)\n"
	       "  KSM PAGES  pages of this VM that map a KSM-merged page\n"
	       "  KSM SAVES  what KSM saves this VM: merged pages beyond its share, plus KSM zero pages\n"
	       "  PSS        proportional set size: RSS with shared pages divided among their users.\n"
	       "             Default: an estimate from counters (cheap); --exact reads smaps_rollup\n"
	       "  HUGETLB    hugetlbfs memory the VM maps (status HugetlbPages): not in RSS or PSS;\n"
	       "             shown when a VM has huge pages\n"
	       "  COST       what the VM's memory costs the host: PSS plus its huge pages (with --exact,\n"
	       "             shared huge pages divided among the VM's processes that map them)\n"
	       "  OVERHEAD   resident memory outside guest RAM (block caches, TCG, allocator growth).\n"
	       "             Default: RSS beyond guest RAM (a lower bound while the guest is still\n"
	       "             touching its RAM); --exact counts resident pages outside guest RAM mappings\n"
	       "\n"
	       "  CPU%%       CPU of the VMM and its helpers over --interval (100 = one CPU)\n"
	       "  DELAY%%     vCPU run-queue delay: time its vCPU threads were runnable but waited for a\n"
	       "             host CPU (libvirt's vcpu.N.delay, KubeVirt's vcpu_delay; was WAIT%%), summed\n"
	       "             over vCPUs, over --interval\n"
	       "  CGROUP MEM the VM's cgroup scope's memory (v2 memory.current, v1 memory.usage_in_bytes),\n"
	       "             shown when a VM has one (libvirt, Proxmox)\n"
	       "\n"
	       "  --pid PID       add any process (repeatable); not a VM -> vmm \"process\"\n"
	       "  --exact         read the expensive exact sources (slow for KSM-merged guests)\n"
	       "  --interval SEC  read twice, SEC apart, for CPU%%, DELAY%% (JSON: per vCPU too)\n"
	       "  --pss-budget SEC  time spent sampling the PSS of the VMs whose estimate may be off\n"
	       "                  most, largest error bound first (default 0.005; 0: estimates only;\n"
	       "                  needs root); pss_method says \"sampled\" for those, or \"exact\"\n"
	       "                  where reading smaps_rollup costs no more than a sample\n"
	       "  --guest         ask each QEMU (its -qmp or -mon socket, one short visit each, 300 ms\n"
	       "                  at most) for its balloon (BALLOON) and, where the guest's balloon driver\n"
	       "                  reports it, the guest's MemAvailable (GUEST AVAIL), free memory and caches\n"
	       "  --guest-poll SEC  --guest, and first set the balloon's guest-stats-polling-interval\n"
	       "                  (QEMU keeps it; stats exist only once the guest has reported)\n"
	       "  --io            each QEMU's disks (JSON disks; --guest reads them too): bytes,\n"
	       "                  operations and the time they took per device, from QMP\n"
	       "                  query-blockstats in the same short visit, or from libvirt's block\n"
	       "                  statistics for the domains whose monitor libvirt holds; with the\n"
	       "                  cache mode and AIO its command line gives each disk\n"
	       "  --libvirt-uri URI  libvirt to ask for those, read-only (default qemu:///system), one\n"
	       "                  call for every domain, 0.75 s at most\n"
	       "  --io-columns    the table also shows the storage I/O of the VMM and its helpers\n"
	       "                  (/proc/PID/io): IO READ, IO WRITE, and with --interval READ/S, WRITE/S\n"
	       "                  (JSON and CSV always have them, as io.*)\n"
	       "\n"
	       "JSON adds per VM: cpu_seconds, vcpu_delay_seconds, vcpus (index, tid, cpu/delay seconds\n"
	       "and percent), cgroup_memory_bytes, cgroup_memory_limit_bytes (null: unlimited),\n"
	       "oom_kills, pressure (PSI of the scope: memory, cpu, io), ksm_mergeable and\n"
	       "ksm_unmergeable_reason, hugetlb_bytes and memory_cost_bytes (and with --exact\n"
	       "hugetlb_private_bytes and hugetlb_shared_bytes from smaps_rollup), cgroup_hugetlb_bytes\n"
	       "(the scope's hugetlb controller, v2); io, interfaces, thp_bytes and numa; disks (with --io\n"
	       "or --guest: device, node_name, cache, aio, read/write bytes and ops, flush_ops, read/write/\n"
	       "flush seconds and read/write_latency_seconds; disks_source qmp or libvirt; null with\n"
	       "disks_unavailable saying why). Deprecated, for one release: vcpu_wait_seconds,\n"
	       "vcpu_wait_percent and the vCPUs' wait_seconds, wait_percent (the delay's old names).\n"
	       "\n"
	       "Each run leaves the VMs' command lines and vCPU threads in /run/vmhost/vms (root;\n"
	       "others: $XDG_RUNTIME_DIR/vmhost/vms; VMHOST_RUNTIME_DIR=DIR elsewhere, empty: off),\n"
	       "so that the next run need not read them again for a VM process it recognises.\n"
	       "\n"
	       "Formulas and error bounds: docs/accounting.md. n/a (null in JSON) means unknown.\n");
}

static void overview_help(void)
{
	printf("usage: vmhost [--pid PID]... [--exact]: host memory, KSM, then 'vmhost mem'\n\n");
	mem_help();
}

/* A VM as the notes name it: its name as a terminal may show it (a name is whatever its process
 * says: readable, never obeyed), else its pid. */
static void vm_who(const struct vm *vm, char *buf, size_t cap)
{
	if (vm->cfg.name[0])
		text_for_terminal(buf, cap, vm->cfg.name, 0);
	else
		snprintf(buf, cap, "pid %d", (int)vm->pid);
}

/* Which VMs hold the host's huge pages, and what is left of them: one line when any VM has some. */
static void hugepage_users(const struct vm_list *vms, const struct host *host)
{
	size_t shown = 0;
	char size[32];
	for (size_t i = 0; i < vms->n; i++) {
		const struct vm *vm = &vms->vms[i];
		if (!vm->mem.hugetlb.known || vm->mem.hugetlb.v <= 0)
			continue;
		fmt_bytes(size, sizeof(size), vm->mem.hugetlb.v);
		char who[sizeof(vm->cfg.name) * 4];
		vm_who(vm, who, sizeof(who));
		printf("%s%s %s", shown++ ? ", " : "huge pages held by: ", who, size);
	}
	maybe_i64 free = host_hugetlb_free_bytes(host);
	if (shown && free.known) {
		fmt_bytes(size, sizeof(size), free.v);
		printf("; %s free\n", size);
	} else if (shown) {
		printf("\n");
	}
}

/* "256 MiB in 2048 (2.0ms each)"; n/a for what is unknown. */
static void disk_figures(char *buf, size_t cap, maybe_i64 bytes, maybe_i64 ops, double seconds)
{
	char b[32] = "n/a", n[32] = "n/a", each[32] = "n/a";
	double latency = vm_disk_latency(seconds, ops);
	if (bytes.known)
		fmt_bytes(b, sizeof(b), bytes.v);
	if (ops.known)
		snprintf(n, sizeof(n), "%lld", (long long)ops.v);
	if (!isnan(latency))
		fmt_seconds(each, sizeof(each), latency);
	snprintf(buf, cap, "%s in %s (%s each)", b, n, each);
}

/* Each VM's disks when they were asked for (--io, --guest): one line a disk, or why not. */
static void disk_lines(const struct vm_list *vms)
{
	for (size_t i = 0; i < vms->n; i++) {
		const struct vm *vm = &vms->vms[i];
		const struct vm_disks *d = vm->disks;
		char who[sizeof(vm->cfg.name) * 4], rd[96], wr[96], why[sizeof(d->why) * 4];
		if (!d || vm->cfg.vmm != VMM_QEMU)
			continue;
		vm_who(vm, who, sizeof(who));
		if (!d->known || !d->n) {
			printf("disks of %s: %s\n", who, d->known ? "none" : text_shown(why, sizeof(why), d->why));
			continue;
		}
		printf("disks of %s (%s):\n", who, text_shown(why, sizeof(why), d->source));
		for (size_t k = 0; k < d->n; k++) {
			const struct vm_disk *disk = &d->d[k];
			disk_figures(rd, sizeof(rd), disk->read_bytes, disk->read_ops, disk->read_seconds);
			disk_figures(wr, sizeof(wr), disk->write_bytes, disk->write_ops, disk->write_seconds);
			char dev[sizeof(disk->device) * 4], cache[sizeof(disk->cache) * 4], aio[sizeof(disk->aio) * 4];
			printf("  %s: cache %s, aio %s; read %s, wrote %s\n", text_shown(dev, sizeof(dev), disk->device),
			       text_shown(cache, sizeof(cache), disk->cache[0] ? disk->cache : "n/a"),
			       text_shown(aio, sizeof(aio), disk->aio[0] ? disk->aio : "n/a"), rd, wr);
		}
		if (d->why[0]) /* more disks than listed */
			printf("  (%s)\n", text_shown(why, sizeof(why), d->why));
	}
}

static void print_notes(const struct mem_opts *o, const struct vm_list *vms, const struct host *host, size_t rows)
{
	if (!rows)
		printf("no VMs found (QEMU, cloud-hypervisor, firecracker, crosvm); --pid PID adds any process\n");
	if (vms->skipped)
		printf("(%u process%s vanished or could not be read while sampling)\n", vms->skipped,
		       vms->skipped == 1 ? "" : "es");
	/* Why a VM merges nothing, in one line: the config and the kernel first, a stopped KSM last. */
	bool any = false, stopped = false;
	for (size_t i = 0; i < vms->n; i++) {
		const struct vm *vm = &vms->vms[i];
		const char *why = vm->cfg.vmm == VMM_PROCESS ? NULL : ksm_unmergeable_reason(&vm->cfg, &vm->mem, &host->ksm);
		if (why && !strcmp(why, "ksm-stopped")) {
			stopped = true;
		} else if (why) {
			char who[sizeof(vm->cfg.name) * 4];
			vm_who(vm, who, sizeof(who));
			printf("%s %s (%s)", any ? "," : "KSM cannot merge the RAM of:", who, why);
			any = true;
		}
	}
	if (any)
		printf("\n");
	if (stopped)
		printf("KSM is stopped (run=0): no guest memory is being merged ('vmhost ksm' says more)\n");
	hugepage_users(vms, host);
	disk_lines(vms);
	size_t sampled = 0, exact = 0;
	for (size_t i = 0; i < vms->n; i++) {
		sampled += vms->vms[i].pss_method == METHOD_SAMPLED;
		exact += vms->vms[i].pss_method == METHOD_EXACT;
	}
	if (rows && !o->exact && (sampled || exact))
		printf("PSS sampled for %zu VM%s, read exactly for %zu (where that costs no more), estimated for the rest;"
		       " OVERHEAD is an estimate (docs/accounting.md); --exact reads the exact sources\n", sampled,
		       sampled == 1 ? "" : "s", exact);
	else if (rows && !o->exact)
		printf("PSS and OVERHEAD are cheap estimates (docs/accounting.md); --exact reads the exact sources\n");
}

/* The human table shows the rates only when measured, the cgroup only when a VM has one, the
 * huge pages only when a VM has some, the guest's view and the storage I/O only when asked. */
static void mem_columns(struct col *cols, const struct mem_opts *o, const struct vm_list *vms)
{
	memcpy(cols, vm_cols, sizeof(vm_cols));
	bool cgroup = false;
	for (size_t i = 0; i < vms->n; i++)
		cgroup |= vms->vms[i].cg.memory_bytes.known;
	if (!(o->interval_seconds > 0))
		cols[VMC_CPU_PCT].flags = cols[VMC_DELAY_PCT].flags = COL_JSON_ONLY;
	if (!cgroup)
		cols[VMC_CG_MEM].flags = COL_JSON_ONLY;
	vm_cols_hugetlb(cols, vms);
	if (!o->guest)
		cols[VMC_BALLOON].flags = cols[VMC_GUEST_AVAIL].flags = COL_JSON_ONLY;
	if (o->io_columns) {
		cols[VMC_IO_READ].flags &= ~(unsigned)COL_JSON_ONLY;
		cols[VMC_IO_WRITE].flags &= ~(unsigned)COL_JSON_ONLY;
	}
	if (o->io_columns && o->interval_seconds > 0) {
		cols[VMC_IO_READ_RATE].flags &= ~(unsigned)COL_JSON_ONLY;
		cols[VMC_IO_WRITE_RATE].flags &= ~(unsigned)COL_JSON_ONLY;
	}
}

/* The VMs' table in the columns mem_columns chose (kept as long as the table is), by PSS. NULL
 * when out of memory. */
static struct table *mem_table(const struct mem_opts *o, const struct vm_list *vms, const struct host *host,
			       struct col cols[VMC_NCOLS])
{
	mem_columns(cols, o, vms);
	struct table *t = table_new(cols, VMC_NCOLS);
	if (t)
		table_reserve(t, vms->n);
	for (size_t i = 0; t && i < vms->n; i++)
		vm_table_row(t, &vms->vms[i], host);
	if (t && table_error(t) < 0) {
		table_free(t);
		return NULL;
	}
	if (t)
		table_sort_desc(t, VMC_PSS);
	return t;
}

static void print_mem(struct ctx *ctx, const struct mem_opts *o, const struct vm_list *vms, const struct host *host,
		      const struct kvm_host *kvm, struct table *t, bool overview)
{
	struct doc d;
	if (ctx->format == OUT_JSON) {
		ctx_doc(ctx, &d);
		doc_begin(&d, NULL);
		vm_host_block(&d, host, kvm);
		table_print_json(t, doc_json(&d), "vms");
		doc_int(&d, "skipped", NULL, MAYBE(vms->skipped));
		doc_float(&d, "interval_seconds", NULL, o->interval_seconds > 0 ? o->interval_seconds : NAN, 0);
		doc_end(&d);
		doc_finish(&d);
	} else if (ctx->format == OUT_CSV) {
		table_print_csv(t, stdout);
	} else {
		if (overview) {
			ctx_doc(ctx, &d);
			vm_host_block(&d, host, kvm);
			doc_finish(&d);
		}
		if (table_rows(t))
			table_print_human(t, stdout, ctx->raw_bytes);
		print_notes(o, vms, host, table_rows(t));
	}
}

/* --json's halt_poll_seconds: KVM's halt polling of each VM since it started, from debugfs, and
 * with --guest (which visits each QEMU's monitor anyway) through QMP or libvirt; null elsewhere. */
static void read_halt_poll(const struct ctx *ctx, bool guest, struct vm_list *vms)
{
	struct kvm_reader *kr;
	enum kvm_avail why;
	struct kvm_sample s;
	if (kvm_reader_open_with(&ctx->root, guest ? KVM_READ_QMP : 0, &kr, &why) < 0)
		return;
	if (kvm_reader_sample_vms(kr, vms, &s) == 0) {
		struct kvm_halt_index ix;
		kvm_halt_index(kr, &ix);
		for (size_t i = 0; i < vms->n; i++) {
			maybe_i64 sum = UNKNOWN; /* a process with several KVM VMs: their sum, unknown if one is */
			bool first = true;
			for (size_t k = 0; k < s.nvms; k++) {
				if (s.vms[k].pid != vms->vms[i].pid)
					continue;
				maybe_i64 x = kvm_halt_poll_ns(&ix, s.vms[k].values);
				sum = first ? x : maybe_add(sum, x);
				first = false;
			}
			vms->vms[i].halt_poll_ns = sum;
		}
		kvm_sample_free(&s);
	}
	kvm_reader_close(kr);
}

static int run(struct ctx *ctx, int argc, char **argv, bool overview)
{
	struct mem_opts o = {.pss_budget_seconds = 0.005};
	static const struct opts_spec mem_spec = OPTS_SPEC(mem_opt_table, 0, mem_help),
				      overview_spec = OPTS_SPEC(mem_opt_table, 0, overview_help);
	int rc = opts_parse(ctx, overview ? &overview_spec : &mem_spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	struct host host;
	struct vm_list vms;
	char runtime[512];
	struct survey_opts so = {.pids = o.pids, .npids = o.npids, .exact = o.exact,
				 .pss_budget_seconds = o.pss_budget_seconds, .guest = o.guest,
				 .guest_poll_seconds = o.guest_poll_seconds, .interval_seconds = o.interval_seconds,
				 .disks = o.io || o.guest, .libvirt_uri = o.libvirt_uri,
				 .memo_dir = ctx_runtime_dir(ctx, runtime, sizeof(runtime))};
	enum survey_step step;
	int r = survey_take(&ctx->root, &so, &host, &vms, &step);
	if (r < 0 && step == SURVEY_HOST)
		return fail(ctx, exit_code_for(r), "reading host memory", "%s/meminfo: %s%s", ctx->root.proc,
			    strerror(-r), r == -ENOENT ? " (no procfs there?)" : "");
	if (r < 0)
		return fail(ctx, exit_code_for(r), "listing processes", "%s: %s", ctx->root.proc, strerror(-r));
	if (vms.denied)
		warn(ctx, "no permission to read some /proc files of %u process%s (KSM or exact figures are n/a); run as root, or see docs/privileges.md",
		     vms.denied, vms.denied == 1 ? "" : "es");

	/* The host's KVM settings appear in the JSON and the overview only: read them for those. */
	struct kvm_host kvm = {0};
	if (ctx->format == OUT_JSON || (ctx->format != OUT_CSV && overview))
		kvm_host_read(&ctx->root, &kvm);
	if (ctx->format == OUT_JSON)
		read_halt_poll(ctx, o.guest, &vms);
	struct col cols[VMC_NCOLS];
	struct table *t = mem_table(&o, &vms, &host, cols);
	rc = EXIT_OK;
	if (t)
		print_mem(ctx, &o, &vms, &host, &kvm, t, overview);
	else
		rc = fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	table_free(t);
	vm_list_free(&vms);
	kvm_host_free(&kvm);
	return rc;
}

int cmd_mem(struct ctx *ctx, int argc, char **argv) { return run(ctx, argc, argv, false); }

int cmd_overview(struct ctx *ctx, int argc, char **argv) { return run(ctx, argc, argv, true); }
