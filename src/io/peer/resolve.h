/* A host name looked up within a deadline (`share plan --from`'s --timeout covers the lookup too).
 * glibc's resolver keeps its own timeouts (resolv.conf: 5 s a try, 2 tries, each server, each
 * address family), which no caller can shorten: a dead resolver held getaddrinfo for 20 s and more
 * past any --timeout. */
#ifndef VMHOST_IO_PEER_RESOLVE_H
#define VMHOST_IO_PEER_RESOLVE_H

#include <netdb.h>

/* host:port's TCP addresses by the deadline (CLOCK_MONOTONIC seconds, io/clock.h) into *ret, for
 * freeaddrinfo. An address (IPv4, IPv6) is taken as it is, at once. 0; -ETIMEDOUT when the
 * resolver has not answered by the deadline (its lookup is left to finish on its own);
 * -EHOSTUNREACH when the name does not resolve; another negative errno. */
int io_resolve(const char *host, const char *port, double deadline, struct addrinfo **ret);

#endif
