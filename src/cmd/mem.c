/* vmhost mem, and the host overview (vmhost with no command). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/host.h"
#include "core/vm.h"
#include "out/json.h"
#include "out/table.h"

enum {
	C_PID, C_NAME, C_VMM, C_UUID, C_CGROUP, C_HELPERS, C_GUEST_RAM, C_RSS, C_RSS_ANON, C_RSS_FILE,
	C_RSS_SHMEM, C_SWAP, C_KSM_MERGING, C_KSM_ZERO, C_KSM_PROFIT, C_KSM_SAVED, C_PSS, C_PSS_METHOD, C_PSS_BOUND,
	C_OVERHEAD, C_OVERHEAD_METHOD, C_NCOLS
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
};

struct mem_opts {
	pid_t pids[256];
	size_t npids;
	bool exact;
};

static int parse_mem_opts(struct ctx *ctx, int argc, char **argv, struct mem_opts *o, bool *help)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"exact", no_argument, NULL, 'x'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	args_reset();
	int c;
	while ((c = getopt_long(argc, argv, "+p:xh", longopts, NULL)) != -1) {
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
	printf("usage: vmhost mem [--pid PID]... [--exact] [--json|--csv] [--bytes]\n"
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
	       "  --pid PID  add any process (repeatable); not a VM -> vmm \"process\"\n"
	       "  --exact    read the expensive exact sources (slow for KSM-merged guests)\n"
	       "\n"
	       "Formulas and error bounds: docs/accounting.md. n/a (null in JSON) means unknown.\n");
}

static const char *or_null(const char *s) { return s && s[0] ? s : NULL; }

static void fill_row(struct table *t, const struct vm *vm)
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

static int run(struct ctx *ctx, int argc, char **argv, bool overview)
{
	struct mem_opts o = {0};
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
	int r = host_read(&ctx->root, &host);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "reading host memory", "%s/meminfo: %s", ctx->root.proc, strerror(-r));
	struct vm_list vms;
	r = vm_discover(&ctx->root, o.pids, o.npids, &vms);
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "listing processes", "%s: %s", ctx->root.proc, strerror(-r));
	vm_measure_all(&ctx->root, &host, &vms, o.exact ? VM_MEASURE_EXACT : 0);
	if (vms.denied)
		warn(ctx, "no permission to read some /proc files of %u process%s (KSM or exact figures are n/a); run as root",
		     vms.denied, vms.denied == 1 ? "" : "es");

	struct table *t = table_new(mem_cols, C_NCOLS);
	if (!t) {
		vm_list_free(&vms);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	}
	for (size_t i = 0; i < vms.n; i++)
		fill_row(t, &vms.vms[i]);
	if (table_error(t) < 0) {
		table_free(t);
		vm_list_free(&vms);
		return fail(ctx, EXIT_FAIL, "output", "%s", strerror(ENOMEM));
	}
	table_sort_desc(t, C_PSS);

	if (ctx->format == OUT_JSON) {
		struct doc d;
		ctx_doc(ctx, &d);
		doc_begin(&d, NULL);
		host_block(&d, &host);
		table_print_json(t, doc_json(&d), "vms");
		doc_int(&d, "skipped", NULL, MAYBE(vms.skipped));
		doc_end(&d);
		doc_finish(&d);
	} else if (ctx->format == OUT_CSV) {
		table_print_csv(t, stdout);
	} else {
		if (overview) {
			struct doc d;
			ctx_doc(ctx, &d);
			host_block(&d, &host);
			doc_finish(&d);
		}
		if (table_rows(t))
			table_print_human(t, stdout, ctx->raw_bytes);
		else
			printf("no VMs found (QEMU, cloud-hypervisor, firecracker, crosvm); --pid PID adds any process\n");
		if (vms.skipped)
			printf("(%u process%s vanished or could not be read while sampling)\n", vms.skipped,
			       vms.skipped == 1 ? "" : "es");
		if (table_rows(t) && !o.exact)
			printf("PSS and OVERHEAD are cheap estimates (docs/accounting.md); --exact reads the exact sources\n");
	}
	table_free(t);
	vm_list_free(&vms);
	return EXIT_OK;
}

int cmd_mem(struct ctx *ctx, int argc, char **argv) { return run(ctx, argc, argv, false); }

int cmd_overview(struct ctx *ctx, int argc, char **argv) { return run(ctx, argc, argv, true); }
