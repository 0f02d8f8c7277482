/* What /metrics serves: the feed's latest sample (core/sample/sampler_feed.h), rendered once per format
 * and shared by every scrape of that sample as an immutable, refcounted body. The cache never
 * gathers and never records: it renders what the sampler produced. */
#ifndef VMHOST_NET_SERVE_CACHE_H
#define VMHOST_NET_SERVE_CACHE_H

#include <regex.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/sample/sampler_feed.h"
#include "out/prom/prom_metrics.h"

/* A rendered document; never changes once published. */
struct serve_body {
	char *data;
	size_t len;
	enum prom_format format;
	double taken_seconds; /* CLOCK_MONOTONIC: when its sample was taken (0 for a sketch) */
	atomic_int refs;
};

struct serve_cache;

struct serve_cache_config {
	struct sample_feed *feed;
	bool kvm_families;            /* KVM was asked for: write its families (vmhost_kvm_available) */
	const regex_t *kvm_events;    /* export only the KVM counters whose name matches; NULL: all */
	size_t max_body_bytes;        /* a document larger than this is cut (its per-VM series), then an error */
	enum prom_detail detail;      /* --detail: what the document holds of each VM */
	const char *version;
	const struct kvm_host *kvm_host; /* read once at start: vmhost_kvm_info; NULL: none */
	const int64_t *capacity_sizes;   /* --capacity-size: vmhost_host_capacity_vms (prom_meta's) */
	size_t ncapacity_sizes;
};

int serve_cache_new(const struct serve_cache_config *cfg, struct serve_cache **ret);
void serve_cache_free(struct serve_cache *c);

/* A reference to the body in the given format, of a sample no older than the feed's
 * min-interval, waiting for it at most wait_seconds (sample_feed_get). Release it with
 * serve_body_unref. Returns 0; 1 when the wait ended first: the body of the latest sample, older;
 * or a negative errno: -ETIMEDOUT (no sample yet), -ESHUTDOWN, the host could not be read, the
 * document is too large even with no per-VM series. A document that would pass max_body_bytes
 * at the detail asked is cut: to basic's per-VM series, then to none (vmhost_scrape_cut 1). */
int serve_cache_get(struct serve_cache *c, enum prom_format format, double wait_seconds, struct serve_body **ret);
void serve_body_unref(struct serve_body *b);

#endif
