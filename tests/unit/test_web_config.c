/* The web config parser (exporter-toolkit's YAML) on a good file and on every error it names,
 * each with its line; and the basic auth verifier: right and wrong passwords, unknown users,
 * and the cache that keeps a scrape from costing a bcrypt. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <crypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/serve_auth.h"
#include "parse/http/web_config.h"

/* bcrypt of "s3cret", cost 4 (the tests hash often). */
#define HASH_S3CRET "$2b$04$0kWE3cwSYHeHK9XDvP9KVO6R19FeWG1LDOTHTl6MmYyFL8uyuohfi"

static void hash_of(const char *password, char *out, size_t cap)
{
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	assert_non_null(crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, sizeof(salt)));
	struct crypt_data d = {0};
	const char *h = crypt_rn(password, salt, &d, sizeof(d));
	assert_non_null(h);
	snprintf(out, cap, "%s", h);
}

static int parse(const char *text, struct web_config *c, int *line, char *err, size_t cap)
{
	return web_config_parse(text, strlen(text), c, line, err, cap);
}

static void good_file(void **state)
{
	(void)state;
	char h1[128], h2[128], text[2048];
	hash_of("s3cret", h1, sizeof(h1));
	hash_of("it's", h2, sizeof(h2));
	snprintf(text, sizeof(text),
		 "---\n"
		 "# vmhost's web config\n"
		 "tls_server_config:\n"
		 "  # the certificate\n"
		 "  cert_file: /etc/vmhost/tls/server.crt   # comment\n"
		 "  key_file: \"key file.pem\"\r\n"
		 "  min_version: TLS13\n"
		 "  client_auth_type: NoClientCert\n"
		 "\n"
		 "basic_auth_users:\n"
		 "    prometheus: %s\n"
		 "    'o''brien': \"%s\"\n",
		 h1, h2);
	struct web_config c;
	int line = -1;
	char err[256] = "";
	assert_int_equal(parse(text, &c, &line, err, sizeof(err)), 0);
	assert_int_equal(line, 0);
	assert_true(c.tls);
	assert_string_equal(c.cert_file, "/etc/vmhost/tls/server.crt");
	assert_string_equal(c.key_file, "key file.pem");
	assert_int_equal(c.min_version, WEB_TLS13);
	assert_int_equal(c.max_version, WEB_TLS13);
	assert_int_equal(c.nusers, 2);
	assert_string_equal(c.users[0].name, "prometheus");
	assert_string_equal(c.users[0].hash, h1);
	assert_int_equal(c.users[0].line, 11);
	assert_string_equal(c.users[1].name, "o'brien");
	assert_string_equal(c.users[1].hash, h2);
	assert_null(c.client_ca_file);
	assert_false(c.client_cert_required);
	web_config_free(&c);
	web_config_free(&c); /* freed twice: zeroed after the first */

	/* Client certificates: required and verified against client_ca_file. */
	assert_int_equal(parse("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: clients.pem\n"
			       "  client_auth_type: RequireAndVerifyClientCert\n", &c, &line, err, sizeof(err)), 0);
	assert_string_equal(c.client_ca_file, "clients.pem");
	assert_true(c.client_cert_required);
	web_config_free(&c);

	/* Empty, comments only, and sections without keys: no TLS, no users (exporter-toolkit alike). */
	const char *empty[] = {"", "# nothing\n\n", "tls_server_config:\nbasic_auth_users: {}\n", "\xef\xbb\xbf---\n"};
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		assert_int_equal(parse(empty[i], &c, &line, err, sizeof(err)), 0);
		assert_false(c.tls);
		assert_int_equal(c.nusers, 0);
		web_config_free(&c);
	}
	/* The defaults: TLS 1.2 to 1.3. */
	assert_int_equal(parse("tls_server_config:\n cert_file: a\n key_file: b\n", &c, &line, err, sizeof(err)), 0);
	assert_int_equal(c.min_version, WEB_TLS12);
	assert_int_equal(c.max_version, WEB_TLS13);
	web_config_free(&c);
}

