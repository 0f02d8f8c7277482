#include "net/serve_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/calibrate.h"
#include "out/prom_metrics.h"

/* Exact PSS reads per snapshot, oldest VM first (docs/accounting.md, "Calibration"). */
#define CALIBRATION_BUDGET_SECONDS 0.005

struct serve_cache {
	struct serve_cache_config cfg;
	pid_t *extra;
	pthread_mutex_t lock;
	bool have_snapshot;
	struct snapshot snap;
	pid_t ksmd_hint;
	uint64_t snapshots;
	struct serve_body *body[2]; /* per format, rendered on first demand */
	struct calib_cache *calib;
};

int serve_cache_new(const struct serve_cache_config *cfg, struct serve_cache **ret)
{
	struct serve_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	if (cfg->nextra) {
		c->extra = malloc(cfg->nextra * sizeof(*c->extra));
		if (!c->extra) {
			free(c);
			return -ENOMEM;
		}
		memcpy(c->extra, cfg->extra, cfg->nextra * sizeof(*c->extra));
	}
	c->cfg.extra = c->extra;
	if (!(c->calib = calib_new())) {
		free(c->extra);
		free(c);
		return -ENOMEM;
	}
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
	if (c->have_snapshot)
		snapshot_free(&c->snap);
	pthread_mutex_destroy(&c->lock);
	calib_free(c->calib);
	free(c->extra);
	free(c);
}

static int refresh(struct serve_cache *c)
{
	struct snapshot s;
	int r = snapshot_take(&c->cfg.root, c->extra, c->cfg.nextra, 0, c->ksmd_hint, &s);
	if (r < 0) {
		snapshot_free(&s);
		return r;
	}
	calib_apply(c->calib, &c->cfg.root, &s.host, &s.vms, CALIBRATION_BUDGET_SECONDS);
	drop_bodies(c);
	if (c->have_snapshot)
		snapshot_free(&c->snap);
	c->snap = s;
	c->have_snapshot = true;
	c->ksmd_hint = s.ksmd_pid;
	c->snapshots++;
	if (c->cfg.on_snapshot)
		c->cfg.on_snapshot(c->cfg.on_snapshot_cls, &c->snap);
	return 0;
}

static int render(struct serve_cache *c, enum prom_format format, struct serve_body **ret)
{
	struct prom p;
	prom_init(&p, format);
	p.max_bytes = c->cfg.max_body_bytes;
	struct prom_meta meta = {.snapshots_total = c->snapshots, .version = c->cfg.version};
	prom_write_snapshot(&p, &c->snap, &meta);
	struct serve_body *b = calloc(1, sizeof(*b));
	if (!b) {
		prom_free(&p);
		return -ENOMEM;
	}
	int r = prom_finish(&p, &b->data, &b->len);
	if (r < 0) {
		free(b);
		return r;
	}
	b->format = format;
	atomic_init(&b->refs, 1); /* the cache's own reference */
	*ret = b;
	return 0;
}

int serve_cache_get(struct serve_cache *c, enum prom_format format, struct serve_body **ret)
{
	int r = 0;
	pthread_mutex_lock(&c->lock);
	double now = clock_monotonic_seconds();
	if (!c->have_snapshot || now - c->snap.monotonic_seconds >= c->cfg.min_interval_seconds)
		r = refresh(c);
	if (r == 0 && !c->body[format])
		r = render(c, format, &c->body[format]);
	if (r == 0) {
		atomic_fetch_add(&c->body[format]->refs, 1);
		*ret = c->body[format];
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

uint64_t serve_cache_snapshots(struct serve_cache *c)
{
	pthread_mutex_lock(&c->lock);
	uint64_t n = c->snapshots;
	pthread_mutex_unlock(&c->lock);
	return n;
}
