/* vmhost share: content sketches of each VM's guest RAM, and the sharing map they give: per VM
 * what it shares within itself, with each other VM, and alone; for the host, what KSM could save
 * with every VM merged against what is saved now (docs/share.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "cmd/secret_file.h"
#include "core/base/siphash.h"
#include "core/base/stop.h"
#include "core/model/survey.h"
#include "core/share/share_run.h"
#include "core/share/sketch.h"
#include "core/share/fleet.h"
#include "core/share/share_saved.h"
#include "io/file.h"
#include "out/share_view.h"
#include "store/store_share.h"

#define SHARE_MAX_PIDS 256

struct share_opts {
	pid_t pids[SHARE_MAX_PIDS];
	size_t npids;
	long sample_n;
	double cpu_budget;
	const char *key_file;
	const char *db; /* where the map is kept for the report, as record's */
	const char *out; /* --out FILE: the sketches, for share plan (parse/sketch_file.h) */
};

static int opt_pid(struct ctx *ctx, void *opts, const char *arg)
{
	struct share_opts *o = opts;
	return opt_pid_add(ctx, arg, o->pids, &o->npids, SHARE_MAX_PIDS, "too many --pid options");
}

static int opt_sample(struct ctx *ctx, void *opts, const char *arg)
{
	return opt_sample_rate(ctx, arg, &((struct share_opts *)opts)->sample_n);
}

static const struct opt share_opt_table[] = {
	{OPT("pid", 'p', OPT_CALL), .call = opt_pid},
	{OPT("sample", 's', OPT_CALL), .call = opt_sample},
	{OPT("cpu-budget", 0, OPT_NUMBER), OPT_AT(struct share_opts, cpu_budget), .lo = 0, .hi = 100,
	 .error = "--cpu-budget takes a percent of one CPU from 0 (no limit) to 100, not '%s'"},
	{OPT("key-file", 0, OPT_STRING), OPT_AT(struct share_opts, key_file)},
	{OPT("db", 'd', OPT_STRING), OPT_AT(struct share_opts, db)},
	{OPT("out", 'o', OPT_STRING), OPT_AT(struct share_opts, out)},
	{OPT("help", 'h', OPT_HELP)},
};

static void share_help(void)
{
	printf("usage: vmhost share [--pid PID]... [--sample 1/N] [--cpu-budget PCT] [--key-file FILE] [--db FILE]\n"
	       "                    [--out FILE] [--json|--csv]\n"
	       "       vmhost share plan (--sketch FILE | --from URL)... [--vm NAME] [--json|--csv]\n"
	       "\n"
	       "Reads each VM's guest RAM (never writing it; root or CAP_SYS_PTRACE), hashes every resident\n"
	       "4 KiB page with a keyed hash, keeps the pages whose hash is in the lowest 1/N of the hash\n"
	       "space, counts zero pages apart, and prints the sharing map: per VM the pages duplicated\n"
	       "within itself, shared with each other VM, and unique; for the host what KSM could save\n"
	       "with every VM merged, against what is saved now (pages_sharing, and the VMs' empty pages\n"
	       "already on the zero page: KSM's, and those a huge page's split freed).\n"
	       "\n"
	       "  --pid PID         only this VM (repeatable; default every VM)\n"
	       "  --sample 1/N      keep 1/N of the hash space (default 1/32: ~25 KiB of sketch per GiB)\n"
	       "  --cpu-budget PCT  at most this much of one CPU while reading (default 50; 0 no limit)\n"
	       "  --key-file FILE   the fleet's hash key (root-only, mode 0600), created when absent;\n"
	       "                    without it a random key for this run: its sketches compare among\n"
	       "                    themselves only\n"
	       "  --db FILE         keep the map in this database for 'vmhost report' (record's: written\n"
	       "                    beside a running recorder); without it no database is written\n"
	       "  --out FILE        also write the sketches there (with the host's MemTotal and\n"
	       "                    MemAvailable and the key's fingerprint), for 'vmhost share plan'\n"
	       "  --json            the map as one JSON document; --csv: its table, a row per VM (the\n"
	       "                    VMs it shares with as JSON text)\n"
	       "\n"
	       "A sketch read only in part (the VM exited, a RAM mapping went away, no permission) is\n"
	       "marked partial with its reason. What a sketch reveals, and what not: docs/share.md.\n");
}

static void progress(void *arg, const struct sketch *s)
{
	(void)arg;
	fprintf(stderr, "\rvmhost: share: %s (pid %d): %lld MiB read   ", s->name[0] ? s->name : "?", (int)s->pid,
		(long long)(s->pages * SKETCH_PAGE_BYTES >> 20));
}

/* Keeps the map in --db for the report; a database that cannot take it is a warning, the map is
 * printed all the same. */
