/* serve --detail on fixture hosts, through the sampler, its feed and the cache that renders
 * /metrics: basic holds at most 10 series a VM and every host-wide one; the document's own
 * families count its series and bytes; a document over its cap is cut (to basic, then to the
 * host's series) rather than refused; and a VM that is gone has no series after the next gather,
 * its KVM counters included. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/serve_cache.h"
#include "serve_testutil.h"

static char dir[64], db[128];

static int setup(void **state)
{
	(void)state;
	return scratch_make(dir, db, "detail");
}

static int teardown(void **state)
{
	(void)state;
	return scratch_remove(dir);
}

struct server {
	struct sampler *sampler;
	struct sample_feed *feed;
};

static void start(struct server *s, struct io_root root, bool kvm)
{
	pid_t extra[] = {20000};
	struct sampler_config sc = {.root = root, .extra = extra, .nextra = 1, .kvm = kvm, .kvm_every_sample = kvm,
				    .kvm_interval_seconds = 60};
	assert_int_equal(sampler_new(&sc, &s->sampler), 0);
	struct sample_feed_config fc = {.sampler = s->sampler, .min_interval_seconds = 0};
	assert_int_equal(sample_feed_start(&fc, &s->feed), 0);
}

static void stop(struct server *s)
{
	sample_feed_stop(s->feed);
	sampler_free(s->sampler);
}

/* The document a new cache renders (a gathering of its own: min-interval 0), NUL-terminated;
 * NULL with *ret_err set when it fails. */
static char *document(struct server *s, enum prom_detail detail, size_t cap, enum prom_format format, bool kvm,
		      int *ret_err)
{
	struct serve_cache_config cc = {.feed = s->feed, .kvm_families = kvm, .max_body_bytes = cap,
					.detail = detail, .version = "test"};
	struct serve_cache *c;
	assert_int_equal(serve_cache_new(&cc, &c), 0);
	struct serve_body *b = NULL;
	int r = serve_cache_get(c, format, 5, &b);
	char *out = NULL;
	if (r == 0) {
		out = strndup(b->data, b->len);
		assert_non_null(out);
		assert_int_equal(strlen(out), b->len);
		serve_body_unref(b);
	}
	serve_cache_free(c);
	if (ret_err)
		*ret_err = r;
	else
		assert_int_equal(r, 0);
	return out;
}

/* The value of the unlabelled series NAME in doc; -1 when absent. */
static long long value_of(const char *doc, const char *name)
{
	char key[128];
	snprintf(key, sizeof(key), "\n%s ", name);
	const char *at = strstr(doc, key);
	return at ? strtoll(at + strlen(key), NULL, 10) : -1;
}

/* Sample lines of doc (not comments) and, of them, those that hold needle (NULL: all). */
static size_t count_lines(const char *doc, const char *needle)
{
	size_t n = 0;
	for (const char *l = doc; *l;) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		if (len && l[0] != '#') {
			char line[4096];
			snprintf(line, sizeof(line), "%.*s", (int)len, l);
			n += !needle || strstr(line, needle);
		}
		l += len + (end != NULL);
	}
	return n;
}

static const char *const basic_families[] = {
	"vmhost_vm_info{", "vmhost_vm_memory_cost_bytes{", "vmhost_vm_resident_bytes{", "vmhost_vm_pss_bytes{",
	"vmhost_vm_ksm_profit_bytes{", "vmhost_vm_cpu_seconds_total{", "vmhost_vm_vcpus_delay_seconds_total{",
	"vmhost_kvm_events_total{", "vmhost_vm_io_read_bytes_total{", "vmhost_vm_io_write_bytes_total{",
};

static bool basic_family(const char *line)
{
	for (size_t i = 0; i < sizeof(basic_families) / sizeof(basic_families[0]); i++)
		if (!strncmp(line, basic_families[i], strlen(basic_families[i])))
			return true;
	return false;
}

/* Figures of the gathering (each document here has one of its own) or of the document. */
static bool varies(const char *line)
{
	return !strncmp(line, "vmhost_scrape_", 14) || !strncmp(line, "vmhost_snapshot", 15);
}

/* Every sample line of full that is not a VM's (and not one that varies) is in basic; every VM's line of basic is of a basic family, and exits is
 * the only KVM event. */
static void check_basic_against_full(const char *basic, const char *full)
{
	for (const char *l = full; *l;) {
		const char *end = strchr(l, '\n');
		char line[4096];
		snprintf(line, sizeof(line), "%.*s\n", (int)(end - l), l);
		if (line[0] != '#' && !strstr(line, "{vm=\"") && !varies(line) && !strstr(basic, line)) {
			fprintf(stderr, "host-wide series missing at basic: %s", line);
			fail();
		}
		l = end + 1;
	}
	for (const char *l = basic; *l;) {
		const char *end = strchr(l, '\n');
		char line[4096];
		snprintf(line, sizeof(line), "%.*s", (int)(end - l), l);
		if (strstr(line, "{vm=\"") && (!basic_family(line) ||
					       (!strncmp(line, "vmhost_kvm_events", 17) && !strstr(line, "event=\"exits\"")))) {
			fprintf(stderr, "not a basic series: %s\n", line);
			fail();
		}
		l = end + 1;
	}
}

