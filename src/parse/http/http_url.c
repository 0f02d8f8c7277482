#include "parse/http/http_url.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int hex(char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; }

/* n bytes of s into out (cap), %XX decoded; no control character may result. */
static int copy_decoded(const char *s, size_t n, char *out, size_t cap)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '%') {
			if (i + 2 >= n)
				return -EINVAL;
			int a = hex(s[i + 1]), b = hex(s[i + 2]);
			if (a < 0 || b < 0)
				return -EINVAL;
			c = a * 16 + b;
			i += 2;
		}
		if (c < 0x20 || c == 0x7f || w + 1 >= cap)
			return -EINVAL;
		out[w++] = (char)c;
	}
	out[w] = '\0';
	return 0;
}

/* n bytes of s into out (cap) as they are: none below lowest (' ' allows spaces, '!' not), no DEL. */
static int copy_from(const char *s, size_t n, char lowest, char *out, size_t cap)
{
	if (n >= cap)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < (unsigned char)lowest || s[i] == 0x7f)
			return -EINVAL;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

static int copy_plain(const char *s, size_t n, char *out, size_t cap) { return copy_from(s, n, '!', out, cap); }

int http_port_parse(const char *s, size_t n, unsigned *ret)
{
	if (!n || n > 5 || strspn(s, "0123456789") < n)
		return -EINVAL;
	unsigned v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned)(s[i] - '0');
	if (v > 65535)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* "host[:port]" or "[v6][:port]". */
static int parse_hostport(const char *s, size_t n, struct http_url *u)
{
	const char *port = NULL;
	size_t hlen;
	if (n && s[0] == '[') {
		const char *close = memchr(s, ']', n);
		if (!close || close == s + 1)
			return -EINVAL;
		hlen = (size_t)(close - s - 1);
		if (copy_plain(s + 1, hlen, u->host, sizeof(u->host)) < 0 || strspn(u->host, "0123456789abcdefABCDEF:.") != hlen)
			return -EINVAL;
		if (close + 1 < s + n && close[1] != ':')
			return -EINVAL;
		port = close + 1 < s + n ? close + 2 : NULL;
	} else {
		const char *colon = memchr(s, ':', n);
		hlen = colon ? (size_t)(colon - s) : n;
		if (!hlen || copy_plain(s, hlen, u->host, sizeof(u->host)) < 0 || strpbrk(u->host, "[]@/?#"))
			return -EINVAL;
		port = colon ? colon + 1 : NULL;
	}
	if (!port) {
		snprintf(u->port, sizeof(u->port), u->tls ? "443" : "80");
		return 0;
	}
	unsigned v;
	if (http_port_parse(port, (size_t)(s + n - port), &v) < 0 || v < 1)
		return -EINVAL;
	snprintf(u->port, sizeof(u->port), "%hu", (unsigned short)v);
	return 0;
}

int http_url_parse(const char *url, struct http_url *ret)
{
	struct http_url u = {.tls = !strncasecmp(url, "https://", 8)};
	if (!u.tls && strncasecmp(url, "http://", 7))
		return strstr(url, "://") ? -ENOTSUP : -EINVAL;
	const char *auth = url + (u.tls ? 8 : 7);
	size_t alen = strcspn(auth, "/?#");
	const char *path = auth + alen;
	const char *at = memchr(auth, '@', alen);
	if (at) {
		const char *colon = memchr(auth, ':', (size_t)(at - auth));
		size_t ulen = colon ? (size_t)(colon - auth) : (size_t)(at - auth);
		if (copy_decoded(auth, ulen, u.user, sizeof(u.user)) < 0 ||
		    (colon && copy_decoded(colon + 1, (size_t)(at - colon - 1), u.password, sizeof(u.password)) < 0) ||
		    !u.user[0] || strchr(u.user, ':'))
			return -EINVAL;
		alen -= (size_t)(at + 1 - auth);
		auth = at + 1;
	}
	if (parse_hostport(auth, alen, &u) < 0)
		return -EINVAL;
	if (copy_plain(*path ? path : "/", *path ? strlen(path) : 1, u.path, sizeof(u.path)) < 0 || u.path[0] != '/')
		return -EINVAL;
	*ret = u;
	return 0;
}

