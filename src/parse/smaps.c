#include "parse/smaps.h"

#include <errno.h>
#include <string.h>

#include "parse/parse.h"

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

int parse_smaps_mergeable(const char *buf, size_t len, struct smaps_mergeable *ret)
{
	struct smaps_mergeable r = {0};
	int64_t anon_kb = 0; /* of the current mapping */
	int mappings = 0;
	const char *end = buf + len;
	for (const char *line = buf; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			break; /* a cut last line carries no complete figure */
		if (!strncmp(line, "Anonymous:", 10)) {
			char num[32];
			const char *p = line + 10;
			while (p < nl && *p == ' ')
				p++;
			size_t k = 0;
			while (p < nl && *p >= '0' && *p <= '9' && k + 1 < sizeof(num))
				num[k++] = *p++;
			num[k] = '\0';
			if (!k || parse_i64(num, &anon_kb) < 0)
				return -EINVAL;
		} else if (!strncmp(line, "VmFlags:", 8)) {
			/* VmFlags ends a mapping's block. */
			r.anon_bytes += anon_kb * 1024;
			if (has_flag(line + 8, nl, "mg"))
				r.mergeable_anon_bytes += anon_kb * 1024;
			anon_kb = 0;
			mappings++;
		}
		line = nl + 1;
	}
	if (!mappings)
		return -EINVAL;
	*ret = r;
	return 0;
}
