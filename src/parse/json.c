#include "parse/json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const char *s;
	size_t len, pos;
	struct json_value *v;
	size_t n, cap;
};

/* Appends a value; returns its index or a negative errno. The array doubles: one allocation
 * per document in the common case, never one per value. */
static ssize_t push(struct parser *p, enum json_type type, size_t offset)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct json_value *bigger = realloc(p->v, cap * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		p->v = bigger;
		p->cap = cap;
	}
	p->v[p->n] = (struct json_value){.type = (uint8_t)type, .offset = (uint32_t)offset, .skip = 1};
	return (ssize_t)p->n++;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits at s[pos]; -ENODATA when cut, -EBADMSG when not hex. */
static int hex4(const char *s, size_t len, size_t pos, unsigned *ret)
{
	unsigned v = 0;
	for (size_t i = 0; i < 4; i++) {
		if (pos + i >= len)
			return -ENODATA;
		int d = hex_digit(s[pos + i]);
		if (d < 0)
			return -EBADMSG;
		v = v << 4 | (unsigned)d;
	}
	*ret = v;
	return 0;
}

/* One UTF-8 sequence at s[pos] (first byte >= 0x80): its length, -ENODATA when cut, -EBADMSG when
 * ill-formed (overlong, surrogate, beyond U+10FFFF, stray continuation byte). */
static int utf8_length(const unsigned char *s, size_t len, size_t pos)
{
	unsigned char c = s[pos];
	int n;
	unsigned lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		if (c == 0xF4)
			hi = 0x8F;
	} else {
		return -EBADMSG;
	}
	for (int i = 1; i < n; i++) {
		if (pos + (size_t)i >= len)
			return -ENODATA;
		unsigned char b = s[pos + (size_t)i];
		if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
			return -EBADMSG;
	}
	return n;
}

