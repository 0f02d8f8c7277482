/* GnuTLS for io/peer/tls.h, loaded by the commands that speak TLS as a client (share plan --from
 * https://) rather than linked (io/dynlib.h). */
#ifndef VMHOST_IO_PEER_TLS_LIB_H
#define VMHOST_IO_PEER_TLS_LIB_H

#include <stddef.h>

/* Fills io_tls_calls once (later calls give the first answer). 0, or -ELIBACC with the reason in err. */
int tls_lib_load(char *err, size_t cap);

#endif
