/* The Accept header of a /metrics request (prom_negotiate, src/net/accept.c). The answer is one
 * of the two formats and depends on the media ranges, not on how they are written: the order
 * of two lists, an added range with q=0, an unrelated type, or the letters' case change
 * nothing. The input is one header, or two lists split at its first NUL. */
#include <ctype.h>

#include "fuzz.h"
#include "net/accept.h"

static enum prom_format negotiate(const char *a, const char *b, const char *c)
{
	static struct fuzz_text text;
	text.len = 0;
	fuzz_puts(&text, a);
	fuzz_puts(&text, b);
	fuzz_puts(&text, c);
	fuzz_put(&text, "", 1);
	enum prom_format f = prom_negotiate(text.buf);
	FUZZ_CHECK(f == PROM_TEXT || f == PROM_OPENMETRICS);
	return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0; /* longer than an HTTP server lets a header be */
	FUZZ_CHECK(prom_negotiate(NULL) == PROM_TEXT);
	char *first = fuzz_cstring(data, size);
	size_t l = strlen(first);
	char *second = fuzz_cstring(data + (l < size ? l + 1 : size), l < size ? size - l - 1 : 0);

	if (l < size) {
		enum prom_format ab = negotiate(first, ",", second);
		FUZZ_CHECK(negotiate(second, ",", first) == ab);
	}
	enum prom_format f = negotiate(first, "", "");
	FUZZ_CHECK(negotiate(first, ",application/openmetrics-text;q=0", "") == f);
	FUZZ_CHECK(negotiate("text/html,", first, "") == f);
	FUZZ_CHECK(negotiate(first, ", text/html;q=1", "") == f);
	for (char *p = first; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	FUZZ_CHECK(negotiate(first, "", "") == f);
	free(first);
	free(second);
	return 0;
}
