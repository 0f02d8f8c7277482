/* vmhost: what each VM really costs a Linux virtualization host. Command table and global
 * options only; every command lives in src/cmd/. */
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

static const struct subcommand commands[] = {
	{"mem", cmd_mem, "per-VM memory: RSS, PSS, KSM savings, VMM overhead"},
	{"ksm", cmd_ksm, "KSM status; 'ksm tune' daemon; 'ksm sweep' experiment"},
	{"bench", cmd_bench, "benchmarks: accounting, ksm, alloc"},
	{"exits", cmd_exits, "KVM exit and event counters per VM"},
	{"record", cmd_record, "sample everything into SQLite"},
	{"growth", cmd_growth, "VMs whose memory beyond guest RAM keeps growing"},
	{"capacity", cmd_capacity, "how many more guests of a size fit: now, after reclaim, with sharing"},
	{"report", cmd_report, "one self-contained HTML report"},
	{"serve", cmd_serve, "Prometheus metrics on /metrics"},
	{"doctor", cmd_doctor, "what is wrong with this host's VMs: findings, evidence, fixes"},
	{"share", cmd_share, "which VMs share memory with which: content sketches, the sharing map"},
	{"top", cmd_top, "live view of every VM: CPU, vCPU delay, memory, KSM, pressure, exits"},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmhost [GLOBAL OPTIONS] [COMMAND] [OPTIONS]\n"
		"\n"
		"With no command: the host overview (memory, KSM, then the 'mem' table).\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"  help     'vmhost help COMMAND' explains one command\n"
		"\n"
		"global options (before or after the command):\n"
		"  --proc-root DIR  where procfs is (default /proc)\n"
		"  --sys-root DIR   where sysfs is (default /sys); debugfs is DIR/kernel/debug\n"
		"  --json           one JSON document on stdout\n"
		"  --csv            CSV with a header line (table output)\n"
		"  --bytes          raw byte counts instead of KiB/MiB/GiB\n"
		"  --version        print the version\n"
		"  -h, --help       this help\n"
		"\n"
		"exit codes: 0 ok, 1 runtime failure, 2 usage error, 77 missing privilege\n");
}

/* Takes the global options out of argv wherever they stand (up to a "--"). Returns the new
 * argc, or -1 after printing a usage error. */
static int global_options(struct ctx *ctx, int argc, char **argv, bool *help, bool *version)
{
	int w = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			while (i < argc)
				argv[w++] = argv[i++];
			break;
		}
		const char **root = !strncmp(a, "--proc-root", 11) ? &ctx->root.proc
				  : !strncmp(a, "--sys-root", 10)  ? &ctx->root.sys : NULL;
		size_t l = root == &ctx->root.proc ? 11 : 10;
		if (root && (a[l] == '=' || a[l] == '\0')) {
			if (a[l] == '=') {
				*root = a + l + 1;
			} else if (i + 1 < argc) {
				*root = argv[++i];
			} else {
				fprintf(stderr, "vmhost: usage: %s needs a directory\n", a);
				return -1;
			}
		} else if (!strcmp(a, "--json")) {
			ctx->format = OUT_JSON;
		} else if (!strcmp(a, "--csv")) {
			ctx->format = OUT_CSV;
		} else if (!strcmp(a, "--bytes")) {
			ctx->raw_bytes = true;
		} else if (!strcmp(a, "--version")) {
			*version = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			*help = true;
		} else {
			argv[w++] = argv[i];
		}
	}
	argv[w] = NULL;
	return w;
}

int main(int argc, char **argv)
{
	struct ctx ctx = {.root = {.proc = "/proc", .sys = "/sys"}, .command = "vmhost"};
	/* Only the main thread writes stdout: without this, once a survey has started threads every
	 * stdio call takes the stream's lock (half the time of writing 400 VMs as JSON). */
	__fsetlocking(stdout, FSETLOCKING_BYCALLER);
	bool help = false, version = false;
	argc = global_options(&ctx, argc, argv, &help, &version);
	if (argc < 0)
		return EXIT_USAGE;
	if (version) {
		printf("vmhost %s\n", VMHOST_VERSION);
		return EXIT_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "help")) {
		if (argc == 2) {
			usage(stdout);
			return EXIT_OK;
		}
		argv++;
		argc--;
		help = true;
	}
	if (argc < 2 || argv[1][0] == '-') {
		if (help) {
			usage(stdout);
			return EXIT_OK;
		}
		ctx.command = "overview";
		return cmd_overview(&ctx, argc, argv);
	}
	bool ambiguous;
	const struct subcommand *cmd = subcommand_match(commands, NCOMMANDS, argv[1], &ambiguous);
	if (!cmd) {
		fprintf(stderr, "vmhost: usage: unknown or ambiguous command '%s' (see 'vmhost --help')\n", argv[1]);
		return EXIT_USAGE;
	}
	ctx.command = cmd->name;
	/* "--help" goes back to the command (after any subcommand words) so it prints its own usage. */
	char *args[argc + 2];
	int n = 0;
	for (int i = 1; i < argc; i++)
		args[n++] = argv[i];
	if (help)
		args[n++] = "--help";
	args[n] = NULL;
	return cmd->fn(&ctx, n, args);
}
