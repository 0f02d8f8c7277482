/* The sampler on its own thread, for a server (serve): readers on any thread get the latest
 * sample, shared and refcounted, as long as it is younger than min-interval; when it is older,
 * the feed's thread takes a new one, and every reader that asks meanwhile shares it. With
 * recording on, the thread also records one sample per sampler interval, whether or not anyone
 * reads (the latest when it is recent enough, else a new one). Every sample is taken and every
 * write is made on the feed's thread: readers never gather and never write.
 *
 *   sample_feed_start(&cfg, &f);            // the first sample, or why the host is unreadable
 *   sample_feed_get(f, &x); ... sample_unref(x);   // from any thread
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
};

struct sample_feed;

/* Starts the thread and waits for its first sample. Returns 0, or a negative errno: the host
 * could not be read (nothing keeps running), or the thread could not start. Signals the thread
 * should not take must be blocked by the caller first (it inherits the caller's mask). */
int sample_feed_start(const struct sample_feed_config *cfg, struct sample_feed **ret);
void sample_feed_stop(struct sample_feed *f); /* NULL is fine */

/* A reference to a sample younger than min-interval (waiting for a new one when needed). Returns
 * 0 or a negative errno: the new sample could not be taken (the host is unreadable), -ESHUTDOWN
 * when the feed is stopping. */
int sample_feed_get(struct sample_feed *f, struct sample **ret);

/* For tests: what the feed did, and on which thread. */

/* Samples taken so far (the latest one's seq). */
uint64_t sample_feed_samples(struct sample_feed *f);
/* True on the feed's own thread (for tests that check who writes). */
bool sample_feed_on_thread(const struct sample_feed *f);

#endif
