/* The sampler and its feed on fixture hosts, recording into real SQLite: KVM rows only when due,
 * one sample per interval whether or not anyone scrapes, every write on the feed's thread (never
 * an HTTP worker's), concurrent scrapes sharing samples, an unreadable host reported to the
 * scrape and recovered from, and a gathering that does not end waited for within a deadline. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/sample/sampler_feed.h"
#include "net/serve_http.h"
#include "serve_testutil.h"
#include "store/store.h"

static char fixtures[1024], dir[64], db[128];

static int setup(void **state)
{
	(void)state;
	return scratch_make(dir, db, "sampler");
}

static int teardown(void **state)
{
	(void)state;
	return scratch_remove(dir);
}

/* A writable copy of fixture name under dir, with the serve fixture's meminfo; its root. */
static struct io_root copy_tree(const char *name, char *proc, char *sys, size_t cap)
{
	return scratch_fixture(dir, name, proc, sys, cap);
}

static int64_t count_rows(const char *what)
{
	struct store *s;
	assert_int_equal(store_open_read(db, &s), 0);
	int64_t n = 0;
	if (!strcmp(what, "samples")) {
		struct history_host_point *p;
		size_t np;
		assert_int_equal(store_host_points(s, 0, 1e12, &p, &np), 0);
		free(p);
		n = (int64_t)np;
	} else {
		double *t;
		int64_t *v;
		size_t np;
		assert_int_equal(store_kvm_points(s, 0, what, 0, 1e12, &t, &v, &np), 0);
		free(t);
		free(v);
		n = (int64_t)np;
	}
	store_close(s);
	return n;
}

static void test_take_without_sink(void **state)
{
	(void)state;
	char proc[1100], sys[1100];
	snprintf(proc, sizeof(proc), "%s/serve/proc", fixtures);
	snprintf(sys, sizeof(sys), "%s/serve/sys", fixtures);
	pid_t extra[] = {20000};
	struct sampler_config sc = {.root = {proc, sys}, .extra = extra, .nextra = 1, .kvm = true};
	struct sampler *s;
	assert_int_equal(sampler_new(&sc, &s), 0);
	enum kvm_avail why;
	assert_true(sampler_kvm(s, &why)); /* no debugfs in the serve fixture: QEMU VMs through QMP */
	assert_int_equal(why, KVM_NO_DEBUGFS);
	struct sample *a, *b;
	assert_int_equal(sampler_take(s, &a), 0);
	assert_int_equal(sampler_take(s, &b), 0);
	assert_int_equal(a->seq, 1);
	assert_int_equal(b->seq, 2);
	assert_int_equal(b->snap.vms.n, 3);
	assert_false(b->kvm_ok);
	assert_int_equal(sampler_record(s, b), -ENOTCONN);
	sample_unref(a);
	sample_unref(b);
	sampler_free(s);
}

/* record's use: KVM read and written only when due (once per kvm interval). */
static void test_kvm_rows_when_due(void **state)
{
	(void)state;
	char proc[1100], sys[1100];
	struct store *st;
	assert_int_equal(store_open(db, &st), 0);
	struct sample_sink sink = store_sink(st, db);
	struct sampler_config sc = {.root = copy_tree("exits-intel", proc, sys, sizeof(proc)), .kvm = true,
				    .interval_seconds = 10, .kvm_interval_seconds = 60, .sink = &sink};
	struct sampler *s;
	assert_int_equal(sampler_new(&sc, &s), 0);
	assert_true(sampler_kvm(s, NULL));
	for (int i = 0; i < 3; i++) {
		struct sample *x;
		assert_int_equal(sampler_take(s, &x), 0);
		assert_int_equal(x->kvm_ok, i == 0); /* not due again within the minute */
		assert_int_equal(sampler_record(s, x), 0);
		sample_unref(x);
		usleep(5000); /* samples are keyed by their millisecond */
	}
	struct sampler_totals t = sampler_totals(s);
	assert_int_equal(t.recorded, 3);
	assert_int_equal(t.dropped, 0);
	assert_int_equal(t.error, 0);
	sampler_free(s);
	store_close(st);
	assert_int_equal(count_rows("samples"), 3);
	assert_int_equal(count_rows("exits"), 1);
}

