#include "io/peer/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "io/dynlib.h"

#ifndef VMHOST_GNUTLS_SONAME
#error "VMHOST_GNUTLS_SONAME: the build names GnuTLS's soname (cmake/tls.cmake)"
#endif

#define GNUTLS_CALLS(X, P)                                                                         \
	X(P, certificate_allocate_credentials)                                                     \
	X(P, certificate_free_credentials)                                                         \
	X(P, certificate_set_x509_key_mem)                                                         \
	X(P, certificate_set_x509_system_trust)                                                    \
	X(P, certificate_set_x509_trust_mem)                                                       \
	X(P, certificate_verify_peers)                                                             \
	X(P, cipher_get)                                                                           \
	X(P, cipher_get_name)                                                                      \
	X(P, credentials_set)                                                                      \
	X(P, deinit)                                                                               \
	X(P, error_is_fatal)                                                                       \
	X(P, handshake)                                                                            \
	X(P, init)                                                                                 \
	X(P, kx_get)                                                                               \
	X(P, kx_get_name)                                                                          \
	X(P, mac_get)                                                                              \
	X(P, mac_get_name)                                                                         \
	X(P, protocol_get_version)                                                                 \
	X(P, record_get_direction)                                                                 \
	X(P, record_recv)                                                                          \
	X(P, record_send)                                                                          \
	X(P, server_name_set)                                                                      \
	X(P, session_get_verify_cert_status)                                                       \
	X(P, session_set_verify_cert)                                                              \
	X(P, set_default_priority_append)                                                          \
	X(P, strerror)                                                                             \
	X(P, transport_set_int2)

/* GnuTLS's calls: G.handshake is gnutls_handshake. */
static DYNLIB_CALLS(gnutls_calls, gnutls_, GNUTLS_CALLS) G;
DYNLIB_DEFINE(G, gnutls_, GNUTLS_CALLS, VMHOST_GNUTLS_SONAME, "Debian: apt install libgnutls30");

int io_tls_load(char *err, size_t cap) { return dynlib_get(&G_lib, err, cap); }

bool io_tls_client_verified(void *gnutls_session)
{
	unsigned status = 0;
	gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID, (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
	return G.certificate_verify_peers && gnutls_session &&
	       G.certificate_verify_peers((gnutls_session_t)gnutls_session, &purpose, 1, &status) == 0 && status == 0;
}

bool io_tls_session_suite(void *gnutls_session, struct io_tls_suite *ret)
{
	if (!G.protocol_get_version || !gnutls_session)
		return false;
	gnutls_session_t s = gnutls_session;
	gnutls_protocol_t v = G.protocol_get_version(s);
	*ret = (struct io_tls_suite){.version = v == GNUTLS_TLS1_3 ? 13 : v == GNUTLS_TLS1_2 ? 12 : 0,
				     .kx = G.kx_get_name(G.kx_get(s)), .cipher = G.cipher_get_name(G.cipher_get(s)),
				     .mac = G.mac_get_name(G.mac_get(s))};
	return true;
}

struct io_tls_session {
	gnutls_session_t session;
	gnutls_certificate_credentials_t cred;
	char host[256];
};

/* The client's versions on top of the system's default priorities: TLS 1.2 at least, as serve's. */
#define CLIENT_VERSIONS "-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

static gnutls_datum_t datum(const char *pem, size_t len) { return (gnutls_datum_t){(unsigned char *)pem, (unsigned)len}; }

/* The CAs (the system's without ca_pem) and the client certificate into cred. 0 or -EINVAL with why. */
static int trust(gnutls_certificate_credentials_t cred, const struct io_tls *tls, char *why, size_t cap)
{
	gnutls_datum_t ca = datum(tls->ca_pem, tls->ca_len);
	int n = tls->ca_pem ? G.certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM)
			    : G.certificate_set_x509_system_trust(cred);
	if (n <= 0) {
		snprintf(why, cap, "%s: %s", tls->ca_pem ? "the CA file" : "the system trust store",
			 n < 0 ? G.strerror(n) : "no certificate in it");
		return -EINVAL;
	}
	if (!tls->cert_pem)
		return 0;
	gnutls_datum_t cert = datum(tls->cert_pem, tls->cert_len), key = datum(tls->key_pem, tls->key_len);
	int r = G.certificate_set_x509_key_mem(cred, &cert, &key, GNUTLS_X509_FMT_PEM);
	if (r < 0) {
		snprintf(why, cap, "the client certificate and key: %s", G.strerror(r));
		return -EINVAL;
	}
	return 0;
}

