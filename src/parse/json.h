/* A strict JSON reader (RFC 8259) for QMP replies: a buffer in, a flat array of values out (one
 * allocation for the whole document), strings and numbers decoded only when asked for.
 *
 *   struct json_doc doc;
 *   if (json_parse(text, len, &doc) < 0) ... -EBADMSG malformed, -ENODATA cut short
 *   const struct json_value *ret = json_get(&doc, json_root(&doc), "return");
 *   for (const struct json_value *v = json_first(&doc, ret); v; v = json_next(&doc, ret, v)) ...
 *   json_free(&doc);
 *
 * Values point into the text: keep it alive as long as the document. */
#ifndef VMHOST_PARSE_JSON_H
#define VMHOST_PARSE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JSON_MAX_DEPTH 64        /* nesting deeper than this is -ELOOP */
#define JSON_MAX_TEXT (64u << 20) /* a longer text is -EMSGSIZE */

enum json_type { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_value {
	uint8_t type;     /* enum json_type */
	uint8_t escaped;  /* a string with backslash escapes (decode with json_as_string) */
	uint8_t integer;  /* a number without fraction or exponent */
	uint32_t offset;  /* in the text: a string's first byte after its quote, else the value's first */
	uint32_t length;  /* a string's raw (escaped) length between its quotes, else the value's */
	uint32_t count;   /* an array's elements, an object's members */
	uint32_t skip;    /* values in this one's subtree, itself included: the next sibling is this + skip */
};

struct json_doc {
	const char *text;
	size_t len;
	struct json_value *values; /* values[0] is the root; an object's members are key, value, key ... */
	size_t nvalues;
};

/* Parses one JSON value (surrounded by optional whitespace). Returns 0, or -EBADMSG (not JSON:
 * bad token, bad escape, invalid UTF-8, control character, trailing garbage), -ENODATA (a valid
 * start cut short), -ELOOP (too deep), -EMSGSIZE (too long), -ENOMEM. *ret untouched on failure. */
int json_parse(const char *text, size_t len, struct json_doc *ret);
void json_free(struct json_doc *doc); /* accepts a zeroed doc */

const struct json_value *json_root(const struct json_doc *doc);
/* An object's member value by (decoded) key, or NULL when absent or v is not an object. */
const struct json_value *json_get(const struct json_doc *doc, const struct json_value *object, const char *key);
/* Children of an array (elements) or an object (member values; json_key gives the key). */
const struct json_value *json_first(const struct json_doc *doc, const struct json_value *container);
const struct json_value *json_next(const struct json_doc *doc, const struct json_value *container,
				   const struct json_value *child);
/* The key of an object member value returned by json_first/json_next/json_get. */
const struct json_value *json_key(const struct json_doc *doc, const struct json_value *member_value);

/* Decoders: 0 or -EINVAL (wrong type, or a number with a fraction for the integer ones),
 * -ERANGE (out of range). *ret untouched on failure. */
int json_as_u64(const struct json_doc *doc, const struct json_value *v, uint64_t *ret);
int json_as_i64(const struct json_doc *doc, const struct json_value *v, int64_t *ret);
int json_as_double(const struct json_doc *doc, const struct json_value *v, double *ret);
int json_as_bool(const struct json_value *v, bool *ret);
/* A string decoded to UTF-8 and NUL-terminated in buf. Returns its length, -EINVAL when v is not a
 * string, -ENOSPC when it does not fit (buf then holds a truncated copy). */
ssize_t json_as_string(const struct json_doc *doc, const struct json_value *v, char *buf, size_t cap);
/* A scalar as text in buf: a string decoded (as json_as_string), a number, true, false or null
 * as written. Returns its length, -EINVAL for an array or object, -ENOSPC when it does not fit. */
ssize_t json_as_text(const struct json_doc *doc, const struct json_value *v, char *buf, size_t cap);
/* True when v is a string equal to s once decoded; no copy for strings without escapes. */
bool json_string_is(const struct json_doc *doc, const struct json_value *v, const char *s);

/* Finds where one top-level value ends in a stream that arrives in pieces (QMP): feed bytes as
 * they come; returns the offset just past the first complete top-level object or array, 0 when
 * more bytes are needed, -EBADMSG when the stream starts with something else. Bytes between
 * values (whitespace, QMP's CR LF) are skipped. Scalars at top level are not framed. */
struct json_framer {
	size_t pos;    /* bytes examined so far in the current buffer */
	size_t start;  /* where the current value began */
	unsigned depth;
	bool in_string, escape;
};
void json_framer_reset(struct json_framer *f);
ssize_t json_framer_feed(struct json_framer *f, const char *buf, size_t len);

#endif