/* The sink around the store, noting which thread writes and when. */
static struct observed {
	struct store *store;
	struct sample_feed *feed; /* set once started: the first write comes before */
	pthread_mutex_t lock;
	pthread_t thread[256];
	bool on_feed_thread[256];
	double t[256];
	int writes;
} obs = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int observed_write(void *cls, const struct snapshot *snap, const struct kvm_rows *rows)
{
	struct observed *o = cls;
	pthread_mutex_lock(&o->lock);
	if (o->writes < 256) {
		o->thread[o->writes] = pthread_self();
		o->on_feed_thread[o->writes] = !o->feed || sample_feed_on_thread(o->feed);
		o->t[o->writes] = snap->monotonic_seconds;
		o->writes++;
	}
	pthread_mutex_unlock(&o->lock);
	return store_write_sample(o->store, snap, rows);
}

static int http_get(int port, char *buf, size_t cap)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
	send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = recv(fd, buf + n, cap - 1 - n, 0)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(fd);
	int code = 0;
	sscanf(buf, "HTTP/1.1 %d", &code);
	return code;
}

struct scraper {
	int port;
	double until;
	int ok, failed;
};

static void *scrape_until(void *arg)
{
	struct scraper *sc = arg;
	char *buf = malloc(1 << 20);
	while (buf && clock_monotonic_seconds() < sc->until) {
		if (http_get(sc->port, buf, 1 << 20) == 200)
			sc->ok++;
		else
			sc->failed++;
	}
	free(buf);
	return NULL;
}

static int start_http(struct serve_cache *cache, struct serve_http **ret)
{
	int port = 0, fd = loopback_listener(&port);
	assert_true(fd >= 0);
	struct serve_http_config hc = {.listen_fd = fd, .threads = 4, .max_connections = 64, .timeout_seconds = 10,
				       .connection_memory = 16 * 1024, .cache = cache};
	assert_int_equal(serve_http_start(&hc, ret), 0);
	return port;
}

/* serve --db's use: one sample per interval without scrapes, still one per interval under
 * scrapes that each gather (--min-interval 0), every write on the feed's thread. */
static void test_feed_records_on_its_thread(void **state)
{
	(void)state;
	char proc[1100], sys[1100];
	assert_int_equal(store_open(db, &obs.store), 0);
	struct sample_sink sink = {.write = observed_write, .strerror = store_strerror, .name = db, .cls = &obs};
	struct sampler_config sc = {.root = copy_tree("exits-intel", proc, sys, sizeof(proc)), .kvm = true,
				    .kvm_every_sample = true, .interval_seconds = 1, .kvm_interval_seconds = 60,
				    .sink = &sink};
	struct sampler *s;
	assert_int_equal(sampler_new(&sc, &s), 0);
	struct sample_feed_config fc = {.sampler = s, .min_interval_seconds = 0, .record = true};
	struct sample_feed *f;
	double start = clock_monotonic_seconds();
	assert_int_equal(sample_feed_start(&fc, &f), 0);
	pthread_mutex_lock(&obs.lock); /* the feed's thread reads it in observed_write */
	obs.feed = f;
	pthread_mutex_unlock(&obs.lock);
	struct serve_cache_config cc = {.feed = f, .kvm_families = true,
					.max_body_bytes = 1 << 22, .version = "test"};
	struct serve_cache *cache;
	assert_int_equal(serve_cache_new(&cc, &cache), 0);
	struct serve_http *http;
	int port = start_http(cache, &http);

	usleep(1600 * 1000); /* nobody scrapes: recording goes on */
	pthread_mutex_lock(&obs.lock);
	int unscraped = obs.writes;
	pthread_mutex_unlock(&obs.lock);
	assert_true(unscraped >= 2);
	uint64_t before = sample_feed_samples(f);
	struct scraper sc4[4];
	pthread_t t[4];
	for (int i = 0; i < 4; i++) {
		sc4[i] = (struct scraper){.port = port, .until = clock_monotonic_seconds() + 1.5};
		assert_int_equal(pthread_create(&t[i], NULL, scrape_until, &sc4[i]), 0);
	}
	int scrapes = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(sc4[i].failed, 0);
		scrapes += sc4[i].ok;
	}
	serve_http_stop(http);
	serve_cache_free(cache);
	uint64_t taken = sample_feed_samples(f) - before;
	sample_feed_stop(f);
	double elapsed = clock_monotonic_seconds() - start;
	sampler_free(s);
	store_close(obs.store);

	fprintf(stderr, "%d scrapes, %llu samples taken meanwhile, %d written in %.1f s\n", scrapes,
		(unsigned long long)taken, obs.writes, elapsed);
	/* Every scrape got a sample taken after it asked, shared with the scrapes that asked meanwhile
	 * (the feed's own samples for recording come on top). */
	assert_true(scrapes > 0 && taken > 0 && taken <= (uint64_t)scrapes + 2);
	assert_true(obs.writes >= 3 && obs.writes <= (int)elapsed + 1);
	for (int i = 0; i < obs.writes; i++) {
		assert_true(pthread_equal(obs.thread[i], obs.thread[0]));
		assert_true(obs.on_feed_thread[i]);
		if (i > 0)
			assert_true(obs.t[i] - obs.t[i - 1] >= 0.98); /* one per interval */
	}
	assert_false(pthread_equal(obs.thread[0], pthread_self()));
	assert_int_equal(count_rows("samples"), obs.writes);
	assert_int_equal(count_rows("exits"), 1); /* KVM rows once a minute */
}

