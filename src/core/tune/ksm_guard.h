/* Changing KSM settings safely: one writer per machine (a lock), every changed setting saved
 * first and restored on every exit path, signals and crashes included; and written down before
 * it is changed (the saved-settings file, core/tune/ksm_saved.h, in the runtime directory), so
 * that the next writer puts back what one killed outright (SIGKILL, the OOM killer) left. */
#ifndef VMHOST_CORE_KSM_GUARD_H
#define VMHOST_CORE_KSM_GUARD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/model/ksm.h"
#include "core/tune/ksm_saved.h"
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

/* Starts guarding (the caller holds the KSM lock): first puts back what a writer that died left
 * changed (ksm_guard_restore_left); later ksm_guard_set() calls save the old value first. Installs
 * handlers for SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE that restore and then end the process
 * by that signal (core/base/fatal_signal.h), or, when on_signal is given, restore and call it (it
 * sets a flag, or cleans up with async-signal-safe calls and ends by fatal_signal_reraise); and for
 * SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL, on a stack of their own, that restore and end the
 * process by that signal, on_signal or not. 0, 1 when it put back what another writer left, or a
 * negative errno: -EBUSY while a guard is already active (ksm_guard_end first), or what kept a
 * saved-settings file left behind from being put back (it stays; nothing was changed). */
int ksm_guard_begin(const struct io_root *root, void (*on_signal)(int sig));

/* Puts back what a KSM writer that died before restoring left changed: the settings its
 * saved-settings file holds (in the runtime directory, kept for the host's KSM, sys root /sys;
 * a test build's VMHOST_RUNTIME_DIR for any root), written to the KSM directory it names, then
 * removes the file. The caller holds the KSM lock, so no living writer owns the file. 1 when
 * something was put back (ret, may be NULL, gets what), 0 when nothing was left, or a negative
 * errno (-EBADMSG for a file that does not read; the file stays). */
int ksm_guard_restore_left(const struct io_root *root, struct ksm_saved *ret);

/* What a guard's error means, for a message: a saved-settings file that does not read says where
 * it is and what to do; other errors are strerror's. */
const char *ksm_guard_strerror(int err);

/* Writes a KSM setting (file name under kernel/mm/ksm, e.g. "pages_to_scan") after saving its
 * current value once, and writing it down in the saved-settings file before the change (a file
 * that cannot be written is the error, and nothing is changed). advisor_mode takes a word
 * ("none", "scan-time"). */
int ksm_guard_set(const char *file, const char *value);
int ksm_guard_set_int(const char *file, int64_t value);
/* Writes a kernel setting beside KSM's through the guard, saved and written down first as
 * ksm_guard_set does, and put back with them on every exit path: one of KSM_SAVED_SYSCTLS by its
 * sysctl name ("kernel.task_delayacct", the file <proc-root>/sys/kernel/task_delayacct). -EINVAL
 * for another name or a relative proc root. */
int ksm_guard_set_sysctl(const char *name, const char *value);
/* Saves a setting's current value without writing it: for settings another process (the real
 * ksmtuned) is about to write, so that the restore puts them back too. */
int ksm_guard_save(const char *file);

/* Restores every saved setting (advisor off first, run last); idempotent and async-signal-safe.
 * Returns 0 or the first negative errno. */
int ksm_guard_restore(void);

/* Restores, removes the saved-settings file (kept when a setting could not be put back) and the
 * handlers. */
int ksm_guard_end(void);

/* Writes run=2 through the guard and waits until nothing is merged. 0, -EINTR when *stop became
 * set, -ETIMEDOUT, or the guard's error. */
int ksm_unmerge_wait(struct ksm_sampler *sm, double timeout_seconds, double poll_seconds,
		     volatile sig_atomic_t *stop);

#endif
