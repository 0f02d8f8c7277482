#include "net/serve_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/clock.h"
#include "io/peer/tls.h"
#include "net/accept.h"
#include "net/mhd.h"
#include "net/xcrypt.h"
#include "net/serve_auth.h"

#define SCRAPE_TIMEOUT_SECONDS 10.0

struct serve_http {
	struct MHD_Daemon *daemon;
	double scrape_timeout;
	struct serve_cache *cache;
	struct serve_sketch *sketch;
	struct serve_guard *guard;
	struct serve_auth *auth;
	bool client_cert_required; /* and verified against client_ca_file (GnuTLS loaded) */
	const struct web_config *suites; /* with cipher_suites, checked per session (GnuTLS loaded) */
	char priorities[512];      /* GnuTLS's, from the web config */
	pthread_mutex_t log_lock;
	atomic_bool started; /* from then on libmicrohttpd's messages (a client's bad TLS) are dropped */
	char *error;
	size_t error_cap;
};

static const char index_html[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>vmhost</title></head>\n"
	"<body><h1>vmhost</h1>\n"
	"<p>What each VM really costs this host: per-VM memory (RSS, PSS, KSM savings, VMM overhead), "
	"KSM and ksmd CPU.</p>\n"
	"<ul><li><a href=\"/metrics\">/metrics</a>: Prometheus text format 0.0.4, or OpenMetrics 1.0 "
	"when the Accept header asks for it</li>\n"
	"<li><a href=\"/sketch\">/sketch</a>: this host's content sketches, for "
	"<code>vmhost share plan --from</code> (with --key-file; to authenticated clients only)</li>\n"
	"<li>An HTML report with charts: <code>vmhost report --db FILE --out report.html</code> "
	"on a database written by <code>vmhost record</code> or <code>vmhost serve --db</code></li></ul>\n"
	"</body></html>\n";

static enum MHD_Result reply_static(struct MHD_Connection *conn, unsigned status, const char *content_type,
				    const char *body, const char *allow)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	if (allow)
		mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	enum MHD_Result ok = mhd.queue_response(conn, status, r);
	mhd.destroy_response(r);
	return ok;
}

static void body_release(void *cls) { serve_body_unref(cls); }

/* A one-line plain text answer (copied: msg may be on the stack); with retry_seconds, a 503 that
 * says when to come back. */
static enum MHD_Result reply_text_retry(struct MHD_Connection *conn, unsigned status, const char *msg,
					unsigned retry_seconds)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(strlen(msg), (void *)msg, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	char retry[16];
	snprintf(retry, sizeof(retry), "%u", retry_seconds);
	if (retry_seconds)
		mhd.add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry);
	enum MHD_Result ok = mhd.queue_response(conn, status, r);
	mhd.destroy_response(r);
	return ok;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status, const char *msg)
{
	return reply_text_retry(conn, status, msg, 0);
}

/* A shared body: the response borrows it; the last connection done with it frees it. A late one
 * (of a sample older than asked for) says its age. */
static enum MHD_Result reply_body(struct MHD_Connection *conn, struct serve_body *b, const char *content_type,
				  const char *vary, bool late)
{
	char age[32];
	snprintf(age, sizeof(age), "%.1f", clock_monotonic_seconds() - b->taken_seconds);
	struct MHD_Response *r = mhd.create_response_from_buffer_with_free_callback_cls(b->len, b->data,
											 body_release, b);
	if (!r) {
		serve_body_unref(b);
		return MHD_NO;
	}
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (vary)
		mhd.add_response_header(r, MHD_HTTP_HEADER_VARY, vary);
	if (late)
		mhd.add_response_header(r, "X-Vmhost-Snapshot-Age", age);
	enum MHD_Result ok = mhd.queue_response(conn, MHD_HTTP_OK, r);
	mhd.destroy_response(r);
	return ok;
}

/* How long a scrape may wait for a gathering: --scrape-timeout, or the scraper's own timeout when
 * shorter (Prometheus sends it), less the time to render and send the document. */
static double scrape_wait(const struct serve_http *h, struct MHD_Connection *conn)
{
	const char *theirs = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "X-Prometheus-Scrape-Timeout-Seconds");
	double t = h->scrape_timeout, v = theirs ? strtod(theirs, NULL) : 0;
	if (v > 0 && v < t)
		t = v;
	return t - (t / 4 < 1 ? t / 4 : 1);
}

