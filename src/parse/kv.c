#include "parse/parse.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int parse_i64(const char *s, int64_t *ret)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return -EINVAL;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == s)
		return -EINVAL;
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Parses "<digits>[ kB]" at p (bounded by end); stores bytes (kB scaled). */
static int parse_value(const char *p, const char *end, bool may_be_negative, int64_t *ret)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	bool neg = may_be_negative && p < end && *p == '-';
	if (neg)
		p++;
	if (p == end || !isdigit((unsigned char)*p))
		return -EINVAL;
	int64_t v = 0;
	while (p < end && isdigit((unsigned char)*p)) {
		int d = *p++ - '0';
		if (v > (INT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (end - p >= 2 && p[0] == 'k' && p[1] == 'B') {
		if (v > INT64_MAX / 1024)
			return -ERANGE;
		v *= 1024;
		p += 2;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p != end)
		return -EINVAL;
	*ret = neg ? -v : v;
	return 0;
}

int parse_kv(const char *buf, size_t len, const struct kv_field *fields, size_t nfields, void *out)
{
	for (size_t i = 0; i < nfields; i++)
		*(maybe_i64 *)((char *)out + fields[i].offset) = UNKNOWN;
	int found = 0;
	const char *p = buf, *bufend = buf + len;
	while (p < bufend) {
		const char *nl = memchr(p, '\n', (size_t)(bufend - p));
		if (!nl)
			break; /* truncated last line */
		const char *k = p, *ke = p;
		while (ke < nl && *ke != ':' && *ke != ' ' && *ke != '\t')
			ke++;
		size_t klen = (size_t)(ke - k);
		const char *v = ke < nl && *ke == ':' ? ke + 1 : ke;
		for (size_t i = 0; i < nfields && klen; i++) {
			if (strlen(fields[i].key) != klen || memcmp(fields[i].key, k, klen))
				continue;
			maybe_i64 *f = (maybe_i64 *)((char *)out + fields[i].offset);
			int64_t value;
			if (!f->known && parse_value(v, nl, fields[i].may_be_negative, &value) == 0) {
				*f = MAYBE(value);
				found++;
			}
			break;
		}
		p = nl + 1;
	}
	return found;
}

#define F(type, key, member) {key, offsetof(type, member), false}
#define TABLE(fields) {fields, sizeof(fields) / sizeof(fields[0])}

static const struct kv_field meminfo_fields[] = {
	F(struct meminfo, "MemTotal", mem_total),       F(struct meminfo, "MemFree", mem_free),
	F(struct meminfo, "MemAvailable", mem_available), F(struct meminfo, "Buffers", buffers),
	F(struct meminfo, "Cached", cached),             F(struct meminfo, "Shmem", shmem),
	F(struct meminfo, "SwapTotal", swap_total),      F(struct meminfo, "SwapFree", swap_free),
	F(struct meminfo, "AnonPages", anon_pages),      F(struct meminfo, "AnonHugePages", anon_huge_pages),
	F(struct meminfo, "HugePages_Total", hugepages_total),
	F(struct meminfo, "HugePages_Free", hugepages_free),
	F(struct meminfo, "Hugepagesize", hugepage_size), F(struct meminfo, "Hugetlb", hugetlb),
};
const struct kv_table meminfo_keys = TABLE(meminfo_fields);

static const struct kv_field status_fields[] = {
	F(struct proc_status, "VmRSS", vm_rss),       F(struct proc_status, "RssAnon", rss_anon),
	F(struct proc_status, "RssFile", rss_file),   F(struct proc_status, "RssShmem", rss_shmem),
	F(struct proc_status, "VmSwap", vm_swap),     F(struct proc_status, "VmPTE", vm_pte),
	F(struct proc_status, "Threads", threads),   F(struct proc_status, "HugetlbPages", hugetlb_pages),
};
const struct kv_table status_keys = TABLE(status_fields);

static const struct kv_field ksm_stat_fields[] = {
	F(struct ksm_stat, "ksm_rmap_items", rmap_items),
	F(struct ksm_stat, "ksm_zero_pages", zero_pages),
	F(struct ksm_stat, "ksm_merging_pages", merging_pages),
	/* The kernel's profit is a signed long: what KSM saved minus its rmap_items' cost. */
	{"ksm_process_profit", offsetof(struct ksm_stat, process_profit), true},
};
const struct kv_table ksm_stat_keys = TABLE(ksm_stat_fields);

static const struct kv_field smaps_rollup_fields[] = {
	F(struct smaps_rollup, "Rss", rss),
	F(struct smaps_rollup, "Pss", pss),
	F(struct smaps_rollup, "Pss_Dirty", pss_dirty),
	F(struct smaps_rollup, "Pss_Anon", pss_anon),
	F(struct smaps_rollup, "Pss_File", pss_file),
	F(struct smaps_rollup, "Pss_Shmem", pss_shmem),
	F(struct smaps_rollup, "Shared_Clean", shared_clean),
	F(struct smaps_rollup, "Shared_Dirty", shared_dirty),
	F(struct smaps_rollup, "Private_Clean", private_clean),
	F(struct smaps_rollup, "Private_Dirty", private_dirty),
	F(struct smaps_rollup, "Anonymous", anonymous),
	F(struct smaps_rollup, "KSM", ksm),
	F(struct smaps_rollup, "Swap", swap),
	F(struct smaps_rollup, "SwapPss", swap_pss),
	F(struct smaps_rollup, "Private_Hugetlb", private_hugetlb),
	F(struct smaps_rollup, "Shared_Hugetlb", shared_hugetlb),
	F(struct smaps_rollup, "AnonHugePages", anon_huge_pages),
};
const struct kv_table smaps_rollup_keys = TABLE(smaps_rollup_fields);

int parse_meminfo(const char *buf, size_t len, struct meminfo *ret)
{
	int n = parse_kv(buf, len, meminfo_keys.fields, meminfo_keys.n, ret);
	return ret->mem_total.known ? n : -EINVAL;
}

/* The first number of a complete line "Key:\tN\t..." (Uid's real id), unknown when there is none. */
static maybe_i64 first_of_line(const char *buf, size_t len, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = buf, *end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break; /* a cut line is no figure */
		if ((size_t)(nl - p) > kl && !memcmp(p, key, kl)) {
			const char *q = p + kl;
			while (q < nl && (*q == '\t' || *q == ' '))
				q++;
			int64_t v = 0;
			const char *digits = q;
			while (q < nl && *q >= '0' && *q <= '9' && v <= (INT64_MAX - 9) / 10)
				v = v * 10 + (*q++ - '0');
			bool ends = q == nl || *q == '\t' || *q == ' ';
			return q > digits && ends ? MAYBE(v) : UNKNOWN;
		}
		p = nl + 1;
	}
	return UNKNOWN;
}

int parse_status(const char *buf, size_t len, struct proc_status *ret)
{
	int n = parse_kv(buf, len, status_keys.fields, status_keys.n, ret);
	ret->uid = first_of_line(buf, len, "Uid:");
	ret->name[0] = '\0';
	if (len > 5 && !memcmp(buf, "Name:", 5)) {
		const char *p = buf + 5, *nl = memchr(buf, '\n', len);
		while (nl && p < nl && (*p == '\t' || *p == ' '))
			p++;
		size_t l = nl ? (size_t)(nl - p) : 0;
		if (l >= sizeof(ret->name))
			l = sizeof(ret->name) - 1;
		memcpy(ret->name, p, l);
		ret->name[l] = '\0';
	}
	/* Kernel threads have no Vm* lines: a valid status with no memory fields. */
	return ret->name[0] || n > 0 ? n : -EINVAL;
}

int parse_ksm_stat(const char *buf, size_t len, struct ksm_stat *ret)
{
	int n = parse_kv(buf, len, ksm_stat_keys.fields, ksm_stat_keys.n, ret);
	ret->merge_any = UNKNOWN;
	ret->mergeable = UNKNOWN;
	static const char *const flags[] = {"ksm_merge_any", "ksm_mergeable"};
	maybe_i64 *dest[] = {&ret->merge_any, &ret->mergeable};
	for (size_t i = 0; i < 2; i++) {
		const char *p = buf, *end = buf + len;
		size_t kl = strlen(flags[i]);
		/* As in parse_kv: the first line that reads as yes or no wins. */
		while (p < end && !dest[i]->known) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl)
				break;
			if ((size_t)(nl - p) > kl && !memcmp(p, flags[i], kl) && (p[kl] == ' ' || p[kl] == ':')) {
				const char *v = p + kl;
				while (v < nl && (*v == ':' || *v == ' ' || *v == '\t'))
					v++;
				if (nl - v == 3 && !memcmp(v, "yes", 3))
					*dest[i] = MAYBE(1);
				else if (nl - v == 2 && !memcmp(v, "no", 2))
					*dest[i] = MAYBE(0);
			}
			p = nl + 1;
		}
		n += dest[i]->known;
	}
	return n > 0 ? n : -EINVAL;
}

