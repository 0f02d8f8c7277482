/* io/peer/http.c, share plan --from's socket work, against real loopback sockets: a reply read to the
 * server's close, the deadline when the server never answers, the size cap, a refused port; with
 * TLS, a plain server, a handshake never answered, a CA file without a certificate. io/peer/http_get.c,
 * the GET around it: the body of a 200 with --auth-file's basic auth sent, a refusal's status and
 * first line, a URL that is none, an auth file that is no USER:PASS. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "io/peer/http.h"
#include "io/peer/http_get.h"

/* A loopback listener; its port into port[]. */
static int listener(char *port, size_t cap)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	snprintf(port, cap, "%u", ntohs(a.sin_port));
	return fd;
}

/* A child that accepts one connection, reads the request, sends reply_bytes of reply, closes. */
static pid_t server(int fd, const char *reply, size_t reply_bytes)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid)
		return pid;
	int c = accept(fd, NULL, NULL);
	char req[4096];
	ssize_t n = c < 0 ? -1 : recv(c, req, sizeof(req) - 1, 0);
	int ok = n > 0 && strstr(req, "GET /sketch HTTP/1.0") == req;
	for (size_t sent = 0; ok && sent < reply_bytes;) {
		ssize_t w = send(c, reply + sent, reply_bytes - sent, MSG_NOSIGNAL);
		if (w <= 0)
			break;
		sent += (size_t)w;
	}
	_exit(ok ? 0 : 1);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char request[] = "GET /sketch HTTP/1.0\r\nHost: x\r\nConnection: close\r\n\r\n";
static char why[256];

static int exchange(const char *port, const struct io_tls *tls, double timeout, size_t max, char **got, size_t *len)
{
	struct io_http_request req = {.host = "127.0.0.1", .port = port, .tls = tls, .data = request,
				      .len = strlen(request), .timeout_seconds = timeout, .max_bytes = max};
	return io_http_exchange(&req, got, len, why, sizeof(why));
}

static void reply_read_to_close(void **state)
{
	(void)state;
	char port[8];
	int fd = listener(port, sizeof(port));
	const char reply[] = "HTTP/1.0 200 OK\r\n\r\nhello";
	pid_t pid = server(fd, reply, strlen(reply));
	char *got = NULL;
	size_t len = 0;
	assert_int_equal(exchange(port, NULL, 5, 1 << 20, &got, &len), 0);
	assert_int_equal(len, strlen(reply));
	assert_memory_equal(got, reply, len);
	free(got);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* it saw the request */
	close(fd);
}

static void deadline(void **state)
{
	(void)state;
	char port[8];
	int fd = listener(port, sizeof(port)); /* connects (the backlog), never answers */
	char *got = NULL;
	size_t len = 0;
	double t0 = now();
	assert_int_equal(exchange(port, NULL, 0.5, 1 << 20, &got, &len),
			 -ETIMEDOUT);
	double took = now() - t0;
	assert_true(took >= 0.45 && took < 2);
	assert_null(got);
	close(fd);
}

static void size_cap(void **state)
{
	(void)state;
	char port[8];
	int fd = listener(port, sizeof(port));
	size_t big = 300 * 1024;
	char *reply = malloc(big);
	memset(reply, 'x', big);
	pid_t pid = server(fd, reply, big);
	char *got = NULL;
	size_t len = 0;
	assert_int_equal(exchange(port, NULL, 5, 100 * 1024, &got, &len), -EFBIG);
	assert_null(got);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(reply);
	close(fd);
}

static void refused(void **state)
{
	(void)state;
	char port[8];
	close(listener(port, sizeof(port))); /* a port nobody listens on now */
	char *got = NULL;
	size_t len = 0;
	assert_int_equal(exchange(port, NULL, 5, 1 << 20, &got, &len),
			 -ECONNREFUSED);
}

/* GnuTLS loaded, and a loopback listener for a TLS exchange. */
static int tls_listener(char *port, size_t cap)
{
	char err[256];
	assert_int_equal(io_tls_load(err, sizeof(err)), 0);
	return listener(port, cap);
}

/* https to a server that answers in plain HTTP: a TLS failure with its reason, never the reply. */
static void tls_to_plain(void **state)
{
	(void)state;
	char port[8];
	int fd = tls_listener(port, sizeof(port));
	const char reply[] = "HTTP/1.0 400 Bad Request\r\n\r\nnot TLS";
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int c = accept(fd, NULL, NULL);
		char hello[4096];
		_exit(c >= 0 && recv(c, hello, sizeof(hello), 0) > 0 && send(c, reply, strlen(reply), MSG_NOSIGNAL) > 0 ? 0 : 1);
	}
	char *got = NULL;
	size_t len = 0;
	struct io_tls tls = {0};
	assert_int_equal(exchange(port, &tls, 5, 1 << 20, &got, &len), -EPROTO);
	assert_non_null(strstr(why, "TLS: "));
	assert_null(got);
	waitpid(pid, NULL, 0);
	close(fd);
}

