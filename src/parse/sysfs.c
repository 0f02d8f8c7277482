#include "parse/parse.h"

#include <errno.h>
#include <string.h>

int parse_advisor_mode(const char *buf, char *ret, size_t cap)
{
	const char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;
	if (!open || !close || (size_t)(close - open - 1) >= cap || close == open + 1)
		return -EINVAL;
	memcpy(ret, open + 1, (size_t)(close - open - 1));
	ret[close - open - 1] = '\0';
	return 0;
}
