/* What a KSM tuner needs around the control law: one instance per machine, a look for other
 * tuners, samples turned into the law's input, and decisions written through the KSM guard. */
#ifndef VMHOST_CORE_TUNER_DAEMON_H
#define VMHOST_CORE_TUNER_DAEMON_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "core/ksm_rates.h"
#include "core/tuner.h"

#define TUNER_INSTANCE_LOCK "/run/lock/vmhost-ksm-tune.lock"

/* Takes the one-instance lock (non-blocking). Returns an fd to keep open, or -EBUSY. */
int tuner_instance_lock(const char *path);

/* The pid of a running ksmtuned (comm or cmdline), 0 when none. Reads /proc only. */
pid_t ksmtuned_find(const struct io_root *root);

/* The law's input from two consecutive samples. */
void tuner_input_from(const struct ksm_sample *prev, const struct ksm_sample *now, const struct ksm_rates *rates,
		      struct tuner_input *ret);

/* Writes the decision through the KSM guard (ksm_guard_begin first), only the settings that
 * differ from `now`; switches the kernel advisor off first (it owns pages_to_scan), and
 * smart_scan on when asked. Signals are held while writing so a restore never races a write.
 * Nothing is written once *stop is set (the guard has restored). Returns 0 or the first negative errno (-EACCES/-EPERM: no privilege). */
int tuner_apply(const struct tuner_config *c, const struct tuner_decision *d, const struct ksm_sysfs *now,
		const volatile sig_atomic_t *stop);

#endif
