#include "parse/kvm_debugfs.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

const char *kvm_stat_kind_name(enum kvm_stat_kind kind)
{
	switch (kind) {
	case KVM_STAT_EVENTS: return "events";
	case KVM_STAT_TIME_NS: return "time_ns";
	case KVM_STAT_GAUGE: return "gauge";
	case KVM_STAT_REASON: return "reason";
	case KVM_STAT_IGNORED: break;
	}
	return "ignored";
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), m = strlen(suffix);
	return l >= m && !memcmp(s + l - m, suffix, m);
}

enum kvm_stat_kind kvm_stat_kind(const char *name)
{
	/* STATS_DESC_ICOUNTER / _PCOUNTER / _IBOOLEAN in virt/kvm and arch/x86/kvm/x86.c. */
	static const char *const gauges[] = {
		"blocking", "guest_mode", "mmu_unsync", "pages_4k", "pages_2m", "pages_1g",
		"nx_lpage_splits", "max_mmu_rmap_size", "max_mmu_page_hash_collisions",
	};
	for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++)
		if (!strcmp(name, gauges[i]))
			return KVM_STAT_GAUGE;
	if (ends_with(name, "_hist") || !strcmp(name, "mmu_rmaps_stat"))
		return KVM_STAT_IGNORED;
	if (ends_with(name, "_ns"))
		return KVM_STAT_TIME_NS;
	return KVM_STAT_EVENTS;
}

int parse_kvm_counter(const char *buf, size_t len, uint64_t *ret)
{
	if (len < 2 || buf[len - 1] != '\n')
		return -EINVAL;
	uint64_t v = 0;
	for (size_t i = 0; i + 1 < len; i++) {
		unsigned d = (unsigned char)buf[i] - '0';
		if (d > 9)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

/* A decimal in [min, max] spanning exactly [s, end). */
static int whole_number(const char *s, const char *end, long min, long max, long *ret)
{
	if (s == end || end - s > 10 || (*s == '0' && end - s > 1))
		return -EINVAL;
	long v = 0;
	for (const char *p = s; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	if (v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_kvm_vm_dir(const char *name, pid_t *ret_pid, int *ret_fd)
{
	const char *dash = strchr(name, '-');
	long pid, fd;
	if (!dash || whole_number(name, dash, 1, INT_MAX, &pid) < 0 ||
	    whole_number(dash + 1, dash + 1 + strlen(dash + 1), 0, INT_MAX, &fd) < 0)
		return -EINVAL;
	*ret_pid = (pid_t)pid;
	*ret_fd = (int)fd;
	return 0;
}

int parse_kvm_vcpu_dir(const char *name, int *ret_id)
{
	long id;
	if (strncmp(name, "vcpu", 4) || whole_number(name + 4, name + strlen(name), 0, INT_MAX, &id) < 0)
		return -EINVAL;
	*ret_id = (int)id;
	return 0;
}

bool kvm_counter_name_ok(const char *name)
{
	size_t n = 0;
	for (; name[n]; n++) {
		char c = name[n];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return n > 0 && n < 64;
}