/* Each bad file: the line the error names and a piece of its message. */
static void errors_name_their_line(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int line;
		const char *says;
	} cases[] = {
		{"tls_server_config:\n  cert_file: a\n  key_file: b\n\n\n\n  foo: 1\n", 7, "unknown key 'foo' in tls_server_config"},
		{"# c\nfoo: bar\n", 2, "unknown key 'foo'"},
		{"tls_server_config:\n  cert_file: a\n  cert_file: b\n", 3, "cert_file given twice (first on line 2)"},
		{"basic_auth_users:\n  a: " HASH_S3CRET "\ntls_server_config:\n  key_file: k\n", 3, "has no cert_file"},
		{"tls_server_config:\n  cert_file: c\n", 1, "has no key_file"},
		{"tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS11\n", 4, "TLS 1.2 at least"},
		{"tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: tls12\n", 4, "takes TLS12 or TLS13"},
		{"tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS13\n  max_version: TLS12\n", 5,
		 "max_version TLS12 is below min_version TLS13"},
		{"tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: RequireAndVerifyClientCert\n", 4,
		 "RequireAndVerifyClientCert needs client_ca_file"},
		{"tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: ca.pem\n", 4,
		 "client_ca_file needs client_auth_type RequireAndVerifyClientCert"},
		{"tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: VerifyClientCertIfGiven\n", 4,
		 "only NoClientCert and RequireAndVerifyClientCert"},
		{"tls_server_config:\n  client_allowed_sans: a\n", 2, "client_allowed_sans is not supported"},
		{"tls_server_config:\n  cert_file: c\n  key_file: k\n  cipher_suites:\n    - TLS_RSA_WITH_RC4_128_SHA\n", 5,
		 "'TLS_RSA_WITH_RC4_128_SHA' is not a cipher suite exporter-toolkit accepts"},
		{"tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256\n", 2, "must end with ']' on its line"},
		{"tls_server_config:\n  cipher_suites: TLS_AES_128_GCM_SHA256\n", 2, "cipher_suites takes a list"},
		{"tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256] x\n", 2, "unexpected text after the value"},
		{"tls_server_config:\n  cipher_suites:\n  -\n", 3, "an empty item"},
		{"tls_server_config:\n  cipher_suites: []\n  cipher_suites: []\n", 3, "cipher_suites given twice"},
		{"tls_server_config:\n  cipher_suites:\n   - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n", 1, "has no cert_file"},
		{"tls_server_config:\n  curve_preferences:\n    - X25519\n", 2, "curve_preferences is not supported"},
		{"http_server_config:\n  http2: false\n", 1, "http_server_config is not supported"},
		{"basic_auth_users:\n  alice: s3cret\n", 2, "user 'alice': not a bcrypt hash"},
		{"basic_auth_users:\n  alice:\n", 2, "user 'alice' has no password hash"},
		{"basic_auth_users:\n  a: " HASH_S3CRET "\n  a: " HASH_S3CRET "\n", 3, "user 'a' given twice (first on line 2)"},
		{"basic_auth_users:\n  'a:b': " HASH_S3CRET "\n", 2, "has a ':'"},
		{"basic_auth_users:\n  \"\": " HASH_S3CRET "\n", 2, "cannot be empty"},
		{"tls_server_config:\n  cert_file: c\n    key_file: k\n", 3, "indented 4 spaces where the keys above are indented 2"},
		{"tls_server_config:\n\tcert_file: c\n", 2, "a tab in the indentation"},
		{"  cert_file: c\n", 1, "outside tls_server_config"},
		{"tls_server_config: yes\n", 1, "takes a mapping"},
		{"tls_server_config:\ntls_server_config:\n", 2, "given twice (first on line 1)"},
		{"tls_server_config:\n  cert_file: 'abc\n", 2, "does not end on its line"},
		{"tls_server_config:\n  cert_file: \"a\\qb\"\n", 2, "unsupported escape"},
		{"tls_server_config:\n  cert_file: 'a' b\n", 2, "unexpected text after the value"},
		{"tls_server_config:\n  cert_file: [a, b]\n", 2, "flow collections"},
		{"tls_server_config:\n  cert_file: &x a\n", 2, "anchors"},
		{"tls_server_config:\n  cert_file: a: b\n", 2, "cannot hold ': '"},
		{"tls_server_config:\n  - cert_file\n", 2, "list"},
		{"tls_server_config:\n  cert_file\n", 2, "expected 'key: value'"},
		{"tls_server_config:\n  cert_file:\n", 2, "cert_file has no value"},
		{"tls_server_config:\n  cert_file: c\n  key_file: ''\n", 3, "key_file has no value"},
		{"tls_server_config:\n  cert_file: a\n---\n", 3, "second YAML document"},
		{"basic_auth_users:\n  a: b\0c\n", 2, "NUL"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct web_config c = {.nusers = 12345};
		int line = -1;
		char err[256] = "";
		size_t len = strlen(cases[i].text);
		if (strstr(cases[i].says, "NUL"))
			len += 3; /* past the NUL: "c\n" */
		int r = web_config_parse(cases[i].text, len, &c, &line, err, sizeof(err));
		if (r != -EINVAL || line != cases[i].line || !strstr(err, cases[i].says))
			fail_msg("case %zu: r=%d line %d (want %d): '%s' (want '%s')", i, r, line, cases[i].line, err,
				 cases[i].says);
		assert_int_equal(c.nusers, 12345); /* untouched on failure */
	}
	/* A line too long for the parser's buffer. */
	char *long_line = malloc(10000);
	memset(long_line, 'a', 9999);
	long_line[9999] = '\0';
	memcpy(long_line, "x: ", 3);
	struct web_config c;
	int line;
	char err[256];
	assert_int_equal(parse(long_line, &c, &line, err, sizeof(err)), -EINVAL);
	assert_int_equal(line, 1);
	assert_non_null(strstr(err, "too long"));
	free(long_line);
}

