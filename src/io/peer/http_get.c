/* share plan --from's GET of a URL (io/peer/http_get.h). */
#include "io/peer/http_get.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"
#include "io/peer/http.h"
#include "io/secret.h"

#define PEM_MAX_BYTES (1u << 20)
#define AUTH_FILE_MAX_BYTES 4096u

static int failed(struct io_http_failure *f, enum io_http_step step, int err, const char *why)
{
	f->step = step;
	snprintf(f->why, sizeof(f->why), "%s", why ? why : "");
	return err;
}

int io_http_get_auth_file(struct io_http_get *g, const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	int e = io_read_secret(path, AUTH_FILE_MAX_BYTES, &buf, &len);
	if (e < 0)
		return e;
	e = http_credentials_parse(buf, len, &g->auth);
	explicit_bzero(buf, len);
	free(buf);
	return e < 0 ? -EBADMSG : 0;
}

/* The CA, certificate and key files read for the first https:// URL (the key wiped at the end). */
static int read_tls_files(struct io_http_get *g, struct io_http_failure *f)
{
	struct {
		enum io_http_step step;
		const char *path;
		const char **pem;
		size_t *len;
	} files[] = {{IO_HTTP_CA_FILE, g->ca_file, &g->tls.ca_pem, &g->tls.ca_len},
		     {IO_HTTP_CERT_FILE, g->cert_file, &g->tls.cert_pem, &g->tls.cert_len},
		     {IO_HTTP_KEY_FILE, g->key_file, &g->tls.key_pem, &g->tls.key_len}};
	g->tls_read = true;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *buf = NULL;
		int e = files[i].path ? io_read_path(files[i].path, PEM_MAX_BYTES, &buf, files[i].len) : 0;
		if (e < 0)
			return failed(f, files[i].step, e, NULL);
		*files[i].pem = buf;
	}
	return 0;
}

/* An https:// URL's TLS: the library loaded and the files read. */
static int tls_ready(struct io_http_get *g, struct io_http_failure *f)
{
	char err[256];
	int r = io_tls_load(err, sizeof(err));
	if (r < 0)
		return failed(f, IO_HTTP_TLS, r, err);
	return g->tls_read ? 0 : read_tls_files(g, f);
}

/* The request's bytes for u: a GET with its basic auth. Its length, or -ENAMETOOLONG. */
static int request_for(const struct http_url *u, char *buf, size_t cap)
{
	char auth[512] = "";
	if (u->user[0] && http_basic_auth(u->user, u->password, auth, sizeof(auth)) < 0)
		return -ENAMETOOLONG;
	int n = snprintf(buf, cap, "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: vmhost\r\n%s%s%s"
			 "Connection: close\r\n\r\n", u->path, u->host, auth[0] ? "Authorization: " : "", auth,
			 auth[0] ? "\r\n" : "");
	explicit_bzero(auth, sizeof(auth));
	return n > 0 && (size_t)n < cap ? n : -ENAMETOOLONG;
}

/* The reply's body moved to the front of its buffer, or why it is not a 200 reply. */
static int take_body(char *reply, size_t len, size_t *ret_len, struct io_http_failure *f)
{
	size_t body = 0, body_len = 0;
	int status = 0;
	if (http_reply_parse(reply, len, &status, &body, &body_len) < 0)
		return failed(f, IO_HTTP_REPLY, -EPROTO,
			      !len ? "the server closed without a reply (a TLS port? then https://)"
			      : len >= 2 && reply[0] == 0x15 && reply[1] == 0x03 ? "the server answered in TLS: use https://"
										  : "not an HTTP reply, or one cut short");
	if (status != 200) {
		int line = (int)strcspn(reply + body, "\r\n");
		f->step = IO_HTTP_STATUS;
		f->status = status;
		snprintf(f->why, sizeof(f->why), "%.*s", line > 200 ? 200 : line, reply + body);
		return status == 401 || status == 403 ? -EACCES : -EPROTO;
	}
	memmove(reply, reply + body, body_len);
	*ret_len = body_len;
	return 0;
}

int io_http_get(struct io_http_get *g, const char *url, char **ret_body, size_t *ret_len,
		struct io_http_failure *ret_failure)
{
	struct io_http_failure *f = ret_failure;
	*f = (struct io_http_failure){0};
	struct http_url u;
	int r = http_url_parse(url, &u);
	if (r < 0)
		return failed(f, IO_HTTP_URL, r, NULL);
	if (!u.user[0]) { /* a URL's own user and password win over --auth-file's */
		memcpy(u.user, g->auth.user, sizeof(u.user));
		memcpy(u.password, g->auth.password, sizeof(u.password));
	}
	char request[2048], *reply = NULL;
	size_t len = 0;
	r = u.tls ? tls_ready(g, f) : 0;
	if (r == 0 && (r = request_for(&u, request, sizeof(request))) < 0)
		failed(f, IO_HTTP_REQUEST, r, NULL);
	else if (r > 0) {
		struct io_http_request req = {.host = u.host, .port = u.port, .tls = u.tls ? &g->tls : NULL,
					      .data = request, .len = (size_t)r, .timeout_seconds = g->timeout_seconds,
					      .max_bytes = g->max_bytes};
		f->step = IO_HTTP_EXCHANGE;
		r = io_http_exchange(&req, &reply, &len, f->why, sizeof(f->why));
	}
	explicit_bzero(&u, sizeof(u));
	explicit_bzero(request, sizeof(request));
	if (r < 0)
		return r;
	if ((r = take_body(reply, len, ret_len, f)) < 0)
		free(reply);
	else
		*ret_body = reply;
	return r;
}

void io_http_get_done(struct io_http_get *g)
{
	if (g->tls.key_pem)
		explicit_bzero((char *)g->tls.key_pem, g->tls.key_len);
	free((char *)g->tls.ca_pem);
	free((char *)g->tls.cert_pem);
	free((char *)g->tls.key_pem);
	g->tls = (struct io_tls){0};
	explicit_bzero(&g->auth, sizeof(g->auth));
}
