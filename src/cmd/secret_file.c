/* The commands' secret files (cmd/secret_file.h): the fleet's key, and a refused secret file's message. */
#include "cmd/secret_file.h"

#include <errno.h>
#include <string.h>

#include "io/secret.h"

int secret_file_failed(struct ctx *ctx, const char *what, const char *path, int err)
{
	if (err == -EPERM)
		return fail(ctx, EXIT_NOPERM, what, "%s: must be a regular file only its owner (root, or the user "
			    "running vmhost) may read or write: chmod 600 %s", path, path);
	if (err == -ELOOP) /* O_NOFOLLOW's */
		return fail(ctx, EXIT_FAIL, what, "%s: a symbolic link, not followed: give the file itself", path);
	return fail(ctx, exit_code_for(err), what, "%s: %s", path, strerror(-err));
}

int fleet_key(struct ctx *ctx, const char *key_file, struct siphash_key *ret)
{
	int created = 0;
	int r = key_file ? io_secret_key(key_file, ret, sizeof(*ret), &created) : io_random_key(ret, sizeof(*ret));
	if (r < 0)
		return key_file ? secret_file_failed(ctx, "key file", key_file, r)
				: fail(ctx, exit_code_for(r), "key file", "getrandom: %s", strerror(-r));
	if (created)
		warn(ctx, "created a new key in %s: copy it to every host whose sketches are to compare", key_file);
	return EXIT_OK;
}
