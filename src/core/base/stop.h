/* Time, sleeping and stopping: the clocks of io/clock.h, and the one stop flag that
 * every long-running command raises from SIGINT, SIGTERM and SIGHUP.
 *
 *   stop_catch(false);
 *   for (double next = clock_monotonic_seconds(); !stop_requested(); next += interval) {
 *           work();
 *           sleep_until(next + interval);
 *   }
 *   return stop_requested() ? 128 + stop_requested() : 0;
 */
#ifndef VMHOST_CORE_STOP_H
#define VMHOST_CORE_STOP_H

#include <signal.h>
#include <stdbool.h>

#include "io/clock.h" /* the clocks themselves: io/ measures deadlines on the same one */

/* The stop set: the signals that end a run, SIGINT, SIGTERM, SIGHUP and SIGQUIT. Handlers that
 * restore state on the way out take all four; stop_catch leaves SIGQUIT its core dump. */
enum { STOP_NSIGNALS = 4 };
extern const int stop_signals[STOP_NSIGNALS];
/* Adds the stop set to set (a handler's mask, sigprocmask's or sigtimedwait's set). */
void stop_signals_add(sigset_t *set);

/* The signal that asked the program to stop, 0 while none did. */
int stop_requested(void);
/* The flag itself, for callees that poll a `volatile sig_atomic_t *`. */
volatile sig_atomic_t *stop_flag(void);
/* The one handler: records sig (async-signal-safe). */
void stop_handler(int sig);
void stop_clear(void);
/* Makes SIGINT, SIGTERM and SIGHUP raise the flag (without SA_RESTART, so a sleep ends at once),
 * or, with ignore, ignores them (as time(1) does while its command runs). 0 or -errno. */
int stop_catch(bool ignore);
/* Holds off SIGINT, SIGTERM, SIGHUP and SIGQUIT across a window a stop must not split (a fork
 * whose pid a handler needs, a sysfs write and its record); stop_unblock(prev) ends it. */
void stop_block(sigset_t *ret_prev);
void stop_unblock(const sigset_t *prev);

/* Sleeps until the monotonic time deadline (or for seconds); returns early, false, when a stop
 * was requested. */
bool sleep_until(double deadline);
bool sleep_for(double seconds);

#endif
