/* Test hooks: environment variables the test suite sets to reach what a test cannot reach
 * otherwise (VMHOST_KSM_LOCKED: the harness holds the KSM lock for the test; VMHOST_TUNE_LOCK: the
 * tuner's instance lock in the test's directory; VMHOST_RUNTIME_DIR: the runtime directory in the
 * build tree; VMHOST_EXITS_TEST_HOOK: a script run between two reads of `exits`;
 * VMHOST_DOCTOR_TEST_HOOK: one run once doctor's interval is under way;
 * VMHOST_KVM_REASONS=perf: the perf filters instead of eBPF). Only a test build reads them: CMake's
 * VMHOST_TESTS=ON, which `make check` builds, defines VMHOST_TEST_HOOKS; `make`, `make install`
 * and the .deb build with VMHOST_TESTS=OFF, and that vmhost never looks at these variables,
 * whatever root's environment holds (sudo's env_keep, a unit's Environment=). No VMHOST_ variable
 * is read but through here (tests/hostile/test_hooks.sh). */
#ifndef VMHOST_IO_TEST_HOOK_H
#define VMHOST_IO_TEST_HOOK_H

#include <stdlib.h>

/* The value of the test hook name in a test build; NULL in any other build. */
static inline const char *io_test_hook(const char *name)
{
#ifdef VMHOST_TEST_HOOKS
	return getenv(name);
#else
	(void)name;
	return NULL;
#endif
}

#endif
