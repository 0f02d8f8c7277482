/* The sharing maps of `vmhost share` in the history database (schema 5): written by share through
 * a side writer (store_open_side), the latest read back by the report. */
#ifndef VMHOST_STORE_SHARE_H
#define VMHOST_STORE_SHARE_H

#include "core/share/share_run.h"
#include "store/store.h"

/* Writes the run in one transaction (its pairs that share nothing are left out), and forgets the
 * pairs of runs taken over 30 days before it (their run and VM rows stay). 0 or a negative errno
 * (store_strerror): nothing of the run is kept then. */
int store_share_write(struct store *s, const struct share_run *r);
/* The latest run into *ret (share_run_free it). -ENODATA when there is none. */
int store_share_latest(struct store *s, struct share_run *ret);

#endif