static enum MHD_Result reply_metrics(struct serve_http *h, struct MHD_Connection *conn)
{
	const char *accept = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	enum prom_format format = prom_negotiate(accept);
	struct serve_body *b;
	int r = serve_cache_get(h->cache, format, scrape_wait(h, conn), &b);
	if (r == -ETIMEDOUT || r == -ESHUTDOWN)
		return reply_text_retry(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
					r == -ESHUTDOWN ? "vmhost: serve: stopping\n"
							: "vmhost: serve: the first gathering is not done yet: no metrics to serve\n",
					1);
	if (r < 0) {
		char msg[256];
		snprintf(msg, sizeof(msg), "vmhost: serve: gathering metrics: %s\n", strerror(-r));
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	return reply_body(conn, b, prom_content_type(b->format), "Accept", r == 1);
}

static int sketch_waiting; /* a request's con_cls while its sketching run goes on */

/* From the sketching run's thread: its request can be answered. */
static void sketch_ready(void *conn) { mhd.resume_connection(conn); }

/* /sketch: refused where clients are not authenticated, else the cached sketches, or a run started
 * for this request (its connection suspended until the run is over: no worker waits), or 503 while
 * another request's run goes on. */
static enum MHD_Result reply_sketch(struct serve_http *h, struct MHD_Connection *conn, void **con_cls)
{
	char msg[512];
	if (!h->sketch)
		return reply_text(conn, MHD_HTTP_NOT_FOUND, "no /sketch: start vmhost serve with --key-file FILE (the fleet's key)\n");
	const char *refusal = serve_sketch_refusal(h->sketch);
	if (refusal) {
		snprintf(msg, sizeof(msg), "%s\n", refusal);
		return reply_text(conn, MHD_HTTP_FORBIDDEN, msg);
	}
	struct serve_body *b = NULL;
	unsigned retry = 0;
	int err = *con_cls == &sketch_waiting ? serve_sketch_collect(h->sketch, &b)
					      : serve_sketch_get(h->sketch, sketch_ready, conn, &b, &retry);
	if (err == -EINPROGRESS) {
		*con_cls = &sketch_waiting;
		mhd.suspend_connection(conn);
		serve_sketch_run(h->sketch);
		return MHD_YES;
	}
	if (err == -EBUSY || err == -ECANCELED)
		return reply_text_retry(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
					err == -EBUSY ? "vmhost: serve: another request's sketching run is in progress: "
							"one at a time\n"
						      : "vmhost: serve: stopping\n",
					err == -EBUSY ? retry : 1);
	if (err < 0) {
		snprintf(msg, sizeof(msg), "vmhost: serve: sketching: %s\n", strerror(-err));
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	return reply_body(conn, b, "application/octet-stream", NULL, false);
}

/* The client's certificate, which libmicrohttpd asks for when given client_ca_file but does not
 * verify: it chains to client_ca_file (the credentials' trust list) and is valid now. */
static bool client_verified(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info = mhd.get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	return info && io_tls_client_verified(info->tls_session);
}

/* A TLS 1.2 session's suite is one cipher_suites lists: GnuTLS's priorities enable key exchanges,
 * ciphers and MACs, each listed in some suite, and so their combinations too. */
static bool suite_listed(const struct web_config *c, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info = mhd.get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	struct io_tls_suite s;
	return info && io_tls_session_suite(info->tls_session, &s) &&
	       (s.version == 13 || web_cipher_suite_listed(c->cipher_suites, c->ncipher_suites, s.kx, s.cipher, s.mac));
}

/* Basic auth when the web config has users: 401 with a WWW-Authenticate challenge otherwise. */
static bool authorized(struct serve_http *h, struct MHD_Connection *conn)
{
	char *password = NULL;
	char *user = mhd.basic_auth_get_username_password(conn, &password);
	bool ok = user && password && serve_auth_check(h->auth, user, password);
	if (password) {
		explicit_bzero(password, strlen(password));
		mhd.free(password);
	}
	mhd.free(user);
	return ok;
}

static enum MHD_Result reply_unauthorized(struct MHD_Connection *conn)
{
	static const char body[] = "unauthorized\n";
	struct MHD_Response *r = mhd.create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	enum MHD_Result ok = mhd.queue_basic_auth_fail_response(conn, "vmhost", r);
	mhd.destroy_response(r);
	return ok;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	(void)version;
	(void)upload_data;
	static int seen;
	struct serve_http *h = cls;
	/* A suite cipher_suites does not list: the connection is closed, as a handshake would fail. */
	if (!*con_cls && h->suites && !suite_listed(h->suites, conn))
		return MHD_NO;
	/* Authentication first: a client without it learns nothing, not even which paths exist. */
	if (!*con_cls && h->client_cert_required && !client_verified(conn))
		return reply_static(conn, MHD_HTTP_FORBIDDEN, "text/plain; charset=utf-8",
				    "a client certificate signed by the web config's client_ca_file is required\n", NULL);
	if (!*con_cls && h->auth && !authorized(h, conn))
		return reply_unauthorized(conn);
	/* Other methods are refused from the request line, before any body is read. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply_static(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
				    "only GET and HEAD are served\n", "GET, HEAD");
	/* The first call has the headers; answering on the next one (when the request is complete)
	 * lets the connection be kept alive. */
	if (!*con_cls) {
		/* A GET with a body: refused from its headers, never read (MHD then closes). */
		const char *cl = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if ((cl && strcmp(cl, "0") != 0) ||
		    mhd.lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return reply_static(conn, MHD_HTTP_CONTENT_TOO_LARGE, "text/plain; charset=utf-8",
					    "a GET request has no body\n", NULL);
		*con_cls = &seen;
		serve_guard_answering(h->guard, conn);
		return MHD_YES;
	}
	if (*upload_data_size)
		return MHD_NO; /* not reached: a body was refused above */
	if (!strcmp(url, "/metrics"))
		return reply_metrics(h, conn);
	if (!strcmp(url, "/sketch"))
		return reply_sketch(h, conn, con_cls);
	if (!strcmp(url, "/"))
		return reply_static(conn, MHD_HTTP_OK, "text/html; charset=utf-8", index_html, NULL);
	return reply_static(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", "not found: try /metrics\n", NULL);
}

/* libmicrohttpd's messages while starting (a certificate it refused) become the start error. */
static void daemon_log(void *cls, const char *fmt, va_list ap)
{
	struct serve_http *h = cls;
	if (atomic_load(&h->started) || !h->error || !h->error_cap)
		return;
	pthread_mutex_lock(&h->log_lock);
	if (!h->error[0]) {
		vsnprintf(h->error, h->error_cap, fmt, ap);
		h->error[strcspn(h->error, "\n")] = '\0';
	}
	pthread_mutex_unlock(&h->log_lock);
}

static void serve_http_free(struct serve_http *h)
{
	serve_guard_free(h->guard);
	serve_auth_free(h->auth);
	pthread_mutex_destroy(&h->log_lock);
	free(h);
}

/* Appends ":+NAME" to buf unless it is there already. */
static void add_priority(char *buf, size_t cap, const char *name)
{
	char item[64];
	int n = snprintf(item, sizeof(item), ":+%s", name);
	for (const char *at = strstr(buf, item); at; at = strstr(at + 1, item))
		if (at[n] == ':' || !at[n])
			return;
	snprintf(buf + strlen(buf), cap - strlen(buf), "%s", item);
}

/* GnuTLS priorities into buf: the versions from min_version to max_version, in the server's
 * order of preference; for TLS 1.2 the key exchanges, ciphers and MACs of cipher_suites, or by
 * default ECDHE with AEAD ciphers only (no static RSA key exchange, no CBC); for TLS 1.3 its own
 * AEAD suites (which need an ECDHE key exchange enabled, whatever TLS 1.2's are). */
static void tls_priorities(const struct web_config *c, char *buf, size_t cap)
{
	static const struct web_cipher_suite ecdhe_aead[] = {{"", "ECDHE-RSA", "AES-128-GCM", "AEAD"},
							     {"", "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
							     {"", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"}};
	static const struct web_cipher_suite *const by_default[] = {&ecdhe_aead[0], &ecdhe_aead[1], &ecdhe_aead[2]};
	bool v13 = c->max_version == WEB_TLS13, v12 = c->min_version == WEB_TLS12;
	const struct web_cipher_suite *const *list = c->ncipher_suites ? c->cipher_suites : by_default;
	size_t n = c->ncipher_suites ? c->ncipher_suites : 3, extra = v13 ? 3 : 0;
	snprintf(buf, cap, "NORMAL:%%SERVER_PRECEDENCE:-VERS-ALL%s%s", v13 ? ":+VERS-TLS1.3" : "",
		 v12 ? ":+VERS-TLS1.2" : "");
	static const char *const parts[] = {"-KX-ALL", "-CIPHER-ALL", "-MAC-ALL"};
	for (size_t part = 0; part < 3; part++) {
		snprintf(buf + strlen(buf), cap - strlen(buf), ":%s", parts[part]);
		for (size_t i = 0; i < n + extra; i++) {
			const struct web_cipher_suite *x = i < n ? list[i] : &ecdhe_aead[i - n];
			const char *name = part == 0 ? x->kx : part == 1 ? x->cipher : x->mac;
			if (name)
				add_priority(buf, cap, name);
		}
	}
}

/* What the web config asks of libmicrohttpd, which may be built without it; the verifier. */
static int web_setup(const struct serve_http_config *cfg, struct serve_http *h)
{
	const struct web_config *c = cfg->web ? &cfg->web->config : NULL;
	const char *missing = !c                                                                ? NULL
			      : c->tls && mhd.is_feature_supported(MHD_FEATURE_TLS) != MHD_YES          ? "TLS"
			      : c->nusers && mhd.is_feature_supported(MHD_FEATURE_BASIC_AUTH) != MHD_YES ? "basic auth"
													 : NULL;
	if (missing) {
		if (cfg->error && cfg->error_cap)
			snprintf(cfg->error, cfg->error_cap, "this libmicrohttpd (%s) is built without %s", mhd.get_version(),
				 missing);
		return -ENOTSUP;
	}
	h->client_cert_required = c && c->client_cert_required;
	h->suites = c && c->tls && c->ncipher_suites ? c : NULL;
	if (c && c->tls)
		tls_priorities(c, h->priorities, sizeof(h->priorities));
	int r = h->client_cert_required || h->suites ? io_tls_load(cfg->error, cfg->error_cap) : 0;
	if (r < 0 || !c || !c->nusers)
		return r;
	r = xcrypt_load(cfg->error, cfg->error_cap);
	return r < 0 ? r : serve_auth_new(c->users, c->nusers, SERVE_AUTH_CACHE_SECONDS, &h->auth);
}

int serve_http_start(const struct serve_http_config *cfg, struct serve_http **ret)
{
	struct serve_http *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->cache = cfg->cache;
	h->sketch = cfg->sketch;
	h->scrape_timeout = cfg->scrape_timeout > 0 ? cfg->scrape_timeout : SCRAPE_TIMEOUT_SECONDS;
	h->error = cfg->error;
	h->error_cap = cfg->error_cap;
	if (h->error && h->error_cap)
		h->error[0] = '\0';
	int r = mhd_load(h->error, h->error_cap);
	if (r < 0) {
		free(h);
		return r;
	}
	pthread_mutex_init(&h->log_lock, NULL);
	struct serve_guard_config gc = {cfg->max_connections, cfg->per_client, cfg->request_deadline};
	r = web_setup(cfg, h);
	if (r == 0)
		r = serve_guard_new(&gc, &h->guard);
	if (r < 0) {
		serve_http_free(h);
		return r;
	}
	const struct web_files *web = cfg->web;
	bool tls = web && web->cert_pem;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME | (tls ? MHD_USE_TLS : 0);
	/* The HTTPS options, or an empty list without TLS. */
	struct MHD_OptionItem tls_options[] = {
		{MHD_OPTION_HTTPS_MEM_CERT, 0, tls ? web->cert_pem : NULL},
		{MHD_OPTION_HTTPS_MEM_KEY, 0, tls ? web->key_pem : NULL},
		{MHD_OPTION_HTTPS_PRIORITIES, 0, tls ? h->priorities : NULL},
		{MHD_OPTION_HTTPS_MEM_TRUST, 0, tls ? web->client_ca_pem : NULL},
		{MHD_OPTION_END, 0, NULL},
	};
	if (!tls || !web->client_ca_pem)
		tls_options[3].option = MHD_OPTION_END;
	if (!tls)
		tls_options[0].option = MHD_OPTION_END;
	h->daemon = mhd.start_daemon(
		flags, 0, serve_guard_accept, h->guard, handle, h,
		MHD_OPTION_EXTERNAL_LOGGER, daemon_log, h,
		MHD_OPTION_ARRAY, tls_options,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)cfg->listen_fd,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(cfg->threads > 1 ? cfg->threads : 0),
		MHD_OPTION_CONNECTION_LIMIT, serve_guard_daemon_limit(h->guard),
		MHD_OPTION_NOTIFY_CONNECTION, serve_guard_connection, h->guard,
		MHD_OPTION_NOTIFY_COMPLETED, serve_guard_completed, h->guard,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->timeout_seconds,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)cfg->connection_memory,
		MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
		MHD_OPTION_END);
	if (!h->daemon) {
		serve_http_free(h);
		return -EIO;
	}
	atomic_store(&h->started, true);
	*ret = h;
	return 0;
}

void serve_http_stop(struct serve_http *h)
{
	if (!h)
		return;
	mhd.stop_daemon(h->daemon);
	serve_http_free(h);
}

struct serve_guard_stats serve_http_guard_stats(struct serve_http *h) { return serve_guard_stats(h->guard); }

int serve_socket_name(int fd, char *buf, size_t cap)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	if (getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		return -errno;
	serve_format_addr(&a, buf, cap);
	return 0;
}
