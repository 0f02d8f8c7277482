/* The TLS side of `share plan --from https://...`: a GnuTLS client session on a connected socket,
 * the server's certificate verified against the system trust store or a given CA, and its name
 * against the host asked for. GnuTLS is loaded by the commands that use it (io/peer/tls_lib.h
 * fills io_tls_calls through io/dynlib.h), not linked: see net/mhd.h for what linking it
 * costs every command. The steps never block: each says which way the socket must be ready
 * (POLLIN, POLLOUT) before it is called again, and io/peer/http.c waits for that within its deadline. */
#ifndef VMHOST_IO_PEER_TLS_H
#define VMHOST_IO_PEER_TLS_H

#include <stddef.h>
#include <sys/types.h>
#include <gnutls/gnutls.h>

#define IO_TLS_CALLS(X)                                                                                \
	X(certificate_allocate_credentials)                                                            \
	X(certificate_free_credentials)                                                                \
	X(certificate_set_x509_key_mem)                                                                \
	X(certificate_set_x509_system_trust)                                                           \
	X(certificate_set_x509_trust_mem)                                                              \
	X(certificate_verify_peers2)                                                                   \
	X(credentials_set)                                                                             \
	X(deinit)                                                                                      \
	X(error_is_fatal)                                                                              \
	X(handshake)                                                                                   \
	X(init)                                                                                        \
	X(record_get_direction)                                                                        \
	X(record_recv)                                                                                 \
	X(record_send)                                                                                 \
	X(server_name_set)                                                                             \
	X(session_get_verify_cert_status)                                                              \
	X(session_set_verify_cert)                                                                     \
	X(set_default_priority)                                                                        \
	X(strerror)                                                                                    \
	X(transport_set_int2)

struct io_tls_calls {
#define IO_TLS_CALL_POINTER(name) __typeof__(gnutls_##name) *name;
	IO_TLS_CALLS(IO_TLS_CALL_POINTER)
#undef IO_TLS_CALL_POINTER
};

/* The calls, empty until the library is loaded (io/peer/tls_lib.h), and their names. */
extern struct io_tls_calls io_tls_calls;
extern const char *const io_tls_call_names[];
#define IO_TLS_NCALLS (sizeof(struct io_tls_calls) / sizeof(void *))

/* What the client trusts and shows, PEM in memory (read by the caller through io/file.h). */
struct io_tls {
	const char *ca_pem;  /* the CAs the server's certificate must chain to; NULL: the system's */
	size_t ca_len;
	const char *cert_pem, *key_pem; /* a client certificate and its key, or NULL */
	size_t cert_len, key_len;
};

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

#endif
