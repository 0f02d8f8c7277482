/* vmhost doctor's model: what is wrong with this host's VMs. The evidence is gathered once (one
 * survey over an interval, KSM samples around it, KVM settings and counters, a timed sample of
 * smaps_rollup reads, and growth verdicts the caller brings from the store); a table of rules,
 * each a check over that evidence with its thresholds as named constants, turns it into findings
 * sorted by severity. docs/doctor.md documents every rule.
 *
 *   struct doctor_evidence e;
 *   doctor_gather(root, &opts, &e);     (the caller may fill e.growth before checking)
 *   struct doctor_findings f;
 *   doctor_check(&e, &f);
 *   ... f.v[0 .. f.n)
 *   doctor_findings_free(&f); doctor_evidence_free(&e);
 */
#ifndef VMHOST_CORE_DOCTOR_H
#define VMHOST_CORE_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/kvm/kvm_host.h"
#include "core/model/ksm.h"
#include "core/model/survey.h"

enum doctor_severity { DOCTOR_INFO, DOCTOR_WARNING, DOCTOR_CRITICAL };
const char *doctor_severity_name(enum doctor_severity s); /* "info", "warning", "critical" */
/* "info", "warning", "critical" -> 0 with *ret set, or -EINVAL. */
int doctor_severity_parse(const char *s, enum doctor_severity *ret);

/* ---- evidence (core/doctor/doctor_evidence.c) ---- */

/* The kinds of exit a VM's may be dominated by: KVM's io_exits, mmio_exits, halt_exits, and
 * insn_emulation (instructions KVM emulated, several per exit where it emulates a whole mode). */
enum { DOCTOR_EXIT_IO, DOCTOR_EXIT_MMIO, DOCTOR_EXIT_HALT, DOCTOR_EXIT_EMULATION, DOCTOR_EXIT_NKINDS };

/* The KVM counter of an exit kind ("io_exits", ..., "insn_emulation"). */
const char *doctor_exit_counter(int kind);

/* A VM's KVM exit counters over the interval (or since it started, without one). */
struct doctor_exits {
	pid_t pid;
	char name[256];
	bool over_interval; /* false: lifetime totals */
	double seconds;     /* of the interval; NaN for lifetime totals */
	maybe_i64 exits;
	maybe_i64 kinds[DOCTOR_EXIT_NKINDS];
	maybe_i64 halt_poll_ns, halt_poll_fail_ns; /* host CPU polling its halted vCPUs (success + fail), and failed */
	/* With --reasons: the port or MMIO access its exits hit most ("kvm_pio/0x80 out"), how often
	 * and how many port and MMIO accesses in all; "" and unknown without. */
	char top_reason[64];
	maybe_i64 top_reason_count, pio_count, mmio_count;
};

/* A VM whose KVM counters no source could read, with the reader's reason. */
struct doctor_unreadable {
	pid_t pid;
	char name[256];
	char why[320];
};

/* One timed smaps_rollup read. */
struct doctor_smaps {
	pid_t pid;
	char name[256];
	maybe_i64 rss_bytes;
	double seconds;
};

/* A VM that `vmhost growth` flags (filled by the caller from the store). */
struct doctor_growth {
	pid_t pid;
	char name[256];
	double bytes_per_hour, growth_bytes; /* slope and fitted growth in the window */
	double first_seconds;                /* Unix seconds of its first usable sample */
	size_t samples;
	maybe_i64 overhead_bytes;            /* the newest figure */
	maybe_i64 written_bytes;             /* written to storage over those samples (io_write); unknown */
};

struct doctor_opts {
	double interval_seconds;     /* > 0: rates over this interval; 0: one reading, lifetime figures */
	double smaps_budget_seconds; /* time for timed smaps_rollup reads (0: none) */
	double smaps_slow_seconds;   /* a read this long is slow (0: the rule's own, 10 ms) */
	const char *memo_dir;        /* NULL, or the VMs remembered between runs (survey_opts) */
	bool reasons;                /* count exit reasons (ports, MMIO) over the interval: tracepoints */
	const char *libvirt_uri;     /* the libvirt to read libvirt's QEMUs through; NULL qemu:///system */
	void (*under_way)(void *cls); /* NULL, or called once the interval's first readings are taken */
	void *under_way_cls;
};

