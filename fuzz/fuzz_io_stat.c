/* A VM's I/O and placement counters (parse/io_stat.c, parse/numa_stat.c): /proc/PID/io,
 * io.stat, blkio, fdinfo's iff:, a macvtap's /dev/tapN, net/dev, numa_stat, numa_maps and a
 * task's Cpus_allowed_list (a QEMU command line's tap: fuzz_qemu_cmdline.c).
 * No figure read is negative, a name stays in its buffer, a failed parse leaves its outputs as
 * they were, and a cgroup's sums never fall below one device's figure. */
#include <errno.h>

#include "fuzz.h"
#include "parse/io_stat.h"
#include "parse/numa_stat.h"

static bool non_negative(maybe_i64 v) { return !v.known || v.v >= 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct proc_io io;
	if (parse_proc_io(buf, size, &io) >= 0)
		FUZZ_CHECK(non_negative(io.rchar) && non_negative(io.wchar) && non_negative(io.read_bytes) &&
			   non_negative(io.write_bytes) && (io.read_bytes.known || io.write_bytes.known));
	struct cgroup_io cio;
	if (parse_cgroup_io_stat(buf, size, &cio) == 0)
		FUZZ_CHECK(cio.read_bytes.known && cio.read_bytes.v >= 0 && cio.write_bytes.v >= 0 &&
			   cio.read_ios.v >= 0 && cio.write_ios.v >= 0);
	int64_t rd = -1, wr = -1;
	if (parse_blkio(buf, size, &rd, &wr) == 0)
		FUZZ_CHECK(rd >= 0 && wr >= 0);
	else
		FUZZ_CHECK(rd == -1 && wr == -1);
	char name[16] = "untouched";
	int r = parse_fdinfo_iff(buf, size, name, sizeof(name));
	FUZZ_CHECK(fuzz_terminated(name, sizeof(name)));
	FUZZ_CHECK(r == 0 ? name[0] != '\0' : !strcmp(name, "untouched"));
	struct net_dev_stats st;
	if (parse_net_dev(buf, size, "tap0", &st) == 0)
		FUZZ_CHECK(st.rx_bytes >= 0 && st.tx_bytes >= 0 && st.rx_dropped >= 0 && st.tx_dropped >= 0 &&
			   st.rx_packets >= 0 && st.tx_packets >= 0);
	int64_t nodes[NUMA_NODES_MAX] = {0};
	size_t n = 0;
	r = parse_numa_stat(buf, size, "anon", nodes, &n);
	FUZZ_CHECK(n <= NUMA_NODES_MAX && (r == 0 || n == 0));
	for (size_t i = 0; i < NUMA_NODES_MAX; i++)
		FUZZ_CHECK(nodes[i] >= 0 && (i < n || nodes[i] == 0));
	uint64_t cpus[2] = {0};
	r = parse_cpus_allowed(buf, size, cpus, 128);
	FUZZ_CHECK(r == 0 || r == -ENOENT || r == -EINVAL || r == -ERANGE);
	FUZZ_CHECK(r != -ENOENT || (cpus[0] == 0 && cpus[1] == 0));
	struct numa_maps_sum maps = {.nnodes = 99};
	if (parse_numa_maps(buf, size, &maps) == 0) {
		FUZZ_CHECK(maps.nnodes <= NUMA_NODES_MAX);
		for (size_t i = 0; i < NUMA_NODES_MAX; i++)
			FUZZ_CHECK(maps.hugetlb_bytes[i] >= 0 && maps.hugetlb_bytes[i] <= maps.bytes[i] &&
				   (i < maps.nnodes || maps.bytes[i] == 0));
	} else {
		FUZZ_CHECK(maps.nnodes == 99);
	}
	char target[64];
	snprintf(target, sizeof(target), "%.*s", (int)(size < 63 ? size : 63), buf);
	int ifindex = -1;
	if (parse_dev_tap(target, &ifindex) == 0)
		/* /dev/tapN, or /tapN from an opener whose mount namespace is gone */
		FUZZ_CHECK(ifindex > 0 && (!strncmp(target, "/dev/tap", 8) || !strncmp(target, "/tap", 4)));
	else
		FUZZ_CHECK(ifindex == -1);
	return 0;
}
