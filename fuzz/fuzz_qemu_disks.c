/* A QEMU command line's disks (parse_qemu_disks, src/parse/cmdline/qemu_disks.c): 0 for any non-empty
 * input, -EINVAL for an empty one with the output untouched; at most QEMU_DISKS_MAX disks, each
 * string ending inside its buffer, each disk named by a drive or a node, a cache mode and an AIO
 * engine always said; every disk found again by its own names; parsing twice gives the same. */
#include <errno.h>

#include "fuzz.h"
#include "parse/cmdline/qemu_disks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	static struct qemu_disks d, again;
	d.n = 12345;
	int r = parse_qemu_disks(buf, size, &d);
	if (!size) {
		FUZZ_CHECK(r == -EINVAL && d.n == 12345);
		return 0;
	}
	FUZZ_CHECK(r == 0 && d.n <= QEMU_DISKS_MAX);
	for (size_t i = 0; i < d.n; i++) {
		const struct qemu_disk *k = &d.d[i];
		FUZZ_CHECK(fuzz_terminated(k->drive, sizeof(k->drive)) && fuzz_terminated(k->node_name, sizeof(k->node_name)));
		FUZZ_CHECK(fuzz_terminated(k->device_id, sizeof(k->device_id)) && fuzz_terminated(k->file, sizeof(k->file)));
		FUZZ_CHECK(fuzz_terminated(k->cache, sizeof(k->cache)) && fuzz_terminated(k->aio, sizeof(k->aio)));
		FUZZ_CHECK(k->drive[0] || k->node_name[0]);
		FUZZ_CHECK(k->cache[0] && k->aio[0]);
		const struct qemu_disk *f = qemu_disks_find(&d, k->drive, k->node_name, NULL);
		FUZZ_CHECK(f && (!strcmp(f->drive, k->drive) || !strcmp(f->node_name, k->node_name)));
	}
	FUZZ_CHECK(parse_qemu_disks(buf, size, &again) == 0);
	FUZZ_CHECK(!memcmp(&d, &again, sizeof(d)));
	return 0;
}
