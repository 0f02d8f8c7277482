/* libFuzzer target for every pure parser: the first byte picks the parser, the rest is the file.
 * Build and run: make fuzz (clang), or tests/cli/fuzz_smoke.sh for a short run in make check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ksm.h"
#include "parse/kvm_debugfs.h"
#include "parse/parse.h"
#include "parse/vmcmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned which = data[0] % 10;
	size_t len = size - 1;
	/* Parsers take a buffer and a length; give them an exact-size copy so overreads show. */
	char *buf = malloc(len + 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, len);
	buf[len] = '\0';
	switch (which) {
	case 0: { struct meminfo m; parse_meminfo(buf, len, &m); break; }
	case 1: { struct proc_status s; parse_status(buf, len, &s); break; }
	case 2: { struct ksm_stat k; parse_ksm_stat(buf, len, &k); break; }
	case 3: { struct smaps_rollup r; parse_smaps_rollup(buf, len, &r); break; }
	case 4: { struct proc_stat s; parse_stat(buf, len, &s); break; }
	case 5: { char path[512]; parse_cgroup(buf, len, path, sizeof(path)); break; }
	case 6: {
		size_t pos = 0;
		struct map_entry m;
		while (parse_maps_next(buf, len, &pos, &m) > 0)
			;
		break;
	}
	case 7: { struct vm_config c; parse_vm_cmdline(buf, len, &c); break; }
	case 8: { uint64_t v; char w[16]; parse_qemu_size(buf, len, 1, &v); parse_sysfs_choice(buf, w, sizeof(w)); break; }
	case 9: {
		uint64_t v;
		pid_t pid;
		int fd, id;
		parse_kvm_counter(buf, len, &v);
		parse_kvm_vm_dir(buf, &pid, &fd);
		parse_kvm_vcpu_dir(buf, &id);
		kvm_counter_name_ok(buf);
		kvm_stat_kind(buf);
		break;
	}
	}
	free(buf);
	return 0;
}
