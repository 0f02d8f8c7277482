/* KVM's counters of one VM through QEMU's QMP (query-stats), for VMs whose debugfs counters are
 * closed: the same counters per VM and per vCPU, histograms as arrays, kinds and units from the
 * stats descriptors. Each read is one short QMP visit (connect, ask, close): the socket is never
 * held between reads.
 *
 *   struct qmp_stats_source *src;
 *   qmp_stats_source_new(path, 500, &src);
 *   struct qmp_stats_sample a, b;
 *   if (qmp_stats_read(src, &a) < 0) ... qmp_stats_reason(src): one line
 *   const struct qmp_stats_schema *s = qmp_stats_source_schema(src);
 *   s->desc[QMP_STATS_VCPU][i].kind with a.vcpus[k].values[i].value: feed kvm_change() as for debugfs
 *   qmp_stats_sample_free(&a); qmp_stats_source_free(src);
 *
 * The schema is read on the first visit and kept: value i means the same counter in every
 * sample of a source. */
#ifndef VMHOST_CORE_QMP_STATS_H
#define VMHOST_CORE_QMP_STATS_H

#include "parse/qmp_stats.h"

struct qmp_stats_sample {
	double monotonic_seconds;       /* when the VM's stats were read */
	struct qmp_stat_value *vm;      /* [schema n[QMP_STATS_VM]] */
	struct qmp_vcpu_stats *vcpus;   /* sorted by vCPU index */
	size_t nvcpus;
};

struct qmp_stats_source;

int qmp_stats_source_new(const char *socket_path, int timeout_ms, struct qmp_stats_source **ret);
void qmp_stats_source_free(struct qmp_stats_source *s);

/* One visit: query-stats-schemas (first visit only), query-cpus-fast, query-stats for the VM and
 * the vCPUs. Returns 0 or a negative errno: the QMP client's (qmp_strerror), -EOPNOTSUPP (QEMU
 * older than 7.1: no query-stats), -ENODATA (no KVM statistics: TCG, or not a KVM guest),
 * -EINVAL (a reply of the wrong shape). qmp_stats_reason() says it in one line. */
int qmp_stats_read(struct qmp_stats_source *s, struct qmp_stats_sample *ret);
void qmp_stats_sample_free(struct qmp_stats_sample *sample, const struct qmp_stats_source *s);

/* Empty until the first successful visit. */
const struct qmp_stats_schema *qmp_stats_source_schema(const struct qmp_stats_source *s);
/* The QEMU version from the last visit's greeting (major*10000 + minor*100 + micro); 0 before. */
unsigned qmp_stats_source_version(const struct qmp_stats_source *s);
/* The last failure in one line ("QMP busy: ...", "QMP error reply: CommandNotFound: ..."). */
const char *qmp_stats_reason(const struct qmp_stats_source *s);

#endif
