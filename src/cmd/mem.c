/* vmhost mem, and the host overview (vmhost with no command). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/clock.h"
#include "core/host.h"
#include "core/pss_sample.h"
#include "core/vm.h"
#include "out/json.h"
#include "out/table.h"

enum {
	C_PID, C_NAME, C_VMM, C_UUID, C_CGROUP, C_HELPERS, C_GUEST_RAM, C_RSS, C_RSS_ANON, C_RSS_FILE,
	C_RSS_SHMEM, C_SWAP, C_KSM_MERGING, C_KSM_ZERO, C_KSM_PROFIT, C_KSM_SAVED, C_PSS, C_PSS_METHOD, C_PSS_BOUND,
	C_OVERHEAD, C_OVERHEAD_METHOD, C_CPU_PCT, C_WAIT_PCT, C_CPU, C_VCPU_WAIT, C_VCPUS, C_CG_MEM, C_CG_LIMIT,
	C_OOM, C_PRESSURE, /* memory, cpu, io: 4 columns each */
	C_KSM_MERGEABLE = C_PRESSURE + 4 * PRESSURE_NKINDS, C_KSM_REASON, C_BALLOON, C_GUEST_AVAIL, C_GUEST_FREE,
	C_GUEST_CACHES, C_GUEST_WHY, C_NCOLS
};