static int counting_write(void *cls, const struct snapshot *snap, const struct kvm_rows *rows)
{
	(void)snap;
	(void)rows;
	(*(int *)cls)++; /* the feed's thread alone; read after sample_feed_stop joined it */
	return 0;
}

/* serve --db with a --min-interval: a scraper at that pace gets samples that count as due up to
 * min-interval early, and still one is recorded per interval (each early one counted at its own
 * time brought the next due time forward: one recorded per scrape, about 8 here). */
static void test_feed_records_once_per_interval_under_min_interval(void **state)
{
	(void)state;
	char proc[1100], sys[1100];
	int writes = 0;
	struct sample_sink sink = {.write = counting_write, .strerror = store_strerror, .name = db, .cls = &writes};
	struct sampler_config sc = {.root = copy_tree("serve", proc, sys, sizeof(proc)), .interval_seconds = 1,
				    .sink = &sink};
	struct sampler *s;
	assert_int_equal(sampler_new(&sc, &s), 0);
	struct sample_feed_config fc = {.sampler = s, .min_interval_seconds = 0.5, .record = true};
	struct sample_feed *f;
	double start = clock_monotonic_seconds();
	assert_int_equal(sample_feed_start(&fc, &f), 0);
	while (clock_monotonic_seconds() - start < 4) { /* a scraper at min-interval's pace */
		struct sample *x = NULL;
		assert_in_range(sample_feed_get(f, INFINITY, &x), 0, 1);
		sample_unref(x);
		usleep(500 * 1000);
	}
	sample_feed_stop(f);
	double elapsed = clock_monotonic_seconds() - start;
	sampler_free(s);
	fprintf(stderr, "%d recorded in %.1f s at an interval of 1 s\n", writes, elapsed);
	assert_true(writes >= 3 && writes <= (int)elapsed + 1);
}

/* The host becomes unreadable: the reader gets the error (a scrape's 500), never the old
 * sample as a new one; once readable again, a new sample. */
static void test_unreadable_host(void **state)
{
	(void)state;
	char proc[1100], sys[1100], from[1200], to[1200];
	struct sampler_config sc = {.root = copy_tree("serve", proc, sys, sizeof(proc))};
	struct sampler *s;
	assert_int_equal(sampler_new(&sc, &s), 0);
	struct sample_feed_config fc = {.sampler = s, .min_interval_seconds = 0};
	struct sample_feed *f;
	assert_int_equal(sample_feed_start(&fc, &f), 0);
	snprintf(from, sizeof(from), "%s/meminfo", proc);
	snprintf(to, sizeof(to), "%s/meminfo.away", proc);
	assert_int_equal(rename(from, to), 0);
	struct sample *x;
	assert_int_equal(sample_feed_get(f, INFINITY, &x), -ENOENT);
	assert_int_equal(rename(to, from), 0);
	assert_int_equal(sample_feed_get(f, INFINITY, &x), 0);
	assert_int_equal(x->seq, 2);
	sample_unref(x);
	sample_feed_stop(f);
	sampler_free(s);

	/* Unreadable from the start: the feed does not start. */
	char missing[1100];
	snprintf(missing, sizeof(missing), "%s/nothing", dir);
	sc.root = (struct io_root){.proc = missing, .sys = missing};
	assert_int_equal(sampler_new(&sc, &s), 0);
	fc.sampler = s;
	assert_int_equal(sample_feed_start(&fc, &f), -ENOENT);
	sampler_free(s);
}

