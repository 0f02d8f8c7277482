/* The KSM settings a guard changed, written down before it changes them: the saved-settings file
 * (ksm.saved in the runtime directory, /run/vmhost for root) that lets the next KSM writer,
 * `vmhost ksm status --restore` or the tuner unit's ExecStopPost put them back after a writer that
 * died without restoring (SIGKILL, the OOM killer, a crash its handlers could not catch: REVIEW
 * S-M4). This file is its text and nothing else: a format and its parser, pure; the guard
 * (core/tune/ksm_guard.c) writes, reads and removes the file. */
#ifndef VMHOST_CORE_KSM_SAVED_H
#define VMHOST_CORE_KSM_SAVED_H

#include <stdbool.h>
#include <stddef.h>

#define KSM_SAVED_FILE "ksm.saved"
#define KSM_SAVED_MAX 32
/* What the directory the settings belong to ends with: <sys-root>/kernel/mm/ksm. */
#define KSM_SAVED_DIR_SUFFIX "/kernel/mm/ksm"

/* The kernel settings beside KSM's a guard may change and put back (bench ksm --delayacct): their
 * names as sysctl(8) gives them, each a file under <proc>/sys with the dots as slashes. */
#define KSM_SAVED_SYSCTLS {"kernel.task_delayacct"}

struct ksm_saved_setting {
	char name[48];  /* a file under the KSM directory: lower-case letters, digits and '_'; or one of
			 * KSM_SAVED_SYSCTLS, a file under the proc directory's sys/ */
	char value[64]; /* its value before the first change: printable, no blank (advisor_mode's word) */
};

struct ksm_saved {
	char dir[256]; /* the KSM directory the settings were read from and go back to (absolute) */
	char proc[256]; /* the proc directory of the sysctls among them (absolute); "" when none is */
	long pid;      /* the writer that saved them */
	size_t n;
	struct ksm_saved_setting set[KSM_SAVED_MAX];
};

/* The file's text, one field a line, the settings in the order they were first changed:
 *
 *   vmhost ksm saved 1
 *   pid 4242
 *   dir /sys/kernel/mm/ksm
 *   proc /proc                          (only when a sysctl is among them)
 *   set run 0
 *   set pages_to_scan 123
 *   set kernel.task_delayacct 0
 *   end
 *
 * Written to buf: the length, -ENOSPC when it does not fit cap, or -EINVAL for a field the parser
 * would not read back. */
int ksm_saved_format(const struct ksm_saved *s, char *buf, size_t cap);

/* Reads that text (len bytes, no NUL needed). 0, or -EBADMSG for anything else: another first
 * line, a field out of its place or repeated, a name or value of other characters, a directory
 * that is relative, holds "..", or does not end in KSM_SAVED_DIR_SUFFIX (a proc directory: in
 * "proc"), a sysctl not in KSM_SAVED_SYSCTLS or without a proc line, a setting named twice, more
 * than KSM_SAVED_MAX, no "end" (a file cut short), or anything after it; *ret is untouched then. */
int ksm_saved_parse(const char *buf, size_t len, struct ksm_saved *ret);

/* name is one of KSM_SAVED_SYSCTLS. */
bool ksm_saved_is_sysctl(const char *name);

#endif
