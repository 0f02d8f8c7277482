/* vmhost ksm: every KSM counter and setting, plus rates measured over an interval. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "core/base/stop.h"
#include "core/model/ksm.h"
#include "core/tune/ksm_guard.h"
#include "io/file.h"
#include "out/json.h"
#include "out/table.h"
#include "core/model/host.h"

static void ksm_status_help(void)
{
	printf("usage: vmhost ksm [status] [--interval SEC] [--json] [--bytes]\n"
	       "       vmhost ksm status --restore\n"
	       "\n"
	       "Every /sys/kernel/mm/ksm file, and figures measured over the interval (default 1 s):\n"
	       "  saved        (pages_sharing + ksm_zero_pages) x page size\n"
	       "  ratio        pages_sharing / pages_shared\n"
	       "  ksmd CPU     percent of one CPU (ksmd's /proc/PID/schedstat run time)\n"
	       "  scan rate    pages scanned per second\n"
	       "  full scan    seconds per full scan: measured when two scans end inside the interval,\n"
	       "               else estimated from the pages KSM tracks and the scan rate\n"
	       "  profit       general_profit (computed by the kernel's formula on older kernels)\n"
	       "\n"
	       "  --restore    put back what a KSM writer that died (a tuner killed by SIGKILL) left\n"
	       "               changed, from the settings it wrote down first; exit 0 when nothing was\n"
	       "               left (root; the KSM lock must be free)\n"
	       "\n"
	       "  vmhost ksm tune    the tuning daemon\n"
	       "  vmhost ksm sweep   the pages_to_scan / sleep_millisecs experiment\n"
	       "Details: docs/ksm.md\n");
}

/* Every KSM file and the rates, in one pass for the human text, JSON and CSV. */
static void ksm_doc(struct doc *d, const struct ksm_sample *b, const struct ksm_rates *r, pid_t ksmd)
{
	const struct ksm_sysfs *k = &b->k;
	doc_begin(d, NULL);
	doc_bool(d, "present", NULL, true);
	doc_str(d, NULL, "ksm %s", ksm_run_word(k->run));
	doc_int(d, NULL, ": pages_to_scan %s", k->pages_to_scan);
	doc_int(d, NULL, ", sleep_millisecs %s", k->sleep_millisecs);
	if (k->advisor_mode[0])
		doc_str(d, NULL, ", advisor %s", k->advisor_mode);
	if (k->smart_scan.known)
		doc_str(d, NULL, ", smart_scan %s", k->smart_scan.v ? "on" : "off");
	doc_text(d, "\n\n");

	doc_bytes(d, "saved_bytes", "saved        %s", r->saved_bytes);
	doc_float(d, "sharing_ratio", r->saved_bytes.known ? " (sharing ratio %s)" : NULL, r->sharing_ratio, 2);
	doc_bytes(d, "general_profit_bytes", "\nprofit       %s", r->general_profit);
	if (r->general_profit.known && r->general_profit_computed)
		doc_text(d, " (computed: this kernel has no general_profit)");
	bool cpu = isfinite(r->ksmd_cpu_percent);
	doc_float(d, "ksmd_cpu_percent", cpu ? "\nksmd CPU     %s%% of one CPU" : "\nksmd CPU     %s", r->ksmd_cpu_percent,
		  2);
	if (cpu)
		doc_text(d, " (pid %d)", (int)ksmd);
	else if (!ksmd)
		doc_text(d, " (ksmd not found)");
	doc_float(d, "pages_scanned_per_second",
		  isfinite(r->pages_scanned_per_second) ? "\nscan rate    %s pages/s" : "\nscan rate    %s",
		  r->pages_scanned_per_second, 0);
	bool scan = isfinite(r->full_scan_seconds);
	doc_seconds(d, "full_scan_seconds", "\nfull scan    %s", r->full_scan_seconds);
	doc_str(d, "full_scan_method", scan ? " (%s)" : NULL,
		scan ? (r->full_scan_measured ? "measured" : "estimated") : NULL);
	if (!scan && ksm_is_off(k))
		doc_text(d, " (KSM is not running)");
	doc_seconds(d, "interval_seconds", "\ninterval     %s\n\n", r->interval_seconds);

	for (size_t i = 0; i < ksm_nfiles; i++) {
		maybe_i64 v = *(const maybe_i64 *)((const char *)k + ksm_files[i].offset);
		char fmt[64];
		snprintf(fmt, sizeof(fmt), "  %-36s %%s\n", ksm_files[i].name);
		if (v.known)
			doc_int(d, ksm_files[i].name, fmt, v);
	}
	if (k->advisor_mode[0])
		doc_str(d, "advisor_mode", "  advisor_mode                         %s\n", k->advisor_mode);
	doc_end(d);
}

