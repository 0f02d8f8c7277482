#include "parse/parse.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int parse_stat(const char *buf, size_t len, struct proc_stat *ret)
{
	/* "pid (comm) S ppid ...": comm may contain ") ", so the last ')' ends it. */
	const char *open = memchr(buf, '(', len);
	const char *close = NULL;
	for (const char *p = buf + len; p > buf; p--)
		if (p[-1] == ')') {
			close = p - 1;
			break;
		}
	if (!open || !close || close < open || !memchr(close, '\n', (size_t)(buf + len - close)))
		return -EINVAL;
	size_t cl = (size_t)(close - open - 1);
	if (cl >= sizeof(ret->comm))
		cl = sizeof(ret->comm) - 1;
	struct proc_stat st = {0};
	memcpy(st.comm, open + 1, cl);
	st.comm[cl] = '\0';
	/* Fields after comm, numbered from 3 (state) as in proc(5). */
	const char *p = close + 1, *end = buf + len;
	for (int field = 3; field <= 24; field++) {
		while (p < end && *p == ' ')
			p++;
		if (p >= end || *p == '\n')
			return -EINVAL;
		const char *s = p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		if (field == 3) {
			st.state = *s;
			continue;
		}
		char num[24];
		size_t l = (size_t)(p - s);
		if (l == 0 || l >= sizeof(num))
			return -EINVAL;
		memcpy(num, s, l);
		num[l] = '\0';
		int64_t v;
		if (parse_i64(num, &v) < 0)
			return -EINVAL;
		/* ppid is a pid, the times are the kernel's unsigned counters: a negative or
		 * oversized one is no value of theirs. */
		bool counter = field == 14 || field == 15 || field == 22;
		if ((field == 4 && (v < 0 || v > INT_MAX)) || (counter && v < 0))
			return -EINVAL;
		switch (field) {
		case 4: st.ppid = (pid_t)v; break;
		case 14: st.utime_ticks = (uint64_t)v; break;
		case 15: st.stime_ticks = (uint64_t)v; break;
		case 22: st.start_ticks = (uint64_t)v; break;
		case 24: st.rss_pages = (uint64_t)(v < 0 ? 0 : v); break;
		default: break;
		}
	}
	*ret = st;
	return 0;
}

int parse_schedstat_run(const char *buf, size_t len, int64_t *ret_run_ns)
{
	int64_t v = 0;
	size_t i = 0;
	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		int d = buf[i] - '0';
		if (v > (INT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	/* The field must end where the kernel ends it: a cut read is no number. */
	if (i == 0 || i == len || (buf[i] != ' ' && buf[i] != '\n'))
		return -EINVAL;
	*ret_run_ns = v;
	return 0;
}

int parse_cgroup(const char *buf, size_t len, char *ret, size_t cap)
{
	const char *p = buf, *end = buf + len, *best = NULL, *best_end = NULL;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		if (nl - p >= 3 && !memcmp(p, "0::", 3)) {
			best = p + 3;
			best_end = nl;
			break;
		}
		const char *c = memchr(p, ':', (size_t)(nl - p));
		if (c && (size_t)(nl - c) > 14 && !memcmp(c + 1, "name=systemd:", 13) && !best) {
			best = c + 14;
			best_end = nl;
		}
		p = nl + 1;
	}
	if (!cap)
		return -EINVAL;
	ret[0] = '\0';
	if (!best)
		return len && memchr(buf, '\n', len) ? 0 : -EINVAL;
	size_t l = (size_t)(best_end - best);
	if (l >= cap)
		return -ENAMETOOLONG;
	memcpy(ret, best, l);
	ret[l] = '\0';
	return 0;
}

static int hex_field(const char **p, const char *end, char stop, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;
	while (*p < end && isxdigit((unsigned char)**p)) {
		if (v >> 60)
			return -EINVAL;
		char c = **p;
		v = v * 16 + (uint64_t)(isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
		(*p)++;
	}
	if (*p == s || *p >= end || **p != stop)
		return -EINVAL;
	(*p)++;
	*ret = v;
	return 0;
}

int parse_maps_next(const char *buf, size_t len, size_t *pos, struct map_entry *ret)
{
	const char *end = buf + len;
	for (;;) {
		const char *p = buf + *pos;
		if (p >= end)
			return 0;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return 0; /* truncated last line */
		*pos = (size_t)(nl + 1 - buf);
		/* smaps interleaves "Key: value" lines; a mapping line starts with hex and '-'. */
		const char *q = p;
		while (q < nl && isxdigit((unsigned char)*q))
			q++;
		if (q == p || q >= nl || *q != '-')
			continue;
		struct map_entry m = {0};
		uint64_t dev_major, dev_minor;
		if (hex_field(&p, nl, '-', &m.start) || hex_field(&p, nl, ' ', &m.end))
			return -EINVAL;
		if (nl - p < 5 || p[4] != ' ')
			return -EINVAL;
		memcpy(m.perms, p, 4);
		m.perms[4] = '\0';
		p += 5;
		if (hex_field(&p, nl, ' ', &m.offset) || hex_field(&p, nl, ':', &dev_major) ||
		    hex_field(&p, nl, ' ', &dev_minor))
			return -EINVAL;
		const char *s = p;
		while (p < nl && isdigit((unsigned char)*p))
			p++;
		if (p == s)
			return -EINVAL;
		char num[24];
		size_t l = (size_t)(p - s) < sizeof(num) ? (size_t)(p - s) : sizeof(num) - 1;
		memcpy(num, s, l);
		num[l] = '\0';
		m.inode = strtoull(num, NULL, 10);
		if (dev_major > UINT_MAX || dev_minor > UINT_MAX)
			return -EINVAL;
		m.dev_major = (unsigned)dev_major;
		m.dev_minor = (unsigned)dev_minor;
		while (p < nl && *p == ' ')
			p++;
		m.path = p;
		m.path_len = (size_t)(nl - p);
		if (m.end < m.start)
			return -EINVAL;
		*ret = m;
		return 1;
	}
}

int parse_qemu_size(const char *s, size_t len, uint64_t unit_default, uint64_t *ret)
{
	char num[48];
	if (len == 0 || len >= sizeof(num) || memchr(s, '\0', len))
		return -EINVAL;
	memcpy(num, s, len);
	num[len] = '\0';
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)num[0]))
		return -EINVAL;
	/* Integers exactly (no float rounding for byte counts), fractions through a double. */
	unsigned long long whole = strtoull(num, &end, 10);
	double value = (double)whole;
	bool fraction = *end == '.';
	if (fraction) {
		value = strtod(num, &end);
		if (errno || end == num)
			return -EINVAL;
	}
	if (errno)
		return -ERANGE;
	uint64_t mult = unit_default;
	if (*end) {
		switch (tolower((unsigned char)*end)) {
		case 'b': mult = 1; break;
		case 'k': mult = 1ull << 10; break;
		case 'm': mult = 1ull << 20; break;
		case 'g': mult = 1ull << 30; break;
		case 't': mult = 1ull << 40; break;
		case 'p': mult = 1ull << 50; break;
		case 'e': mult = 1ull << 60; break;
		default: return -EINVAL;
		}
		end++;
		/* QEMU accepts "4G" and also "4GB"/"4GiB"-like spellings from some managers. */
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'b' || *end == 'B')
			end++;
		if (*end)
			return -EINVAL;
	}
	if (fraction) {
		double bytes = value * (double)mult;
		if (bytes < 0 || bytes >= 18446744073709551616.0)
			return -ERANGE;
		*ret = (uint64_t)bytes;
		return 0;
	}
	if (mult && whole > UINT64_MAX / mult)
		return -ERANGE;
	*ret = whole * mult;
	return 0;
}

