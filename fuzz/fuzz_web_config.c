/* `vmhost serve --web-config` (web_config_parse, src/parse/http/web_config.c): a refused file names a
 * line of it and says why, and leaves the output untouched; an accepted one has both files when
 * it asks for TLS, versions TLS12..TLS13 in order, and users with distinct non-empty names
 * without ':' and valid bcrypt hashes. What was accepted, printed back with every value
 * double-quoted, parses to the same configuration. */
#include <errno.h>

#include "fuzz.h"
#include "parse/http/web_config.h"

static size_t count_lines(const char *buf, size_t len)
{
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';
	return lines + (len && buf[len - 1] != '\n');
}

/* A double-quoted YAML scalar; *line_len is how long it printed. */
static void quote(struct fuzz_text *t, const char *s, size_t *line_len)
{
	size_t start = t->len;
	fuzz_puts(t, "\"");
	for (; *s; s++) {
		const char *e = *s == '\\' ? "\\\\" : *s == '"' ? "\\\"" : *s == '\t' ? "\\t" : *s == '\n' ? "\\n"
			      : *s == '\r' ? "\\r" : NULL;
		if (e)
			fuzz_puts(t, e);
		else
			fuzz_put(t, s, 1);
	}
	fuzz_puts(t, "\"");
	*line_len = t->len - start;
}

static bool same(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct web_config c;
	memset(&c, 0x5a, sizeof(c));
	char err[128] = "";
	int line = -1;
	int r = web_config_parse(buf, size, &c, &line, err, sizeof(err));
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL);
		FUZZ_CHECK(line >= 1 && (size_t)line <= count_lines(buf, size));
		FUZZ_CHECK(err[0] && fuzz_terminated(err, sizeof(err)));
		FUZZ_CHECK(c.nusers == 0x5a5a5a5a5a5a5a5aull);
		return 0;
	}
	FUZZ_CHECK(r == 0 && line == 0);
	FUZZ_CHECK(c.min_version == WEB_TLS12 || c.min_version == WEB_TLS13);
	FUZZ_CHECK(c.max_version == WEB_TLS12 || c.max_version == WEB_TLS13);
	FUZZ_CHECK(!c.tls || (c.cert_file && c.key_file && c.min_version <= c.max_version));
	for (size_t i = 0; i < c.nusers; i++) {
		FUZZ_CHECK(c.users[i].name[0] && !strchr(c.users[i].name, ':'));
		FUZZ_CHECK(web_bcrypt_hash_ok(c.users[i].hash));
		FUZZ_CHECK(c.users[i].line >= 1 && (size_t)c.users[i].line <= count_lines(buf, size));
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(c.users[i].name, c.users[j].name));
	}

	static struct fuzz_text printed;
	printed.len = 0;
	size_t longest = 0, n;
	if (c.tls) {
		fuzz_puts(&printed, "tls_server_config:\n  cert_file: ");
		quote(&printed, c.cert_file, &n);
		longest = n > longest ? n : longest;
		fuzz_puts(&printed, "\n  key_file: ");
		quote(&printed, c.key_file, &n);
		longest = n > longest ? n : longest;
		fuzz_printf(&printed, "\n  min_version: %s\n  max_version: %s\n", web_tls_version_name(c.min_version),
			    web_tls_version_name(c.max_version));
	}
	fuzz_puts(&printed, "basic_auth_users:\n");
	for (size_t i = 0; i < c.nusers; i++) {
		fuzz_puts(&printed, "  ");
		quote(&printed, c.users[i].name, &n);
		longest = n + 80 > longest ? n + 80 : longest;
		fuzz_printf(&printed, ": %s\n", c.users[i].hash);
	}
	if (longest < 4000) { /* the parser's line limit, quoting included */
		struct web_config again;
		FUZZ_CHECK(web_config_parse(printed.buf, printed.len, &again, &line, err, sizeof(err)) == 0);
		FUZZ_CHECK(again.tls == c.tls && same(again.cert_file, c.cert_file) && same(again.key_file, c.key_file));
		FUZZ_CHECK(!c.tls || (again.min_version == c.min_version && again.max_version == c.max_version));
		FUZZ_CHECK(again.nusers == c.nusers);
		for (size_t i = 0; i < c.nusers; i++)
			FUZZ_CHECK(!strcmp(again.users[i].name, c.users[i].name) && !strcmp(again.users[i].hash, c.users[i].hash));
		web_config_free(&again);
	}
	web_config_free(&c);
	return 0;
}
