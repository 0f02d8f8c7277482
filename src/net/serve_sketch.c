#include "net/serve_sketch.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "io/clock.h"

struct serve_sketch {
	struct serve_sketch_config cfg;
	pthread_mutex_t lock; /* one sketching run at a time; guards body and taken_at */
	struct serve_body *body;
	double taken_at;
	atomic_bool stop; /* serve_sketch_stop: a run in progress ends, partial and unkept */
};

int serve_sketch_new(const struct serve_sketch_config *cfg, struct serve_sketch **ret)
{
	struct serve_sketch *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	atomic_init(&s->stop, false);
	pthread_mutex_init(&s->lock, NULL);
	*ret = s;
	return 0;
}

void serve_sketch_free(struct serve_sketch *s)
{
	if (!s)
		return;
	serve_body_unref(s->body);
	explicit_bzero(&s->cfg.key, sizeof(s->cfg.key));
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void serve_sketch_stop(struct serve_sketch *s)
{
	if (s)
		atomic_store(&s->stop, true);
}

const char *serve_sketch_refusal(const struct serve_sketch *s) { return s->cfg.refusal; }

/* A fresh run over every VM, under the budget, as a body of one reference. */
static int take(struct serve_sketch *s, struct serve_body **ret)
{
	struct sketch_budget budget;
	sketch_budget_start(&budget, s->cfg.cpu_percent);
	struct sketch_opts o = {.key = s->cfg.key, .sample_n = s->cfg.sample_n, .budget = &budget, .cancel = &s->stop};
	struct serve_body *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	int r = sketch_file_take(&s->cfg.root, &o, &b->data, &b->len);
	explicit_bzero(&o.key, sizeof(o.key));
	if (r == 0 && atomic_load(&s->stop)) { /* cut short by the stop: partial sketches are not served as a host's */
		free(b->data);
		r = -ECANCELED;
	}
	if (r < 0) {
		free(b);
		return r;
	}
	atomic_init(&b->refs, 1);
	*ret = b;
	return 0;
}

int serve_sketch_get(struct serve_sketch *s, struct serve_body **ret)
{
	pthread_mutex_lock(&s->lock);
	int r = 0;
	double now = clock_monotonic_seconds();
	if (!s->body || now - s->taken_at >= SERVE_SKETCH_MAX_AGE_SECONDS) {
		struct serve_body *fresh;
		r = take(s, &fresh);
		if (r == 0) {
			serve_body_unref(s->body);
			s->body = fresh;
			s->taken_at = clock_monotonic_seconds();
		}
	}
	if (r == 0) {
		atomic_fetch_add(&s->body->refs, 1);
		*ret = s->body;
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}