static const struct col mem_cols[C_NCOLS] = {
	[C_PID] = {"pid", "PID", COL_INT, 0, 0},
	[C_NAME] = {"name", "NAME", COL_STR, 0, 0},
	[C_VMM] = {"vmm", "VMM", COL_STR, 0, 0},
	[C_UUID] = {"uuid", "UUID", COL_STR, COL_JSON_ONLY, 0},
	[C_CGROUP] = {"cgroup", "CGROUP", COL_STR, COL_JSON_ONLY, 0},
	[C_HELPERS] = {"helpers", "HELPERS", COL_INT, COL_JSON_ONLY, 0},
	[C_GUEST_RAM] = {"guest_ram_bytes", "GUEST RAM", COL_BYTES, 0, 0},
	[C_RSS] = {"rss_bytes", "RSS", COL_BYTES, 0, 0},
	[C_RSS_ANON] = {"rss_anon_bytes", "ANON", COL_BYTES, COL_JSON_ONLY, 0},
	[C_RSS_FILE] = {"rss_file_bytes", "FILE", COL_BYTES, COL_JSON_ONLY, 0},
	[C_RSS_SHMEM] = {"rss_shmem_bytes", "SHMEM", COL_BYTES, COL_JSON_ONLY, 0},
	[C_SWAP] = {"swap_bytes", "SWAP", COL_BYTES, 0, 0},
	[C_KSM_MERGING] = {"ksm_merging_pages", "KSM PAGES", COL_INT, 0, 0},
	[C_KSM_ZERO] = {"ksm_zero_pages", "KSM ZERO", COL_INT, COL_JSON_ONLY, 0},
	[C_KSM_PROFIT] = {"ksm_profit_bytes", "KSM PROFIT", COL_BYTES, COL_JSON_ONLY, 0},
	[C_KSM_SAVED] = {"ksm_saved_bytes", "KSM SAVES", COL_BYTES, 0, 0},
	[C_PSS] = {"pss_bytes", "PSS", COL_BYTES, 0, 0},
	[C_PSS_METHOD] = {"pss_method", "PSS BY", COL_STR, COL_JSON_ONLY, 0},
	[C_PSS_BOUND] = {"pss_error_bound_bytes", "PSS +-", COL_BYTES, COL_JSON_ONLY, 0},
	[C_OVERHEAD] = {"overhead_bytes", "OVERHEAD", COL_BYTES, 0, 0},
	[C_OVERHEAD_METHOD] = {"overhead_method", "OVERHEAD BY", COL_STR, COL_JSON_ONLY, 0},
	[C_CPU_PCT] = {"cpu_percent", "CPU%", COL_FLOAT, 0, 1},
	[C_WAIT_PCT] = {"vcpu_wait_percent", "WAIT%", COL_FLOAT, 0, 1},
	[C_CPU] = {"cpu_seconds", "CPU TIME", COL_FLOAT, COL_JSON_ONLY, 2},
	[C_VCPU_WAIT] = {"vcpu_wait_seconds", "VCPU WAIT", COL_FLOAT, COL_JSON_ONLY, 2},
	[C_VCPUS] = {"vcpus", "VCPUS", COL_STR, COL_JSON_ONLY, 0},
	[C_CG_MEM] = {"cgroup_memory_bytes", "CGROUP MEM", COL_BYTES, 0, 0},
	[C_CG_LIMIT] = {"cgroup_memory_limit_bytes", "LIMIT", COL_BYTES, COL_JSON_ONLY, 0},
	[C_OOM] = {"oom_kills", "OOM KILLS", COL_INT, COL_JSON_ONLY, 0},
#define PRESSURE_COLS(k, name)                                                                            \
	[C_PRESSURE + 4 * (k) + 0] = {"pressure." name ".some_avg10", "", COL_FLOAT, COL_JSON_ONLY, 2},       \
	[C_PRESSURE + 4 * (k) + 1] = {"pressure." name ".full_avg10", "", COL_FLOAT, COL_JSON_ONLY, 2},       \
	[C_PRESSURE + 4 * (k) + 2] = {"pressure." name ".some_seconds", "", COL_FLOAT, COL_JSON_ONLY, 2},     \
	[C_PRESSURE + 4 * (k) + 3] = {"pressure." name ".full_seconds", "", COL_FLOAT, COL_JSON_ONLY, 2}
	PRESSURE_COLS(PRESSURE_MEMORY, "memory"),
	PRESSURE_COLS(PRESSURE_CPU, "cpu"),
	PRESSURE_COLS(PRESSURE_IO, "io"),
#undef PRESSURE_COLS
	[C_KSM_MERGEABLE] = {"ksm_mergeable", "MERGEABLE", COL_STR, COL_JSON_ONLY, 0},
	[C_KSM_REASON] = {"ksm_unmergeable_reason", "NOT MERGED BECAUSE", COL_STR, COL_JSON_ONLY, 0},
	[C_BALLOON] = {"balloon_bytes", "BALLOON", COL_BYTES, 0, 0},
	[C_GUEST_AVAIL] = {"guest_available_bytes", "GUEST AVAIL", COL_BYTES, 0, 0},
	[C_GUEST_FREE] = {"guest_free_bytes", "GUEST FREE", COL_BYTES, COL_JSON_ONLY, 0},
	[C_GUEST_CACHES] = {"guest_caches_bytes", "GUEST CACHES", COL_BYTES, COL_JSON_ONLY, 0},
	[C_GUEST_WHY] = {"guest_unavailable", "GUEST VIEW", COL_STR, COL_JSON_ONLY, 0},
};

/* One QMP visit per VM with --guest: a busy or stuck monitor costs at most this. */
#define GUEST_TIMEOUT_MS 300

struct mem_opts {
	pid_t pids[256];
	size_t npids;
	bool exact;
	double interval_seconds; /* 0: one reading, no rates */
	double pss_budget_seconds; /* spent sampling PSS of the VMs whose estimate may be off most */
	bool guest;                /* --guest: ask each QEMU for its balloon and the guest's stats */
	int guest_poll_seconds;    /* --guest-poll: set the balloon's stats polling interval first */
};