int parse_smaps_rollup(const char *buf, size_t len, struct smaps_rollup *ret)
{
	int n = parse_kv(buf, len, smaps_rollup_keys.fields, smaps_rollup_keys.n, ret);
	return ret->pss.known && ret->rss.known ? n : -EINVAL;
}

int parse_sysfs_choice(const char *buf, char *ret, size_t cap)
{
	const char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;
	if (!open || !close || close == open + 1 || (size_t)(close - open - 1) >= cap)
		return -EINVAL;
	memcpy(ret, open + 1, (size_t)(close - open - 1));
	ret[close - open - 1] = '\0';
	return 0;
}

/* A decimal number at buf[*i] (digits only, at most 9); advances *i. -1 when there is none. */
static long cpu_number(const char *buf, size_t len, size_t *i)
{
	long v = 0;
	size_t start = *i;
	while (*i < len && buf[*i] >= '0' && buf[*i] <= '9' && *i - start < 9)
		v = v * 10 + (buf[(*i)++] - '0');
	return *i == start || (*i < len && buf[*i] >= '0' && buf[*i] <= '9') ? -1 : v;
}

int parse_cpu_list(const char *buf, size_t len, uint64_t *bits, size_t nbits)
{
	long n = 0;
	size_t i = 0;
	while (i < len && buf[i] != '\n') {
		long a = cpu_number(buf, len, &i), b = a;
		if (a >= 0 && i < len && buf[i] == '-') {
			i++;
			b = cpu_number(buf, len, &i);
		}
		if (a < 0 || b < a || b - a > 65536)
			return -EINVAL;
		if (bits && (size_t)b >= nbits)
			return -ERANGE;
		for (long c = a; bits && c <= b; c++)
			bits[c / 64] |= UINT64_C(1) << (c % 64);
		n += b - a + 1;
		if (n > 1 << 20)
			return -ERANGE;
		if (i < len && buf[i] == ',')
			i++;
		else if (i < len && buf[i] != '\n')
			return -EINVAL;
	}
	return n ? (int)n : -EINVAL;
}

int parse_cpu_list_count(const char *buf, size_t len) { return parse_cpu_list(buf, len, NULL, 0); }

int parse_hugepages_dir(const char *name, int64_t *ret_bytes)
{
	static const char prefix[] = "hugepages-";
	size_t plen = sizeof(prefix) - 1, len = strlen(name);
	if (len <= plen + 2 || memcmp(name, prefix, plen) || strcmp(name + len - 2, "kB"))
		return -EINVAL;
	int64_t kb = 0;
	for (const char *p = name + plen; p < name + len - 2; p++) {
		if (!isdigit((unsigned char)*p) || kb > INT64_MAX / 10 / 1024)
			return -EINVAL;
		kb = kb * 10 + (*p - '0');
	}
	if (kb <= 0)
		return -EINVAL;
	*ret_bytes = kb * 1024;
	return 0;
}