int io_tls_new(int fd, const char *host, const struct io_tls *tls, struct io_tls_session **ret, char *why, size_t cap)
{
	if (!G.init) {
		snprintf(why, cap, "GnuTLS is not loaded");
		return -ELIBACC;
	}
	struct io_tls_session *s = calloc(1, sizeof(*s));
	if (!s || strlen(host) >= sizeof(s->host) || G.certificate_allocate_credentials(&s->cred) < 0) {
		free(s);
		return -ENOMEM;
	}
	memcpy(s->host, host, strlen(host) + 1);
	int r = trust(s->cred, tls, why, cap);
	if (r == 0 && G.init(&s->session, GNUTLS_CLIENT | GNUTLS_NONBLOCK) < 0)
		r = -ENOMEM;
	if (r == 0 && (G.set_default_priority_append(s->session, CLIENT_VERSIONS, NULL, 0) < 0 ||
		       G.credentials_set(s->session, GNUTLS_CRD_CERTIFICATE, s->cred) < 0))
		r = -ENOMEM;
	unsigned char addr[16];
	bool numeric = inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
	if (r == 0 && !numeric && G.server_name_set(s->session, GNUTLS_NAME_DNS, host, strlen(host)) < 0)
		r = -ENOMEM;
	if (r < 0) {
		io_tls_free(s);
		return r;
	}
	G.session_set_verify_cert(s->session, s->host, 0);
	G.transport_set_int2(s->session, fd, fd);
	*ret = s;
	return 0;
}

/* Why the certificate was refused, from GnuTLS's verification status: the first reason that applies. */
static void refused(const struct io_tls_session *s, unsigned status, char *why, size_t cap)
{
	const char *reason = status & GNUTLS_CERT_SIGNER_NOT_FOUND
				     ? "its issuer is not trusted here (give the CA that signed it with --ca-file)"
			     : status & GNUTLS_CERT_UNEXPECTED_OWNER ? "it is for another host name"
			     : status & GNUTLS_CERT_EXPIRED		  ? "it has expired"
			     : status & GNUTLS_CERT_NOT_ACTIVATED	  ? "it is not valid yet"
			     : status & GNUTLS_CERT_REVOKED		  ? "it is revoked"
			     : status & GNUTLS_CERT_SIGNER_NOT_CA	  ? "its issuer is not a CA"
			     : status & GNUTLS_CERT_INSECURE_ALGORITHM ? "it is signed with an insecure algorithm"
			     : status & GNUTLS_CERT_SIGNATURE_FAILURE  ? "its signature does not verify"
								       : "it does not verify";
	snprintf(why, cap, "the server's certificate is not trusted for %s: %s", s->host, reason);
}

/* A GnuTLS result as this file's: -EAGAIN with the direction to wait for, or -EPROTO with why. */
static int step_error(struct io_tls_session *s, int r, short *ret_events, char *why, size_t cap)
{
	if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED || !G.error_is_fatal(r)) {
		*ret_events = G.record_get_direction(s->session) ? POLLOUT : POLLIN;
		return -EAGAIN;
	}
	snprintf(why, cap, "TLS: %s", G.strerror(r));
	return -EPROTO;
}

int io_tls_handshake(struct io_tls_session *s, short *ret_events, char *why, size_t cap)
{
	int r = G.handshake(s->session);
	if (r == 0)
		return 0;
	if (r == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
		refused(s, G.session_get_verify_cert_status(s->session), why, cap);
		return -EKEYREJECTED;
	}
	return step_error(s, r, ret_events, why, cap);
}

ssize_t io_tls_send(struct io_tls_session *s, const char *data, size_t len, short *ret_events, char *why, size_t cap)
{
	ssize_t n = G.record_send(s->session, data, len);
	return n >= 0 ? n : step_error(s, (int)n, ret_events, why, cap);
}

/* A server that closes without TLS's close_notify ends the reply too: the HTTP reply's
 * Content-Length (parse/http/http_url.h) tells a reply cut short. */
ssize_t io_tls_recv(struct io_tls_session *s, char *buf, size_t len, short *ret_events, char *why, size_t cap)
{
	ssize_t n = G.record_recv(s->session, buf, len);
	return n >= 0 || n == GNUTLS_E_PREMATURE_TERMINATION ? (n > 0 ? n : 0) : step_error(s, (int)n, ret_events, why, cap);
}

void io_tls_free(struct io_tls_session *s)
{
	if (!s)
		return;
	if (s->session)
		G.deinit(s->session);
	if (s->cred)
		G.certificate_free_credentials(s->cred);
	free(s);
}
