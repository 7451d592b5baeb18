/* sha256.c: SHA-256 (FIPS 180-4) without libcrypto, for klab-agent (linked statically); the orchestrator links sha256_evp.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void compress(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4]; f = h[5]; g = h[6]; hh = h[7];
	for (i = 0; i < 64; i++) {
		t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

/*
 * The x86 SHA extensions compress a block about 7x faster than the portable
 * code (~1.5 GB/s against ~200 MB/s here), which matters when a 200 MB upload
 * is hashed on both ends while it is sent. The round structure is Intel's
 * published SHA-NI sequence; the tests check both paths against the FIPS
 * vectors and against sha256sum.
 */
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

__attribute__((target("sha,sse4.1,ssse3")))
static void sha256_ni_blocks(uint32_t st[8], const unsigned char *p, size_t nblocks)
{
	const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i s0, s1, tmp, msg, m[4], abef, cdgh;
	int g;

	tmp = _mm_loadu_si128((const __m128i *)&st[0]);
	s1 = _mm_loadu_si128((const __m128i *)&st[4]);
	tmp = _mm_shuffle_epi32(tmp, 0xB1);		/* CDAB */
	s1 = _mm_shuffle_epi32(s1, 0x1B);		/* EFGH */
	s0 = _mm_alignr_epi8(tmp, s1, 8);		/* ABEF */
	s1 = _mm_blend_epi16(s1, tmp, 0xF0);		/* CDGH */
	while (nblocks--) {
		abef = s0;
		cdgh = s1;
		for (g = 0; g < 16; g++) {
			if (g < 4) {
				m[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), mask);
			} else {
				/* W[4g..4g+3] from groups g-4 .. g-1 (kept in a ring of 4) */
				__m128i t = _mm_sha256msg1_epu32(m[g & 3], m[(g + 1) & 3]);

				t = _mm_add_epi32(t, _mm_alignr_epi8(m[(g + 3) & 3], m[(g + 2) & 3], 4));
				m[g & 3] = _mm_sha256msg2_epu32(t, m[(g + 3) & 3]);
			}
			msg = _mm_add_epi32(m[g & 3], _mm_loadu_si128((const __m128i *)&K[4 * g]));
			s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
			msg = _mm_shuffle_epi32(msg, 0x0E);
			s0 = _mm_sha256rnds2_epu32(s0, s1, msg);
		}
		s0 = _mm_add_epi32(s0, abef);
		s1 = _mm_add_epi32(s1, cdgh);
		p += 64;
	}
	tmp = _mm_shuffle_epi32(s0, 0x1B);		/* FEBA */
	s1 = _mm_shuffle_epi32(s1, 0xB1);		/* DCHG */
	s0 = _mm_blend_epi16(tmp, s1, 0xF0);		/* DCBA */
	s1 = _mm_alignr_epi8(s1, tmp, 8);		/* HGFE */
	_mm_storeu_si128((__m128i *)&st[0], s0);
	_mm_storeu_si128((__m128i *)&st[4], s1);
}

static int have_shani(void)
{
	static int cached = -1;

	if (cached < 0) {
		unsigned a, b = 0, c, d;

		__builtin_cpu_init();
		/* SHA extensions: CPUID leaf 7, EBX bit 29 (clang 14 has no __builtin_cpu_supports("sha")) */
		if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
			b = 0;
		cached = getenv("KLAB_SHA256_PORTABLE") == NULL && (b & (1u << 29)) &&
			 __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("ssse3");
	}
	return cached;
}
#endif

static void blocks(uint32_t h[8], const unsigned char *p, size_t n)
{
#if defined(__x86_64__)
	if (have_shani()) {
		sha256_ni_blocks(h, p, n);
		return;
	}
#endif
	for (; n; n--, p += 64)
		compress(h, p);
}

void sha256_init(struct sha256_ctx *c)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(c->h, iv, sizeof(iv));
	c->total = 0;
	c->used = 0;
}

void sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
	const unsigned char *p = data;

	c->total += len;
	if (c->used) {
		size_t n = 64 - c->used < len ? 64 - c->used : len;

		memcpy(c->block + c->used, p, n);
		c->used += n;
		p += n;
		len -= n;
		if (c->used < 64)
			return;
		blocks(c->h, c->block, 1);
		c->used = 0;
	}
	if (len >= 64) {
		blocks(c->h, p, len / 64);
		p += len / 64 * 64;
		len %= 64;
	}
	memcpy(c->block, p, len);
	c->used = len;
}

void sha256_final(struct sha256_ctx *c, unsigned char out[32])
{
	uint64_t bits = c->total * 8;
	unsigned char pad[72] = { 0x80 };
	size_t padlen = (c->used < 56) ? 56 - c->used : 120 - c->used;
	unsigned char len[8];
	int i;

	for (i = 0; i < 8; i++)
		len[i] = (unsigned char)(bits >> (56 - 8 * i));
	sha256_update(c, pad, padlen);
	sha256_update(c, len, 8);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(c->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)c->h[i];
	}
}
