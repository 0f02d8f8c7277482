/* Ending the process by a signal from that signal's own handler, once it has cleaned up, so that
 * a parent's wait sees WIFSIGNALED with it (a shell's $? 128+N, a supervisor "killed by SIGTERM")
 * rather than an exit(128 + N) that only looks like it. */
#ifndef VMHOST_CORE_BASE_FATAL_SIGNAL_H
#define VMHOST_CORE_BASE_FATAL_SIGNAL_H

/* Restores sig's default action, unblocks it (a handler runs with it blocked, and with its
 * sa_mask) and raises it again; _exit(128 + sig) only where the default does not end the
 * process. Async-signal-safe. */
_Noreturn void fatal_signal_reraise(int sig);

#endif
