/* One call per field gives the human text, the CSV cell and the JSON member (iproute2's
 * print_*(PRINT_ANY, ...)), so the three forms of a document cannot drift apart.
 *
 *   struct doc d;
 *   doc_init(&d, stdout, DOC_JSON, raw_bytes);
 *   doc_begin(&d, "host");
 *   doc_bytes(&d, "mem_total_bytes", "host  memory %s", total);    human "host  memory 23.5 GiB"
 *   doc_bytes(&d, "mem_free_bytes", NULL, free);                    JSON and CSV only
 *   doc_bytes(&d, NULL, ", swap used %s", used);                    human only
 *   doc_text(&d, "\n");
 *   doc_end(&d);
 *   return doc_finish(&d);
 *
 * A human format holds one "%s" (and "%%" for a percent sign); the writer puts the value there,
 * formatted for people (binary units unless raw bytes were asked for), or "n/a" when unknown.
 * JSON writes null for unknown values, CSV an empty cell. CSV is one record: a header line of the
 * keys (nested objects joined with '.') and one line of values, written by doc_finish. */
#ifndef VMHOST_OUT_DOC_H
#define VMHOST_OUT_DOC_H

#include <stdbool.h>
#include <stdio.h>

#include "out/json.h"
#include "parse/maybe.h"

enum doc_form { DOC_HUMAN, DOC_JSON, DOC_CSV };

#define DOC_MAX_DEPTH 8

struct doc {
	enum doc_form form;
	FILE *f;
	bool raw_bytes;
	int err;           /* the first error (-ENOMEM), kept until doc_finish */
	struct json j;     /* DOC_JSON */
	FILE *csv_keys, *csv_values; /* DOC_CSV: the record being built */
	char *keys_buf, *values_buf;
	size_t keys_len, values_len, ncells;
	const char *path[DOC_MAX_DEPTH]; /* keys of the open objects */
	int depth;
};

void doc_init(struct doc *d, FILE *f, enum doc_form form, bool raw_bytes);
/* Ends the document (JSON: the closing newline; CSV: the record). Returns 0 or the first
 * negative errno met while writing. */
int doc_finish(struct doc *d);

/* A nested object (key NULL: the top-level one). Human and CSV forms have no nesting. */
void doc_begin(struct doc *d, const char *key);
void doc_end(struct doc *d);

/* The JSON writer, to embed a table (table_print_json); NULL unless the form is JSON. */
struct json *doc_json(struct doc *d);

/* Text of the human form only (printf format). */
void doc_text(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fields. key NULL: human form only; fmt NULL: not in the human form. */
void doc_str(struct doc *d, const char *key, const char *fmt, const char *s); /* NULL: unknown */
void doc_int(struct doc *d, const char *key, const char *fmt, maybe_i64 v);
void doc_bytes(struct doc *d, const char *key, const char *fmt, maybe_i64 v);
/* decimals for the human form; JSON and CSV keep 6 significant digits. NaN: unknown. */
void doc_float(struct doc *d, const char *key, const char *fmt, double v, int decimals);
void doc_seconds(struct doc *d, const char *key, const char *fmt, double v); /* human "4m05s" */
/* Unix seconds: JSON and CSV to the millisecond, human local time (fmt_time). NaN: unknown. */
void doc_time(struct doc *d, const char *key, const char *fmt, double v);
void doc_bool(struct doc *d, const char *key, const char *fmt, bool v);      /* human "yes"/"no" */

#endif
