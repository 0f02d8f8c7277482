/* One QEMU option argument, QemuOpts "a=1,b=2" (",," a literal comma) or flat JSON
 * (qemu_opt_get, src/parse/cmdline/qemu_opts.c). The input as an argument: every value found fits its
 * buffer and is as long as returned. The input as a value: written into a QemuOpts argument
 * (commas doubled) and, when it is valid UTF-8, into a JSON one (quotes, backslashes and control
 * characters escaped) between other keys, it is read back exactly. */
#include <errno.h>

#include "fuzz.h"
#include "parse/json.h"
#include "parse/cmdline/qemu_opts.h"

static void lookups(const char *arg)
{
	static const struct { const char *implied, *key; } keys[] = {
		{"qom-type", "qom-type"}, {NULL, "id"}, {NULL, "size"}, {"size", "size"}, {"guest", "guest"},
		{"driver", "driver"}, {NULL, "memdev"}, {NULL, "mem-path"}, {"type", "memory-backend"},
		{NULL, "share"}, {NULL, "requested-size"},
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char value[128];
		memset(value, 'x', sizeof(value));
		for (size_t cap = 1; cap <= sizeof(value); cap += sizeof(value) - 1) {
			int n = qemu_opt_get(arg, keys[i].implied, keys[i].key, value, cap);
			FUZZ_CHECK(n >= 0 || n == -ENOENT || n == -EINVAL || n == -ENAMETOOLONG);
			if (n >= 0)
				FUZZ_CHECK((size_t)n < cap && fuzz_terminated(value, cap) && strlen(value) == (size_t)n);
		}
	}
}

static void round_trip(const char *value)
{
	size_t vl = strlen(value);
	if (vl >= 128)
		return;
	static struct fuzz_text text;
	char got[128];

	text.len = 0;
	fuzz_puts(&text, "id=ram0,size=");
	for (const char *p = value; *p; p++) {
		if (*p == ',')
			fuzz_puts(&text, ",,");
		else
			fuzz_put(&text, p, 1);
	}
	fuzz_puts(&text, ",share=on");
	fuzz_put(&text, "", 1);
	FUZZ_CHECK(qemu_opt_get(text.buf, NULL, "size", got, sizeof(got)) == (int)vl && !strcmp(got, value));
	FUZZ_CHECK(qemu_opt_get(text.buf, NULL, "share", got, sizeof(got)) == 2 && !strcmp(got, "on"));

	text.len = 0;
	fuzz_puts(&text, "{\"id\": \"ram0\", \"size\": \"");
	size_t start = text.len;
	for (const char *p = value; *p; p++) {
		if ((unsigned char)*p < 0x20) {
			char esc[8];
			snprintf(esc, sizeof(esc), "\\u%04x", (unsigned char)*p);
			fuzz_puts(&text, esc);
			continue;
		}
		if (*p == '"' || *p == '\\')
			fuzz_puts(&text, "\\");
		fuzz_put(&text, p, 1);
	}
	/* Only a value that is a JSON string (valid UTF-8, as QEMU's parser wants too) goes in. */
	fuzz_puts(&text, "\"");
	struct json_doc doc;
	if (json_parse(text.buf + start - 1, text.len - start + 1, &doc) < 0)
		return;
	json_free(&doc);
	fuzz_puts(&text, ", \"share\": true}");
	fuzz_put(&text, "", 1);
	FUZZ_CHECK(qemu_opt_get(text.buf, NULL, "size", got, sizeof(got)) == (int)vl && !strcmp(got, value));
	FUZZ_CHECK(qemu_opt_get(text.buf, NULL, "share", got, sizeof(got)) == 4 && !strcmp(got, "true"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	lookups(s);
	round_trip(s);
	free(s);
	return 0;
}
