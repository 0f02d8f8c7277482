#include "core/sample/sampler_feed.h"
#include "core/base/stop.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct sample_feed {
	struct sample_feed_config cfg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* for the thread: a reader wants a sample, or stop (CLOCK_MONOTONIC) */
	pthread_cond_t done; /* for readers and the stop: a take finished, or the thread (CLOCK_MONOTONIC) */
	/* Under lock. Takes are numbered from 1; wanted is the number a reader waits for. */
	struct sample *latest;
	uint64_t started, finished, wanted;
	double inflight_start; /* when the take in flight (started > finished) began */
	int last_error;        /* of the last take that finished */
	bool stopping;
	bool exited; /* the thread has left its loop */
	/* The thread's own: the last sample recorded (or attempted); after a failed take that was
	 * due for recording, no retry before hold_until. */
	bool recording;
	double last_record;
	uint64_t recorded_seq;
	double hold_until;
};

/* Whether a sample taken at t serves a reader that asked at asked. */
static bool fresh_enough(const struct sample_feed *f, double t, double asked)
{
	return t > asked - f->cfg.min_interval_seconds;
}

/* Records x when it is due: one per interval. A sample up to min-interval older than the due time
 * is the one a reader asking at the due time would get, so it counts as due, and for the due time:
 * counted at its own, each early sample would bring the next due time forward, and scrapes every
 * min-interval would record every min-interval (at --db-interval 2 and scrapes each second, one a
 * second). */
static void record_if_due(struct sample_feed *f, const struct sample *x)
{
	double interval = sampler_interval(f->cfg.sampler), t = x->snap.monotonic_seconds;
	double due = f->last_record + interval;
	if (!f->recording || x->seq <= f->recorded_seq || t < due - f->cfg.min_interval_seconds - 0.01)
		return;
	f->last_record = t < due ? due : t;
	f->recorded_seq = x->seq;
	int r = sampler_record(f->cfg.sampler, x);
	if (r < 0 && sampler_totals(f->cfg.sampler).stopped) {
		f->recording = false;
		if (f->cfg.on_record_stopped)
			f->cfg.on_record_stopped(f->cfg.cls, r);
	}
}

/* One take, published for the readers; entered and left with the lock held. */
static void take(struct sample_feed *f)
{
	f->started++;
	f->inflight_start = clock_monotonic_seconds();
	pthread_mutex_unlock(&f->lock);
	struct sample *x = NULL, *old = NULL;
	int r = sampler_take(f->cfg.sampler, &x);
	pthread_mutex_lock(&f->lock);
	if (r == 0) {
		old = f->latest;
		f->latest = x;
	}
	f->last_error = r;
	f->finished++;
	pthread_cond_broadcast(&f->done);
	pthread_mutex_unlock(&f->lock);
	sample_unref(old);
	if (r == 0)
		record_if_due(f, x); /* x stays alive: only this thread replaces latest */
	else if (f->recording && clock_monotonic_seconds() >= f->last_record + sampler_interval(f->cfg.sampler))
		f->hold_until = clock_monotonic_seconds() + sampler_interval(f->cfg.sampler);
	pthread_mutex_lock(&f->lock);
}

/* Recording is due: the latest sample when a reader could still get it, else a new one. */
static void record_due(struct sample_feed *f, double now)
{
	struct sample *x = f->latest;
	if (!x || !fresh_enough(f, x->snap.monotonic_seconds, now) || x->seq <= f->recorded_seq) {
		take(f);
		return;
	}
	pthread_mutex_unlock(&f->lock);
	record_if_due(f, x);
	pthread_mutex_lock(&f->lock);
}

static double record_due_at(const struct sample_feed *f)
{
	if (!f->recording)
		return INFINITY;
	double due = f->last_record + sampler_interval(f->cfg.sampler);
	return due > f->hold_until ? due : f->hold_until;
}

/* Waits on cond (of the monotonic clock) at most until deadline; false, without waiting, once the
 * deadline has passed. */
static bool wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, double deadline)
{
	if (isinf(deadline) && deadline > 0) {
		pthread_cond_wait(cond, lock);
		return true;
	}
	if (clock_monotonic_seconds() >= deadline)
		return false;
	struct timespec ts = clock_timespec(deadline);
	pthread_cond_timedwait(cond, lock, &ts);
	return true;
}

/* The deadline of a wait of seconds from now; 0 or less: none. */
static double deadline_in(double seconds)
{
	return seconds > 0 ? clock_monotonic_seconds() + seconds : INFINITY;
}

