/* /proc/PID/status (parse_status): the name stays in its buffer and holds no newline, known
 * sizes are never negative and are counted; printing name and fields and parsing again gives
 * them back; a cut last line changes nothing. */
#include <errno.h>

#include "fuzz_kv.h"

static int parse(const char *buf, size_t len, void *ret) { return parse_status(buf, len, ret); }

static void print(const void *parsed, struct fuzz_text *text)
{
	const struct proc_status *st = parsed;
	fuzz_printf(text, "Name:\t%s\n", st->name);
	kv_print(&status_keys, st, text);
}

static bool same(const void *pa, const void *pb)
{
	const struct proc_status *a = pa, *b = pb;
	return kv_equal(&status_keys, a, b) && !strcmp(a->name, b->name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct proc_status st;
	int n = parse_status(buf, size, &st);
	FUZZ_CHECK(fuzz_terminated(st.name, sizeof(st.name)));
	FUZZ_CHECK(!strchr(st.name, '\n'));
	int known = kv_check_fields(&status_keys, &st);
	FUZZ_CHECK(n == (st.name[0] || known ? known : -EINVAL));
	kv_round_trips(&(struct kv_target){parse, print, same}, buf, size, &st, n);
	return 0;
}
