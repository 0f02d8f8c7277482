/* One VM's KVM counters through QMP: see kvm_qmp.h. */
#include "core/kvm/kvm_qmp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/kvm/qmp_stats.h"

struct kvm_qmp_vm {
	struct qmp_stats_source *src;
};

int kvm_qmp_vm_new(const char *socket_path, struct kvm_qmp_vm **ret)
{
	struct kvm_qmp_vm *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	int r = qmp_stats_source_new(socket_path, KVM_QMP_TIMEOUT_MS, &q->src);
	if (r < 0) {
		free(q);
		return r;
	}
	*ret = q;
	return 0;
}

void kvm_qmp_vm_free(struct kvm_qmp_vm *q)
{
	if (!q)
		return;
	qmp_stats_source_free(q->src);
	free(q);
}

const char *kvm_qmp_vm_reason(const struct kvm_qmp_vm *q) { return qmp_stats_reason(q->src); }

unsigned kvm_qmp_vm_version(const struct kvm_qmp_vm *q) { return qmp_stats_source_version(q->src); }

static bool scalar(const struct qmp_stat_desc *d) { return d->kind != KVM_STAT_IGNORED; }

/* The value of stat `name` in the sample: the VM's, or the sum over the vCPUs. */
static maybe_i64 value_of(const struct qmp_stats_schema *s, const struct qmp_stats_sample *x, const char *name)
{
	int i = qmp_schema_index(s, QMP_STATS_VM, name);
	if (i >= 0 && scalar(&s->desc[QMP_STATS_VM][i]))
		return x->vm[i].value;
	i = qmp_schema_index(s, QMP_STATS_VCPU, name);
	if (i < 0 || !scalar(&s->desc[QMP_STATS_VCPU][i]) || !x->nvcpus)
		return UNKNOWN;
	int64_t sum = 0;
	for (size_t c = 0; c < x->nvcpus; c++) {
		maybe_i64 v = x->vcpus[c].values[i].value;
		if (!v.known)
			return UNKNOWN;
		sum += v.v;
	}
	return MAYBE(sum);
}

/* Each vCPU's values of the names: [nvcpus][n], and the vCPUs' indices. */
static int per_vcpu(const struct qmp_stats_schema *s, const struct qmp_stats_sample *x, const char *const *names,
		    size_t n, maybe_i64 **ret_values, int **ret_index)
{
	maybe_i64 *v = malloc((x->nvcpus * n > 0 ? x->nvcpus * n : 1) * sizeof(*v));
	int *idx = malloc((x->nvcpus ? x->nvcpus : 1) * sizeof(*idx));
	if (!v || !idx) {
		free(v);
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int k = qmp_schema_index(s, QMP_STATS_VCPU, names[i]);
		bool ok = k >= 0 && scalar(&s->desc[QMP_STATS_VCPU][k]);
		for (size_t c = 0; c < x->nvcpus; c++)
			v[c * n + i] = ok ? x->vcpus[c].values[k].value : UNKNOWN;
	}
	for (size_t c = 0; c < x->nvcpus; c++)
		idx[c] = x->vcpus[c].index >= 0 ? x->vcpus[c].index : (int)c;
	*ret_values = v;
	*ret_index = idx;
	return 0;
}

int kvm_qmp_vm_read(struct kvm_qmp_vm *q, const char *const *names, size_t n, maybe_i64 *values, int *ret_vcpus,
		    maybe_i64 **ret_per_vcpu, int **ret_index)
{
	struct qmp_stats_sample x;
	int r = qmp_stats_read(q->src, &x);
	if (r < 0)
		return r;
	const struct qmp_stats_schema *s = qmp_stats_source_schema(q->src);
	for (size_t i = 0; i < n; i++)
		values[i] = value_of(s, &x, names[i]);
	if (ret_per_vcpu)
		r = per_vcpu(s, &x, names, n, ret_per_vcpu, ret_index);
	*ret_vcpus = (int)x.nvcpus;
	qmp_stats_sample_free(&x, q->src);
	return r;
}

size_t kvm_qmp_vm_counters(const struct kvm_qmp_vm *q, size_t cap, const char **ret_names,
			   enum kvm_stat_kind *ret_kinds)
{
	const struct qmp_stats_schema *s = qmp_stats_source_schema(q->src);
	size_t n = 0;
	for (int t = QMP_STATS_VM; t < QMP_STATS_NTARGETS; t++)
		for (size_t i = 0; i < s->n[t]; i++) {
			const struct qmp_stat_desc *d = &s->desc[t][i];
			if (!scalar(d) || (t == QMP_STATS_VCPU && qmp_schema_index(s, QMP_STATS_VM, d->name) >= 0))
				continue;
			if (n < cap) {
				ret_names[n] = d->name;
				ret_kinds[n] = d->kind;
			}
			n++;
		}
	return n;
}
