/* /proc/PID/smaps_rollup (parse_smaps_rollup): known sizes are never negative and are counted
 * in the return value; printing them and parsing again gives them back; a cut last line
 * changes nothing. */
#include <errno.h>

#include "fuzz_kv.h"

static int parse(const char *buf, size_t len, void *ret) { return parse_smaps_rollup(buf, len, ret); }
static void print(const void *r, struct fuzz_text *text) { kv_print(&smaps_rollup_keys, r, text); }
static bool same(const void *a, const void *b) { return kv_equal(&smaps_rollup_keys, a, b); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct smaps_rollup r;
	int n = parse_smaps_rollup(buf, size, &r);
	int known = kv_check_fields(&smaps_rollup_keys, &r);
	FUZZ_CHECK(n == (r.rss.known && r.pss.known ? known : -EINVAL));
	kv_round_trips(&(struct kv_target){parse, print, same}, buf, size, &r, n);
	return 0;
}
