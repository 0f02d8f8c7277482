#include "out/prom.h"

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
	if (!reserve(p, n))
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
	puts_(p, p->name);
	if (nlabels) {
		puts_(p, "{");
		for (size_t i = 0; i < nlabels; i++) {
			if (i)
				puts_(p, ",");
			puts_(p, labels[i].name);
			puts_(p, "=\"");
			put_escaped(p, labels[i].value ? labels[i].value : "", true);
			puts_(p, "\"");
		}
		puts_(p, "}");
	}
	puts_(p, " ");
	puts_(p, value);
	puts_(p, "\n");
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

size_t prom_format_double(char *buf, size_t cap, double v)
{
	if (isnan(v))
		return (size_t)snprintf(buf, cap, "NaN");
	if (isinf(v))
		return (size_t)snprintf(buf, cap, v > 0 ? "+Inf" : "-Inf");
	pthread_once(&c_locale_once, c_locale_init);
	locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
	int n = 0;
	/* The shortest precision that reads back as the same double. */
	for (int prec = 6; prec <= 17; prec++) {
		n = snprintf(buf, cap, "%.*g", prec, v);
		if (n < 0 || (size_t)n >= cap || strtod(buf, NULL) == v)
			break;
	}
	if (old)
		uselocale(old);
	return n < 0 ? 0 : (size_t)n;
}
