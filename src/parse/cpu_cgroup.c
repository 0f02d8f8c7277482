#include "parse/cpu_cgroup.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse/elements.h"

/* A decimal u64 at *p (advanced); -EINVAL when there is none or it overflows. */
static int take_u64(const char **p, const char *end, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;
	while (*p < end && isdigit((unsigned char)**p)) {
		unsigned d = (unsigned)(**p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
		(*p)++;
	}
	if (*p == s)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_schedstat(const char *buf, size_t len, struct schedstat *ret)
{
	const char *p = buf, *end = buf + len;
	uint64_t run, wait;
	if (take_u64(&p, end, &run) < 0 || p >= end || *p != ' ')
		return -EINVAL;
	p++;
	if (take_u64(&p, end, &wait) < 0 || p >= end || *p != ' ')
		return -EINVAL;
	*ret = (struct schedstat){.run_ns = run, .delay_ns = wait};
	return 0;
}

int parse_sched_wait_sum(const char *buf, size_t len, uint64_t *ret_ns)
{
	static const char *const keys[] = {"wait_sum", "se.statistics.wait_sum"};
	for (const char *line = buf, *end = buf + len; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *stop = nl ? nl : end;
		const char *colon = memchr(line, ':', (size_t)(stop - line));
		size_t klen = 0;
		while (colon && line + klen < colon && line[klen] != ' ')
			klen++;
		for (size_t k = 0; colon && k < 2; k++) {
			if (klen != strlen(keys[k]) || memcmp(line, keys[k], klen))
				continue;
			char num[48];
			const char *v = colon + 1;
			while (v < stop && *v == ' ')
				v++;
			size_t n = (size_t)(stop - v);
			if (!n || n >= sizeof(num) || memchr(v, '\0', n))
				return -EINVAL;
			memcpy(num, v, n);
			num[n] = '\0';
			char *after;
			double ms = strtod(num, &after);
			if (after == num || *after || !(ms >= 0) || ms > 1e12) /* 31 years: ns fit 64 bits */
				return -EINVAL;
			*ret_ns = (uint64_t)(ms * 1e6 + 0.5);
			return 0;
		}
		line = nl ? nl + 1 : end;
	}
	return -ENOENT;
}

/* The index after an exact prefix, ending the name. */
static bool index_after(const char *s, const char *prefix, int *ret)
{
	size_t l = strlen(prefix);
	if (strncmp(s, prefix, l) || !isdigit((unsigned char)s[l]))
		return false;
	char *end;
	long v = strtol(s + l, &end, 10);
	if (v < 0 || v > 65535)
		return false;
	bool qemu = !strcmp(prefix, "CPU "); /* QEMU always names the accelerator: "CPU 0/KVM" */
	if (qemu ? *end == '/' && end[1] : *end == '\0') {
		*ret = (int)v;
		return true;
	}
	return false;
}

bool parse_vcpu_thread_name(const char *comm, int *ret_index)
{
	static const char *const prefixes[] = {"CPU ", "vcpu", "fc_vcpu ", "crosvm_vcpu"};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (index_after(comm, prefixes[i], ret_index))
			return true;
	return false;
}

/* Whether a comma-separated controller list holds name. */
static bool has_controller(const char *list, size_t len, const char *name)
{
	size_t l = strlen(name);
	for (const char *p = list, *end = list + len; p < end;) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		const char *e = c ? c : end;
		if ((size_t)(e - p) == l && !memcmp(p, name, l))
			return true;
		p = e + 1;
	}
	return false;
}

int parse_cgroup_controller(const char *buf, size_t len, const char *controller, char *ret, size_t cap)
{
	if (!cap)
		return -EINVAL;
	ret[0] = '\0';
	for (const char *p = buf, *end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return -EINVAL; /* truncated */
		const char *c1 = memchr(p, ':', (size_t)(nl - p));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(nl - c1 - 1)) : NULL;
		if (!c2)
			return -EINVAL;
		if (has_controller(c1 + 1, (size_t)(c2 - c1 - 1), controller)) {
			size_t l = (size_t)(nl - c2 - 1);
			if (l >= cap)
				return -ENAMETOOLONG;
			memcpy(ret, c2 + 1, l);
			ret[l] = '\0';
			return 0;
		}
		p = nl + 1;
	}
	return 0;
}

