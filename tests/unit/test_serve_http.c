/* The HTTP server over real loopback sockets: methods, paths, negotiation, the shared
 * snapshot, and the limits that keep bad clients from hurting good ones. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/serve_http.h"
#include "serve_testutil.h"

static char proc_root[1100], sys_root[1100];

struct server {
	struct sampler *sampler;
	struct sample_feed *feed;
	struct serve_cache *cache;
	struct serve_http *http;
	int port;
};

static double request_deadline; /* for the next start(); 0: the default */

static void start(struct server *s, double min_interval, unsigned max_connections, unsigned timeout)
{
	pid_t extra[] = {20000};
	struct sampler_config sc = {.root = {proc_root, sys_root}, .extra = extra, .nextra = 1};
	assert_int_equal(sampler_new(&sc, &s->sampler), 0);
	struct sample_feed_config fc = {.sampler = s->sampler, .min_interval_seconds = min_interval};
	assert_int_equal(sample_feed_start(&fc, &s->feed), 0);
	struct serve_cache_config cc = {.feed = s->feed, .max_body_bytes = 1 << 20, .version = "test"};
	assert_int_equal(serve_cache_new(&cc, &s->cache), 0);
	int fd = loopback_listener(&s->port);
	assert_true(fd >= 0);
	struct serve_http_config hc = {.listen_fd = fd, .threads = 2, .max_connections = max_connections,
				       .timeout_seconds = timeout, .request_deadline = request_deadline,
				       .connection_memory = 16 * 1024,
				       .cache = s->cache};
	assert_int_equal(serve_http_start(&hc, &s->http), 0);
}

static void stop(struct server *s)
{
	serve_http_stop(s->http);
	serve_cache_free(s->cache);
	sample_feed_stop(s->feed);
	sampler_free(s->sampler);
}

/* A connection to the server from 127.0.0.`from`. */
static int connect_from(int port, uint8_t from)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in src = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000000u | from)};
	assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static int connect_to(int port) { return connect_from(port, 1); }

static void send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w <= 0)
			return; /* the server may close early on a refused request */
		s += w;
		n -= (size_t)w;
	}
}

/* Reads until the server closes (or 5 s pass); returns the length. */
static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (n + 1 < cap && poll(&p, 1, 5000) > 0) {
		ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return n;
}

/* One request with "Connection: close" appended to the given headers; the whole response. */
static char *request(int port, const char *method, const char *path, const char *headers)
{
	char req[32768];
	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: test\r\n%sConnection: close\r\n\r\n", method, path,
		 headers ? headers : "");
	int fd = connect_to(port);
	send_all(fd, req, strlen(req));
	char *buf = malloc(1 << 20);
	assert_non_null(buf);
	read_all(fd, buf, 1 << 20);
	close(fd);
	return buf;
}

static int status_of(const char *resp)
{
	int code = 0;
	sscanf(resp, "HTTP/1.1 %d", &code);
	return code;
}

static const char *body_of(const char *resp)
{
	const char *b = strstr(resp, "\r\n\r\n");
	return b ? b + 4 : "";
}

static long snapshots_in(const char *resp)
{
	const char *m = strstr(resp, "\nvmhost_snapshots_total ");
	return m ? strtol(m + strlen("\nvmhost_snapshots_total "), NULL, 10) : -1;
}

