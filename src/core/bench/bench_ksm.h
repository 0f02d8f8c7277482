/* bench ksm's experiment: six KSM policies, each from unmerged state, on one identical workload of
 * VM-like processes (core/bench/workload.h) in one of four lifecycle scenarios. Per policy and run: saved
 * bytes and ksmd CPU over time, the final savings and ksmd CPU over the steady window at the end;
 * over the runs, the time and ksmd CPU to 95% of the achievable savings after the last guest
 * arrived or left, and the verdict of vmhost's law against the others. */
#ifndef VMHOST_CORE_BENCH_KSM_H
#define VMHOST_CORE_BENCH_KSM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tune/tuner.h"
#include "core/bench/workload.h"
#include "io/io.h"
#include "parse/maybe.h"

#define BENCH_KSM_MAX_GUESTS 16
#define BENCH_KSM_MAX_REPEAT 9
#define BENCH_KSM_SAMPLE_SECONDS 1.0

enum bench_ksm_policy {
	BENCH_KSM_DEFAULT,      /* 100 pages / 20 ms */
	BENCH_KSM_CONSERVATIVE, /* 100 pages / 120 ms */
	BENCH_KSM_KSMTUNED,     /* Debian's ksmtuned itself, its defaults (core/tune/ksmtuned.h) */
	BENCH_KSM_KSMTUNED_MODEL, /* ksmtuned's adjust() simulated at its 60 s cadence */
	BENCH_KSM_ADVISOR,      /* advisor_mode=scan-time */
	BENCH_KSM_VMHOST,       /* the 'vmhost ksm tune' law */
	BENCH_KSM_NPOLICIES
};
/* "kernel-default", "conservative", "ksmtuned", "ksmtuned-model", "kernel-advisor", "vmhost". */
const char *bench_ksm_policy_name(enum bench_ksm_policy p);
/* The policy of that name, or -EINVAL. */
int bench_ksm_policy_parse(const char *name);

/* When the guests come and go (bench_ksm_plan). */
enum bench_ksm_scenario {
	BENCH_KSM_START,    /* every guest up before the policy starts */
	BENCH_KSM_LATE,     /* one guest from the start; the others arrive once it is scanned */
	BENCH_KSM_CHURN,    /* guests arrive one by one, the first leaves after the last arrived */
	BENCH_KSM_VOLATILE, /* as start, with most of each guest's memory rewritten all the time */
	BENCH_KSM_NSCENARIOS
};
/* "start", "late", "churn", "volatile". */
const char *bench_ksm_scenario_name(enum bench_ksm_scenario s);
/* The scenario of that name, or -EINVAL. */
int bench_ksm_scenario_parse(const char *name);

struct bench_ksm_config {
	enum bench_ksm_scenario scenario;
	unsigned guests; /* 2 to BENCH_KSM_MAX_GUESTS */
	uint64_t guest_bytes;
	double duration_seconds, steady_seconds; /* per policy; the last steady_seconds of it */
	int repeat;      /* 1 to BENCH_KSM_MAX_REPEAT, interleaved */
	bool policy_on[BENCH_KSM_NPOLICIES];
};

/* The workload of guest i: 50% identical across guests (one image), 10% zero, 10% volatile;
 * in the volatile scenario 20% identical, 10% zero, 60% volatile. */
struct workload_spec bench_ksm_guest_spec(const struct bench_ksm_config *c, unsigned i);

/* When guest i runs, in seconds since its policy started: start 0 is up and unmerged before the
 * policy starts; stop INFINITY is until the end. */
struct bench_ksm_guest_plan {
	double start, stop;
};

/* One sample a BENCH_KSM_SAMPLE_SECONDS of one run. */
struct bench_ksm_series {
	double *t, *saved; /* seconds since start, workload saved bytes */
	int64_t *cpu_ns;   /* ksmd CPU since start, -1 unknown */
	size_t n, cap;
};

struct bench_ksm_run {
	struct bench_ksm_series s;
	maybe_i64 final_saved;
	double steady_cpu_percent; /* NaN when the series is too short or ksmd's CPU unknown */
	bool available;            /* false: not run, or cannot run here (note says why) */
	const char *note;          /* why it cannot run here: no advisor, ksmtuned not installed */
	/* What the guests paid: their write-protect copy stalls over the run (copies of pages KSM
	 * merged that they wrote to), summed over its guests, from delay accounting; NaN unread. */
	double copy_stall_seconds;
};