/* cipher_suites as exporter-toolkit's YAML has it: "- NAME" lines, indented or not, or a flow list
 * (quoted names too); repeats dropped; the keys after it read as keys; TLS 1.3's names accepted. */
static void cipher_suites_lists(void **state)
{
	(void)state;
	static const char *const texts[] = {
		"tls_server_config:\n  cert_file: c\n  cipher_suites:\n    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
		"    - 'TLS_RSA_WITH_AES_128_CBC_SHA'  # explicitly\n    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
		"    - TLS_AES_128_GCM_SHA256\n  key_file: k\n",
		"tls_server_config:\n  cipher_suites:\n  - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n  # a comment\n"
		"  - TLS_RSA_WITH_AES_128_CBC_SHA\n  - TLS_AES_128_GCM_SHA256\n  cert_file: c\n  key_file: k\n",
		"tls_server_config:\n  cert_file: c\n  key_file: k\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, "
		"\"TLS_RSA_WITH_AES_128_CBC_SHA\" ,TLS_AES_128_GCM_SHA256]  # three\n",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct web_config c;
		int line;
		char err[256];
		if (web_config_parse(texts[i], strlen(texts[i]), &c, &line, err, sizeof(err)) != 0)
			fail_msg("text %zu: line %d: %s", i, line, err);
		assert_int_equal(c.ncipher_suites, 3);
		assert_string_equal(c.cipher_suites[0]->name, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
		assert_string_equal(c.cipher_suites[0]->kx, "ECDHE-RSA");
		assert_string_equal(c.cipher_suites[1]->cipher, "AES-128-CBC");
		assert_string_equal(c.cipher_suites[1]->mac, "SHA1");
		assert_null(c.cipher_suites[2]->kx); /* TLS 1.3's: not configurable */
		assert_string_equal(c.key_file, "k");
		assert_true(web_cipher_suite_listed(c.cipher_suites, c.ncipher_suites, "RSA", "AES-128-CBC", "SHA1"));
		assert_false(web_cipher_suite_listed(c.cipher_suites, c.ncipher_suites, "ECDHE-RSA", "AES-128-CBC", "SHA1"));
		web_config_free(&c);
	}
	struct web_config c;
	int line;
	char err[256];
	static const char empty[] = "tls_server_config:\n  cert_file: c\n  key_file: k\n  cipher_suites: []\n";
	assert_int_equal(web_config_parse(empty, strlen(empty), &c, &line, err, sizeof(err)), 0);
	assert_int_equal(c.ncipher_suites, 0); /* empty: the defaults, as exporter-toolkit's */
	web_config_free(&c);
}

static void bcrypt_hash_forms(void **state)
{
	(void)state;
	assert_true(web_bcrypt_hash_ok(HASH_S3CRET));
	assert_true(web_bcrypt_hash_ok("$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi"));
	assert_true(web_bcrypt_hash_ok("$2a$12$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi"));
	assert_false(web_bcrypt_hash_ok("$2x$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi"));
	assert_false(web_bcrypt_hash_ok("$2y$03$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi"));
	assert_false(web_bcrypt_hash_ok("$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeS"));
	assert_false(web_bcrypt_hash_ok("$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeS!"));
	assert_false(web_bcrypt_hash_ok("$6$salt$hash"));
	assert_false(web_bcrypt_hash_ok(""));
}

/* The verifier's counters so far: bcrypts computed, checks answered from the cache, refusals. */
static void stats_are(struct serve_auth *a, unsigned long bcrypt, unsigned long cached, unsigned long refused)
{
	struct serve_auth_stats s = serve_auth_stats(a);
	if (s.bcrypt != bcrypt || s.cached != cached || s.refused != refused)
		fail_msg("bcrypt %lu cached %lu refused %lu; want %lu %lu %lu", s.bcrypt, s.cached, s.refused, bcrypt,
			 cached, refused);
}

/* Each of users' credentials checked times times: the right ones pass, the wrong ones not. */
static void check_all(struct serve_auth *a, const char *const (*creds)[3], size_t n, int times)
{
	for (int t = 0; t < times; t++)
		for (size_t i = 0; i < n; i++)
			if (serve_auth_check(a, creds[i][0], creds[i][1]) != (creds[i][2][0] == 'y'))
				fail_msg("%s:%s checked %s", creds[i][0], creds[i][1], creds[i][2][0] == 'y' ? "wrong" : "right");
}

static void auth_checks_and_caches(void **state)
{
	(void)state;
	char h1[128], h2[128];
	hash_of("s3cret", h1, sizeof(h1));
	hash_of("other", h2, sizeof(h2));
	struct web_user users[] = {{"prom", h1, 1}, {"grafana", h2, 2}};
	struct serve_auth *a;
	assert_int_equal(serve_auth_new(users, 2, SERVE_AUTH_CACHE_SECONDS, &a), 0);
	static const char *const right[][3] = {{"prom", "s3cret", "y"}};
	/* The first scrape costs a bcrypt; the next ones with the same password come from the cache. */
	check_all(a, right, 1, 6);
	stats_are(a, 1, 5, 0);
	/* Wrong passwords, another user's password, an unknown user: refused, each after a bcrypt. */
	static const char *const wrong[][3] = {{"prom", "s3cre", "n"},     {"prom", "s3cret ", "n"}, {"prom", "other", "n"},
					       {"grafana", "s3cret", "n"}, {"nobody", "s3cret", "n"},  {"", "", "n"}};
	check_all(a, wrong, 6, 1);
	stats_are(a, 7, 5, 6);
	static const char *const grafana[][3] = {{"grafana", "other", "y"}};
	check_all(a, grafana, 1, 2);
	check_all(a, right, 1, 1);
	stats_are(a, 8, 7, 6);
	/* The same wrong credentials again, as a flood or a misconfigured scraper sends them: refused
	 * from the cache, no bcrypt (before, ~70 ms each, one at a time: ~15 a second took both
	 * default workers). The right ones are still right. */
	check_all(a, wrong, 6, 100);
	check_all(a, right, 1, 1);
	stats_are(a, 8, 608, 606);
	/* A user and a password are one credential: their bytes shifted between them are another. */
	static const char *const shifted[][3] = {{"prom", "s3cret\n", "n"}, {"pro", "ms3cret", "n"}};
	check_all(a, shifted, 2, 1);
	assert_int_equal(serve_auth_stats(a).bcrypt, 10);
	serve_auth_free(a);
	/* Results are kept a short time only, right or wrong: after it, a bcrypt again. */
	assert_int_equal(serve_auth_new(users, 1, 0.2, &a), 0);
	static const char *const both[][3] = {{"prom", "s3cret", "y"}, {"prom", "wrong", "n"}};
	check_all(a, both, 2, 2);
	assert_int_equal(serve_auth_stats(a).bcrypt, 2);
	usleep(300 * 1000);
	check_all(a, both, 2, 1);
	assert_int_equal(serve_auth_stats(a).bcrypt, 4);
	serve_auth_free(a);
	/* A password too long to cache, and wrong. */
	assert_int_equal(serve_auth_new(users, 1, SERVE_AUTH_CACHE_SECONDS, &a), 0);
	char pw[300];
	memset(pw, 'x', sizeof(pw) - 1);
	pw[sizeof(pw) - 1] = '\0';
	assert_false(serve_auth_check(a, "prom", pw));
	serve_auth_free(a);
	serve_auth_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_file),
		cmocka_unit_test(errors_name_their_line),
		cmocka_unit_test(cipher_suites_lists),
		cmocka_unit_test(bcrypt_hash_forms),
		cmocka_unit_test(auth_checks_and_caches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
