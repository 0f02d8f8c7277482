#include "core/model/host.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int64_t host_page_size(void)
{
	static int64_t page;
	if (!page) {
		long ps = sysconf(_SC_PAGESIZE);
		page = ps > 0 ? ps : 4096;
	}
	return page;
}

int host_read(const struct io_root *root, struct host *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->page_size_bytes = host_page_size();
	long hz = sysconf(_SC_CLK_TCK);
	ret->clock_ticks_per_second = hz > 0 ? hz : 100;
	ksm_read(root, &ret->ksm);
	char buf[8192];
	ret->schedstats = io_read(root, IO_PROC, buf, sizeof(buf), "sys/kernel/sched_schedstats") > 0 && buf[0] == '1';
	ssize_t n = io_read(root, IO_PROC, buf, sizeof(buf), "meminfo");
	if (n < 0)
		return (int)n;
	if (parse_meminfo(buf, (size_t)n, &ret->mem) < 0)
		return -EINVAL;
	ret->mem_known = true;
	return 0;
}
