/* How often a long-running reader may ask a QEMU for its vCPUs' KVM statistics. QEMU 7.1 to 8.0
 * answer query-stats for vCPUs with a call run on every vCPU thread, kicking each vCPU out of
 * the guest (QEMU 8.1 reads a stats fd it keeps instead); docs/exits.md has what it costs here.
 * Such a QEMU is read at most every `--kvm-interval` seconds, its last figures reused in between.
 *
 *   if (kvm_pace_due(version, interval, reads, last_read, now)) read it; else reuse the last read
 *   kvm_pace_why(buf, cap, version, interval)   the one line that says why */
#ifndef VMHOST_CORE_KVM_PACE_H
#define VMHOST_CORE_KVM_PACE_H

#include <stdbool.h>
#include <stddef.h>

/* The default --kvm-interval of top, serve and exits' live views. Measured here (docs/exits.md):
 * even back-to-back reads (~100 a second) cost the firmware guest no vCPU time we could see (its
 * exits per vCPU CPU second within 3%), so at most ~0.3 ms a read; at one read a second that is
 * at most 0.03% of a vCPU, and refreshes once a second stay exact: only faster ones are held. */
#define KVM_PACE_INTERVAL_SECONDS 1.0

/* version: major*10000 + minor*100 + micro from the QMP greeting (0 unknown). Whether its vCPU
 * query-stats interrupts every vCPU: 7.1.0 <= version < 8.1.0. */
bool kvm_pace_interrupts(unsigned version);

/* Whether a VM is to be read now: always when the pace is off (interval <= 0), its version is
 * unknown (not read yet) or not interrupting, or it was read fewer than twice (the first figures
 * need two reads); else once `interval` seconds have passed since last_read (2% early is on time:
 * a refresh a little early on a timer does not wait a whole period more). */
bool kvm_pace_due(unsigned version, double interval, unsigned reads, double last_read, double now);

/* "QEMU 7.2 interrupts every vCPU for query-stats: read every 10 s" into buf. */
void kvm_pace_why(char *buf, size_t cap, unsigned version, double interval);

#endif
