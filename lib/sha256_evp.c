/* sha256_evp.c: SHA-256 for the orchestrator through OpenSSL's EVP (libcrypto comes with libcurl and libssh2 anyway). */
#include <string.h>

#include <openssl/evp.h>

#include "log.h"
#include "util.h"

/*
 * OpenSSL picks the fastest code the CPU has (the x86 SHA extensions
 * included), so the orchestrator needs no copy of its own; klab-agent
 * keeps the portable sha256.c to stay free of libcrypto on the test
 * machines. An EVP context lives on the heap: sha256_final() frees it,
 * so every sha256_init() must end in one.
 */
void sha256_init(struct sha256_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->evp = EVP_MD_CTX_new();
	if (!c->evp || EVP_DigestInit_ex(c->evp, EVP_sha256(), NULL) != 1)
		die("cannot start a SHA-256 digest (OpenSSL)");
}

void sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
	if (len && EVP_DigestUpdate(c->evp, data, len) != 1)
		die("SHA-256 digest update failed (OpenSSL)");
}

void sha256_final(struct sha256_ctx *c, unsigned char out[32])
{
	unsigned int n = 0;

	if (EVP_DigestFinal_ex(c->evp, out, &n) != 1 || n != 32)
		die("SHA-256 digest failed (OpenSSL)");
	EVP_MD_CTX_free(c->evp);
	c->evp = NULL;
}
