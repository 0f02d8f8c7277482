/* libvirt's domain statistics field names (parse_virt_kvm_stat): a refused field leaves the
 * outputs untouched; an accepted one names a KVM statistic that fits, rebuilt from its parts. */
#include <string.h>

#include "fuzz.h"
#include "parse/virt_stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	char name[32] = "untouched";
	int vcpu = -7;
	int r = parse_virt_kvm_stat(s, &vcpu, name, sizeof(name));
	if (r < 0) {
		FUZZ_CHECK(vcpu == -7 && !strcmp(name, "untouched"));
	} else {
		FUZZ_CHECK(vcpu >= -1 && vcpu <= 65535 && name[0] && strlen(name) < sizeof(name));
		FUZZ_CHECK(strstr(s, name) != NULL);
	}
	free(s);
	return 0;
}