static void test_basic_is_bounded(void **state)
{
	(void)state;
	char proc[1100], sys[1100];
	struct server s;
	start(&s, scratch_fixture(dir, "exits-intel", proc, sys, sizeof(proc)), true);
	char *full = document(&s, PROM_DETAIL_FULL, 1 << 22, PROM_TEXT, true, NULL);
	char *basic = document(&s, PROM_DETAIL_BASIC, 1 << 22, PROM_TEXT, true, NULL);
	static const char *const pids[] = {"pid=\"1234\"", "pid=\"12345\"", "pid=\"20001\"", "pid=\"4242\""};
	for (size_t i = 0; i < 4; i++) {
		size_t at_full = count_lines(full, pids[i]), at_basic = count_lines(basic, pids[i]);
		print_message("%s: %zu series at full, %zu at basic\n", pids[i], at_full, at_basic);
		assert_true(at_full > 40);
		assert_true(at_basic >= 5 && at_basic <= 10);
	}
	assert_non_null(strstr(basic, "vmhost_kvm_events_total{vm=\"web1\",pid=\"1234\""));
	check_basic_against_full(basic, full);
	free(full);
	free(basic);
	stop(&s);
}

/* vmhost_scrape_series and vmhost_scrape_bytes say what the document holds, in both formats. */
static void test_scrape_families_count_the_document(void **state)
{
	(void)state;
	char proc[1100], sys[1100];
	struct server s;
	start(&s, fixture_root("serve", proc, sys, sizeof(proc)), false);
	for (int f = 0; f < 2; f++)
		for (int d = 0; d < 2; d++) {
			char *doc = document(&s, d ? PROM_DETAIL_BASIC : PROM_DETAIL_FULL, 1 << 22,
					     f ? PROM_OPENMETRICS : PROM_TEXT, false, NULL);
			assert_int_equal(value_of(doc, "vmhost_scrape_series"), count_lines(doc, NULL));
			assert_int_equal(value_of(doc, "vmhost_scrape_bytes"), strlen(doc));
			assert_int_equal(value_of(doc, "vmhost_scrape_vms"), value_of(doc, "vmhost_vms"));
			assert_int_equal(value_of(doc, "vmhost_scrape_cut"), 0);
			free(doc);
		}
	stop(&s);
}

/* A cap the whole document passes: basic's per-VM series, then none, then an error. */
static void test_cut_to_fit(void **state)
{
	(void)state;
	char proc[1100], sys[1100];
	struct server s;
	start(&s, fixture_root("serve", proc, sys, sizeof(proc)), false);
	char *full = document(&s, PROM_DETAIL_FULL, 1 << 22, PROM_TEXT, false, NULL);
	char *basic = document(&s, PROM_DETAIL_BASIC, 1 << 22, PROM_TEXT, false, NULL);
	assert_true(strlen(basic) + 100 < strlen(full));
	int err;
	char *cut = document(&s, PROM_DETAIL_FULL, strlen(basic) + 50, PROM_TEXT, false, &err);
	assert_int_equal(err, 0);
	assert_int_equal(value_of(cut, "vmhost_scrape_cut"), 1);
	assert_int_equal(value_of(cut, "vmhost_scrape_vms"), 3);
	assert_int_equal(count_lines(cut, "{vm=\""), count_lines(basic, "{vm=\""));
	free(cut);
	cut = document(&s, PROM_DETAIL_BASIC, strlen(basic) - 50, PROM_TEXT, false, &err);
	assert_int_equal(err, 0);
	assert_int_equal(value_of(cut, "vmhost_scrape_cut"), 1);
	assert_int_equal(value_of(cut, "vmhost_scrape_vms"), 0);
	assert_int_equal(count_lines(cut, "{vm=\""), 0);
	assert_int_equal(value_of(cut, "vmhost_vms"), 3);
	assert_int_equal(value_of(cut, "vmhost_scrape_bytes"), strlen(cut));
	size_t host_only = strlen(cut);
	free(cut);
	assert_null(document(&s, PROM_DETAIL_BASIC, host_only / 2, PROM_TEXT, false, &err));
	assert_int_equal(err, -EFBIG);
	free(full);
	free(basic);
	stop(&s);
}

/* A VM whose process is gone (its /proc directory and its KVM debugfs directory with it) has
 * no series in the document of the next gathering, at either detail. */
static void test_gone_vm_is_not_exported(void **state)
{
	(void)state;
	char proc[1100], sys[1100];
	struct server s;
	struct io_root root = scratch_fixture(dir, "exits-intel", proc, sys, sizeof(proc));
	start(&s, root, true);
	for (int d = 0; d < 2; d++) {
		char *doc = document(&s, d ? PROM_DETAIL_BASIC : PROM_DETAIL_FULL, 1 << 22, PROM_TEXT, true, NULL);
		assert_true(count_lines(doc, "pid=\"12345\"") > 0);
		free(doc);
	}
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "rm -r '%s/12345' '%s/kernel/debug/kvm/12345-15'", proc, sys);
	assert_int_equal(system(cmd), 0);
	for (int d = 0; d < 2; d++) {
		char *doc = document(&s, d ? PROM_DETAIL_BASIC : PROM_DETAIL_FULL, 1 << 22, PROM_TEXT, true, NULL);
		assert_int_equal(count_lines(doc, "pid=\"12345\""), 0);
		assert_true(count_lines(doc, "pid=\"1234\"") > 0);
		assert_int_equal(value_of(doc, "vmhost_scrape_vms"), value_of(doc, "vmhost_vms"));
		free(doc);
	}
	stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_basic_is_bounded, setup, teardown),
		cmocka_unit_test(test_scrape_families_count_the_document),
		cmocka_unit_test(test_cut_to_fit),
		cmocka_unit_test_setup_teardown(test_gone_vm_is_not_exported, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
