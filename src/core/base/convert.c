/* Text to numbers and booleans for options and config files (core/base/convert.h). */
#include "core/base/convert.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int convert_number(const char *s, double lo, double hi, double *ret)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -EINVAL;
	*ret = v;
	return 0;
}

int convert_whole(const char *s, int64_t lo, int64_t hi, int64_t *ret)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*ret = v;
	return 0;
}

int convert_bool(const char *s, bool *ret)
{
	static const char *const yes[] = {"yes", "true", "on", "1"}, *const no[] = {"no", "false", "off", "0"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i]) || !strcmp(s, no[i])) {
			*ret = !strcmp(s, yes[i]);
			return 0;
		}
	}
	return -EINVAL;
}
