/* What every command gets: the parsed global options, and one way to fail. */
#ifndef VMHOST_CMD_H
#define VMHOST_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "io/file.h"
#include "io/io.h"
#include "core/base/siphash.h"
#include "io/term.h"
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

/* Argument values shared by all commands. Each returns 0 or -EINVAL. */
int arg_seconds(const char *s, double *ret);       /* "1", "0.5" */
int arg_seconds0(const char *s, double *ret);      /* the same, or "0" */
int arg_size(const char *s, uint64_t *ret);        /* "256M", "1G", bytes without suffix */
int arg_pid(const char *s, int *ret);
int arg_count(const char *s, long *ret);           /* a positive whole number */
int arg_number(const char *s, double lo, double hi, double *ret); /* a finite number from lo to hi */
int arg_pid_path(const char *s, int *ret_pid, const char **ret_path); /* "PID=PATH" */
/* Splits a comma-separated list in place; returns the count or -EINVAL (empty item, too many). */
int arg_list(char *s, char **items, int max);

/* Takes the machine-wide KSM lock (saying so while it waits for another vmhost) and starts
 * guarding KSM settings (core/tune/ksm_guard.h). EXIT_OK, or the exit code after a printed error. */
int ksm_take_control(struct ctx *ctx, void (*on_signal)(int sig));
/* Before an experiment that changes KSM settings: the sampler set up and its first sample, KSM
 * present, root. EXIT_OK, or the exit code after a printed error. */
struct ksm_sampler;
struct ksm_sample;
int ksm_experiment_ready(struct ctx *ctx, struct ksm_sampler *sm, struct ksm_sample *ret_first);
/* EXIT_OK as root, else EXIT_NOPERM after the one-line error: before touching KSM's settings. */
int ksm_need_root(struct ctx *ctx);

/* A bench's JSON document on stdout: the root object and its "workload" object with the guest
 * count and size, left open for the bench's own workload fields (json_object_end closes it). */
struct json;
void bench_json_begin(struct json *j, unsigned guests, uint64_t guest_bytes);

/* A standalone SVG document in a file replaced whole (io/file.h): svg_file_open, draw on
 * ret->svg, svg_file_close. Each returns 0 or a negative errno; close also frees the svg, and
 * reports a write error of the document or file (the file is then as it was). */
struct svg_file {
	struct svg *svg;
	struct io_replace file;
};
int svg_file_open(const char *path, double width, double height, struct svg_file *ret);
int svg_file_close(struct svg_file *f);

typedef int (*cmd_fn)(struct ctx *ctx, int argc, char **argv);

/* Commands: argv[0] is the command's own name; "--help" prints its usage. */
int cmd_overview(struct ctx *ctx, int argc, char **argv);
int cmd_mem(struct ctx *ctx, int argc, char **argv);
int cmd_share(struct ctx *ctx, int argc, char **argv);
int cmd_share_map(struct ctx *ctx, int argc, char **argv);
/* share and serve: the fleet's hash key from key_file (created 0600 when absent; refused when
 * others may read it), else a random one for this run. EXIT_OK or the exit code after the error. */
int fleet_key(struct ctx *ctx, const char *key_file, struct siphash_key *ret);
/* What reading a secret file (io_secret_key, io_read_secret) that failed with err says: one that
 * others may read refused with "chmod 600 PATH" (exit 77), a symbolic link named as one. The
 * exit code after the error. */
int secret_file_failed(struct ctx *ctx, const char *what, const char *path, int err);
/* A --sample option's "1/N" or "N" into *ret. EXIT_OK or EXIT_USAGE. */
int opt_sample_rate(struct ctx *ctx, const char *arg, long *ret);
int cmd_share_plan(struct ctx *ctx, int argc, char **argv);
int cmd_ksm(struct ctx *ctx, int argc, char **argv);     /* ksm, ksm tune, ksm sweep */
int cmd_bench(struct ctx *ctx, int argc, char **argv);   /* bench accounting|ksm|alloc */
int cmd_exits(struct ctx *ctx, int argc, char **argv);
int cmd_record(struct ctx *ctx, int argc, char **argv);
int cmd_growth(struct ctx *ctx, int argc, char **argv);
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

/* Sleeps until the deadline (CLOCK_MONOTONIC seconds) or a stop; returns 'q' when q was typed on
 * a live view's terminal (t NULL: no keys). */
int wait_key_until(const struct term *t, double deadline);

#endif
