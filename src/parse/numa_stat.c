#include "parse/numa_stat.h"

#include <errno.h>
#include <string.h>

/* " N0=4096 N1=0" up to the line's end into add[], the highest node + 1 into *n. */
static int node_figures(const char *p, const char *nl, int64_t *add, size_t *n)
{
	while (p < nl) {
		while (p < nl && *p == ' ')
			p++;
		if (p == nl)
			break;
		if (*p != 'N')
			return -EINVAL;
		int64_t node = 0, v = 0;
		for (p++; p < nl && *p >= '0' && *p <= '9'; p++)
			if ((node = node * 10 + (*p - '0')) >= NUMA_NODES_MAX)
				return -EINVAL;
		if (p == nl || *p != '=' || ++p == nl || *p < '0' || *p > '9')
			return -EINVAL;
		for (; p < nl && *p >= '0' && *p <= '9'; p++) {
			if (v > (INT64_MAX - (*p - '0')) / 10)
				return -EINVAL;
			v = v * 10 + (*p - '0');
		}
		if (p < nl && *p != ' ')
			return -EINVAL;
		add[node] = v;
		if ((size_t)node + 1 > *n)
			*n = (size_t)node + 1;
	}
	return 0;
}

int parse_numa_stat(const char *buf, size_t len, const char *kind, int64_t *nodes, size_t *ret_n)
{
	size_t kl = strlen(kind);
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return -ENOENT; /* a cut line is no figure */
		if ((size_t)(nl - p) > kl && !memcmp(p, kind, kl) && (p[kl] == ' ' || p[kl] == '=')) {
			const char *q = p + kl;
			if (*q == '=') /* v1: the total first */
				while (q < nl && *q != ' ')
					q++;
			int64_t add[NUMA_NODES_MAX] = {0};
			size_t n = 0;
			if (node_figures(q, nl, add, &n) < 0)
				return -EINVAL;
			for (size_t i = 0; i < n; i++)
				nodes[i] += add[i];
			if (n > *ret_n)
				*ret_n = n;
			return 0;
		}
		p = nl + 1;
	}
	return -ENOENT;
}

int parse_cpus_allowed(const char *buf, size_t len, uint64_t *bits, size_t nbits)
{
	static const char key[] = "Cpus_allowed_list:";
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		if ((size_t)(eol - p) > sizeof(key) - 1 && !memcmp(p, key, sizeof(key) - 1)) {
			const char *v = p + sizeof(key) - 1;
			while (v < eol && (*v == '\t' || *v == ' '))
				v++;
			int r = parse_cpu_list(v, (size_t)(eol - v), bits, nbits);
			return r < 0 ? r : 0;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return -ENOENT;
}
