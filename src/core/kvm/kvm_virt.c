#include "core/kvm/kvm_virt.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "parse/virt_stats.h"

void kvm_virt_values(const struct virt_domain *d, const char *const *names, size_t n, maybe_i64 *values)
{
	for (size_t c = 0; c < n; c++)
		values[c] = UNKNOWN;
	for (size_t p = 0; p < d->nparams; p++) {
		char name[64];
		int vcpu;
		if (parse_virt_kvm_stat(d->params[p].field, &vcpu, name, sizeof(name)) < 0)
			continue;
		for (size_t c = 0; c < n; c++) {
			if (strcmp(names[c], name))
				continue;
			values[c] = MAYBE((values[c].known ? values[c].v : 0) + d->params[p].i);
			break;
		}
	}
}

size_t kvm_virt_counters(const struct virt_domain *d, char (*names)[64], enum kvm_stat_kind *kinds, size_t cap)
{
	size_t n = 0;
	for (size_t p = 0; p < d->nparams; p++) {
		char name[64];
		int vcpu;
		if (parse_virt_kvm_stat(d->params[p].field, &vcpu, name, sizeof(name)) < 0)
			continue;
		bool seen = false;
		for (size_t i = 0; i < n && i < cap && !seen; i++)
			seen = !strcmp(names[i], name);
		if (seen)
			continue;
		if (n == cap)
			break;
		memcpy(names[n], name, sizeof(name));
		kinds[n] = kvm_stat_kind(name);
		n++;
	}
	return n;
}

const struct virt_domain *kvm_virt_find(const struct virt_domains *d, const char *uuid)
{
	return virt_domain_find(d, uuid);
}