struct waiter {
	struct sample_feed *f;
	int r;
};

static void *wait_long(void *arg)
{
	struct waiter *w = arg;
	struct sample *x = NULL;
	w->r = sample_feed_get(w->f, 30, &x);
	sample_unref(x);
	return NULL;
}

/* A take that does not end, from the start: the start says so after its wait, a reader gets
 * -ETIMEDOUT after its own (no sample at all), and one waiting long is answered -ESHUTDOWN at
 * once when the feed is cancelled. */
static void test_first_take_late(void **state)
{
	(void)state;
	char proc[1100], sys[1100];
	struct sampler_config sc = {.root = copy_tree("serve", proc, sys, sizeof(proc))};
	fifo_block(proc, "meminfo");
	struct sampler *s;
	assert_int_equal(sampler_new(&sc, &s), 0);
	struct sample_feed_config fc = {.sampler = s, .min_interval_seconds = 1, .wait_seconds = 0.3};
	struct sample_feed *f;
	double t0 = clock_monotonic_seconds();
	assert_int_equal(sample_feed_start(&fc, &f), 1);
	assert_true(clock_monotonic_seconds() - t0 < 2);
	struct sample *x = NULL;
	t0 = clock_monotonic_seconds();
	assert_int_equal(sample_feed_get(f, 0.2, &x), -ETIMEDOUT);
	assert_true(clock_monotonic_seconds() - t0 < 0.5);
	struct waiter w = {.f = f};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, wait_long, &w), 0);
	usleep(100 * 1000);
	t0 = clock_monotonic_seconds();
	sample_feed_cancel(f);
	pthread_join(t, NULL);
	assert_int_equal(w.r, -ESHUTDOWN);
	assert_true(clock_monotonic_seconds() - t0 < 1);
	fifo_unblock(proc, "meminfo");
	assert_true(sample_feed_stop(f)); /* the take came in: the thread ended */
	sampler_free(s);
}

/* A take that does not end after the first: a reader waits its own wait at most and gets the
 * latest sample, late; the next one does not wait at all (the take in flight is already late).
 * Once the take ends, samples are fresh again. */
static void test_take_late(void **state)
{
	(void)state;
	char proc[1100], sys[1100];
	struct sampler_config sc = {.root = copy_tree("serve", proc, sys, sizeof(proc))};
	struct sampler *s;
	assert_int_equal(sampler_new(&sc, &s), 0);
	struct sample_feed_config fc = {.sampler = s, .min_interval_seconds = 0, .wait_seconds = 0.3};
	struct sample_feed *f;
	assert_int_equal(sample_feed_start(&fc, &f), 0);
	fifo_block(proc, "meminfo");
	struct sample *x;
	double t0 = clock_monotonic_seconds();
	assert_int_equal(sample_feed_get(f, 0.4, &x), 1);
	double waited = clock_monotonic_seconds() - t0;
	assert_true(waited >= 0.35 && waited < 1.5);
	assert_int_equal(x->seq, 1);
	sample_unref(x);
	t0 = clock_monotonic_seconds();
	assert_int_equal(sample_feed_get(f, 0.4, &x), 1);
	assert_true(clock_monotonic_seconds() - t0 < 0.2);
	assert_int_equal(x->seq, 1);
	sample_unref(x);
	fifo_unblock(proc, "meminfo");
	assert_int_equal(sample_feed_get(f, 10, &x), 0);
	assert_true(x->seq >= 2);
	sample_unref(x);
	assert_true(sample_feed_stop(f));
	sampler_free(s);
}

int main(void)
{
	const char *fx = getenv("VMHOST_FIXTURES");
	snprintf(fixtures, sizeof(fixtures), "%s", fx ? fx : "tests/fixtures");
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_take_without_sink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kvm_rows_when_due, setup, teardown),
		cmocka_unit_test_setup_teardown(test_feed_records_on_its_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_feed_records_once_per_interval_under_min_interval, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_take_late, setup, teardown),
		cmocka_unit_test_setup_teardown(test_take_late, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
