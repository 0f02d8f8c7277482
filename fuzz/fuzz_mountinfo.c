/* /proc/PID/mountinfo's hugetlbfs mounts (parse_mountinfo_hugetlbfs): never more than asked for,
 * page sizes never negative, the output untouched past what was found; each mount printed as the
 * kernel does parses to the same mount. */
#include <errno.h>

#include "fuzz.h"
#include "parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hugetlbfs_mount m[4];
	memset(m, 0xa5, sizeof(m));
	int n = parse_mountinfo_hugetlbfs((const char *)data, size, m, 3);
	FUZZ_CHECK(n == -EINVAL || (n >= 0 && n <= 3));
	struct hugetlbfs_mount untouched;
	memset(&untouched, 0xa5, sizeof(untouched));
	FUZZ_CHECK(!memcmp(&m[3], &untouched, sizeof(untouched)));
	for (int i = 0; i < n; i++) {
		FUZZ_CHECK(m[i].page_bytes >= 0);
		static struct fuzz_text text;
		text.len = 0;
		fuzz_printf(&text, "45 27 %u:%u / /dev/hugepages rw,relatime shared:27 - hugetlbfs hugetlbfs rw", m[i].dev_major,
			    m[i].dev_minor);
		if (m[i].page_bytes)
			fuzz_printf(&text, ",pagesize=%lldk", (long long)(m[i].page_bytes / 1024));
		fuzz_puts(&text, "\n");
		struct hugetlbfs_mount again;
		FUZZ_CHECK(parse_mountinfo_hugetlbfs(text.buf, text.len, &again, 1) == 1);
		FUZZ_CHECK(again.dev_major == m[i].dev_major && again.dev_minor == m[i].dev_minor);
		FUZZ_CHECK(m[i].page_bytes % 1024 || again.page_bytes == m[i].page_bytes);
	}
	return 0;
}
