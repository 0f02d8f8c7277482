#include "core/base/siphash.h"

#include <string.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                                \
	do {                                                                                                    \
		v0 += v1, v1 = ROTL(v1, 13), v1 ^= v0, v0 = ROTL(v0, 32);                                        \
		v2 += v3, v3 = ROTL(v3, 16), v3 ^= v2;                                                          \
		v0 += v3, v3 = ROTL(v3, 21), v3 ^= v0;                                                          \
		v2 += v1, v1 = ROTL(v1, 17), v1 ^= v2, v2 = ROTL(v2, 32);                                        \
	} while (0)

static uint64_t load_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* SipHash with c compression and d finalization rounds. */
static uint64_t siphash_cd(const struct siphash_key *key, const void *data, size_t len, int c, int d)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ key->k0, v1 = 0x646f72616e646f6dull ^ key->k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ key->k0, v3 = 0x7465646279746573ull ^ key->k1;
	const unsigned char *p = data, *end = p + (len & ~(size_t)7);
	for (; p != end; p += 8) {
		uint64_t m = load_le64(p);
		v3 ^= m;
		for (int r = 0; r < c; r++)
			SIPROUND;
		v0 ^= m;
	}
	unsigned char tail[8] = {0};
	memcpy(tail, p, len & 7);
	uint64_t b = (uint64_t)len << 56 | load_le64(tail);
	v3 ^= b;
	for (int r = 0; r < c; r++)
		SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	for (int r = 0; r < d; r++)
		SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t siphash13(const struct siphash_key *key, const void *data, size_t len) { return siphash_cd(key, data, len, 1, 3); }
uint64_t siphash24(const struct siphash_key *key, const void *data, size_t len) { return siphash_cd(key, data, len, 2, 4); }