static void share_store(struct ctx *ctx, const struct share_opts *o, const struct sketch *s, size_t n,
			const struct share_map *m, const struct host *h)
{
	struct share_run run;
	struct store *db = NULL;
	int r = share_run_of(s, n, m, clock_wall_seconds(), h->page_size_bytes, share_saved_now_bytes(m, h), &run);
	if (r == 0) {
		r = store_open_side(o->db, &db);
		if (r == 0)
			r = store_share_write(db, &run);
		store_close(db);
		share_run_free(&run);
	}
	if (r < 0)
		warn(ctx, "the sharing map is not kept in %s: %s", o->db, store_strerror(r));
	else if (ctx->format == OUT_HUMAN)
		printf("\nkept in %s: 'vmhost report --db %s' draws it\n", o->db, o->db);
}

/* Sketches every wanted VM into *ret (n of them), with progress on a terminal. 0 or -ENOMEM. */
static int sketch_all(struct ctx *ctx, const struct share_opts *o, const struct vm_list *vms,
		      const struct siphash_key *key, struct sketch **ret, size_t *ret_n)
{
	struct sketch_budget budget;
	sketch_budget_start(&budget, o->cpu_budget);
	bool tty = ctx->format == OUT_HUMAN && isatty(STDERR_FILENO);
	struct sketch_opts so = {.key = *key, .sample_n = (uint64_t)o->sample_n, .budget = &budget,
				 .progress = tty ? progress : NULL, .stop = stop_flag()};
	int r = sketch_vms(&ctx->root, vms, o->pids, o->npids, &so, ret, ret_n);
	if (tty)
		fputs("\r\033[K", stderr);
	return r;
}

/* --out: the sketches as a file, replaced whole. */
static int write_sketches(struct ctx *ctx, const struct share_opts *o, const struct host *host, const struct sketch *s,
			  size_t n, const struct siphash_key *key)
{
	char *buf = NULL;
	size_t len = 0;
	int r = sketch_file_of_host(host, s, n, key, &buf, &len);
	if (r == 0)
		r = io_write_whole(o->out, buf, len, 0600);
	free(buf);
	if (r < 0)
		return fail(ctx, exit_code_for(r), "writing the sketches", "%s: %s", o->out, strerror(-r));
	return EXIT_OK;
}

static int share_report(struct ctx *ctx, const struct share_opts *o, struct sketch *s, size_t n,
			const struct host *host)
{
	size_t denied = 0;
	for (size_t i = 0; i < n; i++)
		denied += s[i].gap == SKETCH_NO_PERMISSION;
	if (n && denied == n)
		return fail(ctx, EXIT_NOPERM, "reading guest RAM", "no permission: run as root (or with CAP_SYS_PTRACE)");
	bool zero_free = host->ksm.use_zero_pages.known && host->ksm.use_zero_pages.v == 1;
	struct share_map m;
	int r = share_map_build(s, n, zero_free, &m), rc = EXIT_OK;
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "sharing map", "%s", strerror(-r));
	struct share_view v = {.sketches = s, .n = n, .map = &m, .page_size_bytes = host->page_size_bytes,
			       .saved_now_bytes = share_saved_now_bytes(&m, host),
			       .ksm_saved_bytes = ksm_saved_bytes(&host->ksm, host->page_size_bytes)};
	if (!n && ctx->format == OUT_HUMAN)
		printf("no VMs found (QEMU, cloud-hypervisor, firecracker, crosvm); --pid PID adds any process\n");
	else if ((r = share_view_print(stdout, (enum doc_form)ctx->format, &v)) < 0)
		rc = fail(ctx, EXIT_FAIL, "output", "%s", strerror(-r));
	if (n && rc == EXIT_OK && o->db)
		share_store(ctx, o, s, n, &m, host);
	share_map_free(&m);
	return rc;
}

int cmd_share_map(struct ctx *ctx, int argc, char **argv)
{
	struct share_opts o = {.sample_n = SKETCH_DEFAULT_SAMPLE, .cpu_budget = 50};
	static const struct opts_spec spec = OPTS_SPEC(share_opt_table, 0, share_help);
	int rc = opts_parse(ctx, &spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	if (strcmp(ctx->root.proc, "/proc"))
		return fail(ctx, EXIT_USAGE, "--proc-root", "share reads live processes' memory: only with /proc");
	struct siphash_key key;
	if ((rc = fleet_key(ctx, o.key_file, &key)) != EXIT_OK)
		return rc;
	struct host host;
	struct vm_list vms;
	enum survey_step step;
	struct survey_opts so = {.pids = o.pids, .npids = o.npids};
	int r = survey_take(&ctx->root, &so, &host, &vms, &step);
	if (r < 0)
		return fail(ctx, exit_code_for(r), step == SURVEY_HOST ? "reading host memory" : "listing processes",
			    "%s: %s", ctx->root.proc, strerror(-r));
	stop_catch(false);
	struct sketch *s = NULL;
	size_t n = 0;
	r = sketch_all(ctx, &o, &vms, &key, &s, &n);
	rc = r < 0 ? fail(ctx, EXIT_FAIL, "sketches", "%s", strerror(-r)) : share_report(ctx, &o, s, n, &host);
	if (rc == EXIT_OK && o.out)
		rc = write_sketches(ctx, &o, &host, s, n, &key);
	for (size_t i = 0; i < n; i++)
		sketch_free(&s[i]);
	free(s);
	vm_list_free(&vms);
	explicit_bzero(&key, sizeof(key));
	return rc;
}
