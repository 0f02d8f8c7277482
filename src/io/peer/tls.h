/* The TLS side of `share plan --from https://...`: a GnuTLS client session on a connected socket
 * (TLS 1.2 at least, on the system's default priorities), the server's certificate verified
 * against the system trust store or a given CA, and its name against the host asked for. GnuTLS is loaded by the commands that use it (io_tls_load, through
 * io/dynlib.h), not linked: see net/mhd.h for what linking it costs every command. The steps never block: each says which way the socket must be ready
 * (POLLIN, POLLOUT) before it is called again, and io/peer/http.c waits for that within its deadline. */
#ifndef VMHOST_IO_PEER_TLS_H
#define VMHOST_IO_PEER_TLS_H

#include <stddef.h>
#include <sys/types.h>
#include <stdbool.h>

/* What the client trusts and shows, PEM in memory (read by the caller through io/file.h). */
struct io_tls {
	const char *ca_pem;  /* the CAs the server's certificate must chain to; NULL: the system's */
	size_t ca_len;
	const char *cert_pem, *key_pem; /* a client certificate and its key, or NULL */
	size_t cert_len, key_len;
};

/* Loads GnuTLS once (later calls give the first answer): before any other call here. 0, or -ELIBACC
 * with the reason in err. */
int io_tls_load(char *err, size_t cap);

struct io_tls_session;

/* A session on the connected fd for host (a name, or an IP address: checked against the
 * certificate's names and addresses; a name is also sent as SNI). 0, -ELIBACC before the library
 * is loaded, -EINVAL with why for a CA file or client certificate GnuTLS cannot use, -ENOMEM. */
int io_tls_new(int fd, const char *host, const struct io_tls *tls, struct io_tls_session **ret, char *why,
	       size_t cap);

/* A step of the handshake: 0 when done and the certificate verified; -EAGAIN with *ret_events to
 * wait for; -EKEYREJECTED with why when the certificate is not to be trusted; -EPROTO with why for
 * another failure of the handshake. */
int io_tls_handshake(struct io_tls_session *s, short *ret_events, char *why, size_t cap);

/* Bytes sent or received (0: the server closed), -EAGAIN with *ret_events, -EPROTO with why. */
ssize_t io_tls_send(struct io_tls_session *s, const char *data, size_t len, short *ret_events, char *why,
		    size_t cap);
ssize_t io_tls_recv(struct io_tls_session *s, char *buf, size_t len, short *ret_events, char *why, size_t cap);

/* Frees the session (the fd stays the caller's). NULL is fine. */
void io_tls_free(struct io_tls_session *s);

/* For a server whose TLS library is GnuTLS too (libmicrohttpd): whether the client of its session
 * (a gnutls_session_t) showed a certificate that chains to the session's trust list, is valid
 * now and is a client's (its extended key usage, when it has one, includes TLS client
 * authentication: a server's certificate the same CA signed is refused). false before
 * io_tls_load has succeeded. */
bool io_tls_client_verified(void *gnutls_session);

/* What a session negotiated: its version (12, 13; 0 another) and GnuTLS's names of its key
 * exchange, cipher and MAC ("ECDHE-RSA", "AES-128-GCM", "AEAD"). */
struct io_tls_suite {
	int version;
	const char *kx, *cipher, *mac;
};
/* For a server on GnuTLS, as io_tls_client_verified. false before io_tls_load has succeeded. */
bool io_tls_session_suite(void *gnutls_session, struct io_tls_suite *ret);

#endif
