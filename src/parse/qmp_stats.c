#include "parse/qmp_stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {"cumulative", "instant", "peak", "linear-histogram", "log2-histogram"};

const char *qmp_stat_type_name(enum qmp_stat_type t)
{
	return (size_t)t < sizeof(type_names) / sizeof(type_names[0]) ? type_names[t] : "?";
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), m = strlen(suffix);
	return l >= m && !strcmp(s + l - m, suffix);
}

/* The kind the delta model needs, and the factor to nanoseconds for times. */
static void classify(struct qmp_stat_desc *st)
{
	st->to_ns = 1;
	switch (st->type) {
	case QMP_STAT_INSTANT:
	case QMP_STAT_PEAK: st->kind = KVM_STAT_GAUGE; return;
	case QMP_STAT_LINEAR_HIST:
	case QMP_STAT_LOG2_HIST: st->kind = KVM_STAT_IGNORED; return;
	case QMP_STAT_CUMULATIVE: break;
	}
	st->kind = KVM_STAT_EVENTS;
	if (!strcmp(st->unit, "seconds") && st->base == 10 && st->exponent >= -9 && st->exponent <= 0) {
		st->kind = KVM_STAT_TIME_NS;
		for (int e = st->exponent; e > -9; e--)
			st->to_ns *= 10;
	} else if (!st->unit[0] && ends_with(st->name, "_ns")) {
		st->kind = KVM_STAT_TIME_NS;
	}
}

static int parse_desc(const struct json_doc *d, const struct json_value *v, struct qmp_stat_desc *st)
{
	memset(st, 0, sizeof(*st));
	char type[32];
	int64_t base = 10, exponent = 0, bucket = 0;
	if (json_as_string(d, json_get(d, v, "name"), st->name, sizeof(st->name)) < 0 ||
	    json_as_string(d, json_get(d, v, "type"), type, sizeof(type)) < 0)
		return -EINVAL;
	size_t t = 0;
	while (t < sizeof(type_names) / sizeof(type_names[0]) && strcmp(type, type_names[t]))
		t++;
	if (t == sizeof(type_names) / sizeof(type_names[0]))
		return -EINVAL;
	st->type = (enum qmp_stat_type)t;
	const struct json_value *unit = json_get(d, v, "unit");
	if (unit && json_as_string(d, unit, st->unit, sizeof(st->unit)) < 0)
		return -EINVAL;
	const struct json_value *b = json_get(d, v, "base"), *e = json_get(d, v, "exponent"),
				*bs = json_get(d, v, "bucket-size");
	if ((b && json_as_i64(d, b, &base) < 0) || (e && json_as_i64(d, e, &exponent) < 0) || (bs && json_as_i64(d, bs, &bucket) < 0))
		return -EINVAL;
	if (base < 0 || base > 16 || exponent < -32 || exponent > 64 || bucket < 0 || bucket > UINT32_MAX)
		return -EINVAL;
	st->base = (int)base;
	st->exponent = (int)exponent;
	st->bucket_size = (uint32_t)bucket;
	classify(st);
	return 0;
}

/* The next entry of a reply's list that KVM provides, after prev (NULL: the first). An entry that
 * is not an object makes the whole reply malformed: NULL with *r = -EINVAL. */
static const struct json_value *next_kvm(const struct json_doc *d, const struct json_value *list,
					 const struct json_value *prev, int *r)
{
	for (const struct json_value *e = prev ? json_next(d, list, prev) : json_first(d, list); e;
	     e = json_next(d, list, e)) {
		if (e->type != JSON_OBJECT) {
			*r = -EINVAL;
			return NULL;
		}
		if (json_string_is(d, json_get(d, e, "provider"), "kvm"))
			return e;
	}
	return NULL;
}

