/* Not built yet: says so plainly until its issue lands. */
#include "cmd/cmd.h"

int cmd_bench_alloc(struct ctx *ctx, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return fail(ctx, EXIT_FAIL, "not available", "this command is not implemented in this build yet");
}
