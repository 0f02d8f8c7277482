/* Changing KSM settings safely: one writer per machine (a lock), every changed setting saved
 * first and restored on every exit path, signals included. */
#ifndef VMHOST_CORE_KSM_GUARD_H
#define VMHOST_CORE_KSM_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "io/io.h"

/* Where the machine-wide lock lives, and only there: root's private directory (made, mode 0700,
 * when missing; a lock there no other user can open or plant, io_lock); when the lock cannot be
 * had there, taking it fails. Tests and benchmarks that touch KSM take it too (flock(1) on it). */
#define KSM_LOCK_PATH "/run/vmhost/ksm.lock"

/* Takes the machine-wide KSM lock. wait=false: -EBUSY when another vmhost holds it; -EPERM when
 * the directory or the file is not root's alone. In a test build, VMHOST_KSM_LOCKED in the
 * environment says the caller already holds it (io/test_hook.h). */
int ksm_lock(bool wait);
void ksm_unlock(void);

/* Starts guarding: later ksm_guard_set() calls save the old value first. Installs handlers for
 * SIGINT, SIGTERM, SIGHUP (and SIGQUIT) that restore and then end the process by that signal
 * (core/base/fatal_signal.h), or, when on_signal is given, restore and call it (it sets a flag,
 * or cleans up with async-signal-safe calls and ends by fatal_signal_reraise). -EBUSY while a
 * guard is already active (ksm_guard_end first). */
int ksm_guard_begin(const struct io_root *root, void (*on_signal)(int sig));

/* Writes a KSM setting (file name under kernel/mm/ksm, e.g. "pages_to_scan") after saving its
 * current value once. advisor_mode takes a word ("none", "scan-time"). */
int ksm_guard_set(const char *file, const char *value);
int ksm_guard_set_int(const char *file, int64_t value);
/* Saves a setting's current value without writing it: for settings another process (the real
 * ksmtuned) is about to write, so that the restore puts them back too. */
int ksm_guard_save(const char *file);

/* Restores every saved setting (advisor off first, run last); idempotent and async-signal-safe.
 * Returns 0 or the first negative errno. */
int ksm_guard_restore(void);

/* Restores and removes the handlers. */
int ksm_guard_end(void);

#endif