static int parse_mem_opts(struct ctx *ctx, int argc, char **argv, struct mem_opts *o, bool *help)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"exact", no_argument, NULL, 'x'},
		{"interval", required_argument, NULL, 'i'},
		{"pss-budget", required_argument, NULL, 'b'},
		{"guest", no_argument, NULL, 'g'},
		{"guest-poll", required_argument, NULL, 'G'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	args_reset();
	int c;
	while ((c = getopt_long(argc, argv, "+p:xi:b:gG:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			int pid;
			if (arg_pid(optarg, &pid) < 0)
				return usage_error(ctx, "--pid takes a process id, not '%s'", optarg);
			if (o->npids == sizeof(o->pids) / sizeof(o->pids[0]))
				return usage_error(ctx, "too many --pid options");
			o->pids[o->npids++] = pid;
			break;
		}
		case 'x': o->exact = true; break;
		case 'b': {
			char *end;
			o->pss_budget_seconds = strtod(optarg, &end);
			if (end == optarg || *end || !(o->pss_budget_seconds >= 0) || o->pss_budget_seconds > 60)
				return usage_error(ctx, "--pss-budget takes seconds (0 to 60, e.g. 0.005), not '%s'", optarg);
			break;
		}
		case 'g': o->guest = true; break;
		case 'G': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 1 || v > 3600)
				return usage_error(ctx, "--guest-poll takes whole seconds (1 to 3600), not '%s'", optarg);
			o->guest = true;
			o->guest_poll_seconds = (int)v;
			break;
		}
		case 'i':
			if (arg_seconds(optarg, &o->interval_seconds) < 0)
				return usage_error(ctx, "--interval takes seconds (e.g. 1, 0.5), not '%s'", optarg);
			break;
		case 'h': *help = true; break;
		default:
			return usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	return EXIT_OK;
}

static void mem_help(void)
{
	printf("usage: vmhost mem [--pid PID]... [--exact] [--interval SEC] [--guest] [--json|--csv] [--bytes]\n"
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
	       "  OVERHEAD   resident memory outside guest RAM (block caches, TCG, allocator growth).\n"
	       "             Default: RSS beyond guest RAM (a lower bound while the guest is still\n"
	       "             touching its RAM); --exact counts resident pages outside guest RAM mappings\n"
	       "\n"
	       "  CPU%%       CPU of the VMM and its helpers over --interval (100 = one CPU)\n"
	       "  WAIT%%      time its vCPU threads were runnable but waited for a host CPU (the host-side\n"
	       "             steal), summed over vCPUs, over --interval\n"
	       "  CGROUP MEM the VM's cgroup scope's memory (v2 memory.current, v1 memory.usage_in_bytes),\n"
	       "             shown when a VM has one (libvirt, Proxmox)\n"
	       "\n"
	       "  --pid PID       add any process (repeatable); not a VM -> vmm \"process\"\n"
	       "  --exact         read the expensive exact sources (slow for KSM-merged guests)\n"
	       "  --interval SEC  read twice, SEC apart, for CPU%%, WAIT%% (JSON: per vCPU too)\n"
	       "  --pss-budget SEC  time spent sampling the PSS of the VMs whose estimate may be off\n"
	       "                  most, largest error bound first (default 0.005; 0: estimates only;\n"
	       "                  needs root); pss_method says \"sampled\" for those\n"
	       "  --guest         ask each QEMU (its -qmp or -mon socket, one short visit each, 300 ms\n"
	       "                  at most) for its balloon (BALLOON) and, where the guest's balloon driver\n"
	       "                  reports it, the guest's MemAvailable (GUEST AVAIL), free memory and caches\n"
	       "  --guest-poll SEC  --guest, and first set the balloon's guest-stats-polling-interval\n"
	       "                  (QEMU keeps it; stats exist only once the guest has reported)\n"
	       "\n"
	       "JSON adds per VM: cpu_seconds, vcpus (index, tid, cpu/wait seconds and percent),\n"
	       "cgroup_memory_bytes, cgroup_memory_limit_bytes (null: unlimited), oom_kills, pressure\n"
	       "(PSI of the scope: memory, cpu, io), ksm_mergeable and ksm_unmergeable_reason.\n"
	       "\n"
	       "Formulas and error bounds: docs/accounting.md. n/a (null in JSON) means unknown.\n");
}

