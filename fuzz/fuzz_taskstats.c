/* A taskstats reply (genl_reply, parse_taskstats_reply, parse_taskstats_struct: the kernel's delay
 * accounting over generic netlink): the attributes a reply gives lie inside the message; a
 * struct read has a version other than 0 and 15, knows only the delays its version has, and
 * outputs stay untouched on failure. */
#include <errno.h>

#include "fuzz.h"
#include "parse/netlink/genl.h"
#include "parse/netlink/taskstats.h"

/* The kinds each version has: CPU, block I/O and swap-in from 1, reclaim 7, thrashing 9, compaction
 * 11, write-protect copy 13, IRQ 14. */
static uint32_t kinds_of(unsigned version)
{
	static const unsigned since[TASK_DELAY_NKINDS] = {1, 1, 1, 7, 9, 11, 13, 14};
	uint32_t k = 0;
	for (int i = 0; i < TASK_DELAY_NKINDS; i++)
		k |= version >= since[i] ? 1u << i : 0;
	return k;
}

static void check_delays(int r, const struct task_delays *d)
{
	if (r < 0) {
		FUZZ_CHECK(r == -EBADMSG || r == -EPROTO);
		FUZZ_CHECK(d->version == 12345 && d->known == 0);
		return;
	}
	FUZZ_CHECK(r == 0 && d->version != 0 && d->version != 15);
	FUZZ_CHECK((d->known & ~kinds_of(d->version)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct task_delays d = {.version = 12345};
	check_delays(parse_taskstats_struct(data, size, &d), &d);
	uint32_t seq = 0;
	if (size >= 12)
		memcpy(&seq, data + 8, sizeof(seq)); /* the message's own: its reply */
	const uint8_t *attrs = NULL;
	size_t len = 0;
	int r = genl_reply(data, size, seq, &attrs, &len);
	if (r < 0) {
		FUZZ_CHECK(attrs == NULL && len == 0 && r > -4096);
		return 0;
	}
	FUZZ_CHECK(attrs >= data && len <= size && (size_t)(attrs - data) + len <= size);
	d = (struct task_delays){.version = 12345};
	check_delays(parse_taskstats_reply(attrs, len, &d), &d);
	uint16_t id = 7;
	r = genl_family_id(attrs, len, &id);
	FUZZ_CHECK(r == 0 || ((r == -ENOENT || r == -EBADMSG) && id == 7));
	return 0;
}
