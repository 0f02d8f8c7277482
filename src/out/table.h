/* A table filled once and printed as aligned text, CSV or a JSON array of objects: the three
 * forms come from the same cells, so they cannot drift apart. */
#ifndef VMHOST_OUT_TABLE_H
#define VMHOST_OUT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "out/json.h"
#include "parse/maybe.h"

enum col_kind {
	COL_STR,
	COL_INT,
	COL_BYTES,   /* human: binary units unless raw bytes were asked for */
	COL_FLOAT,   /* printed with the column's decimals */
	COL_SECONDS, /* float seconds; human: "1.23s", "4m05s" */
	COL_BOOL,    /* JSON true/false, CSV "true"/"false", human "yes"/"no" */
	COL_TIME,    /* Unix seconds (table_set_float): JSON and CSV to the millisecond, human local time */
};

enum col_flags {
	COL_JSON_ONLY = 1 << 0, /* not in the human table */
	COL_LEFT = 1 << 1,      /* left-aligned in the human table */
	COL_ALIAS = 1 << 2,     /* a deprecated JSON name kept for one release: JSON only, not in CSV */
};

struct col {
	const char *key;   /* JSON and CSV name; "a.b" nests b in object a in JSON (all null: a is null) */
	const char *title; /* human heading */
	enum col_kind kind;
	unsigned flags;
	int decimals; /* COL_FLOAT */
	/* Writes a value set with table_set_value as JSON (CSV and the human table show that text). */
	void (*write_json)(struct json *j, const char *key, const void *value);
};

struct table;

struct table *table_new(const struct col *cols, size_t ncols);
void table_free(struct table *t);
/* Starts a new row; cells default to null. Returns 0 or -ENOMEM (then the table_set_* calls
 * for this row change nothing, and table_error() says the table is incomplete). */
int table_add_row(struct table *t);
/* Room for rows rows at once (the table grows as it must without it). */
void table_reserve(struct table *t, size_t rows);
size_t table_rows(const struct table *t);
/* 0, or -ENOMEM when a row could not be added: print an error, not a table missing rows. */
int table_error(const struct table *t);
/* Set a cell of the last row. */
void table_set_str(struct table *t, size_t col, const char *s); /* NULL = null */
void table_set_int(struct table *t, size_t col, int64_t v);
void table_set_maybe(struct table *t, size_t col, maybe_i64 v);
void table_set_float(struct table *t, size_t col, double v); /* NaN = null */
void table_set_bool(struct table *t, size_t col, bool v);
/* A value the column's write_json writes when the table is printed (an array, an object): it
 * must outlive the table. NULL = null. */
void table_set_value(struct table *t, size_t col, const void *value);
/* Sorts rows by an integer or float column, descending (nulls last, ties in their order). */
void table_sort_desc(struct table *t, size_t col);

void table_print_human(const struct table *t, FILE *f, bool raw_bytes);
void table_print_csv(const struct table *t, FILE *f);
void table_print_json(const struct table *t, struct json *j, const char *key);

/* One CSV cell, quoted when it holds a comma, a quote or a line break. */
void csv_cell(FILE *f, const char *s);

#endif
