/* serve's /sketch: this host's content sketches in the sketch file format
 * (parse/sketch_file.h), for `vmhost share plan --from`. Computed on request under a CPU budget
 * and kept for a minute: a fleet's planner asking every host at once costs each host one
 * sketching run a minute at most. Served only where the listener is loopback or basic auth is
 * configured; elsewhere 403 with the reason. */
#ifndef VMHOST_NET_SERVE_SKETCH_H
#define VMHOST_NET_SERVE_SKETCH_H

#include <stdbool.h>

#include "core/share/fleet.h"
#include "net/serve_cache.h"

#define SERVE_SKETCH_MAX_AGE_SECONDS 60.0

struct serve_sketch_config {
	struct io_root root;
	struct siphash_key key;  /* the fleet's (--key-file) */
	uint64_t sample_n;
	double cpu_percent;      /* the sketching run's budget, of one CPU */
	const char *refusal;     /* non-NULL: answer 403 with this one line instead */
};

struct serve_sketch;

int serve_sketch_new(const struct serve_sketch_config *cfg, struct serve_sketch **ret);
void serve_sketch_free(struct serve_sketch *s);

/* Cuts a sketching run short (serve is stopping): its request gets -ECANCELED, nothing is kept.
 * From any thread, before the HTTP server is stopped. */
void serve_sketch_stop(struct serve_sketch *s);
/* The reason /sketch is refused here, or NULL when it is served. */
const char *serve_sketch_refusal(const struct serve_sketch *s);
/* A reference to the sketches, no older than a minute (one run at a time: a request during a run
 * waits for it). Release with serve_body_unref. 0 or a negative errno (-ECANCELED: stopped). */
int serve_sketch_get(struct serve_sketch *s, struct serve_body **ret);

#endif
