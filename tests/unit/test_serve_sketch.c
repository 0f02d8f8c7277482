/* serve's /sketch runs (net/serve_sketch.h) on a fixture host whose meminfo blocks until fed, so a
 * run lasts as long as the test wants: one run at a time on a thread of its own (a second request
 * is told when to come back, never made to wait), its request called back and given the result,
 * the sketches kept for a minute, and a run cut short by the stop answered -ECANCELED. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/serve_sketch.h"
#include "serve_testutil.h"

static char dir[64], proc[1100], sys[1100];

/* A run's request: told when the run is over. */
static struct request {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
} req = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void request_done(void *cls)
{
	struct request *r = cls;
	pthread_mutex_lock(&r->lock);
	r->done++;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* Waits (10 s at most) until the request has been called back; how many times it was. */
static int request_wait(struct request *r)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&r->lock);
	while (!r->done && pthread_cond_timedwait(&r->cond, &r->lock, &until) == 0)
		;
	int n = r->done;
	pthread_mutex_unlock(&r->lock);
	return n;
}

static int setup(void **state)
{
	(void)state;
	char cmd[2048];
	if (tmp_tree_make(dir, sizeof(dir), "sketch") < 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "cp -a '%s/serve' '%s/host'", fixtures_dir(), dir);
	if (system(cmd) != 0)
		return -1;
	snprintf(proc, sizeof(proc), "%s/host/proc", dir);
	snprintf(sys, sizeof(sys), "%s/host/sys", dir);
	fifo_block(proc, "meminfo");
	req.done = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmp_tree_remove(dir);
}

static struct serve_sketch *sketcher(void)
{
	struct serve_sketch_config c = {.root = {proc, sys}, .sample_n = 32};
	memset(&c.key, 7, sizeof(c.key));
	struct serve_sketch *s;
	assert_int_equal(serve_sketch_new(&c, &s), 0);
	assert_null(serve_sketch_refusal(s));
	return s;
}

/* The run the first request started goes on (meminfo blocks): a second request gets -EBUSY with
 * when to come back, at once. Once the run is over, the first gets the sketches, and requests
 * within the minute the very same body without a run. */
static void test_one_run_at_a_time(void **state)
{
	(void)state;
	struct serve_sketch *s = sketcher();
	struct serve_body *b = NULL, *again = NULL;
	unsigned retry = 0;
	assert_int_equal(serve_sketch_get(s, request_done, &req, &b, &retry), -EINPROGRESS);
	serve_sketch_run(s);
	usleep(100 * 1000);
	double t0 = clock_monotonic_seconds();
	assert_int_equal(serve_sketch_get(s, request_done, &req, &b, &retry), -EBUSY);
	assert_true(clock_monotonic_seconds() - t0 < 0.1);
	assert_true(retry >= 1 && retry <= 60);
	assert_int_equal(req.done, 0);
	fifo_unblock(proc, "meminfo");
	assert_int_equal(request_wait(&req), 1);
	assert_int_equal(serve_sketch_collect(s, &b), 0);
	assert_true(b->len >= SKETCH_FILE_HEADER_BYTES && !memcmp(b->data, SKETCH_FILE_MAGIC, 8));
	assert_int_equal(serve_sketch_get(s, request_done, &req, &again, &retry), 0);
	assert_ptr_equal(again, b);
	serve_body_unref(again);
	serve_body_unref(b);
	assert_true(serve_sketch_stop(s));
	assert_int_equal(serve_sketch_get(s, request_done, &req, &b, &retry), 0); /* still kept */
	serve_body_unref(b);
	serve_sketch_free(s);
	assert_int_equal(req.done, 1);
}

static void *feed_later(void *arg)
{
	(void)arg;
	usleep(300 * 1000);
	fifo_unblock(proc, "meminfo");
	return NULL;
}

/* The stop during a run: the run is cut short, its request called back with -ECANCELED, nothing
 * kept, and no new run starts. */
static void test_stop_during_a_run(void **state)
{
	(void)state;
	struct serve_sketch *s = sketcher();
	struct serve_body *b = NULL;
	unsigned retry = 0;
	assert_int_equal(serve_sketch_get(s, request_done, &req, &b, &retry), -EINPROGRESS);
	serve_sketch_run(s);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, feed_later, NULL), 0);
	assert_true(serve_sketch_stop(s));
	pthread_join(t, NULL);
	assert_int_equal(req.done, 1);
	assert_int_equal(serve_sketch_collect(s, &b), -ECANCELED);
	assert_int_equal(serve_sketch_get(s, request_done, &req, &b, &retry), -ECANCELED);
	serve_sketch_free(s);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_run_at_a_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_during_a_run, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
