#include "parse/ini.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

int ini_parse(const char *buf, size_t len, ini_handler fn, void *user, int *ret_line, char *err, size_t errcap)
{
	char section[64] = "", line[1024];
	int lineno = 0;
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		lineno++;
		*ret_line = lineno;
		if (n >= sizeof(line)) {
			snprintf(err, errcap, "line too long");
			return -EINVAL;
		}
		memcpy(line, buf + pos, n);
		line[n] = '\0';
		pos += n + (nl ? 1 : 0);
		if (memchr(line, '\0', n)) {
			snprintf(err, errcap, "binary data");
			return -EINVAL;
		}
		char *s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');
			if (!close || close[1] != '\0') {
				snprintf(err, errcap, "a section header is '[name]'");
				return -EINVAL;
			}
			*close = '\0';
			char *name = trim(s + 1);
			if (!*name || strlen(name) >= sizeof(section)) {
				snprintf(err, errcap, "bad section name");
				return -EINVAL;
			}
			snprintf(section, sizeof(section), "%s", name);
			continue;
		}
		char *eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errcap, "expected 'key = value', got '%.60s'", s);
			return -EINVAL;
		}
		*eq = '\0';
		char *key = trim(s), *value = trim(eq + 1);
		if (!*key) {
			snprintf(err, errcap, "missing key before '='");
			return -EINVAL;
		}
		/* A trailing comment after the value. */
		for (char *c = value; *c; c++)
			if ((*c == '#' || *c == ';') && (c == value || isspace((unsigned char)c[-1]))) {
				*c = '\0';
				value = trim(value);
				break;
			}
		if (!*value) {
			snprintf(err, errcap, "%s has no value", key);
			return -EINVAL;
		}
		int r = fn(user, section, key, value, err, errcap);
		if (r < 0)
			return r;
	}
	*ret_line = 0;
	return 0;
}
