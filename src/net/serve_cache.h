/* What /metrics serves: a snapshot gathered at most once per min-interval, rendered once per
 * format, and shared by every scrape inside the interval as an immutable, refcounted body. */
#ifndef VMHOST_NET_SERVE_CACHE_H
#define VMHOST_NET_SERVE_CACHE_H

#include <regex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/kvm.h"
#include "core/snapshot.h"
#include "io/io.h"
#include "out/prom.h"

/* A rendered document; never changes once published. */
struct serve_body {
	char *data;
	size_t len;
	enum prom_format format;
	atomic_int refs;
};

struct serve_cache;

/* Called with each fresh snapshot, under the cache's lock (e.g. to record it); kvm and ks are
 * the KVM counters read with it, both NULL when there are none this time. */
typedef void (*serve_snapshot_fn)(void *cls, const struct snapshot *s, const struct kvm_reader *kvm,
				  const struct kvm_sample *ks);

struct serve_cache_config {
	struct io_root root;
	const pid_t *extra; /* --pid processes (copied) */
	size_t nextra;
	double min_interval_seconds; /* 0: every scrape gathers */
	size_t max_body_bytes;       /* a document larger than this is an error, not an allocation */
	const char *version;
	bool kvm;                    /* also read KVM's debugfs counters with each snapshot */
	const regex_t *kvm_events;   /* export only the KVM counters whose name matches; NULL: all */
	serve_snapshot_fn on_snapshot;
	void *on_snapshot_cls;
};

int serve_cache_new(const struct serve_cache_config *cfg, struct serve_cache **ret);
void serve_cache_free(struct serve_cache *c);

/* A reference to the body in the given format, from a snapshot no older than min-interval
 * (gathering one when needed; concurrent callers wait for it and share it). Release it with
 * serve_body_unref. Returns 0 or a negative errno (the host could not be read). */
int serve_cache_get(struct serve_cache *c, enum prom_format format, struct serve_body **ret);
void serve_body_unref(struct serve_body *b);

/* Whether KVM's counters are read (cfg.kvm and the debugfs directory opened); when not,
 * *ret_why says why (core/kvm.h). */
bool serve_cache_kvm(struct serve_cache *c, enum kvm_avail *ret_why);

/* Snapshots gathered so far. */
uint64_t serve_cache_snapshots(struct serve_cache *c);

#endif
