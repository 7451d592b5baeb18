/* orch-sha256.c: the orchestrator's SHA-256 (OpenSSL EVP) on the FIPS 180-4 vectors, in pieces, on files. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "tap.h"
#include "util.h"

int main(void)
{
	char hex[65];
	struct sha256_ctx c;
	unsigned char d[32];
	char *mil = xmalloc(1000000), *p = xasprintf("%s/f", tap_scratch_dir());

	sha256_hex("", 0, hex);
	is_str(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "the empty message");
	sha256_hex("abc", 3, hex);
	is_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "'abc'");
	sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	is_str(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "the 448-bit message");
	memset(mil, 'a', 1000000);
	sha256_init(&c);
	for (int i = 0; i < 1000; i++)
		sha256_update(&c, mil + i * 1000, 1000);
	sha256_update(&c, mil, 0);
	sha256_final(&c, d);
	sha256_to_hex(d, hex);
	is_str(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
	       "a million 'a', fed in 1000 pieces (and an empty one)");
	ok(c.evp == NULL, "sha256_final freed the EVP state");
	ok(!write_file_atomic(p, mil, 1000000, 0644) && !sha256_file_hex(p, hex) &&
	   !strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"), "the same from a file");
	free(p);
	p = xasprintf("%s/missing", tap_scratch_dir());
	log_set_level(LOG_CRIT);
	is_int(sha256_file_hex(p, hex), -1, "a missing file is an error");
	log_set_level(LOG_NOTICE);
	ok(strstr(log_last_error(), "/missing") != NULL, "naming the file: %s", log_last_error());
	free(p);
	free(mil);
	return done_testing();
}
