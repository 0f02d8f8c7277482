#include "out/doc.h"
#include "out/text.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "out/fmt.h"
#include "out/table.h"

enum value_kind { V_NULL, V_INT, V_FLOAT, V_STR, V_BOOL, V_TIME };

/* A value in every form: the human text is made on demand. */
struct value {
	enum value_kind kind;
	int64_t i;
	double f;
	const char *s;
	bool b;
};

void doc_init(struct doc *d, FILE *f, enum doc_form form, bool raw_bytes)
{
	*d = (struct doc){.form = form, .f = f, .raw_bytes = raw_bytes};
	if (form == DOC_JSON) {
		json_init(&d->j, f, false);
	} else if (form == DOC_CSV) {
		d->csv_keys = open_memstream(&d->keys_buf, &d->keys_len);
		d->csv_values = open_memstream(&d->values_buf, &d->values_len);
		if (!d->csv_keys || !d->csv_values)
			d->err = -ENOMEM;
	}
}

int doc_finish(struct doc *d)
{
	if (d->form == DOC_JSON) {
		json_finish(&d->j);
	} else if (d->form == DOC_CSV) {
		if (d->csv_keys && fclose(d->csv_keys) && !d->err)
			d->err = -ENOMEM;
		if (d->csv_values && fclose(d->csv_values) && !d->err)
			d->err = -ENOMEM;
		if (!d->err && d->ncells)
			fprintf(d->f, "%s\n%s\n", d->keys_buf, d->values_buf);
		free(d->keys_buf);
		free(d->values_buf);
		d->keys_buf = d->values_buf = NULL;
	}
	if (fflush(d->f) && !d->err)
		d->err = -errno;
	return d->err;
}

void doc_begin(struct doc *d, const char *key)
{
	if (d->form == DOC_JSON)
		json_object_begin(&d->j, key);
	if (d->depth < DOC_MAX_DEPTH)
		d->path[d->depth] = key;
	d->depth++;
}

void doc_end(struct doc *d)
{
	if (d->form == DOC_JSON)
		json_object_end(&d->j);
	if (d->depth > 0)
		d->depth--;
}

struct json *doc_json(struct doc *d) { return d->form == DOC_JSON ? &d->j : NULL; }

void doc_text(struct doc *d, const char *fmt, ...)
{
	if (d->form != DOC_HUMAN)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(d->f, fmt, ap);
	va_end(ap);
}

/* The human format with the value put at its "%s" ("%%" is a percent sign). */
static void human(struct doc *d, const char *fmt, const char *value)
{
	for (const char *p = fmt; *p; p++) {
		if (p[0] == '%' && p[1] == 's') {
			char shown[1024]; /* a value from a process or a peer: readable, never obeyed */
			fputs(text_shown(shown, sizeof(shown), value), d->f);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			fputc('%', d->f);
			p++;
		} else {
			fputc(*p, d->f);
		}
	}
}

static void human_value(const struct doc *d, const struct value *v, bool bytes, int decimals, bool seconds,
			char *buf, size_t cap)
{
	switch (v->kind) {
	case V_NULL: snprintf(buf, cap, "n/a"); break;
	case V_STR: snprintf(buf, cap, "%s", v->s); break;
	case V_BOOL: snprintf(buf, cap, "%s", v->b ? "yes" : "no"); break;
	case V_INT:
		if (bytes && !d->raw_bytes)
			fmt_bytes(buf, cap, v->i);
		else
			snprintf(buf, cap, "%lld", (long long)v->i);
		break;
	case V_FLOAT:
		if (seconds)
			fmt_seconds(buf, cap, v->f);
		else
			snprintf(buf, cap, "%.*f", decimals, v->f);
		break;
	case V_TIME: fmt_time(buf, cap, v->f); break;
	}
}

static void csv_key(struct doc *d, const char *key)
{
	FILE *f = d->csv_keys;
	if (d->ncells)
		fputc(',', f);
	for (int i = 0; i < d->depth && i < DOC_MAX_DEPTH; i++)
		if (d->path[i])
			fprintf(f, "%s.", d->path[i]);
	fputs(key, f);
}

static void field(struct doc *d, const char *key, const char *fmt, const struct value *v, bool bytes, int decimals,
		  bool seconds)
{
	char buf[256];
	switch (d->form) {
	case DOC_HUMAN:
		if (fmt) {
			human_value(d, v, bytes, decimals, seconds, buf, sizeof(buf));
			human(d, fmt, buf);
		}
		return;
	case DOC_JSON:
		if (!key)
			return;
		switch (v->kind) {
		case V_NULL: json_null(&d->j, key); break;
		case V_INT: json_int(&d->j, key, v->i); break;
		case V_FLOAT: json_double(&d->j, key, v->f); break;
		case V_STR: json_string(&d->j, key, v->s); break;
		case V_BOOL: json_bool(&d->j, key, v->b); break;
		case V_TIME: json_fixed(&d->j, key, v->f, 3); break;
		}
		return;
	case DOC_CSV:
		if (!key || d->err)
			return;
		csv_key(d, key);
		if (d->ncells++)
			fputc(',', d->csv_values);
		switch (v->kind) {
		case V_NULL: break;
		case V_INT: fprintf(d->csv_values, "%lld", (long long)v->i); break;
		case V_FLOAT: fprintf(d->csv_values, "%.6g", v->f); break;
		case V_STR: csv_cell(d->csv_values, v->s); break;
		case V_BOOL: fputs(v->b ? "true" : "false", d->csv_values); break;
		case V_TIME: fprintf(d->csv_values, "%.3f", v->f); break;
		}
		return;
	}
}

void doc_str(struct doc *d, const char *key, const char *fmt, const char *s)
{
	struct value v = {.kind = s ? V_STR : V_NULL, .s = s};
	field(d, key, fmt, &v, false, 0, false);
}

void doc_int(struct doc *d, const char *key, const char *fmt, maybe_i64 m)
{
	struct value v = {.kind = m.known ? V_INT : V_NULL, .i = m.v};
	field(d, key, fmt, &v, false, 0, false);
}

void doc_bytes(struct doc *d, const char *key, const char *fmt, maybe_i64 m)
{
	struct value v = {.kind = m.known ? V_INT : V_NULL, .i = m.v};
	field(d, key, fmt, &v, true, 0, false);
}

void doc_float(struct doc *d, const char *key, const char *fmt, double f, int decimals)
{
	struct value v = {.kind = isfinite(f) ? V_FLOAT : V_NULL, .f = f};
	field(d, key, fmt, &v, false, decimals, false);
}

void doc_seconds(struct doc *d, const char *key, const char *fmt, double f)
{
	struct value v = {.kind = isfinite(f) ? V_FLOAT : V_NULL, .f = f};
	field(d, key, fmt, &v, false, 0, true);
}

void doc_time(struct doc *d, const char *key, const char *fmt, double t)
{
	struct value v = {.kind = isfinite(t) ? V_TIME : V_NULL, .f = t};
	field(d, key, fmt, &v, false, 0, false);
}

void doc_bool(struct doc *d, const char *key, const char *fmt, bool b)
{
	struct value v = {.kind = V_BOOL, .b = b};
	field(d, key, fmt, &v, false, 0, false);
}
