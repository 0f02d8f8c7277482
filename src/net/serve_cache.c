#include "net/serve_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>


struct serve_cache {
	struct serve_cache_config cfg;
	pthread_mutex_t lock;
	struct sample *sample;      /* the one the bodies are of */
	struct serve_body *body[2]; /* per format, rendered on first demand */
	bool *selected;             /* [nselected]: KVM counters cfg.kvm_events keeps */
	size_t nselected;
};

int serve_cache_new(const struct serve_cache_config *cfg, struct serve_cache **ret)
{
	struct serve_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	pthread_mutex_init(&c->lock, NULL);
	*ret = c;
	return 0;
}

void serve_body_unref(struct serve_body *b)
{
	if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
		free(b->data);
		free(b);
	}
}

static void drop_bodies(struct serve_cache *c)
{
	for (size_t i = 0; i < 2; i++) {
		serve_body_unref(c->body[i]);
		c->body[i] = NULL;
	}
}

void serve_cache_free(struct serve_cache *c)
{
	if (!c)
		return;
	drop_bodies(c);
	sample_unref(c->sample);
	pthread_mutex_destroy(&c->lock);
	free(c->selected);
	free(c);
}

/* The --kvm-events choice per counter of the sample ks. The counters a sample names never change
 * (later ones are only added after them), so a choice made for n of them stays right. */
static const bool *kvm_selection(struct serve_cache *c, const struct kvm_sample *ks)
{
	size_t n = ks->ncounters;
	if (!c->selected || n > c->nselected) {
		bool *sel = realloc(c->selected, (n ? n : 1) * sizeof(*sel));
		if (!sel)
			return NULL;
		for (size_t i = c->nselected; i < n; i++)
			sel[i] = regexec(c->cfg.kvm_events, kvm_sample_counter_name(ks, i), 0, NULL, 0) == 0;
		c->selected = sel;
		c->nselected = n;
	}
	return c->selected;
}

/* The document at a detail into b (data, len); -EFBIG when it would pass the cap. */
static int render_at(struct serve_cache *c, enum prom_format format, enum prom_detail detail, struct serve_body *b)
{
	const struct sample *x = c->sample;
	struct prom p;
	prom_init(&p, format);
	p.max_bytes = c->cfg.max_body_bytes;
	struct prom_meta meta = {.snapshots_total = x->seq, .version = c->cfg.version, .kvm_host = c->cfg.kvm_host,
				 .detail = detail, .kvm_events_chosen = c->cfg.kvm_events != NULL,
				 .cut = detail != c->cfg.detail, .capacity_sizes = c->cfg.capacity_sizes,
				 .ncapacity_sizes = c->cfg.ncapacity_sizes};
	struct prom_kvm kvm = {.available = x->kvm_ok, .sample = &x->kvm, .host = x->kvm_host, .nhost = x->nkvm_host};
	if (kvm.available && c->cfg.kvm_events && !(kvm.selected = kvm_selection(c, &x->kvm)))
		p.error = -ENOMEM;
	if (c->cfg.kvm_families)
		meta.kvm = &kvm;
	prom_write_snapshot(&p, &x->snap, &meta);
	return prom_finish(&p, &b->data, &b->len);
}

/* A document too large at the detail asked is cut rather than refused: forged VM processes must
 * not take the host's own series away (docs/security.md). */
static int render(struct serve_cache *c, enum prom_format format, struct serve_body **ret)
{
	const struct sample *x = c->sample;
	struct serve_body *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	enum prom_detail detail = c->cfg.detail;
	int r;
	while ((r = render_at(c, format, detail, b)) == -EFBIG && detail != PROM_DETAIL_HOST)
		detail = detail == PROM_DETAIL_FULL ? PROM_DETAIL_BASIC : PROM_DETAIL_HOST;
	if (r < 0) {
		free(b);
		return r;
	}
	b->format = format;
	b->taken_seconds = x->snap.monotonic_seconds;
	atomic_init(&b->refs, 1); /* the cache's own reference */
	*ret = b;
	return 0;
}

/* Makes x (a reference handed over) the cached sample unless the cache has a newer one. */
static void adopt(struct serve_cache *c, struct sample *x)
{
	if (c->sample && c->sample->seq >= x->seq) {
		sample_unref(x);
		return;
	}
	drop_bodies(c);
	sample_unref(c->sample);
	c->sample = x;
}

int serve_cache_get(struct serve_cache *c, enum prom_format format, double wait_seconds, struct serve_body **ret)
{
	struct sample *x;
	int late = sample_feed_get(c->cfg.feed, wait_seconds, &x), r = 0;
	if (late < 0)
		return late;
	pthread_mutex_lock(&c->lock);
	adopt(c, x);
	if (!c->body[format])
		r = render(c, format, &c->body[format]);
	if (r == 0) {
		r = late;
		atomic_fetch_add(&c->body[format]->refs, 1);
		*ret = c->body[format];
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}
