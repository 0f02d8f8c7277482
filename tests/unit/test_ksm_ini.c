/* The INI parser: sections, comments, values, and errors with line numbers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/tune/tuner.h"
#include "parse/ini.h"

struct seen {
	char text[512];
};

static int collect(void *user, const char *section, const char *key, const char *value, char *err, size_t cap)
{
	struct seen *s = user;
	size_t n = strlen(s->text);
	snprintf(s->text + n, sizeof(s->text) - n, "%s.%s=%s;", section, key, value);
	if (!strcmp(key, "reject")) {
		snprintf(err, cap, "rejected");
		return -EINVAL;
	}
	return 0;
}

static int parse(const char *text, struct seen *s, int *line, char *err)
{
	memset(s, 0, sizeof(*s));
	return ini_parse(text, strlen(text), collect, s, line, err, 128);
}

static void test_ini_good(void **state)
{
	(void)state;
	struct seen s;
	int line = -1;
	char err[128] = "";
	const char *text = "# top comment\n; another\n\nglobal = 1\n[tune]\n  cpu_budget =  15   \n"
			   "interval=2 # trailing comment\nname = a#b\n[ other ]\nx = y";
	assert_int_equal(parse(text, &s, &line, err), 0);
	assert_string_equal(s.text, ".global=1;tune.cpu_budget=15;tune.interval=2;tune.name=a#b;other.x=y;");
	assert_int_equal(line, 0);
}

static void test_ini_errors(void **state)
{
	(void)state;
	struct seen s;
	int line;
	char err[128];
	assert_int_equal(parse("[tune]\nno equals sign\n", &s, &line, err), -EINVAL);
	assert_int_equal(line, 2);
	assert_non_null(strstr(err, "expected 'key = value'"));
	assert_int_equal(parse("[tune\n", &s, &line, err), -EINVAL);
	assert_int_equal(line, 1);
	assert_int_equal(parse("a = 1\n= 2\n", &s, &line, err), -EINVAL);
	assert_int_equal(line, 2);
	assert_int_equal(parse("a = 1\nb =\n", &s, &line, err), -EINVAL);
	assert_int_equal(line, 2);
	assert_string_equal(err, "b has no value");
	assert_int_equal(parse("a = 1\n\n\nreject = 1\n", &s, &line, err), -EINVAL);
	assert_int_equal(line, 4);
	assert_string_equal(err, "rejected");
	assert_int_equal(parse("[]\n", &s, &line, err), -EINVAL);
	char binary[] = "a = 1\nb\0 = 2\n";
	memset(&s, 0, sizeof(s));
	assert_int_equal(ini_parse(binary, sizeof(binary) - 1, collect, &s, &line, err, sizeof(err)), -EINVAL);
	assert_int_equal(line, 2);
	char longline[2000];
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	assert_int_equal(parse(longline, &s, &line, err), -EINVAL);
}

static void test_tuner_config_keys(void **state)
{
	(void)state;
	struct tuner_config c;
	char err[256];
	tuner_config_default(&c);
	assert_int_equal(tuner_config_set(&c, "cpu_budget", "7.5", err, sizeof(err)), 0);
	assert_true(c.cpu_budget_percent == 7.5);
	assert_int_equal(tuner_config_set(&c, "cpu_budget", "0", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cpu_budget must be a number"));
	assert_int_equal(tuner_config_set(&c, "idle_sleep_millisecs", "2000", err, sizeof(err)), 0);
	assert_int_equal(c.idle_sleep_millisecs, 2000);
	assert_int_equal(tuner_config_set(&c, "max_pages_to_scan", "12abc", err, sizeof(err)), -EINVAL);
	assert_int_equal(tuner_config_set(&c, "smart_scan", "maybe", err, sizeof(err)), -EINVAL);
	assert_int_equal(tuner_config_set(&c, "smart_scan", "no", err, sizeof(err)), 0);
	assert_false(c.smart_scan);
	assert_int_equal(tuner_config_set(&c, "flat_scans", "3", err, sizeof(err)), 0);
	assert_int_equal(c.flat_scans, 3);
	assert_int_equal(tuner_config_set(&c, "nope", "3", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown option 'nope'");
	assert_int_equal(tuner_config_check(&c, err, sizeof(err)), 0);
	c.min_pages_to_scan = 50000;
	assert_int_equal(tuner_config_check(&c, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ini_good),
		cmocka_unit_test(test_ini_errors),
		cmocka_unit_test(test_tuner_config_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