struct bench_ksm_result {
	struct bench_ksm_config cfg;
	struct bench_ksm_guest_plan plan[BENCH_KSM_MAX_GUESTS];
	double arrival; /* bench_ksm_plan's: the time to 95% counts from here */
	struct bench_ksm_run (*runs)[BENCH_KSM_NPOLICIES]; /* [cfg.repeat], zero for policies off */
	char copy_stall_why[200]; /* why the guests' copy stalls are unknown; "" when they were read */
};
/* NULL does nothing. */
void bench_ksm_result_free(struct bench_ksm_result *r);

/* What the experiment tells while it runs (it never prints). */
enum bench_ksm_event_kind {
	BENCH_KSM_READY, /* a policy's guests are up and unmerged, its run starts */
	BENCH_KSM_TUNED, /* vmhost's law changed a setting */
};
struct bench_ksm_event {
	enum bench_ksm_event_kind kind;
	enum bench_ksm_policy policy;
	double t;                              /* seconds since the policy's start */
	const struct tuner_decision *decision; /* BENCH_KSM_TUNED */
};
typedef void (*bench_ksm_event_fn)(const struct bench_ksm_event *e, void *arg);

/* Runs every policy of c repeat times. The caller holds the KSM lock and has begun the KSM guard
 * (it restores the settings afterwards). Returns 0 and the result, -EINTR when a stop was
 * requested, or another negative errno (-EACCES/-EPERM: no privilege). */
int bench_ksm_run(const struct io_root *root, const struct bench_ksm_config *c, bench_ksm_event_fn on_event,
		  void *arg, struct bench_ksm_result **ret);

/* Over the runs: medians (NaN counting as "did not get there") per policy, and the verdict. */
struct bench_ksm_summary {
	double achievable_bytes; /* the most any policy saved after the arrival */
	int64_t mergeable_bytes; /* identical content alone, of the guests running at the end */
	int64_t zero_bytes;      /* zero pages of every guest running at the end */
	double seconds_to_95pct[BENCH_KSM_NPOLICIES]; /* since the arrival, as its ksmd CPU */
	double ksmd_cpu_seconds_to_95pct[BENCH_KSM_NPOLICIES];
	double steady_cpu_percent[BENCH_KSM_NPOLICIES];
	double saved_bytes[BENCH_KSM_NPOLICIES];
	double copy_stall_seconds[BENCH_KSM_NPOLICIES]; /* the guests', over a run */
	int fastest_static;               /* kernel-default or conservative, -1 when neither got there */
	double vmhost_time_ratio;         /* vmhost's time to 95% over the fastest static one's */
	bool vmhost_cpu_ok;               /* steady ksmd CPU at most conservative's */
	double vmhost_time_ratio_advisor; /* vmhost's over the advisor's time to 95% */
	double vmhost_cpu_ratio_advisor;  /* vmhost's over the advisor's steady ksmd CPU */
};
void bench_ksm_summarize(const struct bench_ksm_result *r, struct bench_ksm_summary *ret);

/* For tests: the plan, the series and the figures bench_ksm_run puts together. */

/* Fills plan[0 .. c->guests) for the scenario and returns the time of the last arrival or
 * departure, from which the time to 95% counts: late: the others arrive at a third of the
 * duration; churn: one every duration / (2 x guests), and with 3 or more guests the first leaves
 * at half the duration. */
double bench_ksm_plan(const struct bench_ksm_config *c, struct bench_ksm_guest_plan plan[BENCH_KSM_MAX_GUESTS]);
/* How many guests of the plan run at the end. */
unsigned bench_ksm_plan_final_guests(const struct bench_ksm_config *c);
int bench_ksm_result_new(const struct bench_ksm_config *c, struct bench_ksm_result **ret);
/* Appends one sample. 0 or -ENOMEM (the series unchanged). */
int bench_ksm_series_add(struct bench_ksm_series *s, double t, double saved, int64_t cpu_ns);
/* Frees the arrays and empties s; NULL does nothing. */
void bench_ksm_series_free(struct bench_ksm_series *s);
/* final_saved and steady_cpu_percent from the series: the steady window is the last
 * steady_seconds (from the first sample at or after its start). */
void bench_ksm_run_finish(struct bench_ksm_run *run, double steady_seconds);
/* Bytes KSM saves on G running guests from their merging and zero pages summed over them (content
 * shared by all G is counted G times and saved G-1 times: an estimate once guests differ). */
double bench_ksm_saved_bytes(int64_t merging_pages, int64_t zero_pages, unsigned guests, int64_t page_bytes);

#endif
