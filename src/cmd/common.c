#include "cmd/cmd.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/stop.h"
#include "core/tune/ksm_guard.h"
#include "core/tune/ksm_rates.h"
#include "io/secret.h"
#include "io/state.h"
#include "parse/sketch_file.h"
#include "out/json.h"
#include "out/svg.h"

int fail(const struct ctx *ctx, int code, const char *what, const char *fmt, ...)
{
	char why[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fprintf(stderr, "vmhost: %s: %s: %s\n", ctx->command, what, why);
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
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "vmhost: %s: warning: ", ctx->command);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int arg_seconds(const char *s, double *ret)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e7)
		return -EINVAL;
	*ret = v;
	return 0;
}

int arg_seconds0(const char *s, double *ret)
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
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 0x3fffffff)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

int arg_count(const char *s, long *ret)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

int arg_number(const char *s, double lo, double hi, double *ret)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -EINVAL;
	*ret = v;
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
	const struct subcommand *hit = NULL;
	size_t len = strlen(argv[1]);
	for (size_t i = 0; i < n; i++) {
		if (strncmp(table[i].name, argv[1], len))
			continue;
		if (strlen(table[i].name) == len) {
			hit = &table[i];
			break;
		}
		if (hit)
			return usage_error(ctx, "'%s %s' is ambiguous", group, argv[1]);
		hit = &table[i];
	}
	if (!hit)
		return usage_error(ctx, "unknown command '%s %s'", group, argv[1]);
	snprintf(ctx->command_buf, sizeof(ctx->command_buf), "%s %s", group, hit->name);
	ctx->command = ctx->command_buf;
	return hit->fn(ctx, argc - 1, argv + 1);
}

int ksm_take_control(struct ctx *ctx, void (*on_signal)(int sig))
{
	int r = ksm_lock(false);
	if (r == -EBUSY) {
		warn(ctx, "waiting for the machine-wide KSM lock (" KSM_LOCK_PATH ")");
		r = ksm_lock(true);
	}
	if (r < 0)
		return fail(ctx, EXIT_FAIL, "KSM lock", KSM_LOCK_PATH ": %s", io_lock_strerror(r));
	if ((r = ksm_guard_begin(&ctx->root, on_signal)) < 0) {
		ksm_unlock();
		return fail(ctx, EXIT_FAIL, "guarding KSM settings", "%s", ksm_guard_strerror(r));
	}
	if (r > 0)
		warn(ctx, "put back the KSM settings a vmhost that died left changed (" KSM_SAVED_FILE ")");
	return EXIT_OK;
}

int ksm_experiment_ready(struct ctx *ctx, struct ksm_sampler *sm, struct ksm_sample *ret_first)
{
	ksm_sampler_init(sm, &ctx->root);
	if (ksm_sample_take(sm, ret_first) == -ENOENT)
		return fail(ctx, EXIT_FAIL, "KSM", "this kernel has no KSM (%s/kernel/mm/ksm)", ctx->root.sys);
	return ksm_need_root(ctx);
}

int ksm_need_root(struct ctx *ctx)
{
	if (geteuid() != 0)
		return fail(ctx, EXIT_NOPERM, "permission", "changing KSM settings needs root");
	return EXIT_OK;
}

void bench_json_begin(struct json *j, unsigned guests, uint64_t guest_bytes)
{
	json_init(j, stdout, false);
	json_object_begin(j, NULL);
	json_object_begin(j, "workload");
	json_int(j, "guests", guests);
	json_int(j, "guest_bytes", (int64_t)guest_bytes);
}

int svg_file_open(const char *path, double width, double height, struct svg_file *ret)
{
	struct svg_file f;
	int r = io_replace_path(path, 0666, &f.file); /* less the umask, as fopen */
	if (r < 0)
		return r;
	FILE *stream = io_replace_stream(&f.file);
	f.svg = stream ? svg_begin(stream, width, height) : NULL;
	if (!f.svg) {
		io_replace_abort(&f.file);
		return -ENOMEM;
	}
	*ret = f;
	return 0;
}

int svg_file_close(struct svg_file *f)
{
	int r = svg_end(f->svg);
	if (r < 0) {
		io_replace_abort(&f->file);
		return r;
	}
	return io_replace_commit(&f->file);
}

int wait_key_until(const struct term *t, double deadline)
{
	static const struct term none;
	while (!stop_requested()) {
		double left = deadline - clock_monotonic_seconds();
		if (left <= 0)
			return 0;
		int key = term_key(t ? t : &none, (int)(left * 1000) + 1);
		if (key == 'q' || key == 'Q')
			return 'q';
	}
	return 0;
}

int exit_code_for(int err) { return err == -EACCES || err == -EPERM ? EXIT_NOPERM : EXIT_FAIL; }

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

int secret_file_failed(struct ctx *ctx, const char *what, const char *path, int err)
{
	if (err == -EPERM)
		return fail(ctx, EXIT_NOPERM, what, "%s: must be a regular file only its owner (root, or the user "
			    "running vmhost) may read or write: chmod 600 %s", path, path);
	if (err == -ELOOP) /* O_NOFOLLOW's */
		return fail(ctx, EXIT_FAIL, what, "%s: a symbolic link, not followed: give the file itself", path);
	return fail(ctx, exit_code_for(err), what, "%s: %s", path, strerror(-err));
}

int fleet_key(struct ctx *ctx, const char *key_file, struct siphash_key *ret)
{
	int created = 0;
	int r = key_file ? io_secret_key(key_file, ret, sizeof(*ret), &created) : io_random_key(ret, sizeof(*ret));
	if (r < 0)
		return key_file ? secret_file_failed(ctx, "key file", key_file, r)
				: fail(ctx, exit_code_for(r), "key file", "getrandom: %s", strerror(-r));
	if (created)
		warn(ctx, "created a new key in %s: copy it to every host whose sketches are to compare", key_file);
	return EXIT_OK;
}
