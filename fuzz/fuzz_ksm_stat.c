/* /proc/PID/ksm_stat (parse_ksm_stat): counts are never negative (the profit may be), the two
 * flags are 0 or 1, the return value counts what is known; printing it all and parsing again
 * gives it back; a cut last line changes nothing. */
#include <errno.h>

#include "fuzz_kv.h"

static int known_flags(const struct ksm_stat *k)
{
	FUZZ_CHECK(!k->merge_any.known || k->merge_any.v == 0 || k->merge_any.v == 1);
	FUZZ_CHECK(!k->mergeable.known || k->mergeable.v == 0 || k->mergeable.v == 1);
	return k->merge_any.known + k->mergeable.known;
}

static int parse(const char *buf, size_t len, void *ret) { return parse_ksm_stat(buf, len, ret); }

static void print(const void *parsed, struct fuzz_text *text)
{
	const struct ksm_stat *k = parsed;
	kv_print(&ksm_stat_keys, k, text);
	if (k->merge_any.known)
		fuzz_printf(text, "ksm_merge_any: %s\n", k->merge_any.v ? "yes" : "no");
	if (k->mergeable.known)
		fuzz_printf(text, "ksm_mergeable: %s\n", k->mergeable.v ? "yes" : "no");
}

static bool same(const void *pa, const void *pb)
{
	const struct ksm_stat *a = pa, *b = pb;
	return kv_equal(&ksm_stat_keys, a, b) && a->merge_any.known == b->merge_any.known &&
	       a->merge_any.v == b->merge_any.v && a->mergeable.known == b->mergeable.known &&
	       a->mergeable.v == b->mergeable.v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct ksm_stat k;
	int n = parse_ksm_stat(buf, size, &k);
	int known = kv_check_fields(&ksm_stat_keys, &k) + known_flags(&k);
	FUZZ_CHECK(n == (known ? known : -EINVAL));
	kv_round_trips(&(struct kv_target){parse, print, same}, buf, size, &k, n);
	return 0;
}
