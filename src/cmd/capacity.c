/* vmhost capacity: how many more guests of a size this host can take, now, after reclaim and
 * with sharing (core/sample/capacity.h; docs/capacity.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "cmd/secret_file.h"
#include "core/base/stop.h"
#include "core/model/survey.h"
#include "core/sample/capacity.h"
#include "core/share/fleet.h"
#include "out/capacity_view.h"

struct capacity_cmd_opts {
	uint64_t size_bytes;
	const char *image;       /* --image VM: its name or pid */
	double reserve_percent;
	uint64_t overhead_bytes; /* --overhead; 0: measured */
	double cpu_budget;       /* reading guest RAM for --image's sketches */
	const char *libvirt_uri;
};

static void capacity_help(void)
{
	printf("usage: vmhost capacity --size SIZE [--image VM] [--reserve PCT] [--overhead SIZE]\n"
	       "                       [--cpu-budget PCT] [--libvirt-uri URI] [--json|--csv]\n"
	       "\n"
	       "How many more guests of SIZE this host can take:\n"
	       "  now            MemAvailable less the reserve, each new guest costing SIZE and the\n"
	       "                 VMM's overhead (measured exactly, --exact's read: the --image VM's,\n"
	       "                 else the median of today's QEMUs')\n"
	       "  after reclaim  adding what the guests would give back (balloon, free page reporting,\n"
	       "                 dropped caches; the lower side of each 'mem --guest' figure)\n"
	       "  with sharing   with --image, less what a new guest like VM would share by KSM (the\n"
	       "                 share plan's figure, from sketches of every VM's RAM here)\n"
	       "  --size SIZE       each new guest's RAM (e.g. 4G)\n"
	       "  --image VM        a running VM (name or pid) the new guests are like: their VMM and its\n"
	       "                    overhead, huge pages or not, what they share\n"
	       "  --reserve PCT     of MemTotal kept free (default 10: the KSM tuner's pressure line)\n"
	       "  --overhead SIZE   each new guest's VMM overhead, instead of measuring today's VMs\n"
	       "  --cpu-budget PCT  at most this much of one CPU reading guest RAM for --image (default 50)\n"
	       "  --libvirt-uri URI the libvirt of libvirt's QEMUs' guest figures (default qemu:///system)\n"
	       "\n"
	       "The figures and their bounds: docs/capacity.md.\n");
}

static const struct opt capacity_opt_table[] = {
	{OPT("size", 's', OPT_SIZE), OPT_AT(struct capacity_cmd_opts, size_bytes), .lo = 1,
	 .error = "--size takes a size (e.g. 4G), not '%s'"},
	{OPT("image", 'i', OPT_STRING), OPT_AT(struct capacity_cmd_opts, image)},
	{OPT("reserve", 'r', OPT_NUMBER), OPT_AT(struct capacity_cmd_opts, reserve_percent), .lo = 0, .hi = 100,
	 .error = "--reserve takes a percent of MemTotal from 0 to 100, not '%s'"},
	{OPT("overhead", 'o', OPT_SIZE), OPT_AT(struct capacity_cmd_opts, overhead_bytes), .lo = 0,
	 .error = "--overhead takes a size (e.g. 200M), not '%s'"},
	{OPT("cpu-budget", 0, OPT_NUMBER), OPT_AT(struct capacity_cmd_opts, cpu_budget), .lo = 0, .hi = 100,
	 .error = "--cpu-budget takes a percent of one CPU from 0 (no limit) to 100, not '%s'"},
	{OPT("libvirt-uri", 0, OPT_STRING), OPT_AT(struct capacity_cmd_opts, libvirt_uri)},
	{OPT("help", 'h', OPT_HELP)},
};

/* The VM --image names: by pid, else by name; NULL when none is. */
static const struct vm *find_image(const struct vm_list *vms, const char *image)
{
	char *end;
	long pid = strtol(image, &end, 10);
	for (size_t i = 0; i < vms->n; i++)
		if ((!*end && vms->vms[i].pid == pid) || !strcmp(vms->vms[i].cfg.name, image))
			return &vms->vms[i];
	return NULL;
}

