#include "out/table.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/prefault.h"
#include "out/fmt.h"
#include "out/text.h"

enum cell_state { CELL_NULL, CELL_INT, CELL_FLOAT, CELL_STR, CELL_BOOL, CELL_VALUE };

struct cell {
	enum cell_state state;
	union {
		int64_t i; /* CELL_INT, CELL_BOOL */
		double d;  /* CELL_FLOAT */
		char *s;   /* CELL_STR: owned */
		const void *p; /* CELL_VALUE: the column's write_json writes it */
	};
};

static bool owns_text(const struct cell *c) { return c->state == CELL_STR; }

struct table {
	const struct col *cols;
	size_t ncols, nrows, cap;
	struct cell *cells; /* nrows * ncols */
	int err;            /* the first failed table_add_row (-ENOMEM) */
	bool row_lost;      /* the last table_add_row failed: its cells go nowhere */
};

struct table *table_new(const struct col *cols, size_t ncols)
{
	struct table *t = calloc(1, sizeof(*t));
	if (t) {
		t->cols = cols;
		t->ncols = ncols;
	}
	return t;
}

void table_free(struct table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		if (owns_text(&t->cells[i]))
			free(t->cells[i].s);
	free(t->cells);
	free(t);
}

static int grow(struct table *t, size_t cap)
{
	struct cell *c = realloc(t->cells, cap * t->ncols * sizeof(*c));
	if (!c)
		return -ENOMEM;
	t->cells = c;
	t->cap = cap;
	return 0;
}

void table_reserve(struct table *t, size_t rows)
{
	/* The rows are about to be written: their pages mapped in one call, not a fault each. */
	if (rows > t->cap && grow(t, rows) == 0)
		prefault(t->cells, rows * t->ncols * sizeof(*t->cells));
}

int table_add_row(struct table *t)
{
	if (t->nrows == t->cap && grow(t, t->cap ? t->cap * 2 : 16) < 0) {
		t->err = -ENOMEM;
		t->row_lost = true;
		return -ENOMEM;
	}
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(struct cell));
	t->nrows++;
	t->row_lost = false;
	return 0;
}

size_t table_rows(const struct table *t) { return t->nrows; }

int table_error(const struct table *t) { return t->err; }

static struct cell *last(struct table *t, size_t col)
{
	if (!t->nrows || t->row_lost || col >= t->ncols)
		return NULL;
	struct cell *c = &t->cells[(t->nrows - 1) * t->ncols + col];
	if (owns_text(c))
		free(c->s);
	*c = (struct cell){0};
	return c;
}

void table_set_str(struct table *t, size_t col, const char *s)
{
	struct cell *c = last(t, col);
	if (c && s && (c->s = strdup(s)))
		c->state = CELL_STR;
}

void table_set_int(struct table *t, size_t col, int64_t v)
{
	struct cell *c = last(t, col);
	if (c) {
		c->state = CELL_INT;
		c->i = v;
	}
}

void table_set_maybe(struct table *t, size_t col, maybe_i64 v)
{
	if (v.known)
		table_set_int(t, col, v.v);
	else
		last(t, col);
}

void table_set_float(struct table *t, size_t col, double v)
{
	struct cell *c = last(t, col);
	if (c && isfinite(v)) {
		c->state = CELL_FLOAT;
		c->d = v;
	}
}

void table_set_bool(struct table *t, size_t col, bool v)
{
	struct cell *c = last(t, col);
	if (c) {
		c->state = CELL_BOOL;
		c->i = v;
	}
}

void table_set_value(struct table *t, size_t col, const void *value)
{
	struct cell *c = last(t, col);
	if (c && value && t->cols[col].write_json) {
		c->p = value;
		c->state = CELL_VALUE;
	}
}

/* A value cell as JSON text, for CSV and the human table (JSON writes it in place); NULL
 * when out of memory. */
static char *value_text(const struct col *col, const struct cell *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	struct json j;
	json_init(&j, f, false);
	col->write_json(&j, NULL, c->p);
	return fclose(f) == 0 ? buf : (free(buf), NULL);
}

