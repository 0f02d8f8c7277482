/* Writers: JSON escaping and nulls, one table printed three ways, human units. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "out/doc.h"
#include "out/fmt.h"
#include "out/json.h"
#include "out/screen.h"
#include "out/share_view.h"
#include "out/table.h"
#include "out/text.h"

/* realloc fails on demand (linked with --wrap=realloc), to test running out of memory. */
void *__real_realloc(void *p, size_t n);
static int realloc_failures; /* the next N reallocs fail */
void *__wrap_realloc(void *p, size_t n)
{
	if (realloc_failures > 0) {
		realloc_failures--;
		return NULL;
	}
	return __real_realloc(p, n);
}

static char *capture(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void write_doc(FILE *f, void *arg)
{
	(void)arg;
	struct json j;
	json_init(&j, f, false);
	json_object_begin(&j, NULL);
	json_string(&j, "name", "a\"b\\c\n\x01");
	json_maybe(&j, "known", MAYBE(-5));
	json_maybe(&j, "unknown", UNKNOWN);
	json_double(&j, "nan", NAN);
	json_double(&j, "ratio", 0.25);
	json_array_begin(&j, "list");
	json_int(&j, NULL, 1);
	json_int(&j, NULL, 2);
	json_array_end(&j);
	json_array_begin(&j, "empty");
	json_array_end(&j);
	json_string(&j, "null", NULL);
	json_object_end(&j);
	json_finish(&j);
}

static void json_document(void **state)
{
	(void)state;
	char *s = capture(write_doc, NULL);
	assert_string_equal(s, "{\"name\":\"a\\\"b\\\\c\\n\\u0001\",\"known\":-5,\"unknown\":null,\"nan\":null,"
			       "\"ratio\":0.25,\"list\":[1,2],\"empty\":[],\"null\":null}\n");
	free(s);
}

/* Integers at their extremes, every escape, and pretty indentation at depth. */
static void write_edges(FILE *f, void *arg)
{
	(void)arg;
	struct json j;
	json_init(&j, f, true);
	json_object_begin(&j, NULL);
	json_array_begin(&j, "ints");
	const int64_t ints[] = {0, 7, -1, 10, -10, 1234567890123, INT64_MAX, INT64_MIN};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		json_int(&j, NULL, ints[i]);
	json_array_end(&j);
	json_object_begin(&j, "deep");
	json_string(&j, "s", "tab\tcr\rdel\x7f\x1f\"q\"\xc3\xa9");
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void json_edges(void **state)
{
	(void)state;
	char *s = capture(write_edges, NULL);
	assert_string_equal(s, "{\n  \"ints\": [\n    0,\n    7,\n    -1,\n    10,\n    -10,\n    1234567890123,\n"
			       "    9223372036854775807,\n    -9223372036854775808\n  ],\n  \"deep\": {\n"
			       "    \"s\": \"tab\\tcr\\rdel\\u007f\\u001f\\\"q\\\"\xc3\xa9\"\n  }\n}\n");
	free(s);
}

static const struct col cols[] = {
	{"name", "NAME", COL_STR, 0, 0, NULL},
	{"size_bytes", "SIZE", COL_BYTES, 0, 0, NULL},
	{"ratio", "RATIO", COL_FLOAT, 0, 2, NULL},
	{"secret", "SECRET", COL_INT, COL_JSON_ONLY, 0, NULL},
};

static struct table *sample(void)
{
	struct table *t = table_new(cols, 4);
	table_add_row(t);
	table_set_str(t, 0, "small");
	table_set_int(t, 1, 512);
	table_set_float(t, 2, 0.5);
	table_set_int(t, 3, 7);
	table_add_row(t);
	table_set_str(t, 0, "big, \"quoted\"");
	table_set_int(t, 1, 3ll << 30);
	table_set_float(t, 2, NAN);
	return t;
}

static void print_human(FILE *f, void *t) { table_print_human(t, f, false); }
static void print_csv(FILE *f, void *t) { table_print_csv(t, f); }
static void print_json(FILE *f, void *t)
{
	struct json j;
	json_init(&j, f, false);
	table_print_json(t, &j, NULL);
	json_finish(&j);
}

static void table_three_ways(void **state)
{
	(void)state;
	struct table *t = sample();
	char *h = capture(print_human, t);
	assert_string_equal(h, "NAME               SIZE  RATIO\n"
			       "small             512 B   0.50\n"
			       "big, \"quoted\"  3.00 GiB    n/a\n");
	char *c = capture(print_csv, t);
	assert_string_equal(c, "name,size_bytes,ratio,secret\nsmall,512,0.5,7\n\"big, \"\"quoted\"\"\",3221225472,,\n");
	char *j = capture(print_json, t);
	assert_string_equal(j, "[{\"name\":\"small\",\"size_bytes\":512,\"ratio\":0.5,\"secret\":7},"
			       "{\"name\":\"big, \\\"quoted\\\"\",\"size_bytes\":3221225472,\"ratio\":null,\"secret\":null}]\n");
	table_sort_desc(t, 1);
	char *sorted = capture(print_csv, t);
	assert_non_null(strstr(sorted, "\n\"big"));
	assert_true(strstr(sorted, "big") < strstr(sorted, "small"));
	free(h), free(c), free(j), free(sorted);
	table_free(t);
}

static const struct col bool_time_cols[] = {
	{"name", "NAME", COL_STR, 0, 0, NULL},
	{"flagged", "FLAGGED", COL_BOOL, 0, 0, NULL},
	{"first_seconds", "FIRST", COL_TIME, 0, 0, NULL},
};

static void table_bool_and_time_columns(void **state)
{
	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	struct table *t = table_new(bool_time_cols, 3);
	table_add_row(t);
	table_set_str(t, 0, "a");
	table_set_bool(t, 1, true);
	table_set_float(t, 2, 1767225600.25); /* a Unix time keeps its milliseconds, not 6 digits */
	table_add_row(t);
	table_set_str(t, 0, "b");
	table_set_bool(t, 1, false);
	table_add_row(t);
	table_set_str(t, 0, "c"); /* not set: null */
	char *h = capture(print_human, t), *c = capture(print_csv, t), *j = capture(print_json, t);
	assert_string_equal(h, "NAME  FLAGGED                    FIRST\n"
			       "a         yes  2026-01-01 00:00:00 UTC\n"
			       "b          no                      n/a\n"
			       "c         n/a                      n/a\n");
	assert_string_equal(c, "name,flagged,first_seconds\na,true,1767225600.250\nb,false,\nc,,\n");
	assert_string_equal(j, "[{\"name\":\"a\",\"flagged\":true,\"first_seconds\":1767225600.250},"
			       "{\"name\":\"b\",\"flagged\":false,\"first_seconds\":null},"
			       "{\"name\":\"c\",\"flagged\":null,\"first_seconds\":null}]\n");
	free(h), free(c), free(j);
	table_free(t);
}

static void units(void **state)
{
	(void)state;
	char b[32];
	fmt_bytes(b, sizeof(b), 0), assert_string_equal(b, "0 B");
	fmt_bytes(b, sizeof(b), 1023), assert_string_equal(b, "1023 B");
	fmt_bytes(b, sizeof(b), 1536), assert_string_equal(b, "1.50 KiB");
	fmt_bytes(b, sizeof(b), 150ll << 20), assert_string_equal(b, "150 MiB");
	fmt_bytes(b, sizeof(b), -(2ll << 30)), assert_string_equal(b, "-2.00 GiB");
	fmt_seconds(b, sizeof(b), 0.0005), assert_string_equal(b, "500us");
	fmt_seconds(b, sizeof(b), 0.0123), assert_string_equal(b, "12.3ms");
	fmt_seconds(b, sizeof(b), 215), assert_string_equal(b, "3m35s");
	/* One rate format for top and exits: 12345 exits/s read "12.3k" in top, "12345" in exits. */
	fmt_rate(b, sizeof(b), 0), assert_string_equal(b, "0.0");
	fmt_rate(b, sizeof(b), 42.25), assert_string_equal(b, "42.2");
	fmt_rate(b, sizeof(b), 950), assert_string_equal(b, "950");
	fmt_rate(b, sizeof(b), 12345), assert_string_equal(b, "12.3k");
	fmt_rate(b, sizeof(b), 4.1e6), assert_string_equal(b, "4.1M");
	fmt_rate(b, sizeof(b), NAN), assert_string_equal(b, "n/a");
}

/* The live views' column fitter: in order, each with its separator, never into the last column. */
static void screen_columns(void **state)
{
	(void)state;
	const size_t widths[] = {10, 5, 5};
	assert_int_equal(screen_fit(0, 0, widths, 3), 3);
	assert_int_equal(screen_fit(21, 0, widths, 3), 3);
	assert_int_equal(screen_fit(20, 0, widths, 3), 2); /* 20 would fill the last column */
	assert_int_equal(screen_fit(20, 10, widths, 3), 0);
	assert_int_equal(screen_fit(30, 14, widths, 3), 2);
	assert_int_equal(screen_fit(29, 14, widths, 3), 1);
}

static void print_csv_t(FILE *f, void *t) { table_print_csv(t, f); }

/* A row that could not be added must not overwrite the row before it, and the table says so. */
static void table_out_of_memory(void **state)
{
	(void)state;
	struct table *t = table_new(cols, 4);
	for (int i = 0; i < 16; i++) { /* the first allocation holds 16 rows */
		assert_int_equal(table_add_row(t), 0);
		table_set_int(t, 1, i);
	}
	realloc_failures = 1;
	assert_int_equal(table_add_row(t), -ENOMEM);
	table_set_int(t, 1, 999);
	table_set_str(t, 0, "lost");
	char *s = capture(print_csv_t, t);
	assert_null(strstr(s, "999"));
	assert_null(strstr(s, "lost"));
	assert_non_null(strstr(s, ",15,"));
	free(s);
	assert_int_equal(table_error(t), -ENOMEM);
	table_free(t);
}

static void write_mixed(FILE *f, void *form)
{
	struct doc d;
	doc_init(&d, f, *(enum doc_form *)form, false);
	doc_begin(&d, NULL);
	doc_bytes(&d, "total_bytes", "memory %s", MAYBE(3ll << 30));
	doc_bytes(&d, "free_bytes", ", free %s", UNKNOWN);
	doc_int(&d, "pages", NULL, MAYBE(7));
	doc_begin(&d, "ksm");
	doc_float(&d, "cpu_percent", ", ksmd %s%%", 2.5, 1);
	doc_str(&d, "word", NULL, "a,b");
	doc_end(&d);
	doc_str(&d, NULL, " (%s)", "human only");
	doc_time(&d, "end_seconds", ", until %s", 1767225600.5);
	doc_text(&d, "\n");
	doc_end(&d);
	assert_int_equal(doc_finish(&d), 0);
}

/* One call per field gives all three forms; unknown is n/a, null and an empty cell. */
static void doc_three_forms(void **state)
{
	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	enum doc_form form = DOC_HUMAN;
	char *s = capture(write_mixed, &form);
	assert_string_equal(s, "memory 3.00 GiB, free n/a, ksmd 2.5% (human only), until 2026-01-01 00:00:01 UTC\n");
	free(s);
	form = DOC_JSON;
	s = capture(write_mixed, &form);
	assert_string_equal(s, "{\"total_bytes\":3221225472,\"free_bytes\":null,\"pages\":7,"
			       "\"ksm\":{\"cpu_percent\":2.5,\"word\":\"a,b\"},\"end_seconds\":1767225600.500}\n");
	free(s);
	form = DOC_CSV;
	s = capture(write_mixed, &form);
	assert_string_equal(s, "total_bytes,free_bytes,pages,ksm.cpu_percent,ksm.word,end_seconds\n"
			       "3221225472,,7,2.5,\"a,b\",1767225600.500\n");
	free(s);
}

/* Names from processes on a terminal: escapes shown, not obeyed; columns counted in characters. */
/* A value column: written by its function when printed, whole in CSV however long. */
static void int_list_json(struct json *j, const char *key, const void *value)
{
	const int *n = value; /* n[0] items follow */
	json_array_begin(j, key);
	for (int i = 1; i <= n[0]; i++)
		json_int(j, NULL, n[i]);
	json_array_end(j);
}

static const struct col value_cols[] = {
	{"id", "ID", COL_INT, 0, 0, NULL},
	{"list", "LIST", COL_STR, COL_JSON_ONLY, 0, int_list_json},
};

static void table_value_cells(void **state)
{
	(void)state;
	int few[] = {2, 10, 20}, many[201] = {200};
	for (int i = 1; i <= 200; i++)
		many[i] = 1000 + i;
	struct table *t = table_new(value_cols, 2);
	table_add_row(t);
	table_set_int(t, 0, 1);
	table_set_value(t, 1, few);
	table_add_row(t);
	table_set_int(t, 0, 2);
	table_set_value(t, 1, NULL);
	table_add_row(t);
	table_set_int(t, 0, 3);
	table_set_value(t, 1, many);
	char *j = capture(print_json, t);
	assert_non_null(strstr(j, "[{\"id\":1,\"list\":[10,20]},{\"id\":2,\"list\":null},{\"id\":3,\"list\":[1001,"));
	assert_non_null(strstr(j, ",1200]}]\n"));
	char *c = capture(print_csv, t);
	assert_non_null(strstr(c, "id,list\n1,\"[10,20]\"\n2,\n3,\"[1001,"));
	assert_non_null(strstr(c, ",1200]\"\n")); /* 1,000 characters, not cut at 511 */
	free(j), free(c);
	table_free(t);
}

/* Descending by a column, nulls last, ties in the order they were added; 300 rows. */
static void table_sort_many(void **state)
{
	(void)state;
	struct table *t = table_new(cols, 4);
	table_reserve(t, 300);
	for (int r = 0; r < 300; r++) {
		table_add_row(t);
		char name[16];
		snprintf(name, sizeof(name), "r%d", r);
		table_set_str(t, 0, name);
		if (r % 7) /* every 7th is null */
			table_set_int(t, 1, (r * 37) % 50);
		table_set_int(t, 3, r);
	}
	table_sort_desc(t, 1);
	char *c = capture(print_csv, t);
	char *save = NULL, *line = strtok_r(c, "\n", &save);
	long last_size = LONG_MAX, last_row = -1;
	bool nulls = false;
	size_t rows = 0;
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *size = strchr(line, ',') + 1, *secret = strrchr(line, ',') + 1;
		long row = strtol(secret, NULL, 10);
		assert_int_equal(strtol(line + 1, NULL, 10), row); /* the row moved whole */
		if (*size == ',') { /* null */
			assert_true(!nulls || row > last_row);
			nulls = true;
		} else {
			long v = strtol(size, NULL, 10);
			assert_false(nulls);
			assert_true(v < last_size || (v == last_size && row > last_row));
			last_size = v;
		}
		last_row = row;
		rows++;
	}
	assert_int_equal(rows, 300);
	free(c);
	table_free(t);
}

static void text_on_a_terminal(void **state)
{
	(void)state;
	char out[64];
	assert_int_equal(text_for_terminal(out, sizeof(out), "w\xc3\xa9" "b-\xc3\xbc", 0), 5);
	assert_string_equal(out, "w\xc3\xa9" "b-\xc3\xbc");
	/* Controls and what is not UTF-8 shown byte by byte as \xHH: readable, never obeyed. */
	assert_int_equal(text_for_terminal(out, sizeof(out), "a\033[31mb\tc\x7f\xc2\x9b" "2J\xff\xe2\x82", 0), 41);
	assert_string_equal(out, "a\\x1b[31mb\\x09c\\x7f\\xc2\\x9b2J\\xff\\xe2\\x82");
	assert_int_equal(text_for_terminal(out, sizeof(out), "ab\033c", 4), 2); /* never half an escape */
	assert_string_equal(out, "ab");
	assert_int_equal(text_for_terminal(out, sizeof(out), "\xc3\xa9\xc3\xa9\xc3\xa9", 2), 2); /* cut between characters */
	assert_string_equal(out, "\xc3\xa9\xc3\xa9");
	assert_int_equal(text_for_terminal(out, 4, "\xc3\xa9\xc3\xa9", 0), 1); /* no half character at the end */
	assert_string_equal(out, "\xc3\xa9");

	struct table *t = table_new(cols, 4);
	table_add_row(t);
	table_set_str(t, 0, "caf\xc3\xa9");
	table_set_int(t, 1, 1);
	table_set_float(t, 2, 1);
	table_add_row(t);
	table_set_str(t, 0, "x\033[2J");
	table_set_int(t, 1, 2);
	table_set_float(t, 2, 2);
	char *h = capture(print_human, t);
	assert_string_equal(h, "NAME      SIZE  RATIO\n"
			       "caf\xc3\xa9" "       1 B   1.00\n"
			       "x\\x1b[2J   2 B   2.00\n");
	free(h);
	table_free(t);
}

/* share's map in its three forms (out/share_view.h): --csv is a real table, a row per VM, its
 * pairs as JSON text (it printed the human form before); JSON and CSV from the same cells. */
static void share_views(void **state)
{
	(void)state;
	struct sketch s[2] = {{.pid = 10, .name = "db", .sample_n = 32, .pages = 100, .ram_pages = 128, .zero_pages = 5,
			       .cpu_seconds = 0.5, .wall_seconds = 1},
			      {.pid = 20, .name = "", .sample_n = 32, .pages = 50, .gap = SKETCH_VM_EXITED}};
	int64_t with0[2] = {0, 7}, with1[2] = {7, 0};
	struct share_vm vms[2] = {{.self_shared_pages = 3, .unique_pages = 90, .shared_with = with0},
				  {.unique_pages = 43, .shared_with = with1}};
	struct share_map m = {.n = 2, .vms = vms, .pages = 150, .mergeable_pages = 10};
	struct share_view v = {.sketches = s, .n = 2, .map = &m, .page_size_bytes = 4096, .saved_now_bytes = UNKNOWN,
			       .ksm_saved_bytes = MAYBE(8192)};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(share_view_print(f, DOC_CSV, &v), 0);
	fclose(f);
	const char *header = "pid,name,pages,ram_pages,zero_pages,zero_mapped_pages,ksm_zero_pages,self_shared_pages,"
			     "unique_pages,shared_with,sample,sketch_hashes,sketch_bytes,error_bound_pages,partial,"
			     "partial_reason,cpu_seconds,wall_seconds\n";
	assert_true(!strncmp(buf, header, strlen(header)));
	assert_non_null(strstr(buf, "\n10,db,100,128,5,0,0,3,90,\"[{\"\"pid\"\":20,\"\"name\"\":null,\"\"pages\"\":7}]\",32,"));
	assert_non_null(strstr(buf, ",true,vm-exited,"));
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(share_view_print(f, DOC_JSON, &v), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"shared_with\":[{\"pid\":10,\"name\":\"db\",\"pages\":7}]"));
	assert_non_null(strstr(buf, "\"host\":{\"pages\":150,\"zero_pages\":0,\"zero_mapped_pages\":0,"
				    "\"mergeable_savings_bytes\":40960,\"saved_bytes\":null,\"ksm_saved_bytes\":8192}"));
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(share_view_print(f, DOC_HUMAN, &v), 0);
	fclose(f);
	assert_non_null(strstr(buf, "  db               with -                  28.0 KiB\n"));
	assert_non_null(strstr(buf, "host: KSM could save 40.0 KiB with every VM merged; n/a is saved now"));
	free(buf);
}

