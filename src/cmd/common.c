/* What every command shares (cmd/cmd.h): failing and warning, the runtime directory, the
 * document on stdout, and the subcommand tables' prefix match and dispatch. */
#include "cmd/cmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/run.h"
#include "io/state.h"
#include "io/test_hook.h"
#include "out/json.h"
#include "out/text.h"

int fail(const struct ctx *ctx, int code, const char *what, const char *fmt, ...)
{
	char why[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	char shown[4096]; /* what a process, a file or a peer said: readable on a terminal, never obeyed */
	fprintf(stderr, "vmhost: %s: %s: %s\n", ctx->command, what, text_shown(shown, sizeof(shown), why));
	if (ctx->format == OUT_JSON) {
		char msg[1400];
		snprintf(msg, sizeof(msg), "%s: %s: %s", ctx->command, what, why);
		struct json j;
		json_init(&j, stdout, false);
		json_object_begin(&j, NULL);
		json_string(&j, "error", msg);
		json_object_end(&j);
		json_finish(&j);
	}
	return code;
}

int usage_error(const struct ctx *ctx, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return fail(ctx, EXIT_USAGE, "usage", "%s (see 'vmhost help %s')", why, ctx->command);
}

const char *ctx_runtime_dir(const struct ctx *ctx, char *buf, size_t cap)
{
	if (strcmp(ctx->root.proc, "/proc"))
		return NULL; /* a fixture tree's pids are not this host's */
	return io_runtime_dir(buf, cap);
}

void ctx_doc(const struct ctx *ctx, struct doc *d)
{
	doc_init(d, stdout, (enum doc_form)ctx->format, ctx->raw_bytes);
}

void warn(const struct ctx *ctx, const char *fmt, ...)
{
	char line[1024], shown[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "vmhost: %s: warning: %s\n", ctx->command, text_shown(shown, sizeof(shown), line));
}

const struct subcommand *subcommand_match(const struct subcommand *table, size_t n, const char *word,
					 bool *ret_ambiguous)
{
	const struct subcommand *hit = NULL;
	*ret_ambiguous = false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(table[i].name, word))
			return &table[i];
	for (size_t i = 0; i < n; i++) {
		if (strncmp(table[i].name, word, strlen(word)))
			continue;
		if (hit) {
			*ret_ambiguous = true;
			return NULL;
		}
		hit = &table[i];
	}
	return hit;
}

int dispatch(struct ctx *ctx, const char *group, const struct subcommand *table, size_t n, cmd_fn dflt,
	     int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-') {
		bool help = argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
		if (dflt && !help)
			return dflt(ctx, argc, argv);
		if (dflt) {
			dflt(ctx, argc, argv); /* its own usage first */
			printf("\n");
		}
		printf("usage: vmhost %s COMMAND [OPTIONS]\n\ncommands:\n", group);
		for (size_t i = 0; i < n; i++)
			printf("  %-12s %s\n", table[i].name, table[i].summary);
		return help ? EXIT_OK : EXIT_USAGE;
	}
	bool ambiguous;
	const struct subcommand *hit = subcommand_match(table, n, argv[1], &ambiguous);
	if (ambiguous)
		return usage_error(ctx, "'%s %s' is ambiguous", group, argv[1]);
	if (!hit)
		return usage_error(ctx, "unknown command '%s %s'", group, argv[1]);
	snprintf(ctx->command_buf, sizeof(ctx->command_buf), "%s %s", group, hit->name);
	ctx->command = ctx->command_buf;
	return hit->fn(ctx, argc - 1, argv + 1);
}

void cmd_test_hook(const char *name, unsigned n)
{
	const char *hook = io_test_hook(name);
	if (!hook || !*hook)
		return;
	char num[16];
	snprintf(num, sizeof(num), "%u", n);
	char *argv[] = {"sh", "-c", (char *)hook, "sh", num, NULL};
	fflush(stdout);
	io_run_wait(argv, true);
}

int exit_code_for(int err) { return err == -EACCES || err == -EPERM ? EXIT_NOPERM : EXIT_FAIL; }

