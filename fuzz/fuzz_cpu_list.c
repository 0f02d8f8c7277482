/* A kernel CPU list (parse_cpu_list_count, /sys/devices/system/cpu/online): a count is at least
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
	return 0;
}
