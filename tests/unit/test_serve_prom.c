/* The Prometheus/OpenMetrics writer: metadata, escaping, numbers, negotiation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "net/accept.h"
#include "out/prom/prom.h"

static char *finish(struct prom *p)
{
	char *out;
	size_t len;
	assert_int_equal(prom_finish(p, &out, &len), 0);
	assert_int_equal(strlen(out), len);
	return out;
}

static void test_text_counter_and_gauge(void **state)
{
	(void)state;
	struct prom p;
	prom_init(&p, PROM_TEXT);
	prom_family(&p, "x_scans_total", PROM_COUNTER, "Full scans.");
	prom_int(&p, NULL, 0, 42);
	prom_family(&p, "x_bytes", PROM_GAUGE, "Some bytes.");
	struct prom_label l[] = {{"vm", "a"}, {"pid", "1"}};
	prom_int(&p, l, 2, -5);
	char *out = finish(&p);
	assert_string_equal(out, "# HELP x_scans_total Full scans.\n# TYPE x_scans_total counter\nx_scans_total 42\n"
				 "# HELP x_bytes Some bytes.\n# TYPE x_bytes gauge\nx_bytes{vm=\"a\",pid=\"1\"} -5\n");
	free(out);
}

static void test_openmetrics_names_and_eof(void **state)
{
	(void)state;
	struct prom p;
	prom_init(&p, PROM_OPENMETRICS);
	prom_family(&p, "x_scans_total", PROM_COUNTER, "Full \"scans\".");
	prom_int(&p, NULL, 0, 1);
	prom_family(&p, "x_build_info", PROM_INFO, "Build.");
	struct prom_label l = {"version", "1.0"};
	prom_int(&p, &l, 1, 1);
	char *out = finish(&p);
	assert_string_equal(out, "# HELP x_scans Full \\\"scans\\\".\n# TYPE x_scans counter\nx_scans_total 1\n"
				 "# HELP x_build Build.\n# TYPE x_build info\nx_build_info{version=\"1.0\"} 1\n# EOF\n");
	free(out);
}

static void test_unknown_values_leave_the_family_out(void **state)
{
	(void)state;
	struct prom p;
	prom_init(&p, PROM_TEXT);
	prom_family(&p, "x_unknown_bytes", PROM_GAUGE, "Never known.");
	prom_maybe(&p, NULL, 0, UNKNOWN);
	prom_family(&p, "x_known_bytes", PROM_GAUGE, "Known.");
	prom_maybe(&p, NULL, 0, UNKNOWN);
	prom_maybe(&p, NULL, 0, MAYBE(0));
	char *out = finish(&p);
	assert_null(strstr(out, "x_unknown_bytes"));
	assert_string_equal(out, "# HELP x_known_bytes Known.\n# TYPE x_known_bytes gauge\nx_known_bytes 0\n");
	free(out);
}

static void test_label_escaping_and_utf8(void **state)
{
	(void)state;
	struct prom p;
	prom_init(&p, PROM_TEXT);
	prom_family(&p, "x", PROM_GAUGE, "Back\\slash\nnewline \"quotes\" stay in text HELP.");
	struct prom_label l[] = {{"vm", "a\"b\\c\nd"}, {"uuid", NULL}, {"name", "caf\xc3\xa9 \xff\xc0\xaf end"}};
	prom_int(&p, l, 3, 1);
	char *out = finish(&p);
	assert_string_equal(out, "# HELP x Back\\\\slash\\nnewline \"quotes\" stay in text HELP.\n# TYPE x gauge\n"
				 "x{vm=\"a\\\"b\\\\c\\nd\",uuid=\"\",name=\"caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end\"} 1\n");
	free(out);
}

static void test_doubles(void **state)
{
	(void)state;
	char buf[40];
	prom_format_double(buf, sizeof(buf), 0.1);
	assert_string_equal(buf, "0.1");
	prom_format_double(buf, sizeof(buf), 0.02);
	assert_string_equal(buf, "0.02");
	prom_format_double(buf, sizeof(buf), 1e21);
	assert_string_equal(buf, "1e+21");
	prom_format_double(buf, sizeof(buf), 1.0 / 3);
	assert_true(strtod(buf, NULL) == 1.0 / 3);
	prom_format_double(buf, sizeof(buf), 0.0 / 0.0);
	assert_string_equal(buf, "NaN");
	prom_format_double(buf, sizeof(buf), -1.0 / 0.0);
	assert_string_equal(buf, "-Inf");
	/* A comma-decimal locale, when the machine has one, must not leak into the output. */
	if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
		prom_format_double(buf, sizeof(buf), 2.5);
		setlocale(LC_NUMERIC, "C");
		assert_string_equal(buf, "2.5");
	}
}

static void test_size_limit(void **state)
{
	(void)state;
	struct prom p;
	prom_init(&p, PROM_TEXT);
	p.max_bytes = 100;
	prom_family(&p, "x_long_family_name_bytes", PROM_GAUGE, "A help text long enough to pass the limit quickly.");
	for (int i = 0; i < 10; i++)
		prom_int(&p, NULL, 0, i);
	char *out = NULL;
	size_t len;
	assert_int_equal(prom_finish(&p, &out, &len), -EFBIG);
	assert_null(out);
}

static void test_negotiation(void **state)
{
	(void)state;
	assert_int_equal(prom_negotiate(NULL), PROM_TEXT);
	assert_int_equal(prom_negotiate("*/*"), PROM_TEXT);
	assert_int_equal(prom_negotiate("text/plain;version=0.0.4"), PROM_TEXT);
	/* What Prometheus 2.x sends. */
	assert_int_equal(prom_negotiate("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
					"version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
			 PROM_OPENMETRICS);
	assert_int_equal(prom_negotiate("application/openmetrics-text; version=1.0.0"), PROM_OPENMETRICS);
	assert_int_equal(prom_negotiate("text/plain;q=0.9, application/openmetrics-text;q=0.5"), PROM_TEXT);
	assert_int_equal(prom_negotiate("application/openmetrics-text;q=0"), PROM_TEXT);
	assert_int_equal(prom_negotiate("application/openmetrics-text;q=garbage"), PROM_TEXT);
	assert_int_equal(prom_negotiate(",,; ;,"), PROM_TEXT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_counter_and_gauge),
		cmocka_unit_test(test_openmetrics_names_and_eof),
		cmocka_unit_test(test_unknown_values_leave_the_family_out),
		cmocka_unit_test(test_label_escaping_and_utf8),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_size_limit),
		cmocka_unit_test(test_negotiation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
