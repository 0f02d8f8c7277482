#include "net/accept.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The q parameter of one media range ("type/sub;a=b;q=0.5"), 1 when absent. */
static double media_q(const char *params, size_t n)
{
	const char *end = params + n;
	for (const char *s = params; s < end;) {
		while (s < end && (*s == ';' || *s == ' ' || *s == '\t'))
			s++;
		const char *e = memchr(s, ';', (size_t)(end - s));
		if (!e)
			e = end;
		if (e - s >= 2 && (s[0] == 'q' || s[0] == 'Q') && s[1] == '=') {
			char num[16];
			size_t l = (size_t)(e - s - 2);
			if (l >= sizeof(num))
				return 0;
			memcpy(num, s + 2, l);
			num[l] = '\0';
			char *stop;
			double q = strtod(num, &stop);
			while (*stop == ' ' || *stop == '\t')
				stop++;
			return *stop || !(q >= 0 && q <= 1) ? 0 : q;
		}
		s = e;
	}
	return 1;
}

enum prom_format prom_negotiate(const char *accept)
{
	if (!accept)
		return PROM_TEXT;
	double om_q = 0, text_q = 0;
	for (const char *s = accept; *s;) {
		while (*s == ',' || *s == ' ' || *s == '\t')
			s++;
		const char *e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		const char *semi = memchr(s, ';', (size_t)(e - s));
		const char *type_end = semi ? semi : e;
		while (type_end > s && (type_end[-1] == ' ' || type_end[-1] == '\t'))
			type_end--;
		size_t tl = (size_t)(type_end - s);
		double q = semi ? media_q(semi, (size_t)(e - semi)) : 1;
		if (tl == 28 && !strncasecmp(s, "application/openmetrics-text", tl))
			om_q = fmax(om_q, q);
		else if ((tl == 10 && !strncasecmp(s, "text/plain", tl)) || (tl == 6 && !strncasecmp(s, "text/*", tl)) ||
			 (tl == 3 && !strncmp(s, "*/*", tl)))
			text_q = fmax(text_q, q);
		s = e;
	}
	return om_q > 0 && om_q >= text_q ? PROM_OPENMETRICS : PROM_TEXT;
}
