#include "parse/trace_format.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The line starting at *pos (without its newline); advances *pos. False at the end. */
static bool next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *line_len)
{
	if (*pos >= len)
		return false;
	const char *start = buf + *pos, *nl = memchr(start, '\n', len - *pos);
	*line = start;
	*line_len = nl ? (size_t)(nl - start) : len - *pos;
	*pos += *line_len + (nl != NULL);
	return true;
}

/* "field:unsigned int exit_reason;	offset:8;	size:4;	signed:0;" */
static int parse_field(const char *line, size_t len, struct trace_field *ret)
{
	char text[256];
	if (len >= sizeof(text))
		return -EINVAL;
	memcpy(text, line, len);
	text[len] = '\0';
	char *decl = strstr(text, "field:");
	char *semi = decl ? strchr(decl, ';') : NULL;
	char *off = semi ? strstr(semi, "offset:") : NULL, *size = off ? strstr(off, "size:") : NULL;
	char *sign = size ? strstr(size, "signed:") : NULL;
	if (!sign)
		return -EINVAL;
	*semi = '\0';
	char *end = semi;
	char *bracket = strchr(decl, '[');
	if (bracket)
		end = bracket; /* an array: "char comm[16]" */
	while (end > decl && isspace((unsigned char)end[-1]))
		end--;
	char *start = end;
	while (start > decl && (isalnum((unsigned char)start[-1]) || start[-1] == '_'))
		start--;
	size_t nl = (size_t)(end - start);
	if (nl == 0 || nl >= sizeof(ret->name))
		return -EINVAL;
	memcpy(ret->name, start, nl);
	ret->name[nl] = '\0';
	ret->offset = (unsigned)strtoul(off + 7, NULL, 10);
	ret->size = (unsigned)strtoul(size + 5, NULL, 10);
	ret->is_signed = sign[7] == '1';
	return 0;
}

int parse_trace_format(const char *buf, size_t len, struct trace_format *ret)
{
	struct trace_format f = {0};
	bool have_name = false, have_id = false;
	size_t pos = 0, ll;
	const char *line;
	while (next_line(buf, len, &pos, &line, &ll)) {
		while (ll && (*line == ' ' || *line == '\t'))
			line++, ll--;
		if (ll > 6 && !strncmp(line, "name: ", 6) && ll - 6 < sizeof(f.name)) {
			memcpy(f.name, line + 6, ll - 6);
			f.name[ll - 6] = '\0';
			have_name = true;
		} else if (ll > 4 && !strncmp(line, "ID: ", 4)) {
			char num[16];
			size_t n = ll - 4 < sizeof(num) - 1 ? ll - 4 : sizeof(num) - 1;
			memcpy(num, line + 4, n);
			num[n] = '\0';
			char *end;
			unsigned long id = strtoul(num, &end, 10);
			if (end == num || *end || id == 0 || id > 0xffffffffUL)
				return -EINVAL;
			f.id = (unsigned)id;
			have_id = true;
		} else if (ll > 6 && !strncmp(line, "field:", 6)) {
			struct trace_field fl;
			if (parse_field(line, ll, &fl) < 0)
				return -EINVAL;
			if (!strncmp(fl.name, "common_", 7) || f.nfields == TRACE_MAX_FIELDS)
				continue;
			f.fields[f.nfields++] = fl;
		}
	}
	if (!have_name || !have_id || f.nfields == 0)
		return -EINVAL;
	*ret = f;
	return 0;
}

const struct trace_field *trace_format_field(const struct trace_format *f, const char *name)
{
	for (size_t i = 0; i < f->nfields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* "0x040 + 13", "12", "-1": a sum of integer terms. Returns the end, or NULL. */
static const char *parse_sum(const char *p, const char *end, int64_t *ret)
{
	int64_t sum = 0;
	for (;;) {
		p = skip_blanks(p, end);
		char num[32];
		size_t n = 0;
		if (p < end && *p == '-')
			num[n++] = *p++;
		while (p < end && n + 1 < sizeof(num) && isxdigit((unsigned char)*p) | (*p == 'x') | (*p == 'X'))
			num[n++] = *p++;
		num[n] = '\0';
		char *e;
		errno = 0;
		long long v = strtoll(num, &e, 0);
		if (n == 0 || *e || errno)
			return NULL;
		sum += v;
		p = skip_blanks(p, end);
		if (p < end && *p == '+') {
			p++;
			continue;
		}
		*ret = sum;
		return p;
	}
}

/* Adjacent string literals at p, joined into out. Returns the end, or NULL. */
static const char *parse_literals(const char *p, const char *end, char *out, size_t cap)
{
	size_t n = 0;
	bool any = false;
	for (;;) {
		p = skip_blanks(p, end);
		if (p >= end || *p != '"')
			break;
		const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
		if (!q)
			return NULL;
		for (const char *c = p + 1; c < q; c++)
			if (n + 1 < cap)
				out[n++] = *c;
		p = q + 1;
		any = true;
	}
	out[n] = '\0';
	return any ? p : NULL;
}

int parse_trace_symbols(const char *buf, size_t len, unsigned which, unsigned field_size,
			struct trace_symbol **ret, size_t *ret_n)
{
	static const char tag[] = "__print_symbolic(";
	const char *end = buf + len, *p = buf;
	for (unsigned k = 0;; k++) {
		p = memmem(p, (size_t)(end - p), tag, sizeof(tag) - 1);
		if (!p)
			return -ENOENT;
		p += sizeof(tag) - 1;
		if (k == which)
			break;
	}
	/* Skip the value expression: up to the first '{' outside parentheses. */
	int depth = 0;
	for (; p < end && !(*p == '{' && depth == 0); p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && --depth < 0)
			return -EINVAL;
	}
	uint64_t mask = field_size >= 8 || field_size == 0 ? UINT64_MAX : (UINT64_C(1) << (8 * field_size)) - 1;
	size_t n = 0, cap = 0;
	struct trace_symbol *syms = NULL;
	for (;;) {
		p = skip_blanks(p, end);
		if (p < end && *p == ')')
			break;
		if (p >= end || *p != '{')
			goto bad;
		int64_t v;
		if (!(p = parse_sum(p + 1, end, &v)) || p >= end || *p != ',')
			goto bad;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			struct trace_symbol *bigger = realloc(syms, cap * sizeof(*bigger));
			if (!bigger) {
				free(syms);
				return -ENOMEM;
			}
			syms = bigger;
		}
		syms[n].value = (uint64_t)v & mask;
		if (!(p = parse_literals(p + 1, end, syms[n].name, sizeof(syms[n].name))))
			goto bad;
		p = skip_blanks(p, end);
		if (p >= end || *p != '}')
			goto bad;
		n++;
		p = skip_blanks(p + 1, end);
		if (p < end && *p == ',')
			p++;
	}
	if (n == 0)
		goto bad;
	*ret = syms;
	*ret_n = n;
	return 0;
bad:
	free(syms);
	return -EINVAL;
}
