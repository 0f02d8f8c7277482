/* INI files, `vmhost ksm tune --config` (ini_parse, src/parse/ini.c). Every key handed out has
 * its section (shorter than 64 bytes), a non-empty key without '=' and a non-empty value, all
 * trimmed and on one line. An error names a line of the input and says why; success leaves the
 * line 0. What was handed out, printed back as "[section]" and "key=value" lines, parses to the
 * same keys in the same order. */
#include <ctype.h>
#include <errno.h>

#include "fuzz.h"
#include "parse/ini.h"

struct keys {
	struct fuzz_text text; /* "section\0key\0value\0" per key */
	size_t count;
};

static bool trimmed(const char *s)
{
	size_t l = strlen(s);
	return !l || (!isspace((unsigned char)s[0]) && !isspace((unsigned char)s[l - 1]));
}

static int collect(void *user, const char *section, const char *key, const char *value, char *err, size_t errcap)
{
	(void)err;
	(void)errcap;
	struct keys *k = user;
	FUZZ_CHECK(strlen(section) < 64 && trimmed(section) && !strchr(section, '\n'));
	FUZZ_CHECK(*key && trimmed(key) && !strchr(key, '=') && !strchr(key, '\n'));
	FUZZ_CHECK(*value && trimmed(value) && !strchr(value, '\n'));
	fuzz_put(&k->text, section, strlen(section) + 1);
	fuzz_put(&k->text, key, strlen(key) + 1);
	fuzz_put(&k->text, value, strlen(value) + 1);
	k->count++;
	return 0;
}

static size_t count_lines(const char *buf, size_t len)
{
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';
	return lines + (len && buf[len - 1] != '\n');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	static struct keys first, second;
	first.text.len = second.text.len = 0;
	first.count = second.count = 0;
	char err[128] = "";
	int line = -1;
	int r = ini_parse(buf, size, collect, &first, &line, err, sizeof(err));
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL);
		FUZZ_CHECK(line >= 1 && (size_t)line <= count_lines(buf, size));
		FUZZ_CHECK(err[0] && fuzz_terminated(err, sizeof(err)));
		return 0;
	}
	FUZZ_CHECK(r == 0 && line == 0);

	static struct fuzz_text printed;
	printed.len = 0;
	const char *section = "";
	for (const char *p = first.text.buf; p < first.text.buf + first.text.len;) {
		const char *s = p, *k = s + strlen(s) + 1, *v = k + strlen(k) + 1;
		p = v + strlen(v) + 1;
		if (strcmp(s, section)) {
			fuzz_printf(&printed, "[%s]\n", s);
			section = s;
		}
		fuzz_printf(&printed, "%s=%s\n", k, v);
	}
	FUZZ_CHECK(ini_parse(printed.buf, printed.len, collect, &second, &line, err, sizeof(err)) == 0);
	FUZZ_CHECK(second.count == first.count && second.text.len == first.text.len);
	FUZZ_CHECK(!memcmp(first.text.buf, second.text.buf, first.text.len));
	return 0;
}
