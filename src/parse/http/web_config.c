#include "parse/http/web_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEB_LINE_MAX 4096

enum section { SEC_NONE, SEC_TLS, SEC_USERS };

/* tls_server_config's keys, in exporter-toolkit's spelling; why = NULL: vmhost reads it. */
static const struct {
	const char *key;
	const char *why;
} tls_keys[] = {
	{"cert_file", NULL},
	{"key_file", NULL},
	{"min_version", NULL},
	{"max_version", NULL},
	{"client_auth_type", NULL},
	{"client_ca_file", NULL},
	{"client_allowed_sans", "any certificate client_ca_file signed is accepted"},
	{"cipher_suites", NULL},
	{"curve_preferences", "GnuTLS's defaults apply"},
	{"prefer_server_cipher_suites", "GnuTLS's defaults apply"},
	{"cert", "give the certificate as cert_file"},
	{"key", "give the key as key_file"},
};
#define NTLS_KEYS (sizeof(tls_keys) / sizeof(tls_keys[0]))

struct parser {
	struct web_config c;
	enum section section; /* whose keys the indented lines are */
	int indent;           /* of the section's keys; -1 until its first one */
	int line;
	int tls_line, users_line, other_line; /* where each top-level key was; 0: not yet */
	int tls_key_line[NTLS_KEYS];
	bool in_cipher_list; /* the lines below cipher_suites: its "- NAME" items */
	size_t users_cap;
	char *err;
	size_t errcap;
};