int qmp_parse_schemas(const struct json_doc *d, const struct json_value *ret, struct qmp_stats_schema *out)
{
	if (!ret || ret->type != JSON_ARRAY)
		return -EINVAL;
	struct qmp_stats_schema s = {0};
	int r = 0;
	for (const struct json_value *e = next_kvm(d, ret, NULL, &r); e && r == 0; e = next_kvm(d, ret, e, &r)) {
		const struct json_value *target = json_get(d, e, "target"), *stats = json_get(d, e, "stats");
		enum qmp_stats_target t;
		if (json_string_is(d, target, "vm"))
			t = QMP_STATS_VM;
		else if (json_string_is(d, target, "vcpu"))
			t = QMP_STATS_VCPU;
		else
			continue; /* a target this version does not know */
		if (!stats || stats->type != JSON_ARRAY || s.desc[t]) {
			r = -EINVAL;
			break;
		}
		s.desc[t] = calloc(stats->count ? stats->count : 1, sizeof(*s.desc[t]));
		if (!s.desc[t]) {
			r = -ENOMEM;
			break;
		}
		for (const struct json_value *v = json_first(d, stats); v && r == 0; v = json_next(d, stats, v))
			r = parse_desc(d, v, &s.desc[t][s.n[t]++]);
	}
	if (r < 0) {
		qmp_schema_free(&s);
		return r;
	}
	*out = s;
	return 0;
}

void qmp_schema_free(struct qmp_stats_schema *s)
{
	if (!s)
		return;
	for (int t = 0; t < QMP_STATS_NTARGETS; t++) {
		free(s->desc[t]);
		s->desc[t] = NULL;
		s->n[t] = 0;
	}
}

int qmp_schema_index(const struct qmp_stats_schema *s, enum qmp_stats_target target, const char *name)
{
	for (size_t i = 0; i < s->n[target]; i++)
		if (!strcmp(s->desc[target][i].name, name))
			return (int)i;
	return -1;
}

/* One "value": an integer, a boolean, or a list of integers (a histogram). */
static int parse_value(const struct json_doc *d, const struct json_value *v, const struct qmp_stat_desc *st,
		       struct qmp_stat_value *out)
{
	uint64_t u;
	bool b;
	if (v->type == JSON_ARRAY) {
		uint64_t *buckets = malloc((v->count ? v->count : 1) * sizeof(*buckets));
		if (!buckets)
			return -ENOMEM;
		size_t n = 0;
		for (const struct json_value *x = json_first(d, v); x; x = json_next(d, v, x)) {
			if (json_as_u64(d, x, &buckets[n++]) < 0) {
				free(buckets);
				return -EINVAL;
			}
		}
		free(out->buckets);
		out->buckets = buckets;
		out->nbuckets = n;
		out->value = UNKNOWN;
		return 0;
	}
	if (json_as_bool(v, &b) == 0) {
		out->value = MAYBE(b);
		return 0;
	}
	if (v->type == JSON_NUMBER && d->text[v->offset] == '-')
		return -EINVAL; /* counters are unsigned */
	int r = json_as_u64(d, v, &u);
	if (r < 0)
		return r == -ERANGE ? 0 : r; /* beyond uint64: left unknown */
	if (st->kind == KVM_STAT_TIME_NS && st->to_ns > 1) {
		if (u > (uint64_t)INT64_MAX / (uint64_t)st->to_ns)
			return 0;
		u *= (uint64_t)st->to_ns;
	}
	out->value = u <= INT64_MAX ? MAYBE((int64_t)u) : UNKNOWN;
	return 0;
}

