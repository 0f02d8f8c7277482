/* /proc/PID/smaps, what the KSM tuner reads of it (parse_smaps_mergeable): refused input leaves
 * the output untouched; accepted sizes are whole kB, never negative (never wrapped), the
 * mergeable part within the whole; printed as two mappings they parse back to themselves, and a
 * cut line after them changes nothing. */
#include "fuzz.h"
#include "parse/smaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smaps_mergeable r = {.anon_bytes = -1, .mergeable_anon_bytes = -1};
	if (parse_smaps_mergeable((const char *)data, size, &r) < 0) {
		FUZZ_CHECK(r.anon_bytes == -1 && r.mergeable_anon_bytes == -1);
		return 0;
	}
	FUZZ_CHECK(r.mergeable_anon_bytes >= 0 && r.mergeable_anon_bytes <= r.anon_bytes);
	FUZZ_CHECK(r.anon_bytes % 1024 == 0 && r.mergeable_anon_bytes % 1024 == 0);
	char text[256];
	int n = snprintf(text, sizeof(text),
			 "Anonymous: %lld kB\nVmFlags: rd wr mg\nAnonymous: %lld kB\nVmFlags: rd wr\nAnonymous: 7",
			 (long long)(r.mergeable_anon_bytes / 1024),
			 (long long)((r.anon_bytes - r.mergeable_anon_bytes) / 1024));
	FUZZ_CHECK(n > 0 && (size_t)n < sizeof(text));
	struct smaps_mergeable again;
	FUZZ_CHECK(parse_smaps_mergeable(text, (size_t)n, &again) == 0);
	FUZZ_CHECK(again.anon_bytes == r.anon_bytes && again.mergeable_anon_bytes == r.mergeable_anon_bytes);
	return 0;
}