int http_credentials_parse(const char *buf, size_t len, struct http_url *ret)
{
	const char *nl = memchr(buf, '\n', len);
	size_t line = nl ? (size_t)(nl - buf) : len;
	if (line && buf[line - 1] == '\r')
		line--;
	const char *colon = memchr(buf, ':', line);
	struct http_url u;
	if (!colon || colon == buf || copy_from(buf, (size_t)(colon - buf), ' ', u.user, sizeof(u.user)) < 0 ||
	    copy_from(colon + 1, (size_t)(buf + line - colon - 1), ' ', u.password, sizeof(u.password)) < 0) {
		explicit_bzero(&u, sizeof(u));
		return -EINVAL;
	}
	memcpy(ret->user, u.user, sizeof(u.user));
	memcpy(ret->password, u.password, sizeof(u.password));
	explicit_bzero(&u, sizeof(u));
	return 0;
}

void http_url_redact(const char *url, char *buf, size_t cap)
{
	const char *auth = strstr(url, "://");
	auth = auth ? auth + 3 : url;
	size_t alen = strcspn(auth, "/?#");
	const char *at = memchr(auth, '@', alen);
	const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	if (colon)
		snprintf(buf, cap, "%.*s***%s", (int)(colon + 1 - url), url, at);
	else
		snprintf(buf, cap, "%s", url);
}

int http_basic_auth(const char *user, const char *password, char *buf, size_t cap)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char plain[300];
	int n = snprintf(plain, sizeof(plain), "%s:%s", user, password);
	if (n < 0 || (size_t)n >= sizeof(plain) || cap < 6 + ((size_t)n + 2) / 3 * 4 + 1)
		return -ENAMETOOLONG;
	size_t w = (size_t)snprintf(buf, cap, "Basic ");
	for (size_t i = 0; i < (size_t)n; i += 3) {
		uint32_t v = (uint32_t)(unsigned char)plain[i] << 16;
		size_t left = (size_t)n - i;
		if (left > 1)
			v |= (uint32_t)(unsigned char)plain[i + 1] << 8;
		if (left > 2)
			v |= (unsigned char)plain[i + 2];
		buf[w++] = b64[v >> 18 & 63];
		buf[w++] = b64[v >> 12 & 63];
		buf[w++] = left > 1 ? b64[v >> 6 & 63] : '=';
		buf[w++] = left > 2 ? b64[v & 63] : '=';
	}
	buf[w] = '\0';
	explicit_bzero(plain, sizeof(plain));
	return 0;
}

/* The value of a header line "Name: value" when its name is name (any case). */
static const char *header_value(const char *line, size_t len, const char *name, size_t *ret_len)
{
	size_t n = strlen(name);
	if (len <= n || strncasecmp(line, name, n) || line[n] != ':')
		return NULL;
	const char *v = line + n + 1;
	while (v < line + len && (*v == ' ' || *v == '\t'))
		v++;
	*ret_len = (size_t)(line + len - v);
	return v;
}

int http_reply_parse(const char *buf, size_t len, int *ret_status, size_t *ret_body_offset, size_t *ret_body_len)
{
	if (len < 12 || strncmp(buf, "HTTP/1.", 7) || (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ')
		return -EINVAL;
	if (buf[9] < '1' || buf[9] > '5' || buf[10] < '0' || buf[10] > '9' || buf[11] < '0' || buf[11] > '9')
		return -EINVAL;
	int status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	size_t off = 0;
	int64_t content_length = -1;
	for (bool first = true;; first = false) {
		const char *nl = memchr(buf + off, '\n', len - off);
		if (!nl)
			return -EINVAL; /* the headers never ended */
		size_t line_len = (size_t)(nl - (buf + off));
		if (line_len && buf[off + line_len - 1] == '\r')
			line_len--;
		const char *line = buf + off;
		off = (size_t)(nl - buf) + 1;
		if (!line_len && !first)
			break;
		size_t vlen;
		const char *v = first ? NULL : header_value(line, line_len, "Content-Length", &vlen);
		if (v) {
			if (!vlen || vlen > 15 || content_length >= 0)
				return -EINVAL;
			content_length = 0;
			for (size_t i = 0; i < vlen; i++) {
				if (v[i] < '0' || v[i] > '9')
					return -EINVAL;
				content_length = content_length * 10 + (v[i] - '0');
			}
		}
	}
	if (content_length >= 0 && (uint64_t)content_length != len - off)
		return -EINVAL;
	*ret_status = status;
	*ret_body_offset = off;
	*ret_body_len = len - off;
	return 0;
}
