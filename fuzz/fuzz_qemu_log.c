/* QEMU's log (parse_qemu_log_error): the line found fits its buffer, is no longer than returned,
 * holds no newline nor a final CR, and (whole) no "warning:"; when none is found the buffer
 * is "". */
#include <errno.h>

#include "fuzz.h"
#include "parse/qemu_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	for (size_t cap = 1; cap <= 257; cap += 64) {
		char buf[257];
		memset(buf, 'x', sizeof(buf));
		int n = parse_qemu_log_error(text, size, buf, cap);
		FUZZ_CHECK(n > 0 || n == -ENOENT);
		FUZZ_CHECK(fuzz_terminated(buf, cap));
		if (n < 0) {
			FUZZ_CHECK(buf[0] == '\0');
			continue;
		}
		size_t len = strlen(buf);
		FUZZ_CHECK(len <= (size_t)n && len < cap); /* shorter: cut to fit, or a NUL inside */
		FUZZ_CHECK(!strchr(buf, '\n'));
		if (len == (size_t)n) /* whole */
			FUZZ_CHECK(buf[len - 1] != '\r' && !strstr(buf, "warning:"));
	}
	return 0;
}
