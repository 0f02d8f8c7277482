#include "parse/smaps.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>


/* True when the VmFlags line (after "VmFlags:") holds the two-letter flag. */
static bool has_flag(const char *p, const char *end, const char *flag)
{
	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		const char *w = p;
		while (p < end && *p != ' ')
			p++;
		if (p - w == 2 && w[0] == flag[0] && w[1] == flag[1])
			return true;
	}
	return false;
}

/* True when the line [p, end) starts with key: never a read past the line (the text may end
 * there, without a NUL). */
static bool starts(const char *p, const char *end, const char *key)
{
	size_t n = strlen(key);
	return (size_t)(end - p) >= n && !memcmp(p, key, n);
}

/* A size line's kB as bytes: 0, -EINVAL without digits, -ERANGE beyond int64_t bytes. */
static int kb_bytes(const char *p, const char *end, int64_t *ret)
{
	while (p < end && *p == ' ')
		p++;
	if (p == end || *p < '0' || *p > '9')
		return -EINVAL;
	int64_t kb = 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		if (__builtin_mul_overflow(kb, 10, &kb) || __builtin_add_overflow(kb, *p - '0', &kb))
			return -ERANGE;
	return __builtin_mul_overflow(kb, 1024, ret) ? -ERANGE : 0;
}

int parse_smaps_mergeable(const char *buf, size_t len, struct smaps_mergeable *ret)
{
	struct smaps_mergeable r = {0};
	int64_t anon = 0; /* bytes, of the current mapping */
	int mappings = 0;
	const char *end = buf + len;
	for (const char *line = buf; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			break; /* a cut last line carries no complete figure */
		if (starts(line, nl, "Anonymous:")) {
			int e = kb_bytes(line + 10, nl, &anon);
			if (e < 0)
				return e;
		} else if (starts(line, nl, "VmFlags:")) {
			/* VmFlags ends a mapping's block. */
			if (__builtin_add_overflow(r.anon_bytes, anon, &r.anon_bytes) ||
			    (has_flag(line + 8, nl, "mg") &&
			     __builtin_add_overflow(r.mergeable_anon_bytes, anon, &r.mergeable_anon_bytes)))
				return -ERANGE;
			anon = 0;
			mappings++;
		}
		line = nl + 1;
	}
	if (!mappings)
		return -EINVAL;
	*ret = r;
	return 0;
}