/* The handshake is under the deadline too: a server that accepts and never answers the hello. */
static void tls_deadline(void **state)
{
	(void)state;
	char port[8];
	int fd = tls_listener(port, sizeof(port));
	char *got = NULL;
	size_t len = 0;
	struct io_tls tls = {0};
	double t0 = now();
	assert_int_equal(exchange(port, &tls, 0.5, 1 << 20, &got, &len), -ETIMEDOUT);
	double took = now() - t0;
	assert_true(took >= 0.45 && took < 2);
	close(fd);
}

/* A CA file GnuTLS finds no certificate in: refused before anything is sent, with the reason. */
static void tls_bad_ca(void **state)
{
	(void)state;
	char port[8];
	int fd = tls_listener(port, sizeof(port));
	char *got = NULL;
	size_t len = 0;
	const char junk[] = "not a certificate\n";
	struct io_tls tls = {.ca_pem = junk, .ca_len = strlen(junk)};
	assert_int_equal(exchange(port, &tls, 5, 1 << 20, &got, &len), -EINVAL);
	assert_non_null(strstr(why, "the CA file"));
	close(fd);
}

/* A child that accepts one connection and answers reply when the request holds want. */
static pid_t server_wanting(int fd, const char *reply, const char *want)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid)
		return pid;
	int c = accept(fd, NULL, NULL);
	char req[4096] = "";
	ssize_t n = c < 0 ? -1 : recv(c, req, sizeof(req) - 1, 0);
	int ok = n > 0 && strstr(req, want) != NULL;
	if (ok)
		send(c, reply, strlen(reply), MSG_NOSIGNAL);
	_exit(ok ? 0 : 1);
}

/* An auth file of text, mode 0600, at path (cap bytes). */
static void auth_file(char *path, size_t cap, const char *text)
{
	snprintf(path, cap, "/tmp/vmhost-test-auth-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void get_body_with_auth_file(void **state)
{
	(void)state;
	char port[8], url[64], path[64];
	int fd = listener(port, sizeof(port));
	/* "ops:s3cret" in base64: sent because the URL has no user of its own */
	pid_t pid = server_wanting(fd, "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello",
				   "Authorization: Basic b3BzOnMzY3JldA==\r\n");
	snprintf(url, sizeof(url), "http://127.0.0.1:%s/sketch", port);
	struct io_http_get g = {.timeout_seconds = 5, .max_bytes = 1 << 20};
	auth_file(path, sizeof(path), "ops:s3cret\n");
	assert_int_equal(io_http_get_auth_file(&g, path), 0);
	unlink(path);
	struct io_http_failure f;
	char *body = NULL;
	size_t len = 0;
	assert_int_equal(io_http_get(&g, url, &body, &len, &f), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(body, "hello", 5);
	free(body);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	io_http_get_done(&g);
	assert_string_equal(g.auth.password, ""); /* wiped */
	close(fd);
}

static void get_refused_and_malformed(void **state)
{
	(void)state;
	char port[8], url[64], path[64];
	int fd = listener(port, sizeof(port));
	pid_t pid = server_wanting(fd, "HTTP/1.0 401 Unauthorized\r\n\r\nbasic auth required\r\nmore", "GET /sketch ");
	snprintf(url, sizeof(url), "http://127.0.0.1:%s/sketch", port);
	struct io_http_get g = {.timeout_seconds = 5, .max_bytes = 1 << 20};
	struct io_http_failure f;
	char *body = NULL;
	size_t len = 0;
	assert_int_equal(io_http_get(&g, url, &body, &len, &f), -EACCES);
	assert_int_equal(f.step, IO_HTTP_STATUS);
	assert_int_equal(f.status, 401);
	assert_string_equal(f.why, "basic auth required");
	assert_null(body);
	waitpid(pid, NULL, 0);
	close(fd);
	assert_int_equal(io_http_get(&g, "ftp://node1/sketch", &body, &len, &f), -ENOTSUP);
	assert_int_equal(f.step, IO_HTTP_URL);
	assert_int_equal(io_http_get(&g, "http://", &body, &len, &f), -EINVAL);
	assert_int_equal(f.step, IO_HTTP_URL);
	auth_file(path, sizeof(path), ":no user\n");
	assert_int_equal(io_http_get_auth_file(&g, path), -EBADMSG);
	unlink(path);
	io_http_get_done(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reply_read_to_close), cmocka_unit_test(deadline), cmocka_unit_test(size_cap),
		cmocka_unit_test(refused), cmocka_unit_test(tls_to_plain), cmocka_unit_test(tls_deadline),
		cmocka_unit_test(tls_bad_ca), cmocka_unit_test(get_body_with_auth_file),
		cmocka_unit_test(get_refused_and_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