/* What a new guest like vm would share here, into o (its reason when unknown). EXIT_OK or a failure's. */
static int image_sharing(struct ctx *ctx, const struct capacity_cmd_opts *co, const struct host *host,
			 const struct vm_list *vms, const struct vm *vm, struct capacity_opts *o, char *why, size_t cap)
{
	if (!host->ksm.present || !host->ksm.run.known || host->ksm.run.v != 1) {
		snprintf(why, cap, "KSM is not running (/sys/kernel/mm/ksm/run is not 1): nothing is shared");
		return EXIT_OK;
	}
	const char *unmergeable = ksm_unmergeable_reason(&vm->cfg, &vm->mem, &host->ksm);
	if (unmergeable) {
		snprintf(why, cap, "KSM does not merge a guest like it (%s)", unmergeable);
		return EXIT_OK;
	}
	if (strcmp(ctx->root.proc, "/proc")) {
		snprintf(why, cap, "guest RAM is read from live processes only, not under --proc-root");
		return EXIT_OK;
	}
	struct siphash_key key;
	int rc = fleet_key(ctx, NULL, &key);
	if (rc != EXIT_OK)
		return rc;
	struct sketch_budget budget;
	sketch_budget_start(&budget, co->cpu_budget);
	struct sketch_opts so = {.key = key, .sample_n = SKETCH_DEFAULT_SAMPLE, .budget = &budget, .stop = stop_flag()};
	int64_t shared;
	int r = share_like_here(&ctx->root, host, vms, vm->pid, &so, &shared, why, cap);
	if (r == -ENOMEM)
		return fail(ctx, EXIT_FAIL, "sketches", "%s", strerror(-r));
	if (r == 0)
		o->shared_bytes = MAYBE(shared);
	return EXIT_OK;
}

int cmd_capacity(struct ctx *ctx, int argc, char **argv)
{
	struct capacity_cmd_opts co = {.reserve_percent = CAPACITY_RESERVE_PERCENT, .cpu_budget = 50};
	static const struct opts_spec spec = OPTS_SPEC(capacity_opt_table, 0, capacity_help);
	int rc = opts_parse(ctx, &spec, argc, argv, &co);
	if (rc != OPTS_GO)
		return rc;
	if (!co.size_bytes)
		return usage_error(ctx, "--size SIZE is needed");
	struct host host;
	struct vm_list vms;
	enum survey_step step;
	struct survey_opts so = {.exact = true, .guest = true, .libvirt_uri = co.libvirt_uri};
	int r = survey_take(&ctx->root, &so, &host, &vms, &step);
	if (r < 0)
		return fail(ctx, exit_code_for(r), step == SURVEY_HOST ? "reading host memory" : "listing processes",
			    "%s: %s", ctx->root.proc, strerror(-r));
	struct capacity_opts o = {.size_bytes = (int64_t)co.size_bytes, .reserve_percent = co.reserve_percent,
				  .overhead_bytes = co.overhead_bytes ? MAYBE((int64_t)co.overhead_bytes) : UNKNOWN,
				  .kind = VMM_QEMU, .shared_bytes = UNKNOWN};
	char sharing_why[256] = "";
	rc = EXIT_OK;
	const struct vm *image = co.image ? find_image(&vms, co.image) : NULL;
	if (co.image && !image)
		rc = fail(ctx, EXIT_USAGE, "--image", "%s: no such VM on this host", co.image);
	else if (image) {
		o.kind = image->cfg.vmm;
		if (!co.overhead_bytes && image->overhead_bytes.known) /* a guest like it: its VMM's overhead */
			o.overhead_bytes = image->overhead_bytes, o.overhead_vms = 1;
		o.hugetlb = ram_on_hugetlb(&image->cfg, &image->mem);
		stop_catch(false);
		rc = image_sharing(ctx, &co, &host, &vms, image, &o, sharing_why, sizeof(sharing_why));
		o.sharing_why = sharing_why;
	}
	if (rc == EXIT_OK) {
		struct capacity c;
		capacity_compute(&host, &vms, &o, &c);
		struct doc d;
		ctx_doc(ctx, &d);
		capacity_doc(&d, &c, co.reserve_percent, image ? (image->cfg.name[0] ? image->cfg.name : co.image) : NULL);
		if (doc_finish(&d) < 0)
			rc = fail(ctx, EXIT_FAIL, "output", "%s", strerror(EIO));
	}
	vm_list_free(&vms);
	return rc;
}
