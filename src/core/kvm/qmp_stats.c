#include "core/kvm/qmp_stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/stop.h"
#include "io/peer/qmp.h"

struct qmp_stats_source {
	char *path;
	int timeout_ms;
	struct qmp_stats_schema schema;
	bool have_schema;
	unsigned version; /* from the last visit's greeting; 0 unknown */
	char reason[640];
};

int qmp_stats_source_new(const char *socket_path, int timeout_ms, struct qmp_stats_source **ret)
{
	struct qmp_stats_source *s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(socket_path))) {
		free(s);
		return -ENOMEM;
	}
	s->timeout_ms = timeout_ms;
	*ret = s;
	return 0;
}

void qmp_stats_source_free(struct qmp_stats_source *s)
{
	if (!s)
		return;
	qmp_schema_free(&s->schema);
	free(s->path);
	free(s);
}

const struct qmp_stats_schema *qmp_stats_source_schema(const struct qmp_stats_source *s)
{
	return &s->schema;
}

unsigned qmp_stats_source_version(const struct qmp_stats_source *s)
{
	return s->version;
}

const char *qmp_stats_reason(const struct qmp_stats_source *s)
{
	return s->reason;
}

void qmp_stats_sample_free(struct qmp_stats_sample *sample, const struct qmp_stats_source *s)
{
	if (!sample)
		return;
	qmp_values_free(sample->vm, s->schema.n[QMP_STATS_VM]);
	qmp_vcpus_free(sample->vcpus, sample->nvcpus, s->schema.n[QMP_STATS_VCPU]);
	*sample = (struct qmp_stats_sample){0};
}

/* One command; a CommandNotFound for query-stats means QEMU predates it. */
static int call(struct qmp_stats_source *s, struct qmp *q, const char *cmd, const char *args, struct json_doc *d,
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

static int bad_reply(struct qmp_stats_source *s, const char *cmd, int r)
{
	if (r == -EINVAL)
		snprintf(s->reason, sizeof(s->reason), "%s: unexpected reply", cmd);
	return r;
}

int qmp_stats_read(struct qmp_stats_source *s, struct qmp_stats_sample *ret)
{
	s->reason[0] = '\0';
	struct qmp *q;
	int r = qmp_open(s->path, s->timeout_ms, &q);
	if (r < 0) {
		snprintf(s->reason, sizeof(s->reason), "%s", qmp_strerror(r));
		return r;
	}
	s->version = qmp_qemu_version(q);
	struct qmp_stats_sample sample = {0};
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
		qmp_stats_sample_free(&sample, s);
		return r;
	}
	*ret = sample;
	return 0;
}
