/* A generic fan-out: work on n items shared between a few threads, the calling thread one of
 * them, for rounds of many small reads (discovery's and measuring's /proc files of hundreds of
 * processes), where a thread whose read waits in the kernel leaves its CPU to another.
 *
 *   static void some(void *arg, size_t t, size_t n) { for (i = t; i < nitems; i += n) work(i); }
 *   parallel(parallel_threads(nitems, 16), some, &job);
 */
#ifndef VMHOST_CORE_PARALLEL_H
#define VMHOST_CORE_PARALLEL_H

#include <stddef.h>

enum { PARALLEL_MAX = 4 }; /* threads of one round, the calling one included */

/* Threads for n items: one per per_thread of them, at most two per CPU and PARALLEL_MAX, at least
 * one. Two per CPU: at 400 VMs in a nested VM of 2 CPUs, 4 threads took 0.93 of the time 2 took,
 * 6 threads 0.95. */
size_t parallel_threads(size_t n, size_t per_thread);

/* Runs fn on nthreads threads (at most PARALLEL_MAX), the calling thread one of them, and returns
 * when all are done. fn(arg, t, n) takes share t of n: every n-th item from the t-th. The work is
 * cut in many more shares than threads, each taken by whichever thread is free: a thread may start
 * milliseconds late in a nested VM, and the others then take its shares (at 400 VMs, 0.94 of the
 * time that one fixed share per thread took); a thread that cannot start takes none. The shares
 * interleave so that work bunched in one part of a list, as VMs often are in pid order, is shared
 * out. */
void parallel(size_t nthreads, void (*fn)(void *arg, size_t t, size_t n), void *arg);

#endif
