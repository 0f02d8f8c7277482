/* A number that may be unknown: printed as null, never as a made-up 0. */
#ifndef VMHOST_PARSE_MAYBE_H
#define VMHOST_PARSE_MAYBE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
	int64_t v;
	bool known;
} maybe_i64;

#define MAYBE(x) ((maybe_i64){.v = (x), .known = true})
#define UNKNOWN ((maybe_i64){.v = 0, .known = false})

/* a + b: unknown when either is (a sum with an unknown part is unknown). */
static inline maybe_i64 maybe_add(maybe_i64 a, maybe_i64 b)
{
	return a.known && b.known ? MAYBE(a.v + b.v) : UNKNOWN;
}

#endif
