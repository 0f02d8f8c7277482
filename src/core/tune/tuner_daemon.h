/* What a KSM tuner needs around the control law: one instance per machine, a look for other
 * tuners, samples turned into the law's input, and decisions written through the KSM guard. */
#ifndef VMHOST_CORE_TUNER_DAEMON_H
#define VMHOST_CORE_TUNER_DAEMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/model/ksm.h"
#include "core/tune/tuner.h"

/* Beside the machine-wide KSM lock, in root's private directory (io_lock). */
#define TUNER_INSTANCE_LOCK "/run/vmhost/ksm-tune.lock"

/* Takes the one-instance lock (non-blocking). Returns an fd to keep open, -EBUSY, or -EPERM when
 * its directory or the file is not root's alone. */
int tuner_instance_lock(const char *path);

/* The pid of a running ksmtuned (comm or cmdline) run by root, 0 when none. Reads /proc only. */
pid_t ksmtuned_find(const struct io_root *root);
/* One walk of /proc for both: a running ksmtuned and another `vmhost ksm tune`, each run by root
 * (a process of another user is none, whatever it calls itself: REVIEW S-L12) (0 when none;
 * ret_vmhost_tune may be NULL). 0 or the negative errno of listing /proc. */
int ksm_tuners_find(const struct io_root *root, pid_t *ret_ksmtuned, pid_t *ret_vmhost_tune);

/* The /proc side of the law's input: mergeable processes, their resident mergeable memory and
 * ksmd's rmap items for each (struct tuner_proc), turned into news by core/tune/tuner.c. Cheap by
 * design: /proc is read only when AnonPages rose by half of wake_pages since the last reading (a
 * new or growing guest raises it), the interval after, and every TUNER_WALK_SECONDS; then the
 * processes with mergeable memory and the new or young ones (TUNER_YOUNG_SECONDS) are read
 * (ksm_stat, status), every process only on the periodic walk; a process's smaps only when its
 * RssAnon moved by half of wake_pages since its last smaps (to keep anonymous memory outside
 * mergeable areas out of the figure). */
#define TUNER_WALK_SECONDS 30.0
#define TUNER_YOUNG_SECONDS 60.0
struct tuner_watch;
struct tuner_watch_cost {
	uint64_t samples, walks, ksm_stat_reads, status_reads, smaps_reads;
	double cpu_seconds; /* this thread's CPU time spent in tuner_watch_sample */
};
int tuner_watch_new(const struct io_root *root, int64_t page_size, struct tuner_watch **ret);
void tuner_watch_free(struct tuner_watch *w);
void tuner_watch_cost(const struct tuner_watch *w, struct tuner_watch_cost *ret);

/* One interval of the tuner: the input from the samples and /proc (w may be NULL: sysfs only),
 * the law, and the watch told; ret_in (may be NULL) gets the input, for the log. 0 or -ENOMEM
 * (the decision is still made, without /proc). */
int tuner_decide(const struct tuner_config *c, struct tuner_state *s, struct tuner_watch *w,
		 const struct ksm_sample *prev, const struct ksm_sample *now, const struct ksm_rates *rates,
		 struct tuner_decision *ret, struct tuner_input *ret_in);

/* Writes the decision through the KSM guard (ksm_guard_begin first), only the settings that
 * differ from `now`; switches the kernel advisor off first (it owns pages_to_scan), and
 * smart_scan on when asked. Signals are held while writing so a restore never races a write.
 * Nothing is written once *stop is set (the guard has restored). Returns 0 or the first negative errno (-EACCES/-EPERM: no privilege). */
int tuner_apply(const struct tuner_config *c, const struct tuner_decision *d, const struct ksm_sysfs *now,
		const volatile sig_atomic_t *stop);

/* For tests: the two halves of tuner_decide that read /proc. */

/* Fills the /proc fields of in (left unknown when /proc tells nothing). 0 or -ENOMEM. */
int tuner_watch_sample(struct tuner_watch *w, const struct tuner_config *c, const struct ksm_sample *now,
		       struct tuner_input *in);
/* After the law decided: an interval decided fast makes the latest reading the base. */
void tuner_watch_decided(struct tuner_watch *w, const struct tuner_decision *d);

#endif
