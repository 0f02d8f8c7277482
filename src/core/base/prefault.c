#include "core/base/prefault.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void prefault(void *p, size_t bytes)
{
	static long page;
	if (!page)
		page = sysconf(_SC_PAGESIZE);
	if (page <= 0 || !p || !bytes)
		return;
	/* Every page the range touches is mapped (it is the caller's memory); populating one that is
	 * present already changes nothing, its content included. */
	uintptr_t mask = ~((uintptr_t)page - 1);
	uintptr_t start = (uintptr_t)p & mask, end = ((uintptr_t)p + bytes + (uintptr_t)page - 1) & mask;
	madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}