static void *feed_thread(void *arg)
{
	struct sample_feed *f = arg;
	pthread_mutex_lock(&f->lock);
	while (!f->stopping) {
		double due = record_due_at(f), now = clock_monotonic_seconds();
		if (f->wanted > f->started)
			take(f);
		else if (now >= due)
			record_due(f, now);
		else
			wait_until(&f->wake, &f->lock, due);
	}
	f->exited = true;
	pthread_cond_broadcast(&f->done);
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

static void feed_free(struct sample_feed *f)
{
	sample_unref(f->latest);
	pthread_cond_destroy(&f->done);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

static int feed_init(struct sample_feed *f, const struct sample_feed_config *cfg)
{
	f->cfg = *cfg;
	f->recording = cfg->record;
	f->last_record = f->hold_until = -INFINITY;
	pthread_condattr_t attr;
	if (pthread_condattr_init(&attr) != 0)
		return -ENOMEM;
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	int e = pthread_cond_init(&f->wake, &attr);
	if (e == 0 && (e = pthread_cond_init(&f->done, &attr)) != 0)
		pthread_cond_destroy(&f->wake);
	pthread_condattr_destroy(&attr);
	if (e == 0 && (e = pthread_mutex_init(&f->lock, NULL)) != 0) {
		pthread_cond_destroy(&f->done);
		pthread_cond_destroy(&f->wake);
	}
	return -e;
}

int sample_feed_start(const struct sample_feed_config *cfg, struct sample_feed **ret)
{
	struct sample_feed *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	int r = feed_init(f, cfg);
	if (r < 0) {
		free(f);
		return r;
	}
	f->wanted = 1;
	r = -pthread_create(&f->thread, NULL, feed_thread, f);
	if (r < 0) {
		feed_free(f);
		return r;
	}
	pthread_mutex_lock(&f->lock);
	double deadline = deadline_in(cfg->wait_seconds);
	while (f->finished < 1 && wait_until(&f->done, &f->lock, deadline))
		;
	r = f->finished < 1 ? 1 : f->last_error;
	pthread_mutex_unlock(&f->lock);
	if (r < 0) {
		sample_feed_stop(f);
		return r;
	}
	*ret = f;
	return r;
}

/* Entered and left with the lock held. */
static void raise_stop(struct sample_feed *f)
{
	f->stopping = true;
	pthread_cond_signal(&f->wake);
	pthread_cond_broadcast(&f->done);
}

void sample_feed_cancel(struct sample_feed *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	raise_stop(f);
	pthread_mutex_unlock(&f->lock);
}

bool sample_feed_stop(struct sample_feed *f)
{
	if (!f)
		return true;
	pthread_mutex_lock(&f->lock);
	raise_stop(f);
	double deadline = deadline_in(f->cfg.wait_seconds);
	while (!f->exited && wait_until(&f->done, &f->lock, deadline))
		;
	bool exited = f->exited;
	pthread_mutex_unlock(&f->lock);
	if (!exited) { /* a take that does not end: left to the thread, which the exit ends */
		pthread_detach(f->thread);
		return false;
	}
	pthread_join(f->thread, NULL);
	feed_free(f);
	return true;
}

/* When a reader who asked at asked stops waiting: wait seconds after, or sooner when the take in
 * flight began more than wait seconds before that (the one it waits for cannot come in time). */
static double reader_deadline(const struct sample_feed *f, double asked, double wait)
{
	double d = asked + wait;
	if (f->started > f->finished && f->inflight_start + wait < d)
		d = f->inflight_start + wait;
	return d;
}

int sample_feed_get(struct sample_feed *f, double wait_seconds, struct sample **ret)
{
	double asked = clock_monotonic_seconds();
	int r = 0;
	bool waited = false;
	pthread_mutex_lock(&f->lock);
	for (;;) {
		if (f->latest && fresh_enough(f, f->latest->snap.monotonic_seconds, asked)) {
			*ret = sample_ref(f->latest);
			break;
		}
		if (f->stopping || (waited && f->last_error < 0)) {
			r = f->stopping ? -ESHUTDOWN : f->last_error;
			break;
		}
		/* The take in flight serves when it began recently enough; else the next one. */
		bool inflight = f->started > f->finished && fresh_enough(f, f->inflight_start, asked);
		uint64_t need = inflight ? f->started : f->started + 1;
		if (need > f->wanted) {
			f->wanted = need;
			pthread_cond_signal(&f->wake);
		}
		double deadline = reader_deadline(f, asked, wait_seconds);
		bool in_time = true;
		while (f->finished < need && !f->stopping && (in_time = wait_until(&f->done, &f->lock, deadline)))
			;
		if (!in_time) { /* late: the latest sample, whatever its age, or none */
			r = f->latest ? 1 : -ETIMEDOUT;
			if (f->latest)
				*ret = sample_ref(f->latest);
			break;
		}
		waited = true;
	}
	pthread_mutex_unlock(&f->lock);
	return r;
}

uint64_t sample_feed_samples(struct sample_feed *f)
{
	pthread_mutex_lock(&f->lock);
	uint64_t n = f->latest ? f->latest->seq : 0;
	pthread_mutex_unlock(&f->lock);
	return n;
}

bool sample_feed_on_thread(const struct sample_feed *f) { return pthread_equal(pthread_self(), f->thread); }
