/* crypt(3) from libxcrypt, loaded by serve when its web config has basic auth users rather than
 * linked: linked, every command paid 0.3 ms for it at start (src/io/dynlib.h).
 * `xcrypt.rn(...)` is crypt_rn(...). */
#ifndef VMHOST_NET_XCRYPT_H
#define VMHOST_NET_XCRYPT_H

#include <crypt.h>
#include <stddef.h>

#include "io/dynlib.h"

#define XCRYPT_CALLS(X, P) X(P, rn)

/* Filled by xcrypt_load(); not to be called before it has returned 0. */
extern DYNLIB_CALLS(xcrypt_calls, crypt_, XCRYPT_CALLS) xcrypt;

/* Loads the library once (later calls give the first answer). 0, or -ELIBACC with the reason
 * in err. */
int xcrypt_load(char *err, size_t cap);

#endif