/* A kernel without KSM: the derived figures are null. */
static void absent_doc(struct doc *d, const char *sys)
{
	doc_begin(d, NULL);
	doc_bool(d, "present", NULL, false);
	static const char *const derived[] = {"saved_bytes", "sharing_ratio", "ksmd_cpu_percent",
					      "pages_scanned_per_second", "full_scan_seconds", "interval_seconds"};
	for (size_t i = 0; i < sizeof(derived) / sizeof(derived[0]); i++)
		doc_float(d, derived[i], NULL, NAN, 0);
	doc_text(d, "KSM is not available in this kernel (no %s/kernel/mm/ksm)\n", sys);
	doc_end(d);
}

struct status_opts {
	double interval; /* seconds the rates are measured over */
	bool restore;
};

static const struct opt status_opt_table[] = {
	{OPT("interval", 'i', OPT_SECONDS), OPT_AT(struct status_opts, interval),
	 .error = "--interval takes seconds (e.g. 1, 0.5), not '%s'"},
	{OPT("restore", 'r', OPT_FLAG), OPT_AT(struct status_opts, restore)},
	{OPT("help", 'h', OPT_HELP)},
};

/* What --restore put back: {"restored": false} or {"restored": true, "pid", "dir", "settings"}. */
static void restored_doc(const struct ctx *ctx, const struct ksm_saved *left, bool restored)
{
	if (ctx->format != OUT_JSON) {
		if (!restored)
			printf("nothing to restore: no KSM writer left settings changed\n");
		else {
			printf("restored what vmhost (pid %ld) left changed in %s:", left->pid, left->dir);
			for (size_t i = 0; i < left->n; i++)
				printf(" %s=%s", left->set[i].name, left->set[i].value);
			printf("\n");
		}
		return;
	}
	struct json j;
	json_init(&j, stdout, false);
	json_object_begin(&j, NULL);
	json_bool(&j, "restored", restored);
	if (restored) {
		json_int(&j, "pid", left->pid);
		json_string(&j, "dir", left->dir);
		json_object_begin(&j, "settings");
		for (size_t i = 0; i < left->n; i++)
			json_string(&j, left->set[i].name, left->set[i].value);
		json_object_end(&j);
	}
	json_object_end(&j);
	json_finish(&j);
}

/* --restore: what a KSM writer that died left changed, put back under the KSM lock (the unit's
 * ExecStopPost, or by hand). */
static int restore_left(struct ctx *ctx)
{
	if (geteuid() != 0)
		return fail(ctx, EXIT_NOPERM, "permission", "restoring KSM settings needs root");
	int r = ksm_lock(false);
	if (r == -EBUSY)
		return fail(ctx, EXIT_FAIL, "KSM busy", "a running vmhost holds " KSM_LOCK_PATH
			    " (it restores its own settings, and what one that died left, itself)");
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "KSM lock", KSM_LOCK_PATH ": %s", io_lock_strerror(r));
	struct ksm_saved left;
	r = ksm_guard_restore_left(&ctx->root, &left);
	ksm_unlock();
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "restoring KSM settings", "%s", ksm_guard_strerror(r));
	restored_doc(ctx, &left, r > 0);
	return EXIT_OK;
}

int cmd_ksm_status(struct ctx *ctx, int argc, char **argv)
{
	struct status_opts o = {.interval = 1};
	static const struct opts_spec spec = OPTS_SPEC(status_opt_table, 0, ksm_status_help);
	int rc = opts_parse(ctx, &spec, argc, argv, &o);
	if (rc != OPTS_GO)
		return rc;
	if (o.restore)
		return restore_left(ctx);

	struct ksm_sampler sampler;
	ksm_sampler_init(&sampler, &ctx->root);
	struct ksm_sample first, prev, now;
	int r = ksm_sample_take(&sampler, &first);
	struct doc d;
	if (r == -ENOENT) {
		ctx_doc(ctx, &d);
		absent_doc(&d, ctx->root.sys);
		return doc_finish(&d) < 0 ? EXIT_FAIL : EXIT_OK;
	}
	/* Poll full_scans a few times a second so a scan that ends inside the interval is timed. */
	struct ksm_scan_clock clock;
	ksm_scan_clock_init(&clock);
	ksm_scan_clock_feed(&clock, &first);
	prev = first;
	double step = o.interval / 20 < 0.05 ? 0.05 : o.interval / 20, end = first.t + o.interval;
	for (;;) {
		double left = end - clock_monotonic_seconds();
		if (left <= 0)
			break;
		sleep_for(left < step ? left : step);
		if (ksm_sample_take(&sampler, &now) < 0)
			break;
		ksm_scan_clock_feed(&clock, &now);
		prev = now;
	}
	struct ksm_rates rates;
	ksm_rates_compute(&first, &prev, host_page_size(), &clock, &rates);
	ctx_doc(ctx, &d);
	ksm_doc(&d, &prev, &rates, sampler.ksmd_pid);
	return doc_finish(&d) < 0 ? EXIT_FAIL : EXIT_OK;
}