/* The "stats" list of one result into values[] (schema order). */
static int parse_stats_list(const struct json_doc *d, const struct json_value *stats, const struct qmp_stats_schema *s,
			    enum qmp_stats_target t, struct qmp_stat_value *values)
{
	if (!stats || stats->type != JSON_ARRAY)
		return -EINVAL;
	for (const struct json_value *v = json_first(d, stats); v; v = json_next(d, stats, v)) {
		char name[64];
		const struct json_value *value = json_get(d, v, "value");
		if (json_as_string(d, json_get(d, v, "name"), name, sizeof(name)) < 0 || !value)
			return -EINVAL;
		int i = qmp_schema_index(s, t, name);
		if (i < 0)
			continue; /* not in the schema we hold: a newer QEMU or kernel */
		int r = parse_value(d, value, &s->desc[t][i], &values[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static void values_reset(struct qmp_stat_value *values, size_t n)
{
	for (size_t i = 0; i < n; i++)
		values[i] = (struct qmp_stat_value){.value = UNKNOWN};
}

void qmp_values_free(struct qmp_stat_value *values, size_t n)
{
	for (size_t i = 0; values && i < n; i++)
		free(values[i].buckets);
	free(values);
}

int qmp_parse_vm_stats(const struct json_doc *d, const struct json_value *ret, const struct qmp_stats_schema *s,
		       struct qmp_stat_value *values)
{
	if (!ret || ret->type != JSON_ARRAY)
		return -EINVAL;
	values_reset(values, s->n[QMP_STATS_VM]);
	int r = 0;
	for (const struct json_value *e = next_kvm(d, ret, NULL, &r); e && r == 0; e = next_kvm(d, ret, e, &r))
		r = parse_stats_list(d, json_get(d, e, "stats"), s, QMP_STATS_VM, values);
	return r;
}

void qmp_vcpus_free(struct qmp_vcpu_stats *vcpus, size_t n, size_t nvalues)
{
	for (size_t i = 0; vcpus && i < n; i++) {
		for (size_t k = 0; vcpus[i].values && k < nvalues; k++)
			free(vcpus[i].values[k].buckets);
		free(vcpus[i].values);
	}
	free(vcpus);
}

int qmp_parse_vcpu_stats(const struct json_doc *d, const struct json_value *ret, const struct qmp_stats_schema *s,
			 struct qmp_vcpu_stats **ret_vcpus, size_t *ret_n)
{
	if (!ret || ret->type != JSON_ARRAY)
		return -EINVAL;
	size_t nv = s->n[QMP_STATS_VCPU], n = 0;
	struct qmp_vcpu_stats *vcpus = calloc(ret->count ? ret->count : 1, sizeof(*vcpus));
	if (!vcpus)
		return -ENOMEM;
	int r = 0;
	for (const struct json_value *e = next_kvm(d, ret, NULL, &r); e && r == 0; e = next_kvm(d, ret, e, &r)) {
		struct qmp_vcpu_stats *c = &vcpus[n];
		c->index = -1;
		if (json_as_string(d, json_get(d, e, "qom-path"), c->qom_path, sizeof(c->qom_path)) < 0 ||
		    !(c->values = calloc(nv ? nv : 1, sizeof(*c->values)))) {
			r = c->values ? -EINVAL : -ENOMEM;
			break;
		}
		n++;
		values_reset(c->values, nv);
		r = parse_stats_list(d, json_get(d, e, "stats"), s, QMP_STATS_VCPU, c->values);
	}
	if (r < 0) {
		qmp_vcpus_free(vcpus, n, nv);
		return r;
	}
	*ret_vcpus = vcpus;
	*ret_n = n;
	return 0;
}

static int cmp_vcpu(const void *a, const void *b)
{
	const struct qmp_vcpu_stats *x = a, *y = b;
	/* unknown indices (-1) last */
	unsigned xi = (unsigned)x->index, yi = (unsigned)y->index;
	return (xi > yi) - (xi < yi);
}

int qmp_parse_cpus(const struct json_doc *d, const struct json_value *ret, struct qmp_vcpu_stats *vcpus, size_t n)
{
	if (!ret || ret->type != JSON_ARRAY)
		return -EINVAL;
	for (const struct json_value *e = json_first(d, ret); e; e = json_next(d, ret, e)) {
		int64_t index, thread = 0;
		const struct json_value *path = json_get(d, e, "qom-path"), *tid = json_get(d, e, "thread-id");
		if (json_as_i64(d, json_get(d, e, "cpu-index"), &index) < 0 || !path || index < 0 || index > INT32_MAX ||
		    (tid && (json_as_i64(d, tid, &thread) < 0 || thread < 0 || thread > INT32_MAX)))
			return -EINVAL;
		for (size_t i = 0; i < n; i++) {
			if (json_string_is(d, path, vcpus[i].qom_path)) {
				vcpus[i].index = (int)index;
				vcpus[i].thread = (pid_t)thread;
			}
		}
	}
	qsort(vcpus, n, sizeof(*vcpus), cmp_vcpu);
	return 0;
}
