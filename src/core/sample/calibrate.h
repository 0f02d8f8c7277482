/* Exact PSS, amortized: long-running samplers (record, serve) read smaps_rollup for a few VMs per
 * sample, oldest first, and every other VM's estimate uses the weights its last exact read
 * taught (docs/accounting.md, "Calibration"). */
#ifndef VMHOST_CORE_CALIBRATE_H
#define VMHOST_CORE_CALIBRATE_H

#include "core/model/vm.h"

struct calib_cache;

struct calib_cache *calib_new(void);
void calib_free(struct calib_cache *c);

/* Refreshes the calibration of the VMs calibrated longest ago (never-calibrated first), spending
 * at most budget_seconds on exact reads but always at least one VM, then recomputes every VM's
 * pss_bytes and ksm_saved_bytes with its own weights. VMs are keyed by pid + start time; entries
 * of VMs that are gone are dropped. Returns how many VMs were read exactly, or -ENOMEM (then
 * nothing changed). */
int calib_apply(struct calib_cache *c, const struct io_root *root, const struct host *host, struct vm_list *vms,
		double budget_seconds);

#endif
