/* Invariants of the "Key: value" parsers (parse_kv and the four built on it), shared by
 * fuzz_meminfo.c, fuzz_status.c, fuzz_ksm_stat.c and fuzz_smaps_rollup.c. */
#ifndef VMHOST_FUZZ_KV_H
#define VMHOST_FUZZ_KV_H

#include "fuzz.h"
#include "parse/parse.h"

static inline const maybe_i64 *kv_value(const struct kv_table *t, const void *out, size_t i)
{
	return (const maybe_i64 *)((const char *)out + t->fields[i].offset);
}

/* How many of the table's fields are known; sizes and counts are never negative. */
static inline int kv_check_fields(const struct kv_table *t, const void *out)
{
	int known = 0;
	for (size_t i = 0; i < t->n; i++) {
		const maybe_i64 *v = kv_value(t, out, i);
		FUZZ_CHECK(v->known || v->v == 0);
		FUZZ_CHECK(!v->known || v->v >= 0 || t->fields[i].may_be_negative);
		known += v->known;
	}
	return known;
}

/* The known fields as the kernel would print them, in bytes: "Key: value\n". */
static inline void kv_print(const struct kv_table *t, const void *out, struct fuzz_text *text)
{
	for (size_t i = 0; i < t->n; i++) {
		const maybe_i64 *v = kv_value(t, out, i);
		if (v->known)
			fuzz_printf(text, "%s: %lld\n", t->fields[i].key, (long long)v->v);
	}
}

static inline bool kv_equal(const struct kv_table *t, const void *a, const void *b)
{
	for (size_t i = 0; i < t->n; i++) {
		const maybe_i64 *x = kv_value(t, a, i), *y = kv_value(t, b, i);
		if (x->known != y->known || x->v != y->v)
			return false;
	}
	return true;
}

/* One of the four parsers, as the shared checks below see it. */
struct kv_target {
	int (*parse)(const char *buf, size_t len, void *ret);
	void (*print)(const void *parsed, struct fuzz_text *text); /* as the kernel would */
	bool (*same)(const void *a, const void *b);
};

union kv_any {
	struct meminfo meminfo;
	struct proc_status status;
	struct ksm_stat ksm_stat;
	struct smaps_rollup smaps_rollup;
};

/* What was parsed from buf (returning n), printed and parsed again, is the same; so is buf
 * without its last line when that line has no newline (a cut read adds nothing). */
static inline void kv_round_trips(const struct kv_target *t, const char *buf, size_t len, const void *parsed, int n)
{
	static struct fuzz_text text;
	text.len = 0;
	t->print(parsed, &text);
	union kv_any again;
	FUZZ_CHECK(t->parse(text.buf, text.len, &again) == n);
	FUZZ_CHECK(t->same(parsed, &again));
	while (len && buf[len - 1] != '\n')
		len--;
	FUZZ_CHECK(t->parse(buf, len, &again) == n);
	FUZZ_CHECK(t->same(parsed, &again));
}

#endif
