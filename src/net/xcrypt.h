/* crypt(3) from libxcrypt, loaded by serve when its web config has basic auth users rather than
 * linked: linked, every command paid 0.3 ms for it at start (src/io/dynlib.h).
 * `xcrypt.rn(...)` is crypt_rn(...). */
#ifndef VMHOST_NET_XCRYPT_H
#define VMHOST_NET_XCRYPT_H

#include <crypt.h>
#include <stddef.h>

#define XCRYPT_CALLS(X) X(rn)

struct xcrypt_calls {
#define XCRYPT_CALL_POINTER(name) __typeof__(crypt_##name) *name;
	XCRYPT_CALLS(XCRYPT_CALL_POINTER)
#undef XCRYPT_CALL_POINTER
};

/* Filled by xcrypt_load(); not to be called before it has returned 0. */
extern struct xcrypt_calls xcrypt;

/* Loads the library once (later calls give the first answer). 0, or -ELIBACC with the reason
 * in err. */
int xcrypt_load(char *err, size_t cap);

#endif