static double cell_num(const struct cell *c)
{
	return c->state == CELL_INT ? (double)c->i : c->state == CELL_FLOAT ? c->d : NAN;
}

struct sort_key {
	double v;   /* NaN: null, sorted last */
	size_t row; /* ties keep their order */
};

static int cmp_key_desc(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;
	if (isnan(x->v) != isnan(y->v))
		return isnan(x->v) ? 1 : -1;
	if (!isnan(x->v) && x->v != y->v)
		return x->v < y->v ? 1 : -1;
	return (x->row > y->row) - (x->row < y->row);
}

void table_sort_desc(struct table *t, size_t col)
{
	size_t w = t->ncols, n = t->nrows;
	struct sort_key *keys = malloc((n ? n : 1) * sizeof(*keys));
	struct cell *tmp = malloc(w * sizeof(*tmp));
	bool *placed = calloc(n ? n : 1, sizeof(*placed));
	if (!keys || !tmp || !placed || col >= w)
		goto out;
	for (size_t r = 0; r < n; r++)
		keys[r] = (struct sort_key){cell_num(&t->cells[r * w + col]), r};
	qsort(keys, n, sizeof(*keys), cmp_key_desc);
	/* Row keys[k].row goes to k: each cycle of the permutation moves its rows once. */
	for (size_t start = 0; start < n; start++) {
		if (placed[start])
			continue;
		memcpy(tmp, &t->cells[start * w], w * sizeof(*tmp));
		size_t k = start;
		while (keys[k].row != start) {
			memcpy(&t->cells[k * w], &t->cells[keys[k].row * w], w * sizeof(*tmp));
			placed[k] = true;
			k = keys[k].row;
		}
		memcpy(&t->cells[k * w], tmp, w * sizeof(*tmp));
		placed[k] = true;
	}
out:
	free(keys);
	free(tmp);
	free(placed);
}

static void fmt_cell(const struct col *col, const struct cell *c, bool human, bool raw_bytes, char *buf, size_t cap)
{
	switch (c->state) {
	case CELL_NULL:
		snprintf(buf, cap, "%s", human ? "n/a" : "");
		return;
	case CELL_STR:
		snprintf(buf, cap, "%s", c->s);
		return;
	case CELL_VALUE: {
		char *text = value_text(col, c);
		snprintf(buf, cap, "%s", text ? text : "");
		free(text);
		return;
	}
	case CELL_BOOL:
		snprintf(buf, cap, "%s", human ? (c->i ? "yes" : "no") : c->i ? "true" : "false");
		return;
	case CELL_INT:
		if (human && col->kind == COL_BYTES && !raw_bytes)
			fmt_bytes(buf, cap, c->i);
		else
			snprintf(buf, cap, "%lld", (long long)c->i);
		return;
	case CELL_FLOAT:
		if (human && col->kind == COL_SECONDS)
			fmt_seconds(buf, cap, c->d);
		else if (human && col->kind == COL_TIME)
			fmt_time(buf, cap, c->d);
		else if (col->kind == COL_TIME)
			snprintf(buf, cap, "%.3f", c->d);
		else if (human)
			snprintf(buf, cap, "%.*f", col->decimals, c->d);
		else
			snprintf(buf, cap, "%.6g", c->d);
		return;
	}
}

