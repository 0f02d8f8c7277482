/* The pace of vCPU statistics reads: see kvm_pace.h. */
#include "core/kvm/kvm_pace.h"

#include <stdio.h>

bool kvm_pace_interrupts(unsigned version)
{
	return version >= 70100 && version < 80100;
}

bool kvm_pace_due(unsigned version, double interval, unsigned reads, double last_read, double now)
{
	if (!(interval > 0) || !kvm_pace_interrupts(version) || reads < 2)
		return true;
	return now - last_read >= interval * 0.98;
}

void kvm_pace_why(char *buf, size_t cap, unsigned version, double interval)
{
	snprintf(buf, cap, "QEMU %u.%u interrupts every vCPU for query-stats: read every %g s", version / 10000,
		 version / 100 % 100, interval);
}
