/* An HTTP client's socket work (`share plan --from`): resolve, connect, TLS for https (io/peer/tls.h),
 * send a request, read the reply until the server closes, all within one deadline. The request
 * and the reply are parse/http/http_url.h's. */
#ifndef VMHOST_IO_PEER_HTTP_H
#define VMHOST_IO_PEER_HTTP_H

#include <stddef.h>

#include "io/peer/tls.h"

struct io_http_request {
	const char *host, *port;
	const struct io_tls *tls; /* NULL: plain HTTP */
	const char *data;         /* the request's bytes */
	size_t len;
	double timeout_seconds;   /* the name's lookup, connect, TLS handshake, send and receive together */
	size_t max_bytes;         /* of the reply */
};

/* Sends the request to host:port over TCP (and TLS with tls) and reads everything the server sends
 * back until it closes (an HTTP/1.0 request with "Connection: close") into a fresh buffer. 0;
 * -ETIMEDOUT past the timeout; -EFBIG past max_bytes; -EHOSTUNREACH when the name does not
 * resolve; with tls, -EKEYREJECTED when the server's certificate is not trusted and -EPROTO when
 * TLS fails otherwise (why says how, in one line), and io_tls_new's errors; another negative errno.
 * why is "" for a plain socket error. */
int io_http_exchange(const struct io_http_request *req, char **ret, size_t *ret_len, char *why, size_t why_cap);

#endif