struct doctor_evidence {
	struct host host;
	struct vm_list vms;
	struct kvm_host kvm;
	char thp_mode[16];  /* transparent_hugepage/enabled's word; "" unknown */
	int host_cpus;      /* online CPUs (<sys>/devices/system/cpu/online); -1 unknown */
	int numa_nodes;     /* <sys>/devices/system/node/node*; -1 unknown */
	pid_t ksmtuned_pid; /* 0 none */
	pid_t vmhost_tune_pid; /* a running `vmhost ksm tune`; 0 none */
	bool ksm_rates_known;      /* KSM present and sampled around an interval */
	struct ksm_sample ksm_before, ksm_after;
	struct ksm_rates ksm_rates;
	double interval_seconds;   /* as asked */
	double smaps_slow_seconds; /* as asked: accounting-smaps-slow's threshold (0: its own) */
	struct doctor_exits *exits; /* VMs with readable KVM counters */
	size_t nexits;
	char kvm_counters_why[160]; /* why there are none ("" when read or no VM) */
	char reasons_why[256];      /* with reasons: why they were not counted ("" when they were) */
	struct doctor_unreadable *unreadable; /* VMs whose KVM counters could not be read */
	size_t nunreadable;
	struct doctor_smaps *smaps;
	size_t nsmaps;
	bool growth_known;          /* a database was read */
	struct doctor_growth *growth;
	size_t ngrowth;
};

/* Takes every reading. 0, or a negative errno when the host's meminfo or process list cannot be
 * read (*ret_step as survey_take). */
int doctor_gather(const struct io_root *root, const struct doctor_opts *o, struct doctor_evidence *ret,
		  enum survey_step *ret_step);
void doctor_evidence_free(struct doctor_evidence *e);

/* ---- findings (core/doctor/doctor.c: the rules) ---- */

#define DOCTOR_MAX_EVIDENCE 14

enum doctor_value { DV_INT, DV_BYTES, DV_FLOAT, DV_PERCENT, DV_SECONDS, DV_TIME, DV_STR };

struct doctor_item {
	const char *key;      /* JSON key with its unit ("ksmd_cpu_percent"), also shown to people */
	enum doctor_value kind;
	maybe_i64 i;          /* DV_INT, DV_BYTES */
	double f;             /* DV_FLOAT, DV_PERCENT, DV_SECONDS, DV_TIME; NaN unknown */
	char s[512];          /* DV_STR */
};

struct doctor_finding {
	const char *id;       /* kebab-case, documented in docs/doctor.md */
	enum doctor_severity severity;
	pid_t pid;            /* 0: the host */
	char vm[256];         /* the VM's name; "" for the host or an unnamed VM */
	char summary[256];    /* one line */
	struct doctor_item ev[DOCTOR_MAX_EVIDENCE];
	size_t nev;
	char advice[512];     /* the fix: a setting or a command */
};

struct doctor_findings {
	struct doctor_finding *v;
	size_t n, cap;
	int err; /* -ENOMEM when a finding could not be kept */
};

/* A rule: its id and severity, and the check that appends its findings. */
struct doctor_rule {
	const char *id;
	enum doctor_severity severity;
	const char *arg; /* a parameter of the check (the KVM parameter for kvm-*-off), or NULL */
	void (*check)(const struct doctor_rule *r, const struct doctor_evidence *e, struct doctor_findings *out);
	const char *what; /* one line for `vmhost doctor --list` */
};
extern const struct doctor_rule doctor_rules[];
extern const size_t doctor_nrules;

/* The rule with that id, or with an old id kept as a deprecated alias ("vcpu-wait-high" is
 * "vcpu-delay-high"); *ret_deprecated (may be NULL) says which. NULL: no such rule. */
const struct doctor_rule *doctor_rule_find(const char *id, bool *ret_deprecated);

/* Runs every rule; findings sorted by severity (critical first), then by rule order and pid.
 * 0 or -ENOMEM. */
int doctor_check(const struct doctor_evidence *e, struct doctor_findings *ret);
void doctor_findings_free(struct doctor_findings *f);

#endif
