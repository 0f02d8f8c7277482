#include "core/kvm/kvm_virt.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
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

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* The distinct vCPU numbers of the domain's vcpu.N.NAME fields, ascending, into index (room for
 * nparams); returns how many. */
static size_t vcpu_numbers(const struct virt_domain *d, int *index)
{
	size_t nv = 0;
	for (size_t p = 0; p < d->nparams; p++) {
		char name[64];
		int vcpu;
		if (parse_virt_kvm_stat(d->params[p].field, &vcpu, name, sizeof(name)) < 0 || vcpu < 0)
			continue;
		bool seen = false;
		for (size_t i = 0; i < nv && !seen; i++)
			seen = index[i] == vcpu;
		if (!seen)
			index[nv++] = vcpu;
	}
	qsort(index, nv, sizeof(*index), cmp_int);
	return nv;
}

int kvm_virt_vcpus(const struct virt_domain *d, const char *const *names, size_t n, int *ret_vcpus,
		   maybe_i64 **ret_per, int **ret_index)
{
	int *index = malloc((d->nparams ? d->nparams : 1) * sizeof(*index));
	if (!index)
		return -ENOMEM;
	size_t nv = vcpu_numbers(d, index);
	maybe_i64 *per = malloc((nv && n ? nv * n : 1) * sizeof(*per));
	if (!per) {
		free(index);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nv * n; i++)
		per[i] = UNKNOWN;
	for (size_t p = 0; p < d->nparams; p++) {
		char name[64];
		int vcpu;
		if (parse_virt_kvm_stat(d->params[p].field, &vcpu, name, sizeof(name)) < 0 || vcpu < 0)
			continue;
		const int *at = bsearch(&vcpu, index, nv, sizeof(*index), cmp_int);
		for (size_t c = 0; at && c < n; c++)
			if (!strcmp(names[c], name))
				per[(size_t)(at - index) * n + c] = MAYBE(d->params[p].i);
	}
	*ret_vcpus = (int)nv;
	*ret_per = per;
	*ret_index = index;
	return 0;
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
