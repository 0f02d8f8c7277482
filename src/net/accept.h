/* HTTP content negotiation for /metrics: which exposition format an Accept header asks for.
 * A pure function of the header text (fuzz/fuzz_accept.c). */
#ifndef VMHOST_NET_ACCEPT_H
#define VMHOST_NET_ACCEPT_H

#include "out/prom/prom.h"

/* Picks the format an Accept header asks for: OpenMetrics when it is acceptable and preferred
 * (by q-value) to the text format; the text format otherwise, and for a missing header. */
enum prom_format prom_negotiate(const char *accept);

#endif