/* A string at s[pos] == '"'; pushes it. */
static int parse_string(struct parser *p)
{
	size_t start = p->pos + 1;
	ssize_t idx = push(p, JSON_STRING, start);
	if (idx < 0)
		return (int)idx;
	bool escaped = false;
	size_t i = start;
	for (;;) {
		if (i >= p->len)
			return -ENODATA;
		unsigned char c = (unsigned char)p->s[i];
		if (c == '"')
			break;
		if (c < 0x20)
			return -EBADMSG;
		if (c >= 0x80) {
			int n = utf8_length((const unsigned char *)p->s, p->len, i);
			if (n < 0)
				return n;
			i += (size_t)n;
			continue;
		}
		if (c != '\\') {
			i++;
			continue;
		}
		escaped = true;
		if (i + 1 >= p->len)
			return -ENODATA;
		char e = p->s[i + 1];
		if (strchr("\"\\/bfnrt", e) && e) {
			i += 2;
			continue;
		}
		if (e != 'u')
			return -EBADMSG;
		unsigned u;
		int r = hex4(p->s, p->len, i + 2, &u);
		if (r < 0)
			return r;
		i += 6;
		if (u >= 0xDC00 && u <= 0xDFFF)
			return -EBADMSG; /* a low surrogate alone */
		if (u >= 0xD800 && u <= 0xDBFF) {
			/* a high surrogate must be followed by \u and a low one */
			for (size_t k = 0; k < 2; k++) {
				if (i + k >= p->len)
					return -ENODATA;
				if (p->s[i + k] != "\\u"[k])
					return -EBADMSG;
			}
			unsigned low;
			if ((r = hex4(p->s, p->len, i + 2, &low)) < 0)
				return r;
			if (low < 0xDC00 || low > 0xDFFF)
				return -EBADMSG;
			i += 6;
		}
	}
	p->v[idx].length = (uint32_t)(i - start);
	p->v[idx].escaped = escaped;
	p->pos = i + 1;
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Digits at pos: at least one; -ENODATA when the input ends before any. */
static int digits(struct parser *p)
{
	if (p->pos >= p->len)
		return -ENODATA;
	if (!is_digit(p->s[p->pos]))
		return -EBADMSG;
	while (p->pos < p->len && is_digit(p->s[p->pos]))
		p->pos++;
	return 0;
}

static int parse_number(struct parser *p)
{
	size_t start = p->pos;
	ssize_t idx = push(p, JSON_NUMBER, start);
	if (idx < 0)
		return (int)idx;
	bool integer = true;
	if (p->s[p->pos] == '-')
		p->pos++;
	if (p->pos >= p->len)
		return -ENODATA;
	if (p->s[p->pos] == '0') {
		p->pos++;
	} else {
		int r = digits(p);
		if (r < 0)
			return r;
	}
	if (p->pos < p->len && p->s[p->pos] == '.') {
		p->pos++;
		integer = false;
		int r = digits(p);
		if (r < 0)
			return r;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		integer = false;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		int r = digits(p);
		if (r < 0)
			return r;
	}
	p->v[idx].length = (uint32_t)(p->pos - start);
	p->v[idx].integer = integer;
	return 0;
}

static int parse_literal(struct parser *p, const char *word, enum json_type type)
{
	size_t n = strlen(word);
	for (size_t i = 0; i < n; i++) {
		if (p->pos + i >= p->len)
			return -ENODATA;
		if (p->s[p->pos + i] != word[i])
			return -EBADMSG;
	}
	ssize_t idx = push(p, type, p->pos);
	if (idx < 0)
		return (int)idx;
	p->v[idx].length = (uint32_t)n;
	p->pos += n;
	return 0;
}

/* The next significant byte, or -ENODATA at the end. */
static int peek(struct parser *p)
{
	skip_ws(p);
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -ENODATA;
}

static int parse_value(struct parser *p, unsigned depth);

/* An object or array at s[pos]; members are key, value pairs for an object. */
static int parse_container(struct parser *p, unsigned depth, bool object)
{
	if (depth >= JSON_MAX_DEPTH)
		return -ELOOP;
	size_t start = p->pos;
	ssize_t idx = push(p, object ? JSON_OBJECT : JSON_ARRAY, start);
	if (idx < 0)
		return (int)idx;
	char close = object ? '}' : ']';
	p->pos++;
	uint32_t count = 0;
	int c = peek(p);
	if (c < 0)
		return c;
	if (c == close) {
		p->pos++;
	} else {
		for (;;) {
			int r;
			if (object) {
				if ((c = peek(p)) < 0)
					return c;
				if (c != '"')
					return -EBADMSG;
				if ((r = parse_string(p)) < 0)
					return r;
				if ((c = peek(p)) < 0)
					return c;
				if (c != ':')
					return -EBADMSG;
				p->pos++;
			}
			if ((r = parse_value(p, depth + 1)) < 0)
				return r;
			count++;
			if ((c = peek(p)) < 0)
				return c;
			p->pos++;
			if (c == close)
				break;
			if (c != ',')
				return -EBADMSG;
		}
	}
	p->v[idx].count = count;
	p->v[idx].length = (uint32_t)(p->pos - start);
	p->v[idx].skip = (uint32_t)(p->n - (size_t)idx);
	return 0;
}

static int parse_value(struct parser *p, unsigned depth)
{
	int c = peek(p);
	if (c < 0)
		return c;
	switch (c) {
	case '{': return parse_container(p, depth, true);
	case '[': return parse_container(p, depth, false);
	case '"': return parse_string(p);
	case 't': return parse_literal(p, "true", JSON_TRUE);
	case 'f': return parse_literal(p, "false", JSON_FALSE);
	case 'n': return parse_literal(p, "null", JSON_NULL);
	default:
		if (c == '-' || is_digit((char)c))
			return parse_number(p);
		return -EBADMSG;
	}
}

int json_parse(const char *text, size_t len, struct json_doc *ret)
{
	if (len > JSON_MAX_TEXT)
		return -EMSGSIZE;
	struct parser p = {.s = text, .len = len};
	int r = parse_value(&p, 0);
	if (r == 0 && peek(&p) != -ENODATA)
		r = -EBADMSG; /* something after the value */
	if (r < 0) {
		free(p.v);
		return r;
	}
	*ret = (struct json_doc){.text = text, .len = len, .values = p.v, .nvalues = p.n};
	return 0;
}

void json_free(struct json_doc *doc)
{
	if (!doc)
		return;
	free(doc->values);
	doc->values = NULL;
	doc->nvalues = 0;
}

const struct json_value *json_root(const struct json_doc *doc)
{
	return doc && doc->nvalues ? &doc->values[0] : NULL;
}

static bool is_container(const struct json_value *v)
{
	return v && (v->type == JSON_ARRAY || v->type == JSON_OBJECT);
}

const struct json_value *json_first(const struct json_doc *doc, const struct json_value *container)
{
	(void)doc;
	if (!is_container(container) || !container->count)
		return NULL;
	return container + (container->type == JSON_OBJECT ? 2 : 1);
}

const struct json_value *json_next(const struct json_doc *doc, const struct json_value *container,
				   const struct json_value *child)
{
	(void)doc;
	if (!is_container(container) || !child)
		return NULL;
	const struct json_value *next = child + child->skip;
	if (container->type == JSON_OBJECT)
		next++; /* past the next key */
	return next < container + container->skip ? next : NULL;
}

const struct json_value *json_key(const struct json_doc *doc, const struct json_value *member_value)
{
	if (!doc || !member_value || member_value <= doc->values)
		return NULL;
	return member_value - 1;
}

const struct json_value *json_get(const struct json_doc *doc, const struct json_value *object, const char *key)
{
	if (!object || object->type != JSON_OBJECT)
		return NULL;
	for (const struct json_value *v = json_first(doc, object); v; v = json_next(doc, object, v))
		if (json_string_is(doc, v - 1, key))
			return v;
	return NULL;
}

/* Decodes a validated string body into out (cap bytes, NUL-terminated when cap > 0); returns the
 * decoded length, whatever fits. */
static size_t decode(const char *s, size_t len, char *out, size_t cap)
{
	size_t n = 0;
	char utf8[4];
	for (size_t i = 0; i < len;) {
		size_t k = 1;
		const char *bytes = &s[i];
		if (s[i] == '\\') {
			char e = s[i + 1];
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			const char *m = strchr(from, e);
			if (m && e) {
				utf8[0] = to[m - from];
				bytes = utf8;
				i += 2;
			} else {
				unsigned u = 0, low = 0xDC00; /* the body is validated: hex4 cannot fail here */
				hex4(s, len, i + 2, &u);
				i += 6;
				if (u >= 0xD800 && u <= 0xDBFF) {
					hex4(s, len, i + 2, &low);
					i += 6;
					u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
				}
				if (u < 0x80) {
					utf8[0] = (char)u;
				} else if (u < 0x800) {
					utf8[0] = (char)(0xC0 | u >> 6);
					utf8[1] = (char)(0x80 | (u & 0x3F));
					k = 2;
				} else if (u < 0x10000) {
					utf8[0] = (char)(0xE0 | u >> 12);
					utf8[1] = (char)(0x80 | ((u >> 6) & 0x3F));
					utf8[2] = (char)(0x80 | (u & 0x3F));
					k = 3;
				} else {
					utf8[0] = (char)(0xF0 | u >> 18);
					utf8[1] = (char)(0x80 | ((u >> 12) & 0x3F));
					utf8[2] = (char)(0x80 | ((u >> 6) & 0x3F));
					utf8[3] = (char)(0x80 | (u & 0x3F));
					k = 4;
				}
				bytes = utf8;
			}
		} else {
			i++;
		}
		for (size_t j = 0; j < k; j++, n++)
			if (out && n + 1 < cap)
				out[n] = bytes[j];
	}
	if (out && cap)
		out[n < cap ? n : cap - 1] = '\0';
	return n;
}

ssize_t json_as_string(const struct json_doc *doc, const struct json_value *v, char *buf, size_t cap)
{
	if (!v || v->type != JSON_STRING)
		return -EINVAL;
	size_t n = decode(doc->text + v->offset, v->length, buf, cap);
	return n < cap ? (ssize_t)n : -ENOSPC;
}

ssize_t json_as_text(const struct json_doc *doc, const struct json_value *v, char *buf, size_t cap)
{
	if (!v || v->type == JSON_ARRAY || v->type == JSON_OBJECT || !cap)
		return -EINVAL;
	if (v->type == JSON_STRING)
		return json_as_string(doc, v, buf, cap);
	size_t n = v->length < cap ? v->length : cap - 1;
	memcpy(buf, doc->text + v->offset, n);
	buf[n] = '\0';
	return v->length < cap ? (ssize_t)v->length : -ENOSPC;
}

bool json_string_is(const struct json_doc *doc, const struct json_value *v, const char *s)
{
	if (!v || v->type != JSON_STRING)
		return false;
	size_t sl = strlen(s);
	if (!v->escaped)
		return v->length == sl && !memcmp(doc->text + v->offset, s, sl);
	if (v->length < sl)
		return false; /* escapes only make a string shorter */
	/* sl + 1 bytes tell a longer string from s, and one more holds decode's NUL. */
	char small[256];
	char *buf = sl + 2 <= sizeof(small) ? small : malloc(sl + 2);
	if (!buf)
		return false;
	size_t n = decode(doc->text + v->offset, v->length, buf, sl + 2);
	bool same = n == sl && !memcmp(buf, s, sl);
	if (buf != small)
		free(buf);
	return same;
}

int json_as_bool(const struct json_value *v, bool *ret)
{
	if (!v || (v->type != JSON_TRUE && v->type != JSON_FALSE))
		return -EINVAL;
	*ret = v->type == JSON_TRUE;
	return 0;
}

/* The magnitude of an integer number and its sign. */
static int magnitude(const struct json_doc *doc, const struct json_value *v, uint64_t *ret, bool *negative)
{
	if (!v || v->type != JSON_NUMBER || !v->integer)
		return -EINVAL;
	const char *s = doc->text + v->offset, *end = s + v->length;
	*negative = *s == '-';
	if (*negative)
		s++;
	uint64_t m = 0;
	for (; s < end; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (m > (UINT64_MAX - d) / 10)
			return -ERANGE;
		m = m * 10 + d;
	}
	*ret = m;
	return 0;
}

int json_as_u64(const struct json_doc *doc, const struct json_value *v, uint64_t *ret)
{
	uint64_t m;
	bool negative;
	int r = magnitude(doc, v, &m, &negative);
	if (r < 0)
		return r;
	if (negative && m)
		return -ERANGE;
	*ret = m;
	return 0;
}

int json_as_i64(const struct json_doc *doc, const struct json_value *v, int64_t *ret)
{
	uint64_t m;
	bool negative;
	int r = magnitude(doc, v, &m, &negative);
	if (r < 0)
		return r;
	if (m > (uint64_t)INT64_MAX + negative)
		return -ERANGE;
	*ret = negative ? (int64_t)(0 - m) : (int64_t)m;
	return 0;
}

int json_as_double(const struct json_doc *doc, const struct json_value *v, double *ret)
{
	if (!v || v->type != JSON_NUMBER)
		return -EINVAL;
	char buf[512];
	if (v->length >= sizeof(buf))
		return -ERANGE;
	memcpy(buf, doc->text + v->offset, v->length);
	buf[v->length] = '\0';
	double d = strtod(buf, NULL);
	if (!isfinite(d))
		return -ERANGE;
	*ret = d;
	return 0;
}

void json_framer_reset(struct json_framer *f)
{
	*f = (struct json_framer){0};
}

ssize_t json_framer_feed(struct json_framer *f, const char *buf, size_t len)
{
	for (; f->pos < len; f->pos++) {
		char c = buf[f->pos];
		if (f->depth == 0) {
			if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
				continue;
			if (c != '{' && c != '[')
				return -EBADMSG;
			f->start = f->pos;
			f->depth = 1;
			continue;
		}
		if (f->in_string) {
			if (f->escape)
				f->escape = false;
			else if (c == '\\')
				f->escape = true;
			else if (c == '"')
				f->in_string = false;
		} else if (c == '"') {
			f->in_string = true;
		} else if (c == '{' || c == '[') {
			f->depth++;
		} else if ((c == '}' || c == ']') && --f->depth == 0) {
			return (ssize_t)++f->pos;
		}
	}
	return 0;
}
