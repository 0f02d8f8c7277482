/* The clocks: the one monotonic clock every interval, deadline and rate is measured on, the wall
 * clock for timestamps, and a thread's own CPU time. Below core/base/stop.h (which adds the stop
 * flag and the sleeps) so that io/ and everything above read the same clock. */
#ifndef VMHOST_IO_CLOCK_H
#define VMHOST_IO_CLOCK_H

#include <time.h>

double clock_monotonic_seconds(void); /* CLOCK_MONOTONIC: for intervals, deadlines and rates */
double clock_wall_seconds(void);      /* CLOCK_REALTIME, Unix seconds: for timestamps only */
double clock_thread_cpu_seconds(void); /* CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time */

/* seconds as a timespec (an absolute CLOCK_MONOTONIC deadline for clock_nanosleep or a
 * condition variable on that clock); seconds must be finite and not negative. */
struct timespec clock_timespec(double seconds);

#endif
