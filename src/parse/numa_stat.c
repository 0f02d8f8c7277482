#include "parse/numa_stat.h"

#include <errno.h>
#include <stdbool.h>
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

/* A decimal number of [p, e) whole; -1 when it is none or overflows. */
static int64_t whole_number(const char *p, const char *e)
{
	int64_t v = 0;
	if (p == e)
		return -1;
	for (; p < e; p++) {
		if (*p < '0' || *p > '9' || v > (INT64_MAX - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

/* One numa_maps line [p, nl): its pages per node into pages[] (highest node + 1 into *n), its
 * page size and whether it is hugetlbfs. -EINVAL when malformed. */
static int numa_maps_line(const char *p, const char *nl, int64_t *pages, size_t *n, int64_t *page_kb, bool *huge)
{
	*n = 0;
	*page_kb = -1;
	*huge = false;
	while (p < nl) {
		const char *t = p, *te = memchr(p, ' ', (size_t)(nl - p));
		te = te ? te : nl;
		p = te + 1;
		const char *eq = memchr(t, '=', (size_t)(te - t));
		if (te - t == 4 && !memcmp(t, "huge", 4))
			*huge = true;
		if (!eq)
			continue;
		if (eq - t == 17 && !memcmp(t, "kernelpagesize_kB", 17)) {
			if ((*page_kb = whole_number(eq + 1, te)) <= 0)
				return -EINVAL;
		} else if (t[0] == 'N' && eq > t + 1) {
			int64_t node = whole_number(t + 1, eq), v = whole_number(eq + 1, te);
			if (node < 0 || node >= NUMA_NODES_MAX || v < 0)
				return -EINVAL;
			pages[node] = v;
			*n = (size_t)node + 1 > *n ? (size_t)node + 1 : *n;
		}
	}
	return *n && *page_kb < 0 ? -EINVAL : 0;
}

int parse_numa_maps(const char *buf, size_t len, struct numa_maps_sum *ret)
{
	struct numa_maps_sum sum = {0};
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return -EINVAL; /* a cut line */
		int64_t pages[NUMA_NODES_MAX] = {0}, page_kb;
		size_t n;
		bool huge;
		if (numa_maps_line(p, nl, pages, &n, &page_kb, &huge) < 0)
			return -EINVAL;
		for (size_t i = 0; i < n; i++) {
			if (pages[i] > INT64_MAX / 1024 / page_kb || sum.bytes[i] > INT64_MAX - pages[i] * page_kb * 1024)
				return -EINVAL;
			sum.bytes[i] += pages[i] * page_kb * 1024;
			if (huge)
				sum.hugetlb_bytes[i] += pages[i] * page_kb * 1024;
		}
		sum.nnodes = n > sum.nnodes ? n : sum.nnodes;
		p = nl + 1;
	}
	*ret = sum;
	return 0;
}
