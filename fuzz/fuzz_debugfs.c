/* KVM's debugfs (parse/kvm_debugfs.c). The input is read both as a counter file and, up to its
 * first NUL, as a directory or file name. A counter is digits and a newline and prints back
 * to the same value; a VM directory "<pid>-<fd>" and a vCPU directory "vcpu<N>" print back to
 * the very name they were parsed from; a name accepted as a counter is [a-z0-9_]{1,63} and has
 * a kind. */
#include "fuzz.h"
#include "parse/kvm_debugfs.h"

static void counter(const char *buf, size_t len)
{
	uint64_t v = 7;
	int r = parse_kvm_counter(buf, len, &v);
	if (r < 0) {
		FUZZ_CHECK(v == 7); /* untouched on failure */
		return;
	}
	FUZZ_CHECK(r == 0 && len >= 2 && buf[len - 1] == '\n');
	for (size_t i = 0; i + 1 < len; i++)
		FUZZ_CHECK(buf[i] >= '0' && buf[i] <= '9');
	char line[32];
	int n = snprintf(line, sizeof(line), "%llu\n", (unsigned long long)v);
	uint64_t again;
	FUZZ_CHECK(parse_kvm_counter(line, (size_t)n, &again) == 0 && again == v);
}

static void names(const char *name)
{
	char printed[64];
	pid_t pid = -7;
	int fd = -7, id = -7;
	if (parse_kvm_vm_dir(name, &pid, &fd) == 0) {
		FUZZ_CHECK(pid > 0 && fd >= 0);
		snprintf(printed, sizeof(printed), "%d-%d", (int)pid, fd);
		FUZZ_CHECK(!strcmp(printed, name));
	} else {
		FUZZ_CHECK(pid == -7 && fd == -7);
	}
	if (parse_kvm_vcpu_dir(name, &id) == 0) {
		FUZZ_CHECK(id >= 0);
		snprintf(printed, sizeof(printed), "vcpu%d", id);
		FUZZ_CHECK(!strcmp(printed, name));
	} else {
		FUZZ_CHECK(id == -7);
	}
	enum kvm_stat_kind kind = kvm_stat_kind(name);
	FUZZ_CHECK(kind == KVM_STAT_EVENTS || kind == KVM_STAT_TIME_NS || kind == KVM_STAT_GAUGE ||
		   kind == KVM_STAT_IGNORED);
	FUZZ_CHECK(kvm_stat_kind_name(kind) != NULL);
	if (kvm_counter_name_ok(name)) {
		size_t l = strlen(name);
		FUZZ_CHECK(l >= 1 && l <= 63 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == l);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	counter((const char *)data, size);
	char *name = fuzz_cstring(data, size);
	names(name);
	free(name);
	return 0;
}
