#include "out/prom/prom.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/text.h"

void prom_init(struct prom *p, enum prom_format format)
{
	memset(p, 0, sizeof(*p));
	p->format = format;
}

static bool reserve(struct prom *p, size_t more)
{
	if (p->error)
		return false;
	if (p->max_bytes && p->len + more > p->max_bytes) {
		p->error = -EFBIG;
		return false;
	}
	if (p->len + more + 1 <= p->cap)
		return true;
	size_t cap = p->cap ? p->cap : 4096;
	while (cap < p->len + more + 1)
		cap *= 2;
	char *b = realloc(p->buf, cap);
	if (!b) {
		p->error = -ENOMEM;
		return false;
	}
	p->buf = b;
	p->cap = cap;
	return true;
}

static void put(struct prom *p, const char *s, size_t n)
{
	/* Room already there (the common case, a document being a few hundred thousand of these). */
	if (!(p->len + n + 1 <= p->cap && !p->error && (!p->max_bytes || p->len + n <= p->max_bytes)) && !reserve(p, n))
		return;
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

static void puts_(struct prom *p, const char *s) { put(p, s, strlen(s)); }

/* Escapes backslash and newline (and the double quote when quote is set); bytes that are not
 * valid UTF-8 become U+FFFD, since Prometheus rejects a whole scrape over one bad label. */
static void put_escaped(struct prom *p, const char *s, bool quote)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		/* A run of plain ASCII goes out whole: most labels are nothing else. */
		size_t run = i;
		while (run < n && u[run] < 0x80 && u[run] != '\\' && u[run] != '\n' && !(u[run] == '"' && quote))
			run++;
		if (run > i) {
			put(p, s + i, run - i);
			i = run;
			continue;
		}
		if (u[i] == '\\') {
			put(p, "\\\\", 2);
			i++;
		} else if (u[i] == '\n') {
			put(p, "\\n", 2);
			i++;
		} else if (u[i] == '"' && quote) {
			put(p, "\\\"", 2);
			i++;
		} else {
			size_t l = utf8_len(u + i, n - i);
			if (l == 0) {
				put(p, "\xef\xbf\xbd", 3);
				i++;
			} else {
				put(p, s + i, l);
				i += l;
			}
		}
	}
}

bool prom_family(struct prom *p, const char *name, enum prom_type type, const char *help)
{
	p->name = name;
	p->name_len = strlen(name);
	p->type = type;
	p->help = help;
	p->family_open = false;
	p->family_keep = NULL;
	for (size_t i = 0; p->keep && i < p->nkeep && !p->family_keep; i++)
		if (!strcmp(p->keep[i].family, name))
			p->family_keep = &p->keep[i];
	return !p->keep || p->family_keep;
}

/* Whether a sample with these labels is written: host-wide ones always, a VM's as p->keep says. */
static bool kept(const struct prom *p, const struct prom_label *labels, size_t nlabels)
{
	if (!p->keep || !nlabels || strcmp(labels[0].name, "vm"))
		return true;
	const struct prom_keep *k = p->family_keep;
	if (!k)
		return false;
	if (!k->label)
		return true;
	for (size_t i = 1; i < nlabels; i++)
		if (!strcmp(labels[i].name, k->label))
			return labels[i].value && !strcmp(labels[i].value, k->value);
	return false;
}

static void put_metadata(struct prom *p)
{
	static const char *const type_text[] = {[PROM_GAUGE] = "gauge", [PROM_COUNTER] = "counter",
						[PROM_INFO] = "gauge"};
	static const char *const type_om[] = {[PROM_GAUGE] = "gauge", [PROM_COUNTER] = "counter",
					      [PROM_INFO] = "info"};
	size_t n = strlen(p->name);
	bool om = p->format == PROM_OPENMETRICS;
	/* OpenMetrics names the family without the sample suffix its type implies. */
	const char *suffix = !om ? NULL : p->type == PROM_COUNTER ? "_total" : p->type == PROM_INFO ? "_info" : NULL;
	if (suffix && n > strlen(suffix) && !strcmp(p->name + n - strlen(suffix), suffix))
		n -= strlen(suffix);
	puts_(p, "# HELP ");
	put(p, p->name, n);
	puts_(p, " ");
	put_escaped(p, p->help, om);
	puts_(p, "\n# TYPE ");
	put(p, p->name, n);
	puts_(p, " ");
	puts_(p, om ? type_om[p->type] : type_text[p->type]);
	puts_(p, "\n");
	p->family_open = true;
}

