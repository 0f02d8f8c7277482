/* Commands whose issue has not landed yet say so plainly (each moves to its own file). */
#include "cmd/cmd.h"

static int not_built(struct ctx *ctx)
{
	return fail(ctx, EXIT_FAIL, "not available", "this command is not implemented in this build yet");
}

int cmd_ksm_status(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
int cmd_ksm_tune(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
int cmd_ksm_sweep(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
int cmd_bench_ksm(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
int cmd_bench_alloc(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
int cmd_bench_accounting(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
int cmd_exits(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
int cmd_record(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
int cmd_growth(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
int cmd_report(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
int cmd_serve(struct ctx *ctx, int argc, char **argv) { (void)argc, (void)argv; return not_built(ctx); }
