/* What the fuzz targets share: a failed invariant aborts with its reason (libFuzzer keeps the
 * input as crash-*), C-string copies for parsers that take one, and a small text builder for
 * the targets that print what was parsed and parse it again. */
#ifndef VMHOST_FUZZ_H
#define VMHOST_FUZZ_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libFuzzer's entry point; each fuzz_NAME.c defines it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                          \
	do {                                                                                      \
		if (!(cond))                                                                      \
			fuzz_fail(__FILE__, __LINE__, #cond);                                     \
	} while (0)

static inline __attribute__((noreturn)) void fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "vmhost fuzz: invariant broken at %s:%d: %s\n", file, line, what);
	abort();
}

/* A NUL-terminated copy of the input, cut at its first NUL: what a C-string parser sees. */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	FUZZ_CHECK(s);
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* True when s holds a NUL within its cap bytes: a string output that stayed in its buffer. */
static inline bool fuzz_terminated(const char *s, size_t cap) { return memchr(s, '\0', cap) != NULL; }

/* A growing text buffer. Input that the parser accepted is small, so a fixed cap is enough;
 * running out is a broken invariant of the target itself. */
struct fuzz_text {
	char buf[1 << 16];
	size_t len;
};

static inline void fuzz_put(struct fuzz_text *t, const void *bytes, size_t n)
{
	FUZZ_CHECK(n <= sizeof(t->buf) - t->len);
	memcpy(t->buf + t->len, bytes, n);
	t->len += n;
}

static inline void fuzz_puts(struct fuzz_text *t, const char *s) { fuzz_put(t, s, strlen(s)); }

__attribute__((format(printf, 2, 3))) static inline void fuzz_printf(struct fuzz_text *t, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	FUZZ_CHECK(n >= 0 && (size_t)n < sizeof(line));
	fuzz_put(t, line, (size_t)n);
}

#endif
