/* vmhost's own small state files, kept between runs in a private directory (its runtime
 * directory, /run/vmhost for root): read whole, replaced whole. Not under a proc or sys root. */
#ifndef VMHOST_IO_STATE_H
#define VMHOST_IO_STATE_H

#include <stddef.h>

/* Where root's runtime directory is. */
#define IO_RUNTIME_DIR_ROOT "/run/vmhost"

/* vmhost's runtime directory, for its memo, locks and saved settings: /run/vmhost for root,
 * $XDG_RUNTIME_DIR/vmhost for another user, NULL without one (or when it does not fit buf); a test
 * build takes VMHOST_RUNTIME_DIR instead (empty: none). Filled in buf. */
const char *io_runtime_dir(char *buf, size_t cap);

/* Reads dir/name (at most max bytes) into a fresh buffer. Only a regular file of ours in a
 * directory of ours that no one else may write is read: anything else is -EPERM (another user
 * could plant what it says). 0 or a negative errno (-ENOENT: none yet). */
int io_state_read(const char *dir, const char *name, size_t max, char **ret, size_t *ret_len);

/* Replaces dir/name with data at once (a new file renamed over it: a reader sees the old file
 * or the new one, never half), making dir (mode 0700) when it is missing. 0 or a negative errno;
 * on failure the old file stays and nothing else is left behind. */
int io_state_write(const char *dir, const char *name, const void *data, size_t len);

#endif