static void put_sample(struct prom *p, const struct prom_label *labels, size_t nlabels, const char *value)
{
	if (!p->name || !kept(p, labels, nlabels))
		return;
	if (!p->family_open)
		put_metadata(p);
	p->series++;
	put(p, p->name, p->name_len);
	if (nlabels) {
		put(p, "{", 1);
		for (size_t i = 0; i < nlabels; i++) {
			if (i)
				put(p, ",", 1);
			puts_(p, labels[i].name);
			put(p, "=\"", 2);
			put_escaped(p, labels[i].value ? labels[i].value : "", true);
			put(p, "\"", 1);
		}
		put(p, "}", 1);
	}
	put(p, " ", 1);
	puts_(p, value);
	put(p, "\n", 1);
}

void prom_int(struct prom *p, const struct prom_label *labels, size_t nlabels, int64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	put_sample(p, labels, nlabels, buf);
}

void prom_double(struct prom *p, const struct prom_label *labels, size_t nlabels, double v)
{
	char buf[40];
	prom_format_double(buf, sizeof(buf), v);
	put_sample(p, labels, nlabels, buf);
}

void prom_maybe(struct prom *p, const struct prom_label *labels, size_t nlabels, maybe_i64 v)
{
	if (v.known)
		prom_int(p, labels, nlabels, v.v);
}

static size_t digits(size_t n)
{
	size_t d = 1;
	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

void prom_size_sample(struct prom *p)
{
	if (!p->name)
		return;
	if (!p->family_open)
		put_metadata(p);
	/* name, a space, the number, a newline, the end: the number counts its own digits. */
	size_t base = p->len + strlen(p->name) + 2 + (p->format == PROM_OPENMETRICS ? strlen("# EOF\n") : 0);
	size_t total = base + 1;
	while (digits(total) != total - base)
		total = base + digits(total);
	char buf[32];
	snprintf(buf, sizeof(buf), "%zu", total);
	p->series++;
	puts_(p, p->name);
	puts_(p, " ");
	puts_(p, buf);
	puts_(p, "\n");
}

int prom_finish(struct prom *p, char **ret, size_t *ret_len)
{
	if (p->format == PROM_OPENMETRICS)
		puts_(p, "# EOF\n");
	if (!p->buf)
		put(p, "", 0);
	if (p->error) {
		int err = p->error;
		prom_free(p);
		return err;
	}
	*ret = p->buf;
	*ret_len = p->len;
	p->buf = NULL;
	p->len = p->cap = 0;
	return 0;
}

void prom_free(struct prom *p)
{
	free(p->buf);
	p->buf = NULL;
	p->len = p->cap = 0;
}

const char *prom_content_type(enum prom_format format)
{
	return format == PROM_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
					  : "text/plain; version=0.0.4; charset=utf-8";
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void c_locale_init(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

/* The digits of a %g number's mantissa from its first to its last that is not 0 (at least 1). */
static int significant_digits(const char *s)
{
	int seen = 0, first = 0, last = 0;
	for (; *s && *s != 'e'; s++) {
		if (*s < '0' || *s > '9')
			continue;
		seen++;
		if (*s != '0') {
			first = first ? first : seen;
			last = seen;
		}
	}
	return first ? last - first + 1 : 1;
}

size_t prom_format_double(char *buf, size_t cap, double v)
{
	if (isnan(v))
		return (size_t)snprintf(buf, cap, "NaN");
	if (isinf(v))
		return (size_t)snprintf(buf, cap, v > 0 ? "+Inf" : "-Inf");
	pthread_once(&c_locale_once, c_locale_init);
	locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
	/* The shortest precision from 6 that reads back as the same double. A normal double's
	 * shortest form has at most 15 digits but for a few, and %.15g prints it then (the double is
	 * within half an ulp of it, well inside 15 digits' rounding): its digits say the precision,
	 * and only a form of 16 or 17 digits is searched for (a search from 6 up took ten formats
	 * and reads a number). A subnormal one has fewer digits to it: searched from 6. */
	bool normal = fpclassify(v) != FP_SUBNORMAL;
	int n = normal ? snprintf(buf, cap, "%.15g", v) : -1;
	if (n >= 0 && (size_t)n < cap && strtod(buf, NULL) == v) {
		/* Between 1e-4 and 1e5 every precision from 6 prints it in fixed notation: the same text. */
		int prec = significant_digits(buf);
		if (prec != 15 && !(v == 0 || (fabs(v) >= 1e-4 && fabs(v) < 1e5)))
			n = snprintf(buf, cap, "%.*g", prec < 6 ? 6 : prec, v);
	} else {
		for (int prec = normal ? 16 : 6; prec <= 17; prec++) {
			n = snprintf(buf, cap, "%.*g", prec, v);
			if (n < 0 || (size_t)n >= cap || strtod(buf, NULL) == v)
				break;
		}
	}
	if (old)
		uselocale(old);
	return n < 0 ? 0 : (size_t)n;
}
