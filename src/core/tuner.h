/* The KSM tuner's control law: a pure function from one sample of KSM counters, ksmd CPU and
 * memory to the next pages_to_scan / sleep_millisecs / run, with the reason in words.
 * `vmhost ksm tune` and `vmhost bench ksm` (policy "vmhost") both drive it. */
#ifndef VMHOST_CORE_TUNER_H
#define VMHOST_CORE_TUNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tuner_config {
	double cpu_budget_percent;       /* ksmd may use this much of one CPU while scanning fast */
	double interval_seconds;         /* how often the daemon samples and decides */
	int64_t fast_pages_to_scan;      /* first fast setting, before the CPU budget has been measured */
	int64_t fast_sleep_millisecs;
	int64_t min_pages_to_scan, max_pages_to_scan; /* bounds of the fast setting */
	int64_t idle_pages_to_scan, idle_sleep_millisecs; /* near-idle once scans stop finding anything */
	int flat_scans;                  /* full scans without gain before going idle */
	int64_t gain_pages;              /* a scan (or an interval) that gains less than this is "flat" */
	double pressure_available_percent; /* MemAvailable below this % of MemTotal is memory pressure */
	bool smart_scan;                 /* turn the kernel's smart_scan on while tuning (where it exists) */
};

enum tuner_mode { TUNER_FAST, TUNER_IDLE };

struct tuner_state {
	bool started;
	enum tuner_mode mode;
	int64_t pages_to_scan, sleep_millisecs;
	int64_t fast_pages_to_scan; /* remembered across idle periods */
	bool settled;               /* the last interval ran with the current fast setting */
	int64_t last_full_scans, last_rmap_items, last_saved_pages;
	int64_t saved_pages_at_scan_end;
	int flat;                   /* consecutive full scans without gain */
};

/* One sample as the tuner sees it; -1 = unknown. */
struct tuner_input {
	double interval_seconds;
	int64_t pages_shared, pages_sharing, pages_unshared, pages_volatile, ksm_zero_pages, full_scans;
	double ksmd_cpu_percent; /* over the last interval; NaN when unknown */
	int64_t mem_total_bytes, mem_available_bytes;
	/* What the kernel ran with during the interval: the CPU budget is only fitted when it
	 * ran the tuner's own fast setting (not in a dry run, not after someone else's write). */
	int64_t run, pages_to_scan, sleep_millisecs;
};

struct tuner_decision {
	int run;
	int64_t pages_to_scan, sleep_millisecs;
	enum tuner_mode mode;
	bool changed; /* differs from the previous decision */
	bool pressure;
	char reason[256];
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
