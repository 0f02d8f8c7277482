#include "parse/virt_stats.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "parse/parse.h"

int parse_virt_kvm_stat(const char *field, int *ret_vcpu, char *ret_name, size_t cap)
{
	int vcpu = -1;
	const char *name;
	if (!strncmp(field, "vm.", 3)) {
		name = field + 3;
	} else if (!strncmp(field, "vcpu.", 5)) {
		const char *dot = strchr(field + 5, '.');
		char num[16];
		int64_t v;
		size_t len = dot ? (size_t)(dot - (field + 5)) : 0;
		if (!len || len >= sizeof(num))
			return -ENOENT;
		memcpy(num, field + 5, len);
		num[len] = '\0';
		if (parse_i64(num, &v) < 0 || v < 0 || v > 65535)
			return -ENOENT;
		vcpu = (int)v;
		name = dot + 1;
	} else {
		return -ENOENT;
	}
	const char *suffix = strrchr(name, '.');
	if (!suffix || suffix == name || (strcmp(suffix, ".sum") && strcmp(suffix, ".cur") && strcmp(suffix, ".max")))
		return -ENOENT;
	size_t len = (size_t)(suffix - name);
	if (len >= cap)
		return -ENAMETOOLONG;
	memcpy(ret_name, name, len);
	ret_name[len] = '\0';
	*ret_vcpu = vcpu;
	return 0;
}
