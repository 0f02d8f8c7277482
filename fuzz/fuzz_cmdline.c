/* VM discovery from /proc/PID/cmdline (parse_vm_cmdline, src/parse/cmdline/vmcmd.c): the VMM is the
 * one argv[0] names, -ENOENT when none; name, uuid and vmid stay in their buffers; at most
 * VM_MAX_RAM_BLOCKS blocks; a known guest RAM size is not negative and holds every RAM block
 * (virtio-mem adds to it, nothing takes from it); parsing twice gives the same config. */
#include <errno.h>

#include "fuzz.h"
#include "parse/cmdline/vmcmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct vm_config c;
	int r = parse_vm_cmdline(buf, size, &c);
	enum vmm_kind kind = parse_vmm_kind(buf, size);
	if (!size) {
		FUZZ_CHECK(r == -EINVAL);
		return 0;
	}
	if (kind == VMM_NONE) {
		FUZZ_CHECK(r == -ENOENT);
		return 0;
	}
	FUZZ_CHECK(r == 0 && c.vmm == kind);
	FUZZ_CHECK(fuzz_terminated(c.name, sizeof(c.name)));
	FUZZ_CHECK(fuzz_terminated(c.uuid, sizeof(c.uuid)));
	FUZZ_CHECK(fuzz_terminated(c.vmid, sizeof(c.vmid)));
	FUZZ_CHECK(c.nblocks <= VM_MAX_RAM_BLOCKS);
	FUZZ_CHECK(c.guest_ram_bytes.known || c.guest_ram_bytes.v == 0);
	if (c.guest_ram_bytes.known) {
		FUZZ_CHECK(c.guest_ram_bytes.v >= 0);
		uint64_t sum = 0;
		for (size_t i = 0; i < c.nblocks; i++)
			FUZZ_CHECK(!__builtin_add_overflow(sum, c.block_bytes[i], &sum));
		FUZZ_CHECK(sum <= (uint64_t)c.guest_ram_bytes.v);
	}
	struct vm_config again;
	FUZZ_CHECK(parse_vm_cmdline(buf, size, &again) == 0);
	FUZZ_CHECK(!memcmp(&c, &again, sizeof(c)));
	return 0;
}