__attribute__((format(printf, 2, 3))) static int error(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, p->errcap, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool blank(char c) { return c == ' ' || c == '\t'; }

static const char *skip_blanks(const char *s)
{
	while (blank(*s))
		s++;
	return s;
}

/* After a quoted scalar or a key: only blanks, then the end or a comment. */
static int rest_empty(struct parser *p, const char *s)
{
	const char *r = skip_blanks(s);
	if (*r && !(*r == '#' && r > s))
		return error(p, "unexpected text after the value: '%.40s'", r);
	return 0;
}

/* A 'single' or "double" quoted scalar at s into out (cap >= the line's length). */
static int quoted(struct parser *p, const char *s, char *out, const char **ret_end)
{
	char q = *s++;
	size_t n = 0;
	for (;; s++) {
		if (!*s)
			return error(p, "a %s-quoted value does not end on its line", q == '"' ? "double" : "single");
		if (*s == q && q == '\'' && s[1] == '\'') {
			out[n++] = '\'';
			s++;
		} else if (*s == q) {
			break;
		} else if (*s == '\\' && q == '"') {
			static const char from[] = "\\\"/tnr", to[] = "\\\"/\t\n\r";
			const char *e = s[1] ? strchr(from, s[1]) : NULL;
			if (!e)
				return error(p, "unsupported escape '\\%c' in a double-quoted value", s[1] ? s[1] : ' ');
			out[n++] = to[e - from];
			s++;
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
	*ret_end = s + 1;
	return 0;
}

/* YAML syntax beyond this subset starts with one of these (flow collections, anchors, aliases,
 * tags, block scalars, directives, reserved). */
static int plain_start(struct parser *p, const char *s)
{
	if (*s && strchr("[]{}&*!|>%@`,", *s))
		return error(p, "'%c' starts YAML syntax vmhost's web config does not read (flow collections, "
				"anchors, tags, block scalars): write a plain or quoted value", *s);
	if ((*s == '-' || *s == '?') && (!s[1] || blank(s[1])))
		return error(p, "'%c ' starts a YAML %s, which this key does not take", *s, *s == '-' ? "list" : "complex key");
	return 0;
}

/* The key of a "key: value" line at s, into out; *ret_end is past its ':'. */
static int parse_key(struct parser *p, const char *s, char *out, const char **ret_end)
{
	const char *end;
	if (*s == '"' || *s == '\'') {
		int r = quoted(p, s, out, &end);
		if (r < 0)
			return r;
		end = skip_blanks(end);
		if (*end != ':' || (end[1] && !blank(end[1])))
			return error(p, "expected ':' after the quoted key");
		*ret_end = end + 1;
		return 0;
	}
	int r = plain_start(p, s);
	if (r < 0)
		return r;
	for (end = s; *end; end++) {
		if (*end == ':' && (!end[1] || blank(end[1])))
			break;
		if (*end == '#' && end > s && blank(end[-1]))
			end += strlen(end) - 1; /* a comment: no ':' follows */
	}
	if (!*end)
		return error(p, "expected 'key: value', got '%.60s'", s);
	size_t n = (size_t)(end - s);
	while (n && blank(s[n - 1]))
		n--;
	memcpy(out, s, n);
	out[n] = '\0';
	*ret_end = end + 1;
	return 0;
}

/* The value after a key's ':' into out; *ret_null when there is none ("", "~", "null", "{}"). */
static int parse_value(struct parser *p, const char *s, char *out, bool *ret_null)
{
	s = skip_blanks(s);
	*ret_null = false;
	if (*s == '"' || *s == '\'') {
		const char *end;
		int r = quoted(p, s, out, &end);
		return r < 0 ? r : rest_empty(p, end);
	}
	size_t n = strlen(s);
	for (const char *c = s; *c; c++)
		if (*c == '#' && (c == s || blank(c[-1]))) {
			n = (size_t)(c - s);
			break;
		}
	while (n && blank(s[n - 1]))
		n--;
	memcpy(out, s, n);
	out[n] = '\0';
	if (!n || !strcmp(out, "~") || !strcmp(out, "null") || !strcmp(out, "Null") || !strcmp(out, "NULL") ||
	    !strcmp(out, "{}")) {
		*ret_null = true;
		return 0;
	}
	int r = plain_start(p, out);
	if (r < 0)
		return r;
	for (const char *c = out; *c; c++)
		if (*c == ':' && (!c[1] || blank(c[1])))
			return error(p, "a plain value cannot hold ': ' (a nested mapping is not read here): quote it");
	return 0;
}

static int version(struct parser *p, const char *key, const char *value, enum web_tls_version *ret)
{
	if (!strcmp(value, "TLS12"))
		*ret = WEB_TLS12;
	else if (!strcmp(value, "TLS13"))
		*ret = WEB_TLS13;
	else if (!strcmp(value, "TLS10") || !strcmp(value, "TLS11"))
		return error(p, "%s %s: vmhost serves TLS 1.2 at least (TLS12 or TLS13)", key, value);
	else
		return error(p, "%s takes TLS12 or TLS13, not '%.40s'", key, value);
	return 0;
}

/* One name of cipher_suites' list (quotes already taken off, or plain). */
static int cipher_suite(struct parser *p, const char *name)
{
	const struct web_cipher_suite *c = web_cipher_suite_find(name);
	if (!c)
		return error(p, "cipher_suites: '%.60s' is not a cipher suite exporter-toolkit accepts (Go's names, as "
				"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256; RC4, 3DES and CBC with SHA-256 are not)", name);
	for (size_t i = 0; i < p->c.ncipher_suites; i++)
		if (p->c.cipher_suites[i] == c)
			return 0;
	if (p->c.ncipher_suites == WEB_CIPHER_SUITES_MAX)
		return error(p, "cipher_suites: more than %d", WEB_CIPHER_SUITES_MAX);
	p->c.cipher_suites[p->c.ncipher_suites++] = c;
	return 0;
}

/* A list item's or a flow list element's text at s, n bytes, quoted or not: one name. */
static int cipher_item(struct parser *p, const char *s, size_t n)
{
	char name[WEB_LINE_MAX];
	while (n && blank(*s))
		s++, n--;
	while (n && blank(s[n - 1]))
		n--;
	if (n >= 2 && (*s == '"' || *s == '\'') && s[n - 1] == *s)
		s++, n -= 2;
	memcpy(name, s, n);
	name[n] = '\0';
	return cipher_suite(p, name);
}

/* cipher_suites' value at s (after its ':'): nothing (the "- NAME" lines follow) or a flow list
 * "[A, B]" on the line. */
static int cipher_suites_value(struct parser *p, const char *s)
{
	s = skip_blanks(s);
	p->c.tls = true;
	if (!*s || *s == '#') {
		p->in_cipher_list = true;
		return 0;
	}
	if (*s != '[')
		return error(p, "cipher_suites takes a list: '- NAME' lines below it, or [NAME, ...]");
	const char *end = strchr(s, ']');
	if (!end)
		return error(p, "cipher_suites: a '[' list must end with ']' on its line");
	for (const char *item = s + 1; item < end;) {
		const char *comma = memchr(item, ',', (size_t)(end - item));
		const char *stop = comma ? comma : end;
		int r = stop > item || comma ? cipher_item(p, item, (size_t)(stop - item)) : 0;
		if (r < 0)
			return r;
		item = stop + 1;
	}
	return rest_empty(p, end + 1);
}

/* A "- NAME" line of cipher_suites' list; s is past the '-'. */
static int cipher_list_item(struct parser *p, const char *s)
{
	char name[WEB_LINE_MAX];
	bool null;
	int r = parse_value(p, s, name, &null);
	if (r < 0)
		return r;
	return null ? error(p, "cipher_suites: an empty item") : cipher_suite(p, name);
}

static int set_string(char **field, const char *value)
{
	*field = strdup(value);
	return *field ? 0 : -ENOMEM;
}

static int tls_key(struct parser *p, const char *key, const char *value, bool null)
{
	size_t i = 0;
	while (i < NTLS_KEYS && strcmp(tls_keys[i].key, key))
		i++;
	if (i == NTLS_KEYS)
		return error(p, "unknown key '%.60s' in tls_server_config (expected cert_file, key_file, min_version, "
				"max_version)", key);
	if (tls_keys[i].why)
		return error(p, "%s is not supported by vmhost: %s", key, tls_keys[i].why);
	if (p->tls_key_line[i])
		return error(p, "%s given twice (first on line %d)", key, p->tls_key_line[i]);
	p->tls_key_line[i] = p->line;
	if (!strcmp(key, "cipher_suites"))
		return cipher_suites_value(p, value);
	if (null || !*value) /* a quoted "" is no file name either */
		return !strcmp(key, "client_auth_type") ? 0 : error(p, "%s has no value", key);
	p->c.tls = true;
	if (!strcmp(key, "cert_file"))
		return set_string(&p->c.cert_file, value);
	if (!strcmp(key, "key_file"))
		return set_string(&p->c.key_file, value);
	if (!strcmp(key, "min_version"))
		return version(p, key, value, &p->c.min_version);
	if (!strcmp(key, "max_version"))
		return version(p, key, value, &p->c.max_version);
	if (!strcmp(key, "client_ca_file"))
		return set_string(&p->c.client_ca_file, value);
	p->c.client_cert_required = !strcmp(value, "RequireAndVerifyClientCert");
	if (strcmp(value, "NoClientCert") && !p->c.client_cert_required)
		return error(p, "client_auth_type %.40s is not supported by vmhost (only NoClientCert and "
				"RequireAndVerifyClientCert)", value);
	return 0;
}

bool web_bcrypt_hash_ok(const char *s)
{
	static const char b64[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	if (strlen(s) != 60 || strncmp(s, "$2", 2) || !strchr("aby", s[2]) || s[3] != '$' || s[6] != '$')
		return false;
	if (s[4] < '0' || s[4] > '3' || s[5] < '0' || s[5] > '9' || (s[4] - '0') * 10 + (s[5] - '0') < 4 ||
	    (s[4] - '0') * 10 + (s[5] - '0') > 31)
		return false;
	return strspn(s + 7, b64) == 53;
}

static int user_key(struct parser *p, const char *name, const char *value, bool null)
{
	if (!*name)
		return error(p, "a user name cannot be empty");
	if (strchr(name, ':'))
		return error(p, "user name '%.60s' has a ':', which HTTP basic auth cannot send", name);
	for (size_t i = 0; i < p->c.nusers; i++)
		if (!strcmp(p->c.users[i].name, name))
			return error(p, "user '%.60s' given twice (first on line %d)", name, p->c.users[i].line);
	if (null)
		return error(p, "user '%.60s' has no password hash", name);
	if (!web_bcrypt_hash_ok(value))
		return error(p, "user '%.60s': not a bcrypt hash ($2y$10$ and 53 characters, as `htpasswd -nBC 10 %.60s` "
				"prints)", name, name);
	if (p->c.nusers == p->users_cap) {
		size_t cap = p->users_cap ? 2 * p->users_cap : 4;
		struct web_user *u = realloc(p->c.users, cap * sizeof(*u));
		if (!u)
			return -ENOMEM;
		p->c.users = u;
		p->users_cap = cap;
	}
	struct web_user *u = &p->c.users[p->c.nusers];
	u->name = strdup(name);
	u->hash = strdup(value);
	u->line = p->line;
	p->c.nusers++;
	return u->name && u->hash ? 0 : -ENOMEM;
}

static int top_key(struct parser *p, const char *key, bool null)
{
	int *seen = !strcmp(key, "tls_server_config")  ? &p->tls_line
		    : !strcmp(key, "basic_auth_users") ? &p->users_line
						       : NULL;
	if (!strcmp(key, "http_server_config"))
		return error(p, "http_server_config is not supported by vmhost (it serves HTTP/1.1 with its own headers)");
	if (!seen)
		return error(p, "unknown key '%.60s' (expected tls_server_config or basic_auth_users)", key);
	if (*seen)
		return error(p, "%s given twice (first on line %d)", key, *seen);
	if (!null)
		return error(p, "%s takes a mapping: its keys on the lines below, indented", key);
	*seen = p->line;
	p->section = seen == &p->tls_line ? SEC_TLS : SEC_USERS;
	p->indent = -1;
	return 0;
}

static int parse_line(struct parser *p, const char *line)
{
	const char *s = line;
	while (*s == ' ')
		s++;
	if (*s == '\t')
		return error(p, "a tab in the indentation (YAML indents with spaces)");
	if (!*s || *s == '#')
		return 0;
	int indent = (int)(s - line);
	if (p->in_cipher_list && indent >= p->indent && *s == '-' && (!s[1] || blank(s[1])))
		return cipher_list_item(p, s + 1);
	p->in_cipher_list = false;
	if (!indent && !strncmp(s, "---", 3) && (!s[3] || blank(s[3]))) {
		if (p->tls_line || p->users_line || p->other_line)
			return error(p, "a second YAML document ('---'): the web config is one");
		p->other_line = p->line;
		return rest_empty(p, s + 3);
	}
	p->other_line = p->line;
	char key[WEB_LINE_MAX], value[WEB_LINE_MAX];
	const char *after = s;
	bool null = true;
	int r = parse_key(p, s, key, &after);
	bool list = r == 0 && indent && p->section == SEC_TLS && !strcmp(key, "cipher_suites");
	if (list) /* its flow list is read by cipher_suites_value */
		snprintf(value, sizeof(value), "%s", after), null = false;
	else if (r == 0)
		r = parse_value(p, after, value, &null);
	if (r < 0)
		return r;
	if (!indent) {
		p->section = SEC_NONE;
		return top_key(p, key, null);
	}
	if (p->section == SEC_NONE)
		return error(p, "an indented key outside tls_server_config and basic_auth_users");
	if (p->indent < 0)
		p->indent = indent;
	if (indent != p->indent)
		return error(p, "indented %d spaces where the keys above are indented %d", indent, p->indent);
	return p->section == SEC_TLS ? tls_key(p, key, value, null) : user_key(p, key, value, null);
}

/* What the whole file must hold, checked at its end. */
static int finish(struct parser *p)
{
	if (!p->c.tls)
		return 0;
	p->line = p->tls_line;
	if (!p->c.cert_file)
		return error(p, "tls_server_config has no cert_file");
	if (!p->c.key_file)
		return error(p, "tls_server_config has no key_file");
	if (p->c.max_version < p->c.min_version) {
		p->line = p->tls_key_line[3];
		return error(p, "max_version %s is below min_version %s", web_tls_version_name(p->c.max_version),
			     web_tls_version_name(p->c.min_version));
	}
	if (p->c.client_cert_required != !!p->c.client_ca_file) {
		p->line = p->c.client_ca_file ? p->tls_key_line[5] : p->tls_key_line[4];
		return error(p, "%s", p->c.client_ca_file ? "client_ca_file needs client_auth_type RequireAndVerifyClientCert"
						   : "client_auth_type RequireAndVerifyClientCert needs client_ca_file");
	}
	return 0;
}

int web_config_parse(const char *buf, size_t len, struct web_config *ret, int *ret_line, char *err, size_t errcap)
{
	struct parser p = {.c = {.min_version = WEB_TLS12, .max_version = WEB_TLS13}, .err = err, .errcap = errcap};
	char line[WEB_LINE_MAX];
	size_t pos = 0;
	int r = 0;
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		pos = 3; /* a UTF-8 byte order mark */
	while (r == 0 && pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		p.line++;
		if (n >= sizeof(line)) {
			r = error(&p, "line too long (over %d bytes)", WEB_LINE_MAX - 1);
			break;
		}
		memcpy(line, buf + pos, n);
		pos += n + (nl ? 1 : 0);
		if (n && line[n - 1] == '\r')
			n--;
		line[n] = '\0';
		if (memchr(line, '\0', n))
			r = error(&p, "binary data (a NUL byte)");
		else
			r = parse_line(&p, line);
	}
	if (r == 0)
		r = finish(&p);
	if (r < 0) {
		web_config_free(&p.c);
		*ret_line = r == -ENOMEM ? 0 : p.line;
		if (r == -ENOMEM)
			snprintf(err, errcap, "out of memory");
		return r;
	}
	*ret = p.c;
	*ret_line = 0;
	return 0;
}

void web_config_free(struct web_config *c)
{
	free(c->client_ca_file);
	free(c->cert_file);
	free(c->key_file);
	for (size_t i = 0; i < c->nusers; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
	}
	free(c->users);
	memset(c, 0, sizeof(*c));
}

const char *web_tls_version_name(enum web_tls_version v) { return v == WEB_TLS13 ? "TLS13" : "TLS12"; }
