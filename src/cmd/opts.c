#include "cmd/opts.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/convert.h"
#include "parse/sketch_file.h"

#define MAX_OPTS 32
#define LONG_ONLY 256 /* getopt_long's value for a long-only option: LONG_ONLY + its index */

int arg_seconds(const char *s, double *ret)
{
	double v;
	if (convert_number(s, 0, 1e7, &v) < 0 || v <= 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* arg_seconds, or "0". */
static int arg_seconds0(const char *s, double *ret)
{
	if (!strcmp(s, "0")) {
		*ret = 0;
		return 0;
	}
	return arg_seconds(s, ret);
}

int arg_size(const char *s, uint64_t *ret)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return -EINVAL;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	double mult = 1;
	switch (*end) {
	case 'k': case 'K': mult = 1024.0; end++; break;
	case 'm': case 'M': mult = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || v * mult >= 9.2e18)
		return -EINVAL;
	*ret = (uint64_t)(v * mult);
	return 0;
}

int arg_pid(const char *s, int *ret)
{
	int64_t v;
	if (convert_whole(s, 1, 0x3fffffff, &v) < 0)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

int arg_count(const char *s, long *ret)
{
	int64_t v;
	if (convert_whole(s, 1, LONG_MAX, &v) < 0)
		return -EINVAL;
	*ret = (long)v;
	return 0;
}

int arg_pid_path(const char *s, int *ret_pid, const char **ret_path)
{
	const char *eq = strchr(s, '=');
	char pid[16];
	if (!eq || eq == s || (size_t)(eq - s) >= sizeof(pid) || !eq[1])
		return -EINVAL;
	snprintf(pid, sizeof(pid), "%.*s", (int)(eq - s), s);
	if (arg_pid(pid, ret_pid) < 0)
		return -EINVAL;
	*ret_path = eq + 1;
	return 0;
}

int arg_list(char *s, char **items, int max)
{
	int n = 0;
	for (char *save = NULL, *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return -EINVAL;
		items[n++] = tok;
	}
	return n > 0 ? n : -EINVAL;
}

int opt_sample_rate(struct ctx *ctx, const char *arg, long *ret)
{
	long n;
	const char *s = strncmp(arg, "1/", 2) ? arg : arg + 2;
	if (arg_count(s, &n) < 0 || n > (long)SKETCH_FILE_SAMPLE_MAX)
		return usage_error(ctx, "--sample takes 1/N with N from 1 to %u (e.g. 1/64), not '%s'",
				   SKETCH_FILE_SAMPLE_MAX, arg);
	*ret = n;
	return EXIT_OK;
}

static bool takes_argument(const struct opt *o) { return o->kind != OPT_FLAG && o->kind != OPT_HELP; }

/* The field fits the kind: a flag's is a bool, a string's a pointer, a number's a double or an
 * integer of 4 or 8 bytes (sizes: 8). A table that does not is a bug, refused before any reading. */
static bool field_fits(const struct opt *o)
{
	bool wide = o->store == OPT_STORE_INT && o->size == sizeof(int64_t);
	bool integer = wide || (o->store == OPT_STORE_INT && o->size == sizeof(int32_t));
	switch (o->kind) {
	case OPT_FLAG: return o->store == OPT_STORE_BOOL || o->store == OPT_STORE_NONE;
	case OPT_STRING: return o->store == OPT_STORE_STR || o->store == OPT_STORE_NONE;
	case OPT_SECONDS:
	case OPT_SECONDS0:
	case OPT_NUMBER: return o->store == OPT_STORE_DOUBLE;
	case OPT_COUNT: return integer || o->store == OPT_STORE_DOUBLE;
	case OPT_SIZE: return wide || o->store == OPT_STORE_DOUBLE;
	default: return o->store == OPT_STORE_NONE;
	}
}

/* getopt_long's short string ("+" first: stop at the first argument) and long options. */
static int build(const struct opt *table, size_t n, char *shorts, size_t cap, struct option *longs)
{
	size_t k = 0;
	shorts[k++] = '+';
	for (size_t i = 0; i < n; i++) {
		const struct opt *o = &table[i];
		if (!field_fits(o))
			return -1;
		longs[i] = (struct option){o->name, takes_argument(o) ? required_argument : no_argument, NULL,
					   o->letter ? o->letter : LONG_ONLY + (int)i};
		if (!o->letter)
			continue;
		if (k + 3 > cap)
			return -1;
		shorts[k++] = (char)o->letter;
		if (takes_argument(o))
			shorts[k++] = ':';
	}
	shorts[k] = '\0';
	longs[n] = (struct option){0};
	return 0;
}

static void store_int(void *field, const struct opt *o, long long v)
{
	if (o->store == OPT_STORE_DOUBLE)
		*(double *)field = (double)v;
	else if (o->size == sizeof(int32_t))
		*(int32_t *)field = (int32_t)v;
	else if (o->size == sizeof(int64_t))
		*(int64_t *)field = (int64_t)v;
}

static void store_double(void *field, const struct opt *o, double v)
{
	if (o->store == OPT_STORE_DOUBLE)
		*(double *)field = v;
}

/* Converts and stores one value: 0, or -EINVAL when the option refuses it. */
static int convert(const struct opt *o, const char *arg, void *field)
{
	double d;
	long count;
	uint64_t bytes;
	switch (o->kind) {
	case OPT_FLAG:
		if (o->store == OPT_STORE_BOOL)
			*(bool *)field = true;
		return 0;
	case OPT_STRING:
		if (o->store == OPT_STORE_STR)
			*(const char **)field = arg;
		return 0;
	case OPT_SECONDS:
	case OPT_SECONDS0:
		if ((o->kind == OPT_SECONDS ? arg_seconds(arg, &d) : arg_seconds0(arg, &d)) < 0 || d < o->lo ||
		    (o->hi > 0 && d > o->hi))
			return -EINVAL;
		store_double(field, o, d);
		return 0;
	case OPT_NUMBER:
		if (convert_number(arg, o->lo, o->hi, &d) < 0)
			return -EINVAL;
		store_double(field, o, d);
		return 0;
	case OPT_COUNT:
		if (arg_count(arg, &count) < 0 || count < o->lo || (o->hi > 0 && count > o->hi))
			return -EINVAL;
		store_int(field, o, count);
		return 0;
	case OPT_SIZE:
		if (arg_size(arg, &bytes) < 0 || (double)bytes < o->lo)
			return -EINVAL;
		store_int(field, o, (long long)bytes);
		return 0;
	default:
		return 0;
	}
}

static const struct opt *find(const struct opt *table, size_t n, int c)
{
	if (c >= LONG_ONLY && (size_t)(c - LONG_ONLY) < n)
		return &table[c - LONG_ONLY];
	for (size_t i = 0; c != '?' && i < n; i++)
		if (table[i].letter == c)
			return &table[i];
	return NULL;
}

int opt_pid_add(struct ctx *ctx, const char *arg, pid_t *pids, size_t *n, size_t cap, const char *too_many)
{
	int pid;
	if (arg_pid(arg, &pid) < 0)
		return usage_error(ctx, "--pid takes a process id, not '%s'", arg);
	if (*n == cap)
		return usage_error(ctx, "%s", too_many);
	pids[(*n)++] = pid;
	return EXIT_OK;
}

int opt_regex_once(struct ctx *ctx, const char *name, const char *arg, regex_t *re, bool *have)
{
	if (*have)
		return usage_error(ctx, "%s given twice (combine them: 'a|b')", name);
	if (regcomp(re, arg, REG_EXTENDED | REG_NOSUB) != 0)
		return usage_error(ctx, "%s: '%s' is not a valid extended regular expression", name, arg);
	*have = true;
	return EXIT_OK;
}

/* The usage error of a refused value: the table's text with the argument at its "%s". The text is
 * not a format: any other '%' in it prints as it is. */
static int value_refused(struct ctx *ctx, const struct opt *o, const char *arg)
{
	const char *error = o->error ? o->error : "an unfit value '%s'";
	const char *at = strstr(error, "%s");
	if (!at)
		return usage_error(ctx, "%s", error);
	return usage_error(ctx, "%.*s%s%s", (int)(at - error), error, arg, at + 2);
}

/* The options, stored: EXIT_OK, or the exit code of a usage error. */
static int read_options(struct ctx *ctx, const struct opts_spec *spec, int argc, char **argv, void *opts,
			bool *ret_help)
{
	char shorts[2 * MAX_OPTS + 2];
	struct option longs[MAX_OPTS + 1];
	if (spec->n > MAX_OPTS || build(spec->opts, spec->n, shorts, sizeof(shorts), longs) < 0)
		return fail(ctx, EXIT_FAIL, "options", "a table of more than %d options, or a field unfit for its kind",
			    MAX_OPTS);
	optind = 0; /* glibc: 0 also resets getopt's internal state; argv[0] is the command's name */
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct opt *o = find(spec->opts, spec->n, c);
		if (!o)
			return usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		if (o->kind == OPT_HELP) {
			*ret_help = true;
			continue;
		}
		if (convert(o, optarg, (char *)opts + o->offset) < 0)
			return value_refused(ctx, o, optarg);
		int rc = o->call ? o->call(ctx, opts, optarg) : EXIT_OK;
		if (rc != EXIT_OK)
			return rc;
	}
	if (!(spec->flags & OPTS_REST) && optind < argc)
		return usage_error(ctx, "unexpected argument '%s'", argv[optind]);
	return EXIT_OK;
}

int opts_parse(struct ctx *ctx, const struct opts_spec *spec, int argc, char **argv, void *opts)
{
	bool help = false;
	int rc = read_options(ctx, spec, argc, argv, opts, &help);
	if (rc == EXIT_OK && spec->check)
		rc = spec->check(ctx, opts, argc, argv);
	if (help && spec->help && (rc == EXIT_OK || (spec->flags & OPTS_HELP_ANYWAY)))
		spec->help();
	if (rc != EXIT_OK)
		return rc;
	return help ? EXIT_OK : OPTS_GO;
}
