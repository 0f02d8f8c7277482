/* Whole decimal integers of sysfs files (parse_i64): refused input leaves the output untouched;
 * an accepted number prints and parses back to itself, with or without the newline sysfs adds. */
#include "fuzz.h"
#include "parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	int64_t v = 42;
	int r = parse_i64(s, &v);
	free(s);
	if (r < 0) {
		FUZZ_CHECK(v == 42);
		return 0;
	}
	char printed[32];
	int64_t again;
	snprintf(printed, sizeof(printed), "%lld", (long long)v);
	FUZZ_CHECK(parse_i64(printed, &again) == 0 && again == v);
	snprintf(printed, sizeof(printed), "%lld\n", (long long)v);
	FUZZ_CHECK(parse_i64(printed, &again) == 0 && again == v);
	return 0;
}
