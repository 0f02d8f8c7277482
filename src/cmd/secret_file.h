/* The secret files of the commands: the fleet's hash key of share and serve (--key-file), and what
 * a secret file that could not be read says (share plan --auth-file, the key file). */
#ifndef VMHOST_CMD_SECRET_FILE_H
#define VMHOST_CMD_SECRET_FILE_H

#include "cmd/cmd.h"
#include "core/base/siphash.h"

/* share and serve: the fleet's hash key from key_file (created 0600 when absent; refused when
 * others may read it), else a random one for this run. EXIT_OK or the exit code after the error. */
int fleet_key(struct ctx *ctx, const char *key_file, struct siphash_key *ret);
/* What reading a secret file (io_secret_key, io_read_secret) that failed with err says: one that
 * others may read refused with "chmod 600 PATH" (exit 77), a symbolic link named as one. The
 * exit code after the error. */
int secret_file_failed(struct ctx *ctx, const char *what, const char *path, int err);

#endif