static const char *or_null(const char *s) { return s && s[0] ? s : NULL; }

/* The vCPUs as a JSON array (a JSON-only cell); NULL when the thread list was not read. */
static char *vcpus_json(const struct vm_cpu *cpu)
{
	if (!cpu->vcpus_known)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	struct json j;
	json_init(&j, f, false);
	json_array_begin(&j, NULL);
	for (size_t i = 0; i < cpu->nvcpus; i++) {
		const struct vcpu *v = &cpu->vcpus[i];
		json_object_begin(&j, NULL);
		json_int(&j, "index", v->index);
		json_int(&j, "tid", v->tid);
		json_double(&j, "cpu_seconds", v->cpu_seconds);
		json_double(&j, "wait_seconds", v->wait_seconds);
		json_double(&j, "cpu_percent", v->cpu_percent);
		json_double(&j, "wait_percent", v->wait_percent);
		json_object_end(&j);
	}
	json_array_end(&j);
	return fclose(f) == 0 ? buf : (free(buf), NULL);
}

static void fill_row(struct table *t, const struct vm *vm, const struct host *host)
{
	table_add_row(t);
	table_set_int(t, C_PID, vm->pid);
	table_set_str(t, C_NAME, or_null(vm->cfg.name));
	table_set_str(t, C_VMM, vmm_kind_name(vm->cfg.vmm));
	table_set_str(t, C_UUID, or_null(vm->cfg.uuid));
	table_set_str(t, C_CGROUP, or_null(vm->cgroup));
	table_set_int(t, C_HELPERS, (int64_t)vm->nhelpers);
	table_set_maybe(t, C_GUEST_RAM, vm->cfg.guest_ram_bytes);
	table_set_maybe(t, C_RSS, vm->mem.rss);
	table_set_maybe(t, C_RSS_ANON, vm->mem.rss_anon);
	table_set_maybe(t, C_RSS_FILE, vm->mem.rss_file);
	table_set_maybe(t, C_RSS_SHMEM, vm->mem.rss_shmem);
	table_set_maybe(t, C_SWAP, vm->mem.swap);
	table_set_maybe(t, C_KSM_MERGING, vm->mem.ksm_merging_pages);
	table_set_maybe(t, C_KSM_ZERO, vm->mem.ksm_zero_pages);
	table_set_maybe(t, C_KSM_PROFIT, vm->mem.ksm_profit);
	table_set_maybe(t, C_KSM_SAVED, vm->ksm_saved_bytes);
	table_set_maybe(t, C_PSS, vm->pss_bytes);
	table_set_str(t, C_PSS_METHOD, vm->pss_bytes.known ? measure_method_name(vm->pss_method) : NULL);
	table_set_maybe(t, C_PSS_BOUND, vm->pss_bound_bytes);
	table_set_maybe(t, C_OVERHEAD, vm->overhead_bytes);
	table_set_str(t, C_OVERHEAD_METHOD,
		      vm->overhead_bytes.known ? measure_method_name(vm->overhead_method) : NULL);
	const struct vm_cpu *cpu = &vm->cpu;
	table_set_float(t, C_CPU_PCT, cpu->cpu_percent);
	table_set_float(t, C_WAIT_PCT, cpu->vcpu_wait_percent);
	table_set_float(t, C_CPU, cpu->cpu_seconds);
	table_set_float(t, C_VCPU_WAIT, cpu->vcpu_wait_seconds);
	char *vcpus = vcpus_json(cpu);
	table_set_json(t, C_VCPUS, vcpus);
	free(vcpus);
	const struct vm_cgroup *cg = &vm->cg;
	table_set_maybe(t, C_CG_MEM, cg->memory_bytes);
	table_set_maybe(t, C_CG_LIMIT, cg->limit_bytes);
	table_set_maybe(t, C_OOM, cg->oom_kills);
	for (int k = 0; k < PRESSURE_NKINDS; k++) {
		if (!cg->have_pressure[k])
			continue;
		const struct pressure *pr = &cg->pressure[k];
		table_set_float(t, C_PRESSURE + 4 * k + 0, pr->some_avg10);
		table_set_float(t, C_PRESSURE + 4 * k + 1, pr->full_avg10);
		table_set_float(t, C_PRESSURE + 4 * k + 2, pr->some_seconds);
		table_set_float(t, C_PRESSURE + 4 * k + 3, pr->full_seconds);
	}
	maybe_i64 mergeable = ksm_process_mergeable(&vm->mem);
	if (mergeable.known)
		table_set_bool(t, C_KSM_MERGEABLE, mergeable.v);
	table_set_str(t, C_KSM_REASON, ksm_unmergeable_reason(&vm->cfg, &vm->mem, &host->ksm));
	if (vm->guest_read) {
		table_set_maybe(t, C_BALLOON, vm->guest.balloon_bytes);
		table_set_maybe(t, C_GUEST_AVAIL, vm->guest.available_bytes);
		table_set_maybe(t, C_GUEST_FREE, vm->guest.free_bytes);
		table_set_maybe(t, C_GUEST_CACHES, vm->guest.caches_bytes);
		table_set_str(t, C_GUEST_WHY, vm->guest.why[0] ? vm->guest.why : NULL);
	}
}

