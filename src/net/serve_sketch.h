/* serve's /sketch: this host's content sketches in the sketch file format
 * (parse/sketch_file.h), for `vmhost share plan --from`. Computed on request under a CPU budget
 * and kept for a minute: a fleet's planner asking every host at once costs each host one
 * sketching run a minute at most. One run at a time, on a thread of its own (never on an HTTP
 * worker, which keeps answering /metrics): the request that starts it waits for it, the others
 * are told to come back later. Served only to authenticated clients (basic auth or client
 * certificates, loopback included); elsewhere 403 with the reason. */
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

/* No run yet, nothing kept. 0 or -ENOMEM. */
int serve_sketch_new(const struct serve_sketch_config *cfg, struct serve_sketch **ret);
/* Stops a run (serve_sketch_stop) and frees, unless a run was left behind: then everything stays
 * to its thread, for the process to exit. NULL is fine. */
void serve_sketch_free(struct serve_sketch *s);

/* The reason /sketch is refused here, or NULL when it is served. */
const char *serve_sketch_refusal(const struct serve_sketch *s);

/* A request for the sketches. 0 with *ret: those of a run less than a minute old (release with
 * serve_body_unref). -EINPROGRESS: a run is reserved for this request; start it with
 * serve_sketch_run once the request can wait (its connection suspended): done(cls) is then called
 * exactly once, when the run ends, and serve_sketch_collect gives the result. -EBUSY with
 * *ret_retry_seconds: a run for another request is in progress (one at a time). -ECANCELED:
 * serve is stopping. */
int serve_sketch_get(struct serve_sketch *s, void (*done)(void *cls), void *cls, struct serve_body **ret,
		     unsigned *ret_retry_seconds);
/* Starts the run serve_sketch_get reserved, on its own thread. When it cannot start (or serve is
 * stopping), done is called from here, with the error to collect. */
void serve_sketch_run(struct serve_sketch *s);
/* The result of the run a request started, once its done was called: 0 with *ret, or a negative
 * errno (-ECANCELED: cut short by serve_sketch_stop, nothing of it kept). */
int serve_sketch_collect(struct serve_sketch *s, struct serve_body **ret);

/* Cuts a run short (serve is stopping): no new run starts, and the request of a run in progress
 * has its done called before this returns, with -ECANCELED when the run does not end within a
 * few seconds (a read that never returns: its thread is then left behind). From any thread,
 * before the HTTP server is stopped. true when no run was left behind. */
bool serve_sketch_stop(struct serve_sketch *s);

#endif
