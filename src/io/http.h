/* A plain HTTP client's socket work (`share plan --from`): connect, send a request, read the
 * reply until the server closes, all within one deadline. The request and the reply are
 * net/http_url.h's. */
#ifndef VMHOST_IO_HTTP_H
#define VMHOST_IO_HTTP_H

#include <stddef.h>

/* Sends request to host:port over TCP and reads everything the server sends back until it closes
 * (an HTTP/1.0 request with "Connection: close") into a fresh buffer. 0; -ETIMEDOUT past
 * timeout_seconds (the name's lookup, connect, send and receive together: io/resolve.h);
 * -EFBIG past max_bytes;
 * -EHOSTUNREACH when the name does not resolve; another negative errno. */
int io_http_exchange(const char *host, const char *port, const char *request, size_t request_len,
		     double timeout_seconds, size_t max_bytes, char **ret, size_t *ret_len);

#endif