bool parse_cgroup_vm_scope(const char *path, char *scope, size_t cap)
{
	static const char *const markers[] = {"/machine.slice/machine-", "/qemu.slice/", "/machine/"};
	static const char *const suffixes[] = {".scope", ".scope", ".libvirt-qemu"};
	for (size_t i = 0; i < ELEMENTSOF(markers); i++) {
		const char *m = strstr(path, markers[i]);
		if (!m)
			continue;
		const char *end = strstr(m + strlen(markers[i]), suffixes[i]);
		if (!end)
			continue;
		end += strlen(suffixes[i]);
		if (*end && *end != '/')
			continue;
		size_t l = (size_t)(end - path);
		if (l >= cap)
			return false;
		memcpy(scope, path, l);
		scope[l] = '\0';
		return true;
	}
	return false;
}

int parse_cgroup_limit(const char *buf, size_t len, maybe_i64 *ret)
{
	while (len && isspace((unsigned char)buf[len - 1]))
		len--;
	if (len == 3 && !memcmp(buf, "max", 3)) {
		*ret = UNKNOWN;
		return 0;
	}
	const char *p = buf;
	uint64_t v;
	if (take_u64(&p, buf + len, &v) < 0 || p != buf + len)
		return -EINVAL;
	/* v1 reports "no limit" as the page counter's maximum (LONG_MAX rounded down to a page). */
	*ret = v >= (UINT64_C(1) << 62) ? UNKNOWN : MAYBE((int64_t)v);
	return 0;
}

/* "avg10=1.23" style fields of one PSI line. */
static int pressure_line(const char *p, const char *end, double *avg10, double *seconds)
{
	bool have_avg = false, have_total = false;
	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		const char *eq = memchr(p, '=', (size_t)(end - p));
		if (!eq)
			break;
		const char *v = eq + 1, *ve = v;
		while (ve < end && *ve != ' ')
			ve++;
		char num[32];
		size_t l = (size_t)(ve - v);
		if (l == 0 || l >= sizeof(num))
			return -EINVAL;
		memcpy(num, v, l);
		num[l] = '\0';
		char *e;
		double d = strtod(num, &e);
		if (*e || !isfinite(d) || d < 0)
			return -EINVAL;
		if (eq - p == 5 && !memcmp(p, "avg10", 5)) {
			*avg10 = d;
			have_avg = true;
		} else if (eq - p == 5 && !memcmp(p, "total", 5)) {
			*seconds = d / 1e6; /* microseconds */
			have_total = true;
		}
		p = ve;
	}
	return have_avg && have_total ? 0 : -EINVAL;
}

int parse_pressure(const char *buf, size_t len, struct pressure *ret)
{
	struct pressure pr = {NAN, NAN, NAN, NAN};
	bool some = false;
	for (const char *p = buf, *end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return -EINVAL;
		if (nl - p > 5 && !memcmp(p, "some ", 5)) {
			if (pressure_line(p + 5, nl, &pr.some_avg10, &pr.some_seconds) < 0)
				return -EINVAL;
			some = true;
		} else if (nl - p > 5 && !memcmp(p, "full ", 5)) {
			if (pressure_line(p + 5, nl, &pr.full_avg10, &pr.full_seconds) < 0)
				return -EINVAL;
		}
		p = nl + 1;
	}
	if (!some)
		return -EINVAL;
	*ret = pr;
	return 0;
}

int parse_keyed_u64(const char *buf, size_t len, const char *key, maybe_i64 *ret)
{
	size_t kl = strlen(key);
	for (const char *p = buf, *end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		if ((size_t)(e - p) > kl && !memcmp(p, key, kl) && p[kl] == ' ') {
			const char *v = p + kl + 1;
			uint64_t n;
			if (take_u64(&v, e, &n) < 0 || v != e || n > INT64_MAX)
				return -EINVAL;
			*ret = MAYBE((int64_t)n);
			return 0;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	*ret = UNKNOWN;
	return -ENOENT;
}
