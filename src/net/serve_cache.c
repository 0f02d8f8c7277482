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
	/* KVM (cfg.kvm): the reader, opened once; the read that goes with snap (kvm_ok) and is the
	 * "before" of the next one; the host-wide sums of per-VM changes (prom_metrics.h). */
	struct kvm_reader *kvm;
	enum kvm_avail kvm_why;
	struct kvm_sample kvm_sample;
	bool have_kvm_sample, kvm_ok;
	maybe_i64 *kvm_host;
	bool *kvm_selected; /* [nkvm_host], from cfg.kvm_events */
	size_t nkvm_host;
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
	c->kvm_why = KVM_NO_KVM;
	if (cfg->kvm && kvm_reader_open(&cfg->root, &c->kvm, &c->kvm_why) < 0)
		c->kvm = NULL; /* remembered in kvm_why; exported as vmhost_kvm_available 0 */
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
	kvm_sample_free(&c->kvm_sample);
	kvm_reader_close(c->kvm);
	free(c->kvm_host);
	free(c->kvm_selected);
	free(c->extra);
	free(c);
}

bool serve_cache_kvm(struct serve_cache *c, enum kvm_avail *ret_why)
{
	if (ret_why)
		*ret_why = c->kvm_why;
	return c->kvm != NULL;
}

/* Adds what happened between the previous read and b to the host-wide sums: each VM's change
 * (all of it for a VM that appeared: KVM starts its counters at zero; the value after a reset),
 * or the global files' change when the kernel has no per-VM directories. */
static int kvm_accumulate(struct serve_cache *c, const struct kvm_sample *b)
{
	const struct kvm_sample *a = c->have_kvm_sample ? &c->kvm_sample : NULL;
	if (b->ncounters > c->nkvm_host) {
		maybe_i64 *h = realloc(c->kvm_host, b->ncounters * sizeof(*h));
		if (!h)
			return -ENOMEM;
		c->kvm_host = h;
		bool *sel = realloc(c->kvm_selected, b->ncounters * sizeof(*sel));
		if (!sel)
			return -ENOMEM;
		c->kvm_selected = sel;
		for (size_t i = c->nkvm_host; i < b->ncounters; i++) {
			h[i] = MAYBE(0);
			sel[i] = !c->cfg.kvm_events ||
				 regexec(c->cfg.kvm_events, kvm_counter_name(c->kvm, i), 0, NULL, 0) == 0;
		}
		c->nkvm_host = b->ncounters;
	}
	bool global = b->nvms == 0 && (!a || a->nvms == 0);
	for (size_t i = 0; i < b->ncounters; i++) {
		enum kvm_stat_kind kind = kvm_counter_kind(c->kvm, i);
		if (kind != KVM_STAT_EVENTS && kind != KVM_STAT_TIME_NS)
			continue;
		struct kvm_change sum = kvm_change_zero();
		if (global) {
			maybe_i64 was = a && i < a->ncounters ? a->total[i] : UNKNOWN;
			struct kvm_change ch = kvm_change(kind, was, b->total[i], 0, !a);
			sum.delta = ch.delta.known ? ch.delta : ch.reset ? ch.total : MAYBE(0);
		}
		for (size_t v = 0; !global && v < b->nvms; v++) {
			const struct kvm_vm_sample *vm = &b->vms[v];
			const struct kvm_vm_sample *before = a ? kvm_sample_find(a, vm->dir) : NULL;
			/* The same directory name with another process start is another VM. */
			bool appeared = !before || (before->start_ticks && vm->start_ticks &&
						    before->start_ticks != vm->start_ticks);
			maybe_i64 was = before && !appeared && i < a->ncounters ? before->values[i] : UNKNOWN;
			struct kvm_change ch = kvm_change(kind, was, vm->values[i], 0, appeared);
			if (ch.delta.known)
				sum.delta.v += ch.delta.v;
			else if (ch.reset)
				sum.delta.v += ch.total.v;
			/* else a read failed: that VM's change in this interval is not counted */
		}
		c->kvm_host[i].v += sum.delta.v;
	}
	return 0;
}

/* Reads KVM's counters for the snapshot just taken; a failed read exports none this time. */
static void kvm_refresh(struct serve_cache *c)
{
	c->kvm_ok = false;
	if (!c->kvm)
		return;
	struct kvm_sample b;
	if (kvm_reader_sample(c->kvm, &b) < 0 || kvm_accumulate(c, &b) < 0) {
		kvm_sample_free(&b);
		return;
	}
	kvm_sample_free(&c->kvm_sample);
	c->kvm_sample = b;
	c->have_kvm_sample = true;
	c->kvm_ok = true;
}

static int refresh(struct serve_cache *c)
{
	struct snapshot s;
	int r = snapshot_take(&c->cfg.root, c->extra, c->cfg.nextra, 0, c->ksmd_hint, &s);
	if (r < 0)
		return r;
	calib_apply(c->calib, &c->cfg.root, &s.host, &s.vms, CALIBRATION_BUDGET_SECONDS);
	drop_bodies(c);
	if (c->have_snapshot)
		snapshot_free(&c->snap);
	c->snap = s;
	c->have_snapshot = true;
	c->ksmd_hint = s.ksmd_pid;
	c->snapshots++;
	double kvm_start = clock_monotonic_seconds();
	kvm_refresh(c);
	if (c->kvm)
		c->snap.gather_seconds += clock_monotonic_seconds() - kvm_start; /* part of the gathering */
	if (c->cfg.on_snapshot)
		c->cfg.on_snapshot(c->cfg.on_snapshot_cls, &c->snap, c->kvm_ok ? c->kvm : NULL,
				   c->kvm_ok ? &c->kvm_sample : NULL);
	return 0;
}

static int render(struct serve_cache *c, enum prom_format format, struct serve_body **ret)
{
	struct prom p;
	prom_init(&p, format);
	p.max_bytes = c->cfg.max_body_bytes;
	struct prom_meta meta = {.snapshots_total = c->snapshots, .version = c->cfg.version};
	struct prom_kvm kvm = {.available = c->kvm_ok, .reader = c->kvm, .sample = &c->kvm_sample,
			       .host = c->kvm_host, .nhost = c->nkvm_host, .selected = c->kvm_selected};
	if (c->cfg.kvm)
		meta.kvm = &kvm;
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
