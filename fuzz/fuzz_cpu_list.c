/* A kernel CPU list (parse_cpu_list_count and parse_cpu_list, /sys/devices/system/cpu/online): a count is at least
 * one CPU and at most 2^20, else -EINVAL or -ERANGE; the count printed as a list of ranges (of at
 * most 65537 CPUs each, the longest range it takes) counts the same. */
#include <errno.h>

#include "fuzz.h"
#include "parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int n = parse_cpu_list_count((const char *)data, size);
	if (n < 0) {
		FUZZ_CHECK(n == -EINVAL || n == -ERANGE);
		return 0;
	}
	FUZZ_CHECK(n >= 1 && n <= 1 << 20);
	struct fuzz_text text = {.len = 0};
	for (long first = 0; first < n; first += 65537) {
		long last = first + 65536 < n - 1 ? first + 65536 : n - 1;
		fuzz_printf(&text, first ? ",%ld-%ld" : "%ld-%ld", first, last);
	}
	fuzz_puts(&text, "\n");
	FUZZ_CHECK(parse_cpu_list_count(text.buf, text.len) == n);
	/* As a bit set: the same count where every CPU fits, and no more bits set (a CPU listed twice counts twice). */
	uint64_t bits[16] = {0};
	int b = parse_cpu_list((const char *)data, size, bits, 1024);
	FUZZ_CHECK(b == n || b == -ERANGE);
	int set = 0;
	for (size_t i = 0; b == n && i < 16; i++)
		set += __builtin_popcountll(bits[i]);
	FUZZ_CHECK(b != n || (set >= 1 && set <= n)); /* "1,1" counts 2, sets 1 */
	return 0;
}
