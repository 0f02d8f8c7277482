/* SipHash-1-3 (Aumasson and Bernstein): a fast keyed 64-bit hash. Whoever lacks the key can
 * neither predict a page's hash nor test a sketch for a page they know. */
#ifndef VMHOST_CORE_SIPHASH_H
#define VMHOST_CORE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

struct siphash_key {
	uint64_t k0, k1;
};

uint64_t siphash13(const struct siphash_key *key, const void *data, size_t len);

/* For tests: the SipHash-2-4 function itself, checked against the reference vectors. */

/* The reference SipHash-2-4, whose published test vectors check the rounds both share. */
uint64_t siphash24(const struct siphash_key *key, const void *data, size_t len);

#endif
