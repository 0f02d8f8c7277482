/* KVM's binary statistics as QEMU's QMP returns them (QEMU 7.1+): the descriptors of
 * query-stats-schemas, the values of query-stats {"target": "vm"|"vcpu"}, and query-cpus-fast's
 * vCPU index and thread per qom-path. Pure: a parsed reply in, structs out. */
#ifndef VMHOST_PARSE_QMP_STATS_H
#define VMHOST_PARSE_QMP_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "parse/json.h"
#include "parse/kvm_debugfs.h"
#include "parse/maybe.h"

enum qmp_stats_target { QMP_STATS_VM, QMP_STATS_VCPU, QMP_STATS_NTARGETS };

enum qmp_stat_type { QMP_STAT_CUMULATIVE, QMP_STAT_INSTANT, QMP_STAT_PEAK, QMP_STAT_LINEAR_HIST, QMP_STAT_LOG2_HIST };

struct qmp_stat_desc {
	char name[64];
	enum qmp_stat_type type;
	enum kvm_stat_kind kind; /* as the debugfs reader's: cumulative -> events (time_ns for seconds
				  * or *_ns), instant/peak -> gauge, histograms -> ignored (see buckets) */
	char unit[16];           /* "" (a plain count), "bytes", "seconds", "cycles", "boolean" */
	int base, exponent;      /* the value is in unit * base^exponent (seconds, 10, -9: ns) */
	uint32_t bucket_size;    /* linear histograms */
	int64_t to_ns;           /* time_ns counters: multiply by this to get ns (1 for ns) */
};

struct qmp_stats_schema {
	struct qmp_stat_desc *desc[QMP_STATS_NTARGETS]; /* the "kvm" provider's, in QEMU's order */
	size_t n[QMP_STATS_NTARGETS];
};

struct qmp_stat_value {
	maybe_i64 value;   /* scalars (booleans 0/1; times in ns); unknown when absent or a histogram */
	uint64_t *buckets; /* histograms */
	size_t nbuckets;
};

struct qmp_vcpu_stats {
	char qom_path[128];
	int index;     /* cpu-index from query-cpus-fast; -1 when unknown */
	pid_t thread;  /* the vCPU's thread id; 0 when unknown */
	struct qmp_stat_value *values; /* [schema n[QMP_STATS_VCPU]] */
};

const char *qmp_stat_type_name(enum qmp_stat_type t); /* "cumulative", ..., "log2-histogram" */

/* query-stats-schemas' return value. 0, -EINVAL (not the expected shape), -ENOMEM. */
int qmp_parse_schemas(const struct json_doc *d, const struct json_value *ret, struct qmp_stats_schema *out);
void qmp_schema_free(struct qmp_stats_schema *s);
/* A stat's index in the schema, or -1. */
int qmp_schema_index(const struct qmp_stats_schema *s, enum qmp_stats_target target, const char *name);

/* query-stats {"target": "vm"}: the kvm provider's values in schema order into values[n[VM]]. */
int qmp_parse_vm_stats(const struct json_doc *d, const struct json_value *ret, const struct qmp_stats_schema *s,
		       struct qmp_stat_value *values);
/* query-stats {"target": "vcpu"}: one entry per vCPU, in reply order (index -1, thread 0). */
int qmp_parse_vcpu_stats(const struct json_doc *d, const struct json_value *ret, const struct qmp_stats_schema *s,
			 struct qmp_vcpu_stats **ret_vcpus, size_t *ret_n);
/* query-cpus-fast: fills index and thread of the vCPUs whose qom-path matches, then sorts them
 * by index. */
int qmp_parse_cpus(const struct json_doc *d, const struct json_value *ret, struct qmp_vcpu_stats *vcpus, size_t n);

void qmp_values_free(struct qmp_stat_value *values, size_t n); /* frees the buckets and values */
void qmp_vcpus_free(struct qmp_vcpu_stats *vcpus, size_t n, size_t nvalues);

#endif