/* share plan --csv: the plan's table, a row per move, as JSON's plan.moves. */
static void share_plan_views(void **state)
{
	(void)state;
	struct sketch_file_vm a_vms[1] = {{.pid = 1, .name = "web", .pages = 10}}, b_vms[1] = {{.pid = 2, .name = "db"}};
	struct sketch_file files[2] = {{.vms = a_vms, .nvms = 1, .mem_total_bytes = -1, .mem_available_bytes = -1},
				       {.vms = b_vms, .nvms = 1, .mem_total_bytes = -1, .mem_available_bytes = -1}};
	struct plan_host hosts[2] = {{"a", &files[0]}, {"b", &files[1]}};
	int64_t common0[2] = {0, 4}, common1[2] = {4, 0};
	struct plan_vm pvms[2] = {{.host = 0, .index = 0, .common_pages = common0, .best_host = 1},
				  {.host = 1, .index = 0, .common_pages = common1, .best_host = 0}};
	struct plan_move moves[1] = {{.vm = 0, .from = 0, .to = 1, .freed_pages = 4, .need_pages = 6}};
	struct share_plan p = {.nhosts = 2, .nvms = 2, .vms = pvms, .moves = moves, .nmoves = 1, .freed_pages = 4};
	const char *sources[2] = {"a.sketch", "b.sketch"};
	struct share_plan_view v = {.hosts = hosts, .sources = sources, .plan = &p};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(share_plan_view_print(f, DOC_CSV, &v), 0);
	fclose(f);
	assert_string_equal(buf, "name,pid,from,to,freed_bytes,need_bytes\nweb,1,a,b,16384,24576\n");
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(share_plan_view_print(f, DOC_JSON, &v), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"plan\":{\"moves\":[{\"name\":\"web\",\"pid\":1,\"from\":\"a\",\"to\":\"b\","
				    "\"freed_bytes\":16384,\"need_bytes\":24576}],\"freed_bytes\":16384"));
	free(buf);
	v.vm = "2"; /* by pid: db, which has no move */
	assert_true(share_plan_view_finds_vm(&v));
	f = open_memstream(&buf, &len);
	assert_int_equal(share_plan_view_print(f, DOC_HUMAN, &v), 0);
	fclose(f);
	assert_non_null(strstr(buf, "db (pid 2) on b: best on a (+16.0 KiB)\n"));
	assert_non_null(strstr(buf, "\nplan:\n  no move frees memory\n"));
	free(buf);
	v.vm = "nope";
	assert_false(share_plan_view_finds_vm(&v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_document), cmocka_unit_test(json_edges), cmocka_unit_test(table_three_ways), cmocka_unit_test(units),
		cmocka_unit_test(table_bool_and_time_columns), cmocka_unit_test(screen_columns),
		cmocka_unit_test(share_views), cmocka_unit_test(share_plan_views),
		cmocka_unit_test(table_out_of_memory), cmocka_unit_test(doc_three_forms),
		cmocka_unit_test(text_on_a_terminal), cmocka_unit_test(table_value_cells), cmocka_unit_test(table_sort_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
