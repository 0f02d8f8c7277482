/* Command groups: "vmhost ksm ...", "vmhost bench ..." and "vmhost share ...". */
#include "cmd/cmd.h"

int cmd_ksm(struct ctx *ctx, int argc, char **argv)
{
	static const struct subcommand table[] = {
		{"status", cmd_ksm_status, "every KSM counter and setting (--restore: what a tuner that died left)"},
		{"tune", cmd_ksm_tune, "the KSM tuning daemon (restores settings when it stops)"},
		{"sweep", cmd_ksm_sweep, "measure scan time, ksmd CPU and savings per setting"},
	};
	return dispatch(ctx, "ksm", table, sizeof(table) / sizeof(table[0]), cmd_ksm_status, argc, argv);
}

int cmd_bench(struct ctx *ctx, int argc, char **argv)
{
	static const struct subcommand table[] = {
		{"accounting", cmd_bench_accounting, "per-VM memory accounting: cost and accuracy of each method"},
		{"ksm", cmd_bench_ksm, "KSM policies compared on one identical workload"},
		{"alloc", cmd_bench_alloc, "memory population (VM creation) speed against memory size"},
	};
	return dispatch(ctx, "bench", table, sizeof(table) / sizeof(table[0]), NULL, argc, argv);
}

int cmd_share(struct ctx *ctx, int argc, char **argv)
{
	static const struct subcommand table[] = {
		{"plan", cmd_share_plan, "where each VM would share the most, across hosts' sketches"},
	};
	return dispatch(ctx, "share", table, sizeof(table) / sizeof(table[0]), cmd_share_map, argc, argv);
}
