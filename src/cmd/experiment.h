/* What the experiment commands share (ksm sweep, bench accounting, ksm and alloc): the
 * machine-wide KSM lock and the guard of KSM's settings, the root they need, the head of a bench's
 * JSON document, and an SVG file written whole. */
#ifndef VMHOST_CMD_EXPERIMENT_H
#define VMHOST_CMD_EXPERIMENT_H

#include <stdint.h>

#include "cmd/cmd.h"
#include "io/file.h"

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

#endif