static void test_get_head_and_others(void **state)
{
	(void)state;
	struct server s;
	start(&s, 60, 16, 10);
	char *r = request(s.port, "GET", "/metrics", NULL);
	assert_int_equal(status_of(r), 200);
	assert_non_null(strstr(r, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(strstr(body_of(r), "\nvmhost_vm_rss_bytes{vm=\"vm1\",pid=\"10001\","));
	free(r);

	r = request(s.port, "HEAD", "/metrics", NULL);
	assert_int_equal(status_of(r), 200);
	assert_non_null(strstr(r, "Content-Length: "));
	assert_string_equal(body_of(r), "");
	free(r);

	static const char *const refused[] = {"POST", "PUT", "DELETE", "OPTIONS", "PATCH"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		r = request(s.port, refused[i], "/metrics", NULL);
		assert_int_equal(status_of(r), 405);
		assert_non_null(strstr(r, "Allow: GET, HEAD\r\n"));
		free(r);
	}

	r = request(s.port, "GET", "/nope", NULL);
	assert_int_equal(status_of(r), 404);
	free(r);

	r = request(s.port, "GET", "/", NULL);
	assert_int_equal(status_of(r), 200);
	assert_non_null(strstr(body_of(r), "href=\"/metrics\""));
	free(r);

	r = request(s.port, "GET", "/metrics", "Content-Length: 5\r\n");
	assert_int_equal(status_of(r), 413);
	free(r);
	stop(&s);
}

static void test_openmetrics_on_request(void **state)
{
	(void)state;
	struct server s;
	start(&s, 60, 16, 10);
	char *r = request(s.port, "GET", "/metrics",
			  "Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n");
	assert_int_equal(status_of(r), 200);
	assert_non_null(strstr(r, "Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n"));
	const char *b = body_of(r);
	size_t n = strlen(b);
	assert_true(n > 6 && !strcmp(b + n - 6, "# EOF\n"));
	assert_non_null(strstr(b, "# TYPE vmhost_ksm_full_scans counter\nvmhost_ksm_full_scans_total 312\n"));
	free(r);
	stop(&s);
}

struct scraper {
	int port;
	long snapshots[10];
};

static void *scrape_loop(void *arg)
{
	struct scraper *sc = arg;
	for (int i = 0; i < 10; i++) {
		char *r = request(sc->port, "GET", "/metrics", NULL);
		sc->snapshots[i] = status_of(r) == 200 ? snapshots_in(r) : -1;
		free(r);
	}
	return NULL;
}

static void test_scrapes_share_one_snapshot(void **state)
{
	(void)state;
	struct server s;
	start(&s, 3600, 64, 10);
	struct scraper sc[4];
	pthread_t t[4];
	for (int i = 0; i < 4; i++) {
		sc[i].port = s.port;
		assert_int_equal(pthread_create(&t[i], NULL, scrape_loop, &sc[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		for (int k = 0; k < 10; k++)
			assert_int_equal(sc[i].snapshots[k], 1);
	}
	assert_int_equal(sample_feed_samples(s.feed), 1);
	stop(&s);

	/* --min-interval 0: every scrape gets a sample of its own (the feed's first one, taken at
	 * start, is too old for the first scrape already). */
	start(&s, 0, 64, 10);
	for (int i = 1; i <= 3; i++) {
		char *r = request(s.port, "GET", "/metrics", NULL);
		assert_int_equal(snapshots_in(r), i + 1);
		free(r);
	}
	stop(&s);
}

static void test_oversized_and_malformed_requests(void **state)
{
	(void)state;
	struct server s;
	start(&s, 60, 16, 10);
	/* Headers beyond the per-connection memory: refused, not buffered. */
	char *big = malloc(40000);
	assert_non_null(big);
	strcpy(big, "X-Big: ");
	memset(big + 7, 'a', 30000);
	strcpy(big + 30007, "\r\n");
	char *r = request(s.port, "GET", "/metrics", big);
	assert_int_equal(status_of(r), 431);
	free(r);
	free(big);

	/* Garbage: an error status or a closed connection, and the server still answers. */
	int fd = connect_to(s.port);
	send_all(fd, "\x01\x02 garbage \r\n\r\n", 16);
	char buf[4096];
	read_all(fd, buf, sizeof(buf));
	close(fd);
	assert_true(buf[0] == '\0' || status_of(buf) == 400);
	r = request(s.port, "GET", "/metrics", NULL);
	assert_int_equal(status_of(r), 200);
	free(r);
	stop(&s);
}

static void test_slow_clients_do_not_block_others(void **state)
{
	(void)state;
	struct server s;
	start(&s, 60, 16, 2);
	/* Half-sent requests hold connections (fewer than the limit)... */
	int slow[8];
	for (int i = 0; i < 8; i++) {
		slow[i] = connect_to(s.port);
		send_all(slow[i], "GET /metrics HTTP/1.1\r\nHost: sl", 31);
	}
	/* ...while a complete request is still answered. */
	char *r = request(s.port, "GET", "/metrics", NULL);
	assert_int_equal(status_of(r), 200);
	free(r);
	/* The idle timeout closes the trickling ones: the server ends them without a response. */
	for (int i = 0; i < 8; i++) {
		char buf[512];
		read_all(slow[i], buf, sizeof(buf));
		assert_int_equal(status_of(buf), 0);
		close(slow[i]);
	}
	stop(&s);
}

static void test_connection_limit(void **state)
{
	(void)state;
	struct server s;
	start(&s, 60, 2, 10);
	int held[2];
	for (int i = 0; i < 2; i++) {
		held[i] = connect_to(s.port);
		send_all(held[i], "GET", 3);
	}
	usleep(200 * 1000);
	/* Over the limit: the oldest connection not being answered is shed, the new one answered. */
	char *r = request(s.port, "GET", "/metrics", NULL);
	assert_int_equal(status_of(r), 200);
	free(r);
	char buf[256];
	read_all(held[0], buf, sizeof(buf));
	assert_int_equal(status_of(buf), 0); /* closed without a response */
	close(held[0]);
	close(held[1]);
	usleep(200 * 1000);
	r = request(s.port, "GET", "/metrics", NULL);
	assert_int_equal(status_of(r), 200);
	free(r);
	stop(&s);
}

/* A connection that sends no request, or trickles one, is closed at the request deadline. */
static void test_request_deadline(void **state)
{
	(void)state;
	struct server s;
	request_deadline = 0.5;
	start(&s, 60, 16, 10);
	request_deadline = 0;
	int quiet = connect_to(s.port), trickle = connect_to(s.port);
	send_all(trickle, "GET /metrics HTTP/1.1\r\n", 24);
	char buf[256];
	double t0 = clock_monotonic_seconds();
	read_all(quiet, buf, sizeof(buf));
	double waited = clock_monotonic_seconds() - t0;
	assert_int_equal(status_of(buf), 0);
	assert_true(waited < 3); /* the deadline, not the 10 s idle timeout */
	read_all(trickle, buf, sizeof(buf));
	assert_int_equal(status_of(buf), 0);
	close(quiet);
	close(trickle);
	struct serve_guard_stats st = serve_http_guard_stats(s.http);
	assert_true(st.deadline >= 2);
	stop(&s);
}

/* Still open: nothing to read and no end within 200 ms. */
static bool still_open(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, 200) == 0;
}

/* One response on a kept-alive connection: its status, once its whole body (Content-Length) is in. */
static int read_response(int fd)
{
	static char buf[1 << 20];
	size_t n = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (n + 1 < sizeof(buf) && poll(&p, 1, 5000) > 0) {
		ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = '\0';
		const char *end = strstr(buf, "\r\n\r\n"), *cl = strcasestr(buf, "\r\nContent-Length: ");
		if (end && cl && n >= (size_t)(end + 4 - buf) + strtoul(cl + 18, NULL, 10))
			break;
	}
	buf[n] = '\0';
	return status_of(buf);
}

/* A scraper's kept-alive connection is not shed before a connection that never sent a request,
 * though it is older and both come from one client (loopback): by age alone it went first. */
static void test_kept_alive_goes_last(void **state)
{
	(void)state;
	struct server s;
	start(&s, 60, 2, 10);
	static const char keep[] = "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n";
	int scraper = connect_from(s.port, 1);
	send_all(scraper, keep, strlen(keep));
	assert_int_equal(read_response(scraper), 200);
	usleep(100 * 1000);
	int flood = connect_from(s.port, 2);
	usleep(100 * 1000);
	char *r = request(s.port, "GET", "/metrics", NULL); /* over the limit of 2 */
	assert_int_equal(status_of(r), 200);
	free(r);
	char buf[256];
	read_all(flood, buf, sizeof(buf));
	assert_int_equal(status_of(buf), 0); /* shed */
	assert_true(still_open(scraper));
	send_all(scraper, keep, strlen(keep));
	assert_int_equal(read_response(scraper), 200); /* still there */
	close(flood);
	close(scraper);
	stop(&s);
}

static struct sockaddr_storage addr_of(const char *ip)
{
	struct sockaddr_storage a = {0};
	struct sockaddr_in *v4 = (struct sockaddr_in *)&a;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&a;
	if (inet_pton(AF_INET, ip, &v4->sin_addr) == 1)
		v4->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, ip, &v6->sin6_addr) == 1)
		v6->sin6_family = AF_INET6;
	else
		fail_msg("not an address: %s", ip);
	return a;
}

static bool one_client(const char *a, const char *b)
{
	struct sockaddr_storage x = addr_of(a), y = addr_of(b);
	return serve_guard_same_client((struct sockaddr *)&x, (struct sockaddr *)&y);
}

/* The guard's clients are networks, not addresses: an IPv4 /24, an IPv6 /64 (a flooder holds
 * every address of either), and every loopback address, which any local user can use. */
static void test_clients_are_networks(void **state)
{
	(void)state;
	assert_true(one_client("192.0.2.1", "192.0.2.254"));
	assert_false(one_client("192.0.2.1", "192.0.3.1"));
	assert_true(one_client("127.0.0.1", "127.255.3.4"));
	assert_true(one_client("127.0.0.1", "::1"));
	assert_false(one_client("127.0.0.1", "192.0.2.1"));
	assert_true(one_client("2001:db8::1", "2001:db8::ffff:1:2:3"));
	assert_false(one_client("2001:db8::1", "2001:db8:0:1::1"));
	assert_true(one_client("::ffff:192.0.2.7", "192.0.2.200"));
	assert_false(one_client("::ffff:192.0.2.7", "2001:db8::1"));
}

static void test_parse_listen(void **state)
{
	(void)state;
	struct sockaddr_storage a;
	socklen_t len;
	assert_int_equal(serve_parse_listen("127.0.0.1:9464", &a, &len), 0);
	assert_int_equal(a.ss_family, AF_INET);
	assert_true(serve_is_loopback(&a));
	assert_int_equal(ntohs(((struct sockaddr_in *)&a)->sin_port), 9464);
	assert_int_equal(serve_parse_listen("[::1]:80", &a, &len), 0);
	assert_int_equal(a.ss_family, AF_INET6);
	assert_true(serve_is_loopback(&a));
	assert_int_equal(serve_parse_listen(":9464", &a, &len), 0);
	assert_false(serve_is_loopback(&a));
	assert_int_equal(serve_parse_listen("0.0.0.0:9464", &a, &len), 0);
	assert_false(serve_is_loopback(&a));
	assert_int_equal(serve_parse_listen("localhost:1", &a, &len), 0);
	assert_true(serve_is_loopback(&a));
	assert_int_equal(serve_parse_listen("127.0.0.1:0", &a, &len), 0); /* any free port */
	assert_int_equal(ntohs(((struct sockaddr_in *)&a)->sin_port), 0);
	static const char *const bad[] = {"", "9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
					  "127.0.0.1:80x", "::1:80", "[::1:80", "example.invalid:80", "1.2.3:80",
					  "127.0.0.1: 80", "0.0.0.0:\n0", "127.0.0.1:+80", "[]:80",
					  "127.0.0.1:000080" /* the URL's port check: at most 5 digits */};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(serve_parse_listen(bad[i], &a, &len), -EINVAL);
}

int main(void)
{
	fixture_root("serve", proc_root, sys_root, sizeof(proc_root));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_head_and_others),
		cmocka_unit_test(test_openmetrics_on_request),
		cmocka_unit_test(test_scrapes_share_one_snapshot),
		cmocka_unit_test(test_oversized_and_malformed_requests),
		cmocka_unit_test(test_slow_clients_do_not_block_others),
		cmocka_unit_test(test_connection_limit),
		cmocka_unit_test(test_request_deadline),
		cmocka_unit_test(test_kept_alive_goes_last),
		cmocka_unit_test(test_clients_are_networks),
		cmocka_unit_test(test_parse_listen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
