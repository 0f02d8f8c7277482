/* The TLS cipher suites a web config's cipher_suites may name: the names exporter-toolkit takes
 * (Go's crypto/tls CipherSuites(), the ones without known security issues), each with GnuTLS's
 * names of its key exchange, cipher and MAC (what a GnuTLS priority string enables, and what
 * gnutls_kx_get_name, gnutls_cipher_get_name and gnutls_mac_get_name say of a session). TLS 1.3's
 * three are accepted and, as in Go, not configurable (kx NULL). A pure table. */
#ifndef VMHOST_PARSE_WEB_CIPHER_H
#define VMHOST_PARSE_WEB_CIPHER_H

#include <stdbool.h>
#include <stddef.h>

struct web_cipher_suite {
	const char *name;        /* "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" */
	const char *kx, *cipher, *mac; /* "ECDHE-RSA", "AES-128-GCM", "AEAD"; kx NULL for TLS 1.3's */
};

/* The suite of that name, or NULL: not one exporter-toolkit accepts (an insecure one, RC4, 3DES
 * or CBC with SHA-256, included). */
const struct web_cipher_suite *web_cipher_suite_find(const char *name);

/* Whether a TLS 1.2 session's key exchange, cipher and MAC (GnuTLS's names) are one of the n
 * suites. */
bool web_cipher_suite_listed(const struct web_cipher_suite *const *suites, size_t n, const char *kx,
			     const char *cipher, const char *mac);

#endif
