/* share plan --from's GET of a URL: the URL parsed (parse/http/http_url.h), basic auth from its own
 * user and password or else from an --auth-file's, TLS for https:// (GnuTLS loaded, and the CA,
 * client certificate and key files read, at the first https:// URL), the request sent and the reply
 * read within one deadline (io/peer/http.h), and the body of a 200 reply. Nothing is printed: a
 * failure says at which step it stopped and why, for the command to word. Passwords and the private
 * key are wiped from memory once used. */
#ifndef VMHOST_IO_PEER_HTTP_GET_H
#define VMHOST_IO_PEER_HTTP_GET_H

#include <stdbool.h>
#include <stddef.h>

#include "io/peer/tls.h"
#include "parse/http/http_url.h"

struct io_http_get {
	double timeout_seconds; /* each GET: lookup, connect, TLS handshake, request and reply together */
	size_t max_bytes;       /* of a reply */
	const char *ca_file, *cert_file, *key_file; /* PEM files for https://; NULL: none (the system's CAs) */
	/* io_http_get's own */
	struct http_url auth; /* io_http_get_auth_file's user and password (the rest unused) */
	struct io_tls tls;    /* the PEM files' contents, read once */
	bool tls_read;
};

/* Where a GET stopped. */
enum io_http_step {
	IO_HTTP_URL,      /* not an http[s]:// URL: -ENOTSUP another scheme, -EINVAL malformed */
	IO_HTTP_TLS,      /* GnuTLS cannot be loaded (why says why) */
	IO_HTTP_CA_FILE,  /* a PEM file that cannot be read: the errno */
	IO_HTTP_CERT_FILE,
	IO_HTTP_KEY_FILE,
	IO_HTTP_REQUEST,  /* -ENAMETOOLONG: the user and password do not fit a request */
	IO_HTTP_EXCHANGE, /* io_http_exchange's errors, why as it says */
	IO_HTTP_REPLY,    /* not an HTTP reply, or one cut short (why says which) */
	IO_HTTP_STATUS,   /* a status other than 200: why is the body's first line (at most 200 bytes) */
};

struct io_http_failure {
	enum io_http_step step;
	int status; /* IO_HTTP_STATUS */
	char why[256];
};

/* The user and password for URLs without their own from the first line of an --auth-file, a file
 * only its owner may read (io/secret.h's rules). 0; io_read_secret's errors; -EBADMSG when the line
 * is not USER:PASS (http_credentials_parse). */
int io_http_get_auth_file(struct io_http_get *g, const char *path);

/* GETs url into a fresh buffer holding the reply's body. 0, or a negative errno with *ret_failure
 * saying where and why (-EKEYREJECTED: an https server whose certificate is not trusted). */
int io_http_get(struct io_http_get *g, const char *url, char **ret_body, size_t *ret_len,
		struct io_http_failure *ret_failure);

/* Frees what the GETs read, the private key and the password wiped. */
void io_http_get_done(struct io_http_get *g);

#endif
