/* /proc/PID/schedstat (parse_schedstat_run): a time on a CPU is never negative, and it prints and
 * parses back to itself; a read cut inside the first field is no number. */
#include "fuzz.h"
#include "parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t ns = -1;
	if (parse_schedstat_run((const char *)data, size, &ns) < 0) {
		FUZZ_CHECK(ns == -1); /* untouched on failure */
		return 0;
	}
	FUZZ_CHECK(ns >= 0);
	char line[64];
	int n = snprintf(line, sizeof(line), "%lld 0 0\n", (long long)ns);
	int64_t again;
	FUZZ_CHECK(parse_schedstat_run(line, (size_t)n, &again) == 0 && again == ns);
	/* The digits alone, without what ends the field, are refused. */
	size_t digits = strspn(line, "0123456789");
	FUZZ_CHECK(parse_schedstat_run(line, digits, &again) < 0);
	return 0;
}
