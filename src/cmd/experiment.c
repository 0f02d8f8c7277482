/* The experiment commands' shared steps (cmd/experiment.h): the KSM lock and guard, root, the
 * bench JSON's head, SVG files. */
#include "cmd/experiment.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/tune/ksm_guard.h"
#include "io/file.h"
#include "core/model/ksm.h"
#include "out/json.h"
#include "out/svg.h"

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
