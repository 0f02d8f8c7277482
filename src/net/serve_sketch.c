/* serve's /sketch: one sketching run at a time on a thread of its own (net/serve_sketch.h). */
#include "net/serve_sketch.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "io/clock.h"

#define STOP_WAIT_SECONDS 5.0 /* for a run to end once cut short */

struct serve_sketch {
	struct serve_sketch_config cfg;
	pthread_mutex_t lock;   /* guards everything below but stop */
	pthread_cond_t ended;   /* a run is over, its done called (CLOCK_MONOTONIC) */
	struct serve_body *body; /* the last run's, kept a minute */
	double taken_at;
	/* The run: reserved by serve_sketch_get, over once its done was called. */
	bool busy;
	bool started;           /* its thread, to join */
	pthread_t thread;
	double run_start, last_run_seconds;
	void (*done)(void *cls); /* NULL once called (or taken over by the stop) */
	void *done_cls;
	int result;             /* for its request */
	struct serve_body *result_body;
	bool stopped, left_behind;
	atomic_bool stop;       /* a run in progress ends, partial and unkept */
};

int serve_sketch_new(const struct serve_sketch_config *cfg, struct serve_sketch **ret)
{
	struct serve_sketch *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	atomic_init(&s->stop, false);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->ended, &attr);
	pthread_condattr_destroy(&attr);
	pthread_mutex_init(&s->lock, NULL);
	*ret = s;
	return 0;
}

void serve_sketch_free(struct serve_sketch *s)
{
	if (!s || !serve_sketch_stop(s))
		return;
	serve_body_unref(s->body);
	serve_body_unref(s->result_body);
	explicit_bzero(&s->cfg.key, sizeof(s->cfg.key));
	pthread_cond_destroy(&s->ended);
	pthread_mutex_destroy(&s->lock);
	free(s);
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

/* The run is over with r (and fresh, one reference, when r is 0): kept, handed to its request,
 * whose done is called, unless the stop already answered it. */
static void finish(struct serve_sketch *s, int r, struct serve_body *fresh)
{
	pthread_mutex_lock(&s->lock);
	double now = clock_monotonic_seconds();
	s->last_run_seconds = now - s->run_start;
	if (fresh) {
		serve_body_unref(s->body);
		s->body = fresh;
		s->taken_at = now;
		atomic_fetch_add(&fresh->refs, 1);
	}
	void (*done)(void *) = s->done;
	void *cls = s->done_cls;
	if (done) {
		s->result = r;
		serve_body_unref(s->result_body);
		s->result_body = fresh;
		s->done = NULL;
	} else {
		serve_body_unref(fresh); /* its request was answered by the stop */
	}
	pthread_mutex_unlock(&s->lock);
	if (done)
		done(cls);
	pthread_mutex_lock(&s->lock);
	s->busy = false;
	pthread_cond_broadcast(&s->ended);
	pthread_mutex_unlock(&s->lock);
}

static void *run_thread(void *arg)
{
	struct serve_sketch *s = arg;
	struct serve_body *fresh = NULL;
	int r = take(s, &fresh);
	finish(s, r, r == 0 ? fresh : NULL);
	return NULL;
}

/* Seconds until the run in progress is likely over: the last run's length less what this one
 * took so far, a minute when there was none; 1 at least. */
static unsigned retry_seconds(const struct serve_sketch *s, double now)
{
	double left = (s->last_run_seconds > 0 ? s->last_run_seconds : 60) - (now - s->run_start);
	return left < 1 ? 1 : left > 3600 ? 3600 : (unsigned)ceil(left);
}

int serve_sketch_get(struct serve_sketch *s, void (*done)(void *cls), void *cls, struct serve_body **ret,
		     unsigned *ret_retry_seconds)
{
	pthread_mutex_lock(&s->lock);
	double now = clock_monotonic_seconds();
	int r = -EINPROGRESS;
	if (s->body && now - s->taken_at < SERVE_SKETCH_MAX_AGE_SECONDS) {
		atomic_fetch_add(&s->body->refs, 1);
		*ret = s->body;
		r = 0;
	} else if (s->stopped) {
		r = -ECANCELED;
	} else if (s->busy) {
		*ret_retry_seconds = retry_seconds(s, now);
		r = -EBUSY;
	} else {
		s->busy = true;
		s->run_start = now;
		s->done = done;
		s->done_cls = cls;
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

void serve_sketch_run(struct serve_sketch *s)
{
	pthread_mutex_lock(&s->lock);
	bool joinable = s->started;
	pthread_t last = s->thread;
	s->started = false;
	pthread_mutex_unlock(&s->lock);
	if (joinable) /* the last run's thread, over (busy was false) */
		pthread_join(last, NULL);
	pthread_mutex_lock(&s->lock);
	int r = s->stopped ? -ECANCELED : -pthread_create(&s->thread, NULL, run_thread, s);
	s->started = r == 0;
	pthread_mutex_unlock(&s->lock);
	if (r < 0)
		finish(s, r, NULL);
}

int serve_sketch_collect(struct serve_sketch *s, struct serve_body **ret)
{
	pthread_mutex_lock(&s->lock);
	int r = s->result;
	if (r == 0)
		*ret = s->result_body;
	else
		serve_body_unref(s->result_body);
	s->result_body = NULL;
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* Entered and left with the lock held: waits for the run to be over, at most until deadline
 * while its request is still waiting; then answers that request itself (-ECANCELED). */
static void wait_run_over(struct serve_sketch *s, double deadline)
{
	while (s->busy && !s->left_behind) {
		if (s->done && clock_monotonic_seconds() >= deadline) {
			void (*done)(void *) = s->done;
			void *cls = s->done_cls;
			s->done = NULL;
			s->result = -ECANCELED;
			s->left_behind = true;
			pthread_mutex_unlock(&s->lock);
			done(cls);
			pthread_mutex_lock(&s->lock);
			return;
		}
		struct timespec ts = clock_timespec(deadline);
		if (s->done)
			pthread_cond_timedwait(&s->ended, &s->lock, &ts);
		else /* its done is being called: a moment */
			pthread_cond_wait(&s->ended, &s->lock);
	}
}

bool serve_sketch_stop(struct serve_sketch *s)
{
	if (!s)
		return true;
	atomic_store(&s->stop, true);
	pthread_mutex_lock(&s->lock);
	s->stopped = true;
	wait_run_over(s, clock_monotonic_seconds() + STOP_WAIT_SECONDS);
	bool joinable = s->started && !s->left_behind;
	s->started = s->started && s->left_behind;
	bool left = s->left_behind;
	pthread_mutex_unlock(&s->lock);
	if (joinable)
		pthread_join(s->thread, NULL);
	return !left;
}
