/* /proc/PID/stat (parse_stat): comm stays in its buffer; ppid is a pid, CPU ticks and the start
 * time are the kernel's unsigned counters (never a negative number read as a huge one); a line
 * printed from what was parsed (comm with its spaces and parentheses) parses to the same. */
#include <limits.h>

#include "fuzz.h"
#include "parse/parse.h"

static bool same(const struct proc_stat *a, const struct proc_stat *b)
{
	return !strcmp(a->comm, b->comm) && a->state == b->state && a->ppid == b->ppid &&
	       a->utime_ticks == b->utime_ticks && a->stime_ticks == b->stime_ticks &&
	       a->start_ticks == b->start_ticks && a->rss_pages == b->rss_pages;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_stat st;
	if (parse_stat((const char *)data, size, &st) < 0)
		return 0;
	FUZZ_CHECK(fuzz_terminated(st.comm, sizeof(st.comm)));
	FUZZ_CHECK(st.ppid >= 0);
	FUZZ_CHECK(st.utime_ticks <= INT64_MAX && st.stime_ticks <= INT64_MAX && st.start_ticks <= INT64_MAX);
	FUZZ_CHECK(st.rss_pages <= INT64_MAX);
	FUZZ_CHECK(st.state != ' ' && st.state != '\n');

	/* Fields 3..24 as in proc(5); those vmhost does not keep are 0. */
	static struct fuzz_text text;
	text.len = 0;
	fuzz_puts(&text, "42 (");
	fuzz_puts(&text, st.comm);
	fuzz_puts(&text, ") ");
	fuzz_put(&text, &st.state, 1);
	fuzz_printf(&text, " %d 0 0 0 0 0 0 0 0 0 %llu %llu 0 0 0 0 0 0 %llu 0 %llu\n", (int)st.ppid,
		    (unsigned long long)st.utime_ticks, (unsigned long long)st.stime_ticks,
		    (unsigned long long)st.start_ticks, (unsigned long long)st.rss_pages);
	struct proc_stat again;
	FUZZ_CHECK(parse_stat(text.buf, text.len, &again) == 0);
	FUZZ_CHECK(same(&st, &again));
	return 0;
}
