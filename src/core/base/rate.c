#include "core/base/rate.h"

#include <math.h>
#include <unistd.h>

double counter_rate(maybe_i64 a, maybe_i64 b, double seconds)
{
	if (!a.known || !b.known || b.v < a.v || !(seconds > 0))
		return NAN;
	return (double)(b.v - a.v) / seconds;
}

double counter_rate_double(double a, double b, double seconds)
{
	if (!isfinite(a) || !isfinite(b) || b < a || !(seconds > 0))
		return NAN;
	return (b - a) / seconds;
}

double counter_percent_ns(maybe_i64 ns_a, maybe_i64 ns_b, double seconds)
{
	return counter_rate(ns_a, ns_b, seconds) / 1e9 * 100;
}

double counter_percent_seconds(double a, double b, double seconds)
{
	return counter_rate_double(a, b, seconds) * 100;
}

long ticks_per_second(void)
{
	static long hz; /* constant for the process: threads that ask at once store the same value */
	long v = __atomic_load_n(&hz, __ATOMIC_RELAXED);
	if (!v) {
		v = sysconf(_SC_CLK_TCK);
		v = v > 0 ? v : 100;
		__atomic_store_n(&hz, v, __ATOMIC_RELAXED);
	}
	return v;
}

double ticks_to_seconds(uint64_t ticks) { return (double)ticks / (double)ticks_per_second(); }
