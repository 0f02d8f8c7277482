/* One way to read a command's options. Each command declares a table: per option its long name,
 * short letter, kind of argument, the field of the command's options struct the value goes to,
 * and the usage error for a value it refuses. opts_parse builds getopt_long's string and long
 * options from the table, converts each value with the arg_* helpers below and stores it. */
#ifndef VMHOST_CMD_OPTS_H
#define VMHOST_CMD_OPTS_H

#include <stdbool.h>
#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cmd/cmd.h"

/* Argument values shared by all commands: what each kind of option accepts. Each returns 0 or -EINVAL. */
int arg_seconds(const char *s, double *ret);       /* "1", "0.5": above 0, at most 1e7 */
int arg_size(const char *s, uint64_t *ret);        /* "256M", "1G", "1.5GiB", bytes without suffix */
int arg_pid(const char *s, int *ret);
int arg_count(const char *s, long *ret);           /* a positive whole number */
int arg_pid_path(const char *s, int *ret_pid, const char **ret_path); /* "PID=PATH" */
/* Splits a comma-separated list in place (empty items skipped); returns the count, or -EINVAL for
 * none or more than max. */
int arg_list(char *s, char **items, int max);
/* A --sample option's "1/N" or "N" into *ret. EXIT_OK or EXIT_USAGE. */
int opt_sample_rate(struct ctx *ctx, const char *arg, long *ret);

enum opt_kind {
	OPT_FLAG,     /* no argument: the bool field becomes true */
	OPT_HELP,     /* --help: the spec's help is printed, and the command does not run */
	OPT_STRING,   /* the argument as given (a const char * field) */
	OPT_SECONDS,  /* arg_seconds, then at least lo and at most hi (hi 0: arg_seconds' own bound) */
	OPT_SECONDS0, /* the same, or "0" */
	OPT_COUNT,    /* arg_count, then at least lo and at most hi (hi 0: no bound) */
	OPT_NUMBER,   /* a finite number from lo to hi (core/base/convert.h) */
	OPT_SIZE,     /* arg_size, at least lo bytes */
	OPT_CALL,     /* an argument for call() alone */
};

/* How the field is written, from its type (OPT_AT); none: the option only calls. */
enum opt_store { OPT_STORE_NONE, OPT_STORE_BOOL, OPT_STORE_STR, OPT_STORE_DOUBLE, OPT_STORE_INT };

struct opt {
	const char *name; /* the long name, without "--" */
	int letter;       /* its short option, 0: none */
	enum opt_kind kind;
	size_t offset;    /* of the field in the command's options struct (OPT_AT) */
	enum opt_store store;
	size_t size;
	double lo, hi;
	const char *error; /* the usage error for a refused value: a format given the argument */
	/* Code of the command's own, after the value is stored: EXIT_OK or a usage error's code. */
	int (*call)(struct ctx *ctx, void *opts, const char *arg);
};

/* A number's macro as text, for an error message: "--repeat takes 1 to " OPT_TEXT(MAX_REPEAT). */
#define OPT_TEXT_(x) #x
#define OPT_TEXT(x) OPT_TEXT_(x)

/* An option's name, letter and kind: {OPT("exact", 'x', OPT_FLAG), OPT_AT(struct mem_opts, exact)}. */
#define OPT(long_name, short_letter, of_kind) .name = (long_name), .letter = (short_letter), .kind = (of_kind)
#define OPT_STORE_OF(x)                                                                                         \
	_Generic((x), bool: OPT_STORE_BOOL, const char *: OPT_STORE_STR, char *: OPT_STORE_STR,                \
		 double: OPT_STORE_DOUBLE, default: OPT_STORE_INT)
/* Where an option's value goes: OPT_AT(struct mem_opts, exact). */
#define OPT_AT(type, field)                                                                                     \
	.offset = offsetof(type, field), .store = OPT_STORE_OF(((type *)0)->field),                            \
	.size = sizeof(((type *)0)->field)

/* main moves --help (and -h) after a command's own words, so a command reads every option before
 * it: an error among them is reported, not the help. */
enum {
	OPTS_REST = 1,        /* arguments after the options are the caller's (from optind) */
	OPTS_HELP_ANYWAY = 2, /* --help prints even beside a usage error (which still decides the exit) */
};

/* A command's options: its table, the flags above, what prints its usage for --help, and the
 * checks of the options together, after the reading and before the help. */
struct opts_spec {
	const struct opt *opts;
	size_t n;
	unsigned flags;
	void (*help)(void);
	/* EXIT_OK or a usage error's exit code; argv[optind] is the first word after the options. */
	int (*check)(struct ctx *ctx, void *opts, int argc, char **argv);
};
#define OPTS_SPEC(table, of_flags, help_fn) {(table), sizeof(table) / sizeof((table)[0]), (of_flags), (help_fn), NULL}
#define OPTS_SPEC_CHECKED(table, of_flags, help_fn, check_fn)                                                   \
	{(table), sizeof(table) / sizeof((table)[0]), (of_flags), (help_fn), (check_fn)}

/* For a repeatable --pid's callback: the process id appended to pids[*n] (at most cap), or the
 * usage error "--pid takes a process id" or too_many. EXIT_OK or EXIT_USAGE. */
int opt_pid_add(struct ctx *ctx, const char *arg, pid_t *pids, size_t *n, size_t cap, const char *too_many);

/* For an option of one extended regular expression, given once (name: "--fields"): compiled into
 * re with *have set, or the usage error. EXIT_OK or EXIT_USAGE; the caller frees re when *have. */
int opt_regex_once(struct ctx *ctx, const char *name, const char *arg, regex_t *re, bool *have);

enum { OPTS_GO = -1 }; /* opts_parse: the command is to run */

/* Reads argv (argv[0] the command's name) against the spec's table into opts. OPTS_GO when the
 * command is to run; else its exit code: EXIT_OK after printing the help, EXIT_USAGE after the
 * usage error (the option's own, "unknown option", "unexpected argument"). */
int opts_parse(struct ctx *ctx, const struct opts_spec *spec, int argc, char **argv, void *opts);

#endif
