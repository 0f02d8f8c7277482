#include "io/clock.h"

#include <math.h>

static double clock_seconds(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double clock_monotonic_seconds(void) { return clock_seconds(CLOCK_MONOTONIC); }
double clock_wall_seconds(void) { return clock_seconds(CLOCK_REALTIME); }
double clock_thread_cpu_seconds(void) { return clock_seconds(CLOCK_THREAD_CPUTIME_ID); }

struct timespec clock_timespec(double seconds)
{
	double whole = floor(seconds);
	struct timespec ts = {.tv_sec = (time_t)whole, .tv_nsec = (long)((seconds - whole) * 1e9)};
	if (ts.tv_nsec >= 1000000000L) { /* rounding of seconds - whole */
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}