/* The host's memory and KSM: the overview's two lines, mem's "host" and "ksm" objects. */
static void host_block(struct doc *d, const struct host *h)
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

/* One reading of the host and every VM. EXIT_OK or the exit code after a printed error. */
static int measure(struct ctx *ctx, const struct mem_opts *o, struct host *host, struct vm_list *vms)
{
	int r = host_read(&ctx->root, host);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "reading host memory", "%s/meminfo: %s", ctx->root.proc, strerror(-r));
	r = vm_discover(&ctx->root, o->pids, o->npids, vms);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "listing processes", "%s: %s", ctx->root.proc, strerror(-r));
	vm_measure_all(&ctx->root, host, vms, o->exact ? VM_MEASURE_EXACT : 0);
	if (!o->exact)
		pss_refine(&ctx->root, host, vms, o->pss_budget_seconds);
	for (size_t i = 0; o->guest && i < vms->n; i++)
		if (vms->vms[i].cfg.vmm == VMM_QEMU)
			vm_read_guest(&vms->vms[i], host, GUEST_TIMEOUT_MS, o->guest_poll_seconds, clock_wall_seconds());
	return EXIT_OK;
}

/* With --interval: CPU and wait rates of the VMs present at both readings (pid + start time). */
static int measure_rates(struct ctx *ctx, const struct mem_opts *o, struct host *host, struct vm_list *vms)
{
	struct mem_opts first = *o;
	first.exact = false;
	struct vm_list before;
	int rc = measure(ctx, &first, host, &before);
	if (rc != EXIT_OK)
		return rc;
	double t0 = clock_monotonic_seconds();
	sleep_for(o->interval_seconds);
	rc = measure(ctx, o, host, vms);
	double seconds = clock_monotonic_seconds() - t0;
	for (size_t i = 0; rc == EXIT_OK && i < vms->n; i++) {
		struct vm *vm = &vms->vms[i];
		for (size_t k = 0; k < before.n; k++)
			if (before.vms[k].pid == vm->pid && before.vms[k].start_ticks == vm->start_ticks)
				vm_cpu_rates(&before.vms[k].cpu, &vm->cpu, seconds);
	}
	vm_list_free(&before);
	return rc;
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
			if (vm->cfg.name[0])
				printf("%s %s (%s)", any ? "," : "KSM cannot merge the RAM of:", vm->cfg.name, why);
			else
				printf("%s pid %d (%s)", any ? "," : "KSM cannot merge the RAM of:", (int)vm->pid, why);
			any = true;
		}
	}
	if (any)
		printf("\n");
	if (stopped)
		printf("KSM is stopped (run=0): no guest memory is being merged ('vmhost ksm' says more)\n");
	size_t sampled = 0;
	for (size_t i = 0; i < vms->n; i++)
		sampled += vms->vms[i].pss_method == METHOD_SAMPLED;
	if (rows && !o->exact && sampled)
		printf("PSS sampled for %zu VM%s, estimated for the rest; OVERHEAD is an estimate (docs/accounting.md);"
		       " --exact reads the exact sources\n", sampled, sampled == 1 ? "" : "s");
	else if (rows && !o->exact)
		printf("PSS and OVERHEAD are cheap estimates (docs/accounting.md); --exact reads the exact sources\n");
}

