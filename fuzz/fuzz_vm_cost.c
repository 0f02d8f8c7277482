/* What a VM costs besides memory (parse/cpu_cgroup.h): a task's schedstat, a cgroup file's v1
 * controller path, a cgroup limit, a PSI file, a keyed file and a sched file's wait_sum. Invariants: outputs untouched on
 * failure; times and pressures finite and never negative; a path ends inside its buffer; a known
 * limit is below the unlimited mark; a vCPU index is in range. The first byte picks the parser. */
#include <math.h>

#include "fuzz.h"
#include "parse/cpu_cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *buf = (const char *)data + 1;
	size_t len = size - 1;
	switch (data[0] % 7) {
	case 0: {
		struct schedstat s = {.run_ns = 7, .delay_ns = 7};
		if (parse_schedstat(buf, len, &s) < 0)
			FUZZ_CHECK(s.run_ns == 7 && s.delay_ns == 7);
		break;
	}
	case 1: {
		char path[64];
		memset(path, 'x', sizeof(path));
		int r = parse_cgroup_controller(buf, len, "memory", path, sizeof(path));
		FUZZ_CHECK(memchr(path, '\0', sizeof(path)) != NULL || r < 0);
		if (r == 0)
			FUZZ_CHECK(strlen(path) < sizeof(path));
		break;
	}
	case 2: {
		maybe_i64 v = MAYBE(-7);
		if (parse_cgroup_limit(buf, len, &v) < 0)
			FUZZ_CHECK(v.known && v.v == -7);
		else
			FUZZ_CHECK(!v.known || (v.v >= 0 && v.v < (INT64_C(1) << 62)));
		break;
	}
	case 3: {
		struct pressure p = {-1, -1, -1, -1};
		if (parse_pressure(buf, len, &p) < 0) {
			FUZZ_CHECK(p.some_avg10 == -1 && p.some_seconds == -1);
		} else {
			FUZZ_CHECK(isfinite(p.some_avg10) && p.some_avg10 >= 0 && isfinite(p.some_seconds) && p.some_seconds >= 0);
			FUZZ_CHECK(isnan(p.full_avg10) || p.full_avg10 >= 0);
		}
		break;
	}
	case 4: {
		maybe_i64 v;
		if (parse_keyed_u64(buf, len, "oom_kill", &v) == 0)
			FUZZ_CHECK(v.known && v.v >= 0);
		break;
	}
	case 5: {
		char *s = fuzz_cstring(data + 1, len);
		int index = -1;
		if (parse_vcpu_thread_name(s, &index))
			FUZZ_CHECK(index >= 0 && index <= 65535);
		free(s);
		break;
	}
	case 6: {
		uint64_t ns = 7;
		if (parse_sched_wait_sum(buf, len, &ns) < 0)
			FUZZ_CHECK(ns == 7);
		else
			FUZZ_CHECK(ns <= UINT64_C(1000000000000000000));
		break;
	}
	}
	return 0;
}
