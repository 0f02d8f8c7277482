/* Debian's real ksmtuned (package ksmtuned), run as its own process beside vmhost's policies:
 * a copy of its script whose config path points at a file in a temporary directory (the script
 * reads /etc/ksmtuned.conf and nothing else), under a small supervisor process that stops the
 * script's process group (a shell loop and its sleep) and puts back the KSM settings it writes
 * (run, pages_to_scan, sleep_millisecs), also when the caller dies without a word. */
#ifndef VMHOST_CORE_KSMTUNED_H
#define VMHOST_CORE_KSMTUNED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/io.h"

#define KSMTUNED_SCRIPT "/usr/sbin/ksmtuned"
#define KSMTUNED_CONF "/etc/ksmtuned.conf"

/* The script's variables, with its own defaults. */
struct ksmtuned_config {
	const char *script;           /* KSMTUNED_SCRIPT */
	int monitor_interval_seconds; /* KSM_MONITOR_INTERVAL: 60 */
	int npages_boost, npages_decay; /* KSM_NPAGES_BOOST 300, KSM_NPAGES_DECAY -50 */
	int npages_min, npages_max;   /* KSM_NPAGES_MIN 64, KSM_NPAGES_MAX 1250 */
	int sleep_msec;               /* KSM_SLEEP_MSEC: sleep_millisecs for a 16 GiB host, 10 */
	int thres_coef;               /* KSM_THRES_COEF: % of MemTotal, 20 */
	int thres_const;              /* KSM_THRES_CONST: kB, 2048 */
};
void ksmtuned_config_default(struct ksmtuned_config *c);

/* One adjust() of the script, as published: from MemTotal, free memory (MemFree + Buffers +
 * Cached) and the guests' committed memory, all in kB as the script has them, whether ksmd runs
 * and at which pages_to_scan and sleep_millisecs. *npages carries the script's npages from one
 * call to the next (0 before the first); it is untouched when ksmd is stopped. */
struct ksmtuned_step {
	bool run;
	int64_t pages_to_scan, sleep_millisecs; /* when run */
};
void ksmtuned_adjust(const struct ksmtuned_config *c, int64_t total_kb, int64_t free_kb, int64_t committed_kb,
		     int64_t *npages, struct ksmtuned_step *ret);

struct ksmtuned;

/* Starts it. The caller holds the KSM lock and has begun the KSM guard: the three settings are
 * saved there as well, so the caller's own restore (a signal, its exit) covers them too.
 * Returns 0; -ENOENT when the script is not installed (package ksmtuned); -ENOEXEC when the
 * script does not read KSMTUNED_CONF as expected; another negative errno. err says what. */
int ksmtuned_start(const struct io_root *root, const struct ksmtuned_config *c, struct ksmtuned **ret,
		   char *err, size_t cap);
/* Stops the group (SIGTERM, SIGKILL after 2 s), waits until every process of it is gone, puts the
 * three settings back, removes the directory and frees. 0, or a negative errno when a setting
 * could not be restored. NULL does nothing. */
int ksmtuned_stop(struct ksmtuned *t);

/* For tests: the supervisor as tests/helpers/run_ksmtuned sees it. */

/* True while any process of the script's group is alive. */
bool ksmtuned_running(const struct ksmtuned *t);
/* The script's process group id (the pid it was started with). */
pid_t ksmtuned_pgid(const struct ksmtuned *t);
/* The loop's pid from the script's pid file; 0 when not written yet. */
pid_t ksmtuned_loop_pid(const struct ksmtuned *t);
/* Its DEBUG log (one line per decision: "committed ... free ...", "KSMCTL start N S", "stop ksm"). */
const char *ksmtuned_log_path(const struct ksmtuned *t);

#endif
