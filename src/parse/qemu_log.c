#include "parse/qemu_log.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

static bool is_warning(const char *line, size_t n)
{
	static const char word[] = "warning:";
	for (size_t i = 0; i + sizeof(word) - 1 <= n; i++)
		if (!memcmp(line + i, word, sizeof(word) - 1))
			return true;
	return false;
}

int parse_qemu_log_error(const char *text, size_t len, char *buf, size_t cap)
{
	if (cap)
		buf[0] = '\0';
	for (size_t pos = 0; pos < len;) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		pos += n + 1;
		while (n && (line[n - 1] == '\r' || line[n - 1] == '\0'))
			n--;
		if (!n || is_warning(line, n))
			continue;
		if (cap) {
			size_t copy = n < cap ? n : cap - 1;
			memcpy(buf, line, copy);
			buf[copy] = '\0';
		}
		return n > INT_MAX ? INT_MAX : (int)n;
	}
	return -ENOENT;
}
