/* What every command gets: the parsed global options, one way to fail and to warn, its document
 * on stdout, and the table of commands: each command's entry point, and dispatch for a command of
 * subcommands. Options are read through cmd/opts.h. */
#ifndef VMHOST_CMD_H
#define VMHOST_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "io/io.h"
#include "out/doc.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_NOPERM = 77 };

/* --json and --csv pick the form of every document (out/doc.h). */
enum out_format { OUT_HUMAN = DOC_HUMAN, OUT_JSON = DOC_JSON, OUT_CSV = DOC_CSV };

struct ctx {
	struct io_root root;
	enum out_format format;
	bool raw_bytes;      /* --bytes */
	const char *command; /* for messages: "mem", "ksm tune", ... */
	char command_buf[64];
};

/* Prints "vmhost: <command>: <what>: <why>" on stderr (and {"error": ...} on stdout with --json);
 * returns code so callers can `return fail(...)`. */
int fail(const struct ctx *ctx, int code, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A usage error: the message, then a pointer to --help. Returns EXIT_USAGE. */
int usage_error(const struct ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The exit code for a failure with this negative errno: EXIT_NOPERM for -EACCES and -EPERM. */
int exit_code_for(int err);
/* "vmhost: <command>: warning: ..." on stderr. */
void warn(const struct ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* vmhost's runtime directory, where one run leaves what spares the next some reads (the VMs'
 * memo, core/model/vm_memo.h): $VMHOST_RUNTIME_DIR (empty: none), else /run/vmhost for root, else
 * $XDG_RUNTIME_DIR/vmhost. NULL when there is none, or when the proc root is not this host's. */
const char *ctx_runtime_dir(const struct ctx *ctx, char *buf, size_t cap);

/* Starts a document on stdout in the form the global options asked for. */
void ctx_doc(const struct ctx *ctx, struct doc *d);

typedef int (*cmd_fn)(struct ctx *ctx, int argc, char **argv);

/* Commands: argv[0] is the command's own name; "--help" prints its usage. */
int cmd_overview(struct ctx *ctx, int argc, char **argv);
int cmd_mem(struct ctx *ctx, int argc, char **argv);
int cmd_share(struct ctx *ctx, int argc, char **argv);
int cmd_share_map(struct ctx *ctx, int argc, char **argv);
int cmd_share_plan(struct ctx *ctx, int argc, char **argv);
int cmd_ksm(struct ctx *ctx, int argc, char **argv);     /* ksm, ksm tune, ksm sweep */
int cmd_bench(struct ctx *ctx, int argc, char **argv);   /* bench accounting|ksm|alloc */
int cmd_exits(struct ctx *ctx, int argc, char **argv);
int cmd_record(struct ctx *ctx, int argc, char **argv);
int cmd_growth(struct ctx *ctx, int argc, char **argv);
int cmd_capacity(struct ctx *ctx, int argc, char **argv);
int cmd_report(struct ctx *ctx, int argc, char **argv);
int cmd_serve(struct ctx *ctx, int argc, char **argv);
int cmd_doctor(struct ctx *ctx, int argc, char **argv);
int cmd_top(struct ctx *ctx, int argc, char **argv);

/* Subcommands reached through cmd_ksm and cmd_bench. */
int cmd_ksm_status(struct ctx *ctx, int argc, char **argv);
int cmd_ksm_tune(struct ctx *ctx, int argc, char **argv);
int cmd_ksm_sweep(struct ctx *ctx, int argc, char **argv);
int cmd_bench_accounting(struct ctx *ctx, int argc, char **argv);
int cmd_bench_ksm(struct ctx *ctx, int argc, char **argv);
int cmd_bench_alloc(struct ctx *ctx, int argc, char **argv);

/* A subcommand table, matched by unambiguous prefix (as bpftool does). */
struct subcommand {
	const char *name;
	cmd_fn fn;
	const char *summary;
};
/* The entry named word, else the one entry whose name begins with it; NULL when none or several
 * do (*ret_ambiguous then true). */
const struct subcommand *subcommand_match(const struct subcommand *table, size_t n, const char *word,
					 bool *ret_ambiguous);
/* Runs the subcommand argv[1] names (by subcommand_match) with argv from there, or dflt when argv[1]
 * is missing or an option; --help, or no word without dflt, lists the table. Returns its exit code. */
int dispatch(struct ctx *ctx, const char *group, const struct subcommand *table, size_t n, cmd_fn dflt,
	     int argc, char **argv);

/* In a test build, runs the shell command the test hook name holds (io/test_hook.h) with n as its
 * $1, and waits for it: what a test needs done at a known point of a run (between two reads).
 * Nothing in any other build, or when the variable is unset. */
void cmd_test_hook(const char *name, unsigned n);

#endif
