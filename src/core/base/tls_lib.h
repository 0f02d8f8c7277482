/* GnuTLS for io/tls.h, loaded by the commands that speak TLS as a client (share plan --from
 * https://) rather than linked (core/base/dynlib.h). */
#ifndef VMHOST_CORE_BASE_TLS_LIB_H
#define VMHOST_CORE_BASE_TLS_LIB_H

#include <stddef.h>

/* Fills io_tls_calls once (later calls give the first answer). 0, or -ELIBACC with the reason in err. */
int tls_lib_load(char *err, size_t cap);

#endif
