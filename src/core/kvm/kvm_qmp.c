/* One VM's KVM counters through QMP query-stats: see kvm_qmp.h. */
#include "core/kvm/kvm_qmp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/stop.h"
#include "io/peer/qmp.h"

struct kvm_qmp_vm {
	char *path;
	pid_t pid; /* the VM's: the only listener spoken to (0: any, for tests and tools) */
	int timeout_ms;
	struct qmp_stats_schema schema;
	bool have_schema;
	unsigned version; /* from the last visit's greeting; 0 unknown */
	char reason[640];
};

int kvm_qmp_vm_new(const char *socket_path, pid_t pid, int timeout_ms, struct kvm_qmp_vm **ret)
{
	struct kvm_qmp_vm *s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(socket_path))) {
		free(s);
		return -ENOMEM;
	}
	s->timeout_ms = timeout_ms;
	s->pid = pid;
	*ret = s;
	return 0;
}

void kvm_qmp_vm_free(struct kvm_qmp_vm *s)
{
	if (!s)
		return;
	qmp_schema_free(&s->schema);
	free(s->path);
	free(s);
}

const struct qmp_stats_schema *kvm_qmp_vm_schema(const struct kvm_qmp_vm *s)
{
	return &s->schema;
}

unsigned kvm_qmp_vm_version(const struct kvm_qmp_vm *s)
{
	return s->version;
}

const char *kvm_qmp_vm_reason(const struct kvm_qmp_vm *s)
{
	return s->reason;
}

void kvm_qmp_sample_free(struct kvm_qmp_sample *sample, const struct kvm_qmp_vm *s)
{
	if (!sample)
		return;
	qmp_values_free(sample->vm, s->schema.n[QMP_STATS_VM]);
	qmp_vcpus_free(sample->vcpus, sample->nvcpus, s->schema.n[QMP_STATS_VCPU]);
	*sample = (struct kvm_qmp_sample){0};
}

/* One command; a CommandNotFound for query-stats means QEMU predates it. */
static int call(struct kvm_qmp_vm *s, struct qmp *q, const char *cmd, const char *args, struct json_doc *d,
		const struct json_value **v)
{
	int r = qmp_call(q, cmd, args, d, v);
	if (r == -EREMOTEIO && !strcmp(qmp_error_class(q), "CommandNotFound") && !strncmp(cmd, "query-stats", 11)) {
		snprintf(s->reason, sizeof(s->reason), "QEMU has no %s (QEMU 7.1 or later has it)", cmd);
		return -EOPNOTSUPP;
	}
	if (r == -EREMOTEIO)
		snprintf(s->reason, sizeof(s->reason), "%s: %s: %s: %s", cmd, qmp_strerror(r), qmp_error_class(q),
			 qmp_error_desc(q));
	else if (r < 0)
		snprintf(s->reason, sizeof(s->reason), "%s: %s", cmd, qmp_strerror(r));
	return r;
}

static int bad_reply(struct kvm_qmp_vm *s, const char *cmd, int r)
{
	if (r == -EINVAL)
		snprintf(s->reason, sizeof(s->reason), "%s: unexpected reply", cmd);
	return r;
}

int kvm_qmp_vm_sample(struct kvm_qmp_vm *s, struct kvm_qmp_sample *ret)
{
	s->reason[0] = '\0';
	struct qmp *q;
	pid_t listener;
	int r = qmp_open(s->path, s->pid, s->timeout_ms, &q, &listener);
	if (r < 0) {
		qmp_open_why(r, listener, s->reason, sizeof(s->reason));
		return r;
	}
	s->version = qmp_qemu_version(q);
	struct kvm_qmp_sample sample = {0};
	struct json_doc d = {0};
	const struct json_value *v;
	if (!s->have_schema) {
		if ((r = call(s, q, "query-stats-schemas", "{\"provider\":\"kvm\"}", &d, &v)) < 0)
			goto out;
		struct qmp_stats_schema schema;
		r = bad_reply(s, "query-stats-schemas", qmp_parse_schemas(&d, v, &schema));
		json_free(&d);
		if (r < 0)
			goto out;
		if (schema.n[QMP_STATS_VM] + schema.n[QMP_STATS_VCPU] == 0) {
			qmp_schema_free(&schema);
			snprintf(s->reason, sizeof(s->reason), "QEMU reports no KVM statistics (not accel=kvm?)");
			r = -ENODATA;
			goto out;
		}
		s->schema = schema;
		s->have_schema = true;
	}
	if ((r = call(s, q, "query-stats", "{\"target\":\"vm\",\"providers\":[{\"provider\":\"kvm\"}]}", &d, &v)) < 0)
		goto out;
	sample.monotonic_seconds = clock_monotonic_seconds();
	sample.vm = calloc(s->schema.n[QMP_STATS_VM] ? s->schema.n[QMP_STATS_VM] : 1, sizeof(*sample.vm));
	r = sample.vm ? bad_reply(s, "query-stats vm", qmp_parse_vm_stats(&d, v, &s->schema, sample.vm)) : -ENOMEM;
	json_free(&d);
	if (r < 0)
		goto out;
	if ((r = call(s, q, "query-stats", "{\"target\":\"vcpu\",\"providers\":[{\"provider\":\"kvm\"}]}", &d, &v)) < 0)
		goto out;
	r = bad_reply(s, "query-stats vcpu", qmp_parse_vcpu_stats(&d, v, &s->schema, &sample.vcpus, &sample.nvcpus));
	json_free(&d);
	if (r < 0)
		goto out;
	if ((r = call(s, q, "query-cpus-fast", NULL, &d, &v)) < 0)
		goto out;
	r = bad_reply(s, "query-cpus-fast", qmp_parse_cpus(&d, v, sample.vcpus, sample.nvcpus));
	json_free(&d);
out:
	qmp_close(q);
	if (r < 0) {
		kvm_qmp_sample_free(&sample, s);
		return r;
	}
	*ret = sample;
	return 0;
}

/* ---- the counters laid out as debugfs has them ---- */

static bool scalar(const struct qmp_stat_desc *d) { return d->kind != KVM_STAT_IGNORED; }

/* The value of stat `name` in the sample: the VM's, or the sum over the vCPUs. */
static maybe_i64 value_of(const struct qmp_stats_schema *s, const struct kvm_qmp_sample *x, const char *name)
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
static int per_vcpu(const struct qmp_stats_schema *s, const struct kvm_qmp_sample *x, const char *const *names,
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
	struct kvm_qmp_sample x;
	int r = kvm_qmp_vm_sample(q, &x);
	if (r < 0)
		return r;
	const struct qmp_stats_schema *s = &q->schema;
	for (size_t i = 0; i < n; i++)
		values[i] = value_of(s, &x, names[i]);
	if (ret_per_vcpu)
		r = per_vcpu(s, &x, names, n, ret_per_vcpu, ret_index);
	*ret_vcpus = (int)x.nvcpus;
	kvm_qmp_sample_free(&x, q);
	return r;
}

size_t kvm_qmp_vm_counters(const struct kvm_qmp_vm *q, size_t cap, const char **ret_names,
			   enum kvm_stat_kind *ret_kinds)
{
	const struct qmp_stats_schema *s = &q->schema;
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
