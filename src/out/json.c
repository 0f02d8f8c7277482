#include "out/json.h"

#include <math.h>
#include <string.h>

void json_init(struct json *j, FILE *f, bool pretty)
{
	*j = (struct json){.f = f, .pretty = pretty};
}

/* Bytes a JSON string cannot hold as they are: control characters, '"', '\\' and DEL (and NUL,
 * which ends the string). */
static bool escaped(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c == 0x7f;
}

/* Escapes a string, writing the plain runs between escapes whole (a stdio call per character
 * was 4% of `vmhost mem --json`; glibc's strcspn with this set of 34 bytes builds a table on
 * every call, 1% of it with 400 VMs). */
static void json_write_escaped(FILE *f, const char *s)
{
	putc('"', f);
	for (;;) {
		size_t run = 0;
		while (!escaped((unsigned char)s[run]))
			run++;
		fwrite(s, 1, run, f);
		s += run;
		unsigned char c = (unsigned char)*s;
		if (!c)
			break;
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default: fprintf(f, "\\u%04x", c);
		}
		s++;
	}
	putc('"', f);
}

static void indent(struct json *j)
{
	static const char spaces[] = "                                                                "; /* 2 * JSON_MAX_DEPTH */
	if (!j->pretty)
		return;
	_Static_assert(sizeof(spaces) > 2 * (JSON_MAX_DEPTH - 1), "an indent for every depth");
	fputc('\n', j->f);
	fwrite(spaces, 1, 2 * (size_t)j->depth, j->f);
}

/* Separator, indentation and key before any value. */
static void prefix(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (j->has_items[j->depth])
			fputc(',', j->f);
		j->has_items[j->depth] = true;
		indent(j);
	}
	if (key) {
		json_write_escaped(j->f, key);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void open_(struct json *j, const char *key, char c)
{
	prefix(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->has_items[j->depth] = false;
}

static void close_(struct json *j, char c)
{
	bool had = j->has_items[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (had)
		indent(j);
	fputc(c, j->f);
}

void json_object_begin(struct json *j, const char *key) { open_(j, key, '{'); }
void json_object_end(struct json *j) { close_(j, '}'); }
void json_array_begin(struct json *j, const char *key) { open_(j, key, '['); }
void json_array_end(struct json *j) { close_(j, ']'); }

void json_int(struct json *j, const char *key, int64_t v)
{
	/* By hand: fprintf's format parsing was a tenth of writing 400 VMs. */
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	prefix(j, key);
	fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), j->f);
}

void json_maybe(struct json *j, const char *key, maybe_i64 v)
{
	if (v.known)
		json_int(j, key, v.v);
	else
		json_null(j, key);
}

void json_double(struct json *j, const char *key, double v)
{
	if (!isfinite(v)) {
		json_null(j, key);
		return;
	}
	prefix(j, key);
	/* Enough digits to round-trip rates and ratios, no locale. */
	fprintf(j->f, "%.6g", v);
}

void json_fixed(struct json *j, const char *key, double v, int decimals)
{
	if (!isfinite(v)) {
		json_null(j, key);
		return;
	}
	prefix(j, key);
	fprintf(j->f, "%.*f", decimals, v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	prefix(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_string(struct json *j, const char *key, const char *s)
{
	if (!s) {
		json_null(j, key);
		return;
	}
	prefix(j, key);
	json_write_escaped(j->f, s);
}

void json_null(struct json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->f);
}

void json_finish(struct json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}
