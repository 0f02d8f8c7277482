/* QEMU sizes, "4096", "4G", "1.5g", "4194304k" (parse_qemu_size): refused input leaves the
 * output untouched; an accepted size printed in bytes ("<n>b") parses back to itself; a size
 * with a unit means the same whatever the default unit, and a bare integer scales by it. */
#include <errno.h>
#include <ctype.h>

#include "fuzz.h"
#include "parse/parse.h"

#define MIB (1ull << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	uint64_t bytes = 42, mib = 42;
	int r = parse_qemu_size(s, size, 1, &bytes);
	int rm = parse_qemu_size(s, size, MIB, &mib);
	if (r < 0)
		FUZZ_CHECK(bytes == 42);
	if (rm < 0)
		FUZZ_CHECK(mib == 42);
	if (r < 0)
		return 0;
	FUZZ_CHECK(!memchr(s, '\0', size)); /* a NUL inside is not a size */
	char printed[32];
	int n = snprintf(printed, sizeof(printed), "%llub", (unsigned long long)bytes);
	uint64_t again;
	FUZZ_CHECK(parse_qemu_size(printed, (size_t)n, MIB, &again) == 0 && again == bytes);
	size_t digits = 0;
	while (digits < size && s[digits] >= '0' && s[digits] <= '9')
		digits++;
	bool bare = digits == size;
	if (bare)
		FUZZ_CHECK(bytes > UINT64_MAX / MIB ? rm == -ERANGE : rm == 0 && mib == bytes * MIB);
	else if (isalpha((unsigned char)s[size - 1]))
		FUZZ_CHECK(rm == 0 && mib == bytes);
	return 0;
}
