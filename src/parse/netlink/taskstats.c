/* struct taskstats' delays read by their places (taskstats.h). */
#include "parse/netlink/taskstats.h"

#include <errno.h>
#include <linux/taskstats.h>
#include <string.h>

#include "parse/netlink/genl.h"

/* Where each delay's count and total sit (the total right after its count), and the version that
 * added it. The places are the C layout of struct taskstats (linux/taskstats.h): every version
 * but 15 only appended fields. */
static const struct {
	size_t offset;
	unsigned since;
} places[TASK_DELAY_NKINDS] = {
	[TASK_DELAY_CPU] = {16, 1},        [TASK_DELAY_BLKIO] = {32, 1},      [TASK_DELAY_SWAPIN] = {48, 1},
	[TASK_DELAY_RECLAIM] = {312, 7},   [TASK_DELAY_THRASHING] = {328, 9}, [TASK_DELAY_COMPACT] = {352, 11},
	[TASK_DELAY_WPCOPY] = {400, 13},   [TASK_DELAY_IRQ] = {416, 14},
};

#if TASKSTATS_VERSION >= 13
/* The installed header agrees wherever it has the field. */
_Static_assert(offsetof(struct taskstats, cpu_count) == 16, "cpu_count");
_Static_assert(offsetof(struct taskstats, freepages_count) == 312, "freepages_count");
_Static_assert(offsetof(struct taskstats, thrashing_count) == 328, "thrashing_count");
_Static_assert(offsetof(struct taskstats, compact_count) == 352, "compact_count");
_Static_assert(offsetof(struct taskstats, wpcopy_count) == 400, "wpcopy_count");
#endif

static uint64_t u64_at(const uint8_t *p, size_t at)
{
	uint64_t v;
	memcpy(&v, p + at, sizeof(v));
	return v;
}

int parse_taskstats_struct(const uint8_t *stats, size_t len, struct task_delays *ret)
{
	uint16_t version;
	if (len < places[TASK_DELAY_SWAPIN].offset + 16)
		return -EBADMSG;
	memcpy(&version, stats, sizeof(version));
	if (version == 0)
		return -EBADMSG;
	if (version == 15)
		return -EPROTO;
	struct task_delays d = {.version = version};
	for (int k = 0; k < TASK_DELAY_NKINDS; k++) {
		size_t at = places[k].offset;
		if (version < places[k].since || len < at + 16)
			continue;
		d.known |= 1u << k;
		d.count[k] = u64_at(stats, at);
		d.ns[k] = u64_at(stats, at + 8);
	}
	*ret = d;
	return 0;
}

int parse_taskstats_reply(const uint8_t *attrs, size_t len, struct task_delays *ret)
{
	struct genl_attr aggr, stats;
	int r = genl_attr_find(attrs, len, TASKSTATS_TYPE_AGGR_TGID, &aggr);
	if (r == -ENOENT)
		r = genl_attr_find(attrs, len, TASKSTATS_TYPE_AGGR_PID, &aggr);
	if (r == 0)
		r = genl_attr_find(aggr.data, aggr.len, TASKSTATS_TYPE_STATS, &stats);
	if (r < 0)
		return -EBADMSG;
	return parse_taskstats_struct(stats.data, stats.len, ret);
}
