/* The sampler on its own thread, for a server (serve): readers on any thread get the latest
 * sample, shared and refcounted, as long as it is younger than min-interval; when it is older,
 * the feed's thread takes a new one, and every reader that asks meanwhile shares it. With
 * recording on, the thread also records one sample per sampler interval, whether or not anyone
 * reads (the latest when it is recent enough, else a new one). Every sample is taken and every
 * write is made on the feed's thread: readers never gather and never write.
 *
 * No one waits on a take without a deadline, whatever the host makes a take cost (a forged VM's
 * monitor that answers slowly, a /proc file that blocks): a reader waits at most its own wait and
 * then gets the latest sample, late, or none; the start and the stop wait at most the config's.
 *
 *   sample_feed_start(&cfg, &f);            // the first sample, or why the host is unreadable
 *   sample_feed_get(f, 9.0, &x); ... sample_unref(x);   // from any thread
 *   sample_feed_stop(f);                    // finishes the sample in flight, joins the thread */
#ifndef VMHOST_CORE_SAMPLER_FEED_H
#define VMHOST_CORE_SAMPLER_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/sample/sampler.h"

struct sample_feed_config {
	struct sampler *sampler;     /* driven by the feed's thread only, until sample_feed_stop */
	double min_interval_seconds; /* 0: every sample_feed_get waits for a new sample */
	bool record;                 /* record through the sampler's sink */
	/* Called on the feed's thread when recording stops for an error other than a full disk
	 * (the feed goes on serving samples); NULL is fine. */
	void (*on_record_stopped)(void *cls, int err);
	void *cls;
	/* How long sample_feed_start waits for the first sample and sample_feed_stop for the take in
	 * flight; 0: as long as it takes. */
	double wait_seconds;
};

struct sample_feed;

/* Starts the thread and waits for its first sample, at most cfg->wait_seconds. Returns 0; 1 when
 * the first sample is still being taken after that (the feed runs, its readers get -ETIMEDOUT
 * until it is in); or a negative errno: the host could not be read (nothing keeps running), or
 * the thread could not start. Signals the thread should not take must be blocked by the caller
 * first (it inherits the caller's mask). */
int sample_feed_start(const struct sample_feed_config *cfg, struct sample_feed **ret);
/* Makes readers waiting now or later return -ESHUTDOWN at once, and the thread end after the take
 * in flight (the server is stopping). From any thread; sample_feed_stop still frees. NULL is fine. */
void sample_feed_cancel(struct sample_feed *f);
/* Stops the feed: readers waiting return -ESHUTDOWN at once; the take in flight gets
 * cfg.wait_seconds to finish (and be recorded). true when the thread ended and the feed is freed
 * (NULL is fine); false when a take still holds it: the feed and the sampler it drives are then
 * left allocated to that thread (not to be freed, nor the sampler's sink closed) for the process
 * to exit. */
bool sample_feed_stop(struct sample_feed *f);

/* A reference to a sample younger than min-interval, waiting for a new one when needed, at most
 * wait_seconds (INFINITY: as long as it takes), and not at all when the take it would wait for is
 * already wait_seconds late. Returns 0; 1 when the wait ended first: *ret is then the latest
 * sample, older (its snap.monotonic_seconds says how much); or a negative errno: -ETIMEDOUT when
 * the wait ended and there is no sample yet, the error of the take it waited for (the host is
 * unreadable), -ESHUTDOWN when the feed is stopping. */
int sample_feed_get(struct sample_feed *f, double wait_seconds, struct sample **ret);

/* For tests: what the feed did, and on which thread. */

/* Samples taken so far (the latest one's seq). */
uint64_t sample_feed_samples(struct sample_feed *f);
/* True on the feed's own thread (for tests that check who writes). */
bool sample_feed_on_thread(const struct sample_feed *f);

#endif
