/* One rule for a counter's rate: how fast a cumulative counter grew between two reads. A rate is
 * unknown (NaN) when either read is unknown, when the counter went down (a reset, or another
 * process behind a reused pid), or when no time passed; never a made-up 0.
 *
 *   cpu_percent = counter_percent_ns(before.cpu_ns, after.cpu_ns, seconds);
 */
#ifndef VMHOST_CORE_RATE_H
#define VMHOST_CORE_RATE_H

#include <stdint.h>

#include "parse/maybe.h"

/* (b - a) / seconds, or NaN as above. */
double counter_rate(maybe_i64 a, maybe_i64 b, double seconds);
/* The same for counters held as doubles (seconds of CPU); NaN also when either is not finite. */
double counter_rate_double(double a, double b, double seconds);
/* Time spent between two reads of a nanosecond counter, as percent of one CPU (100 = one CPU). */
double counter_percent_ns(maybe_i64 ns_a, maybe_i64 ns_b, double seconds);
/* Time spent between two reads of a counter in seconds, as percent of one CPU. */
double counter_percent_seconds(double a, double b, double seconds);

/* The kernel's clock ticks (USER_HZ: /proc/PID/stat's utime, stime, starttime) in seconds. */
double ticks_to_seconds(uint64_t ticks);
/* USER_HZ itself, 100 where sysconf cannot tell. */
long ticks_per_second(void);

#endif