/* The n-th space-separated field of [p, end) (0 first); false when the line has fewer. */
static bool nth_field(const char *p, const char *end, int n, const char **ret, size_t *ret_len)
{
	for (int i = 0;; i++) {
		while (p < end && *p == ' ')
			p++;
		const char *s = p;
		while (p < end && *p != ' ')
			p++;
		if (p == s)
			return false;
		if (i == n) {
			*ret = s;
			*ret_len = (size_t)(p - s);
			return true;
		}
	}
}

/* "pagesize=2M" among a mount's comma-separated options: bytes, 0 when absent or unreadable. */
static int64_t pagesize_option(const char *opts, size_t len)
{
	static const char key[] = "pagesize=";
	const char *p = opts, *end = opts + len;
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;
		uint64_t bytes;
		if ((size_t)(e - p) > sizeof(key) - 1 && !memcmp(p, key, sizeof(key) - 1) &&
		    parse_qemu_size(p + sizeof(key) - 1, (size_t)(e - p) - (sizeof(key) - 1), 1, &bytes) == 0 &&
		    bytes <= INT64_MAX)
			return (int64_t)bytes;
		p = e + 1;
	}
	return 0;
}

/* One mountinfo line: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS".
 * 1 with a hugetlbfs mount, 0 another mount, -EINVAL not a mount line. */
static int mountinfo_line(const char *p, const char *nl, struct hugetlbfs_mount *ret)
{
	const char *dev, *type, *opts;
	size_t dev_len, type_len, opts_len;
	const char *sep = NULL;
	for (const char *q = p; q + 3 <= nl && !sep; q++)
		if (q[0] == ' ' && q[1] == '-' && q[2] == ' ')
			sep = q + 3;
	if (!sep || !nth_field(p, sep, 2, &dev, &dev_len) || !nth_field(sep, nl, 0, &type, &type_len))
		return -EINVAL;
	char num[24];
	if (dev_len >= sizeof(num))
		return -EINVAL;
	memcpy(num, dev, dev_len);
	num[dev_len] = '\0';
	unsigned major, minor;
	char extra;
	if (sscanf(num, "%u:%u%c", &major, &minor, &extra) != 2)
		return -EINVAL;
	if (type_len != 9 || memcmp(type, "hugetlbfs", 9))
		return 0;
	*ret = (struct hugetlbfs_mount){.dev_major = major, .dev_minor = minor};
	if (nth_field(sep, nl, 2, &opts, &opts_len))
		ret->page_bytes = pagesize_option(opts, opts_len);
	return 1;
}

int parse_mountinfo_hugetlbfs(const char *buf, size_t len, struct hugetlbfs_mount *ret, size_t cap)
{
	const char *p = buf, *end = buf + len;
	int found = 0;
	bool any = false;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break; /* a truncated last line */
		struct hugetlbfs_mount m;
		int r = mountinfo_line(p, nl, &m);
		any |= r >= 0;
		if (r == 1 && (size_t)found < cap)
			ret[found++] = m;
		p = nl + 1;
	}
	return any ? found : -EINVAL;
}
