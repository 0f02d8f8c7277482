/* The KSM tuner's control law: a pure function from one sample of KSM counters, ksmd CPU and
 * memory to the next pages_to_scan / sleep_millisecs / run, with the reason in words.
 * `vmhost ksm tune` and `vmhost bench ksm` (policy "vmhost") both drive it. */
#ifndef VMHOST_CORE_TUNER_H
#define VMHOST_CORE_TUNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/model/ksm.h"
#include "parse/maybe.h"

struct tuner_config {
	double cpu_budget_percent;       /* ksmd may use this much of one CPU while scanning fast */
	double interval_seconds;         /* how often the daemon samples and decides */
	int64_t fast_pages_to_scan;      /* first fast setting, before the CPU budget has been measured */
	int64_t fast_sleep_millisecs;
	int64_t min_pages_to_scan, max_pages_to_scan; /* bounds of the fast setting */
	int64_t idle_pages_to_scan, idle_sleep_millisecs; /* near-idle once scans stop finding anything */
	int flat_scans;                  /* full scans without gain before going idle */
	int64_t gain_pages;              /* a scan (or an interval) that gains less than this is "flat" */
	int64_t wake_pages;              /* resident mergeable memory ksmd has not scanned, new since the
					    tuner last scanned fast, that wakes it (pages, summed over processes) */
	double pressure_available_percent; /* MemAvailable below this % of MemTotal is memory pressure */
	bool smart_scan;                 /* turn the kernel's smart_scan on while tuning (where it exists) */
};

enum tuner_mode { TUNER_FAST, TUNER_IDLE };

struct tuner_state {
	bool started;
	enum tuner_mode mode;
	int64_t pages_to_scan, sleep_millisecs;
	int64_t fast_pages_to_scan; /* remembered across idle periods (fitted under load) */
	bool settled;               /* the last interval ran with the current fast setting */
	/* The last known readings (an unknown one leaves them): progress is counted between two. */
	maybe_i64 last_full_scans, last_rmap_items, last_saved_pages;
	maybe_i64 saved_pages_at_scan_end;
	int flat;                   /* consecutive full scans without gain */
	int64_t last_fit_pages;     /* the rate of the last budget fit and the CPU it measured */
	double last_fit_cpu;
	int64_t ceiling_pages;      /* a raise that bought no CPU: not above this (0: none) */
	double ceiling_cpu;
	bool pressure_armed;        /* memory pressure may wake the tuner (once per episode) */
};

/* Where the most news came from (struct tuner_input). */
enum tuner_news_kind { TUNER_NEWS_NONE, TUNER_NEWS_ARRIVED, TUNER_NEWS_NEW, TUNER_NEWS_GROWN };

/* One sample as the tuner sees it. A figure not read is unknown (a maybe_i64 not known, NaN for
 * ksmd's CPU), never 0: the law draws nothing from it. All zero is all unknown. */
struct tuner_input {
	double interval_seconds;
	/* The KSM files read at the end of the interval: its counters (saved pages and rmap items
	 * by core/model/ksm.h's formulas), and what the kernel ran with during the interval (run,
	 * pages_to_scan, sleep_millisecs): the CPU budget is only fitted when it ran the tuner's own
	 * fast setting (not in a dry run, not after someone else's write). */
	struct ksm_sysfs ksm;
	maybe_i64 interval_pages_scanned; /* by ksmd during the interval (unknown: the nominal rate is used) */
	double ksmd_cpu_percent; /* over the last interval; NaN when unknown */
	maybe_i64 mem_total_bytes, mem_available_bytes;
	/* Mergeable memory seen from /proc (tuner_news_update fills these); unknown: no /proc to
	 * read, a kernel without /proc/PID/ksm_stat, or processes we may not read. */
	maybe_i64 mergeable_processes;   /* processes with memory marked mergeable */
	maybe_i64 exited_processes;      /* of those, gone since the previous reading */
	/* Resident mergeable pages ksmd has not met yet (no rmap item), new since the tuner last
	 * scanned fast: in processes first seen in this reading (memory already there: started
	 * preallocated, or migrated in), in processes that appeared since then, and growth of the
	 * processes that were already there. */
	maybe_i64 unscanned_arrived_pages, unscanned_new_pages, unscanned_grown_pages;
	/* The process that adds the most of it, for the reason (news_kind NONE: none). */
	enum tuner_news_kind news_kind;
	pid_t news_pid;
	int64_t news_pages;
	char news_name[16];
};

/* One process with mergeable memory, as the daemon reads it (core/tune/tuner_daemon.c). */
struct tuner_proc {
	pid_t pid;
	char name[16];
	int64_t mergeable_pages; /* resident anonymous pages in its mergeable areas */
	int64_t rmap_items;      /* pages of it ksmd has met (ksm_rmap_items) */
};

/* What is new in mergeable memory since the tuner last scanned fast: a table of processes with,
 * for each, the pages ksmd had not met then (the base). Pure bookkeeping, no I/O. */
struct tuner_news_entry {
	struct tuner_proc p;
	int64_t base_unscanned;
	bool in_base; /* was there when the tuner last scanned fast */
	bool fresh;   /* first seen in the latest reading */
};
struct tuner_news {
	struct tuner_news_entry *e;
	size_t n;
	bool have_reading;
};
void tuner_news_init(struct tuner_news *t);
void tuner_news_free(struct tuner_news *t);
/* Takes a new reading of every mergeable process (a process is the same when pid and name
 * match) and fills the /proc fields of the input. denied: some processes could not be read,
 * so the process count is not known. 0 or -ENOMEM (table and input untouched). */
int tuner_news_update(struct tuner_news *t, const struct tuner_proc *procs, size_t n, bool denied,
		      struct tuner_input *in);
/* Resident mergeable pages ksmd has not met, new since the tuner last scanned fast: arrived +
 * new + grown; unknown when any of them is. */
maybe_i64 tuner_news_pages(const struct tuner_input *in);
/* The latest reading becomes the base: called after every interval decided fast, since ksmd,
 * scanning fast, meets everything that is there now. */
void tuner_news_rebase(struct tuner_news *t);

struct tuner_decision {
	int run;
	int64_t pages_to_scan, sleep_millisecs;
	enum tuner_mode mode;
	bool changed; /* differs from the previous decision */
	bool pressure;
	char reason[512];
};

void tuner_config_default(struct tuner_config *c);
/* Sets one option by its config-file name; on error returns -EINVAL with a message in err. */
int tuner_config_set(struct tuner_config *c, const char *key, const char *value, char *err, size_t errcap);
/* Checks that the options agree with each other. 0 or -EINVAL with a message. */
int tuner_config_check(const struct tuner_config *c, char *err, size_t errcap);

void tuner_init(struct tuner_state *s);
/* The control law. Updates the state and fills the decision. */
void tuner_step(const struct tuner_config *c, struct tuner_state *s, const struct tuner_input *in,
		struct tuner_decision *ret);
const char *tuner_mode_name(enum tuner_mode m);

#endif