void table_print_human(const struct table *t, FILE *f, bool raw_bytes)
{
	size_t *width = calloc(t->ncols, sizeof(*width));
	if (!width)
		return;
	char buf[512], shown[512];
	for (size_t c = 0; c < t->ncols; c++) {
		width[c] = strlen(t->cols[c].title);
		for (size_t r = 0; r < t->nrows && !(t->cols[c].flags & COL_JSON_ONLY); r++) {
			fmt_cell(&t->cols[c], &t->cells[r * t->ncols + c], true, raw_bytes, buf, sizeof(buf));
			size_t l = text_for_terminal(shown, sizeof(shown), buf, 0);
			if (l > width[c])
				width[c] = l;
		}
	}
	for (int r = -1; r < (int)t->nrows; r++) {
		bool first = true;
		for (size_t c = 0; c < t->ncols; c++) {
			const struct col *col = &t->cols[c];
			if (col->flags & COL_JSON_ONLY)
				continue;
			if (r < 0)
				snprintf(buf, sizeof(buf), "%s", col->title);
			else
				fmt_cell(col, &t->cells[(size_t)r * t->ncols + c], true, raw_bytes, buf, sizeof(buf));
			bool left = (col->flags & COL_LEFT) || col->kind == COL_STR;
			size_t chars = text_for_terminal(shown, sizeof(shown), buf, 0);
			fputs(first ? "" : "  ", f);
			text_pad(f, shown, chars, width[c], left);
			first = false;
		}
		/* No trailing blanks after a left-aligned last column. */
		fputc('\n', f);
	}
	free(width);
}

void csv_cell(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void table_print_csv(const struct table *t, FILE *f)
{
	char buf[512];
	bool first = true;
	for (size_t c = 0; c < t->ncols; c++)
		if (!(t->cols[c].flags & COL_ALIAS)) {
			fprintf(f, "%s%s", first ? "" : ",", t->cols[c].key);
			first = false;
		}
	fputc('\n', f);
	for (size_t r = 0; r < t->nrows; r++) {
		first = true;
		for (size_t c = 0; c < t->ncols; c++) {
			const struct cell *cell = &t->cells[r * t->ncols + c];
			if (t->cols[c].flags & COL_ALIAS)
				continue;
			if (!first)
				fputc(',', f);
			first = false;
			if (cell->state == CELL_VALUE) { /* whole, however long (a VM with 64 vCPUs) */
				char *text = value_text(&t->cols[c], cell);
				csv_cell(f, text ? text : "");
				free(text);
				continue;
			}
			fmt_cell(&t->cols[c], cell, false, true, buf, sizeof(buf));
			csv_cell(f, buf);
		}
		fputc('\n', f);
	}
}

static void json_cell(struct json *j, const char *k, const struct col *col, const struct cell *cell)
{
	switch (cell->state) {
	case CELL_NULL: json_null(j, k); break;
	case CELL_INT: json_int(j, k, cell->i); break;
	case CELL_FLOAT:
		if (col->kind == COL_TIME)
			json_fixed(j, k, cell->d, 3); /* Unix times keep their milliseconds */
		else
			json_double(j, k, cell->d);
		break;
	case CELL_STR: json_string(j, k, cell->s); break;
	case CELL_BOOL: json_bool(j, k, cell->i); break;
	case CELL_VALUE: col->write_json(j, k, cell->p); break;
	}
}

/* Columns [from, to) of row r, whose keys share their first skip characters ("a.b." ...):
 * a dotted key opens an object, printed as null when every cell in it is null. */
static void json_cols(struct json *j, const struct table *t, size_t r, size_t from, size_t to, size_t skip)
{
	const struct cell *row = &t->cells[r * t->ncols];
	for (size_t c = from; c < to;) {
		const char *key = t->cols[c].key + skip, *dot = strchr(key, '.');
		if (!dot) {
			json_cell(j, key, &t->cols[c], &row[c]);
			c++;
			continue;
		}
		size_t l = (size_t)(dot - key) + 1, e = c;
		bool all_null = true;
		while (e < to && !strncmp(t->cols[e].key + skip, key, l)) {
			all_null &= row[e].state == CELL_NULL;
			e++;
		}
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)(l - 1), key);
		if (all_null) {
			json_null(j, name);
		} else {
			json_object_begin(j, name);
			json_cols(j, t, r, c, e, skip + l);
			json_object_end(j);
		}
		c = e;
	}
}

void table_print_json(const struct table *t, struct json *j, const char *key)
{
	json_array_begin(j, key);
	for (size_t r = 0; r < t->nrows; r++) {
		json_object_begin(j, NULL);
		json_cols(j, t, r, 0, t->ncols, 0);
		json_object_end(j);
	}
	json_array_end(j);
}
