/* The cipher suites of a web config (parse/http/web_cipher.h). */
#include "parse/http/web_cipher.h"

#include <stddef.h>
#include <string.h>

static const struct web_cipher_suite suites[] = {
	{"TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1"},
	{"TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1"},
	{"TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD"},
	{"TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD"},
	{"TLS_AES_128_GCM_SHA256", NULL, NULL, NULL},
	{"TLS_AES_256_GCM_SHA384", NULL, NULL, NULL},
	{"TLS_CHACHA20_POLY1305_SHA256", NULL, NULL, NULL},
	{"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1"},
	{"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1"},
	{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1"},
	{"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1"},
	{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD"},
	{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD"},
	{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
	{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
	{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
	{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
};

const struct web_cipher_suite *web_cipher_suite_find(const char *name)
{
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		if (!strcmp(suites[i].name, name))
			return &suites[i];
	return NULL;
}

bool web_cipher_suite_listed(const struct web_cipher_suite *const *list, size_t n, const char *kx, const char *cipher,
			     const char *mac)
{
	for (size_t i = 0; i < n; i++)
		if (list[i]->kx && kx && cipher && mac && !strcmp(list[i]->kx, kx) && !strcmp(list[i]->cipher, cipher) &&
		    !strcmp(list[i]->mac, mac))
			return true;
	return false;
}