static int run(struct ctx *ctx, int argc, char **argv, bool overview)
{
	struct mem_opts o = {.pss_budget_seconds = 0.005};
	bool help = false;
	int rc = parse_mem_opts(ctx, argc, argv, &o, &help);
	if (rc != EXIT_OK)
		return rc;
	if (help) {
		if (overview)
			printf("usage: vmhost [--pid PID]... [--exact]: host memory, KSM, then 'vmhost mem'\n\n");
		mem_help();
		return EXIT_OK;
	}
	struct host host;
	struct vm_list vms;
	rc = o.interval_seconds > 0 ? measure_rates(ctx, &o, &host, &vms) : measure(ctx, &o, &host, &vms);
	if (rc != EXIT_OK)
		return rc;
	if (vms.denied)
		warn(ctx, "no permission to read some /proc files of %u process%s (KSM or exact figures are n/a); run as root",
		     vms.denied, vms.denied == 1 ? "" : "es");

	/* The human table shows the rates only when measured, the cgroup only when a VM has one. */
	struct col cols[C_NCOLS];
	memcpy(cols, mem_cols, sizeof(cols));
	bool cgroup = false;
	for (size_t i = 0; i < vms.n; i++)
		cgroup |= vms.vms[i].cg.memory_bytes.known;
	if (!(o.interval_seconds > 0))
		cols[C_CPU_PCT].flags = cols[C_WAIT_PCT].flags = COL_JSON_ONLY;
	if (!cgroup)
		cols[C_CG_MEM].flags = COL_JSON_ONLY;
	if (!o.guest)
		cols[C_BALLOON].flags = cols[C_GUEST_AVAIL].flags = COL_JSON_ONLY;
	struct table *t = table_new(cols, C_NCOLS);
	for (size_t i = 0; t && i < vms.n; i++)
		fill_row(t, &vms.vms[i], &host);
	if (!t || table_error(t) < 0) {
		table_free(t);
		vm_list_free(&vms);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	}
	table_sort_desc(t, C_PSS);

	struct doc d;
	if (ctx->format == OUT_JSON) {
		ctx_doc(ctx, &d);
		doc_begin(&d, NULL);
		host_block(&d, &host);
		table_print_json(t, doc_json(&d), "vms");
		doc_int(&d, "skipped", NULL, MAYBE(vms.skipped));
		doc_float(&d, "interval_seconds", NULL, o.interval_seconds > 0 ? o.interval_seconds : NAN, 0);
		doc_end(&d);
		doc_finish(&d);
	} else if (ctx->format == OUT_CSV) {
		table_print_csv(t, stdout);
	} else {
		if (overview) {
			ctx_doc(ctx, &d);
			host_block(&d, &host);
			doc_finish(&d);
		}
		if (table_rows(t))
			table_print_human(t, stdout, ctx->raw_bytes);
		print_notes(&o, &vms, &host, table_rows(t));
	}
	table_free(t);
	vm_list_free(&vms);
	return EXIT_OK;
}

int cmd_mem(struct ctx *ctx, int argc, char **argv) { return run(ctx, argc, argv, false); }

int cmd_overview(struct ctx *ctx, int argc, char **argv) { return run(ctx, argc, argv, true); }
