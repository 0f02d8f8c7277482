/* /proc/meminfo (parse_meminfo): known fields are never negative and are counted in the return
 * value; printing them and parsing again gives them back; a cut last line changes nothing. */
#include <errno.h>

#include "fuzz_kv.h"

static int parse(const char *buf, size_t len, void *ret) { return parse_meminfo(buf, len, ret); }
static void print(const void *m, struct fuzz_text *text) { kv_print(&meminfo_keys, m, text); }
static bool same(const void *a, const void *b) { return kv_equal(&meminfo_keys, a, b); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct meminfo m;
	int n = parse_meminfo(buf, size, &m);
	int known = kv_check_fields(&meminfo_keys, &m);
	FUZZ_CHECK(n == (m.mem_total.known ? known : -EINVAL));
	kv_round_trips(&(struct kv_target){parse, print, same}, buf, size, &m, n);
	return 0;
}
