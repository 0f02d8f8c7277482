/* vmhost ksm: every KSM counter and setting, plus rates measured over an interval. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/ksm_rates.h"
#include "out/json.h"
#include "out/table.h"

static void ksm_status_help(void)
{
	printf("usage: vmhost ksm [--interval SEC] [--json] [--bytes]\n"
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
	       "  vmhost ksm tune    the tuning daemon\n"
	       "  vmhost ksm sweep   the pages_to_scan / sleep_millisecs experiment\n"
	       "Details: docs/ksm.md\n");
}

static void sleep_seconds(double s)
{
	struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void print_or_na(const char *label, const char *value) { printf("%-12s %s\n", label, value); }

static void human(const struct ctx *ctx, const struct ksm_sample *b, const struct ksm_rates *r, pid_t ksmd)
{
	const struct ksm_sysfs *k = &b->k;
	char a[48], line[256];
	const char *state = !k->run.known ? "n/a" : k->run.v == 1 ? "running" : k->run.v == 2 ? "unmerging" : "stopped";
	printf("ksm %s: pages_to_scan %s, sleep_millisecs %s", state,
	       k->pages_to_scan.known ? (snprintf(a, sizeof(a), "%lld", (long long)k->pages_to_scan.v), a) : "n/a",
	       k->sleep_millisecs.known ? (snprintf(line, sizeof(line), "%lld", (long long)k->sleep_millisecs.v), line) : "n/a");
	if (k->advisor_mode[0])
		printf(", advisor %s", k->advisor_mode);
	if (k->smart_scan.known)
		printf(", smart_scan %s", k->smart_scan.v ? "on" : "off");
	printf("\n\n");
#define BYTES(v) (ctx->raw_bytes ? (snprintf(a, sizeof(a), "%lld", (long long)(v)), a) : (fmt_bytes(a, sizeof(a), (v)), a))
	if (r->saved_bytes.known) {
		snprintf(line, sizeof(line), "%s", BYTES(r->saved_bytes.v));
		if (isfinite(r->sharing_ratio))
			snprintf(line + strlen(line), sizeof(line) - strlen(line), " (sharing ratio %.2f)", r->sharing_ratio);
		print_or_na("saved", line);
	} else
		print_or_na("saved", "n/a");
	if (r->general_profit.known) {
		snprintf(line, sizeof(line), "%s%s", BYTES(r->general_profit.v),
			 r->general_profit_computed ? " (computed: this kernel has no general_profit)" : "");
		print_or_na("profit", line);
	} else
		print_or_na("profit", "n/a");
#undef BYTES
	if (isfinite(r->ksmd_cpu_percent))
		snprintf(line, sizeof(line), "%.2f%% of one CPU (pid %d)", r->ksmd_cpu_percent, (int)ksmd);
	else
		snprintf(line, sizeof(line), "n/a%s", ksmd ? "" : " (ksmd not found)");
	print_or_na("ksmd CPU", line);
	if (isfinite(r->pages_scanned_per_second))
		snprintf(line, sizeof(line), "%.0f pages/s", r->pages_scanned_per_second);
	else
		snprintf(line, sizeof(line), "n/a");
	print_or_na("scan rate", line);
	if (isfinite(r->full_scan_seconds)) {
		fmt_seconds(a, sizeof(a), r->full_scan_seconds);
		snprintf(line, sizeof(line), "%s (%s)", a, r->full_scan_measured ? "measured" : "estimated");
	} else
		snprintf(line, sizeof(line), "n/a%s", k->run.known && k->run.v != 1 ? " (KSM is not running)" : "");
	print_or_na("full scan", line);
	fmt_seconds(a, sizeof(a), r->interval_seconds);
	print_or_na("interval", a);
	printf("\n");
	for (size_t i = 0; i < ksm_nfiles; i++) {
		maybe_i64 v = *(const maybe_i64 *)((const char *)k + ksm_files[i].offset);
		if (v.known)
			printf("  %-36s %lld\n", ksm_files[i].name, (long long)v.v);
	}
	if (k->advisor_mode[0])
		printf("  %-36s %s\n", "advisor_mode", k->advisor_mode);
}

static void json_out(const struct ksm_sample *b, const struct ksm_rates *r)
{
	const struct ksm_sysfs *k = &b->k;
	struct json j;
	json_init(&j, stdout, false);
	json_object_begin(&j, NULL);
	json_bool(&j, "present", true);
	for (size_t i = 0; i < ksm_nfiles; i++) {
		maybe_i64 v = *(const maybe_i64 *)((const char *)k + ksm_files[i].offset);
		if (v.known)
			json_int(&j, ksm_files[i].name, v.v);
	}
	if (k->advisor_mode[0])
		json_string(&j, "advisor_mode", k->advisor_mode);
	json_maybe(&j, "saved_bytes", r->saved_bytes);
	json_double(&j, "sharing_ratio", r->sharing_ratio);
	json_double(&j, "ksmd_cpu_percent", r->ksmd_cpu_percent);
	json_double(&j, "pages_scanned_per_second", r->pages_scanned_per_second);
	json_double(&j, "full_scan_seconds", r->full_scan_seconds);
	if (isfinite(r->full_scan_seconds))
		json_string(&j, "full_scan_method", r->full_scan_measured ? "measured" : "estimated");
	else
		json_null(&j, "full_scan_method");
	json_maybe(&j, "general_profit_bytes", r->general_profit);
	json_double(&j, "interval_seconds", r->interval_seconds);
	json_object_end(&j);
	json_finish(&j);
}

int cmd_ksm_status(struct ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"interval", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	double interval = 1;
	args_reset();
	int c;
	while ((c = getopt_long(argc, argv, "+i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (arg_seconds(optarg, &interval) < 0)
				return usage_error(ctx, "--interval takes seconds (e.g. 1, 0.5), not '%s'", optarg);
			break;
		case 'h': ksm_status_help(); return EXIT_OK;
		default: return usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(ctx, "unexpected argument '%s'", argv[optind]);

	struct ksm_sampler sampler;
	ksm_sampler_init(&sampler, &ctx->root);
	struct ksm_sample first, prev, now;
	int r = ksm_sample_take(&sampler, &first);
	if (r == -ENOENT) {
		if (ctx->format == OUT_JSON) {
			struct json j;
			json_init(&j, stdout, false);
			json_object_begin(&j, NULL);
			json_bool(&j, "present", false);
			json_null(&j, "saved_bytes");
			json_null(&j, "sharing_ratio");
			json_null(&j, "ksmd_cpu_percent");
			json_null(&j, "pages_scanned_per_second");
			json_null(&j, "full_scan_seconds");
			json_null(&j, "interval_seconds");
			json_object_end(&j);
			json_finish(&j);
		} else
			printf("KSM is not available in this kernel (no %s/kernel/mm/ksm)\n", ctx->root.sys);
		return EXIT_OK;
	}
	/* Poll full_scans a few times a second so a scan that ends inside the interval is timed. */
	struct ksm_scan_clock clock;
	ksm_scan_clock_init(&clock);
	ksm_scan_clock_feed(&clock, &first);
	prev = first;
	double step = interval / 20 < 0.05 ? 0.05 : interval / 20, end = first.t + interval;
	for (;;) {
		double left = end - ksm_now();
		if (left <= 0)
			break;
		sleep_seconds(left < step ? left : step);
		if (ksm_sample_take(&sampler, &now) < 0)
			break;
		ksm_scan_clock_feed(&clock, &now);
		prev = now;
	}
	struct ksm_rates rates;
	ksm_rates_compute(&first, &prev, sysconf(_SC_PAGESIZE), &clock, &rates);
	if (ctx->format == OUT_JSON)
		json_out(&prev, &rates);
	else
		human(ctx, &prev, &rates, sampler.ksmd_pid);
	return EXIT_OK;
}
