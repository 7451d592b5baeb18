/* sha256_hex.c: hex digests of memory and files over whichever SHA-256 is linked (sha256.c or sha256_evp.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

void sha256_to_hex(const unsigned char d[32], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[64] = '\0';
}

void sha256_hex(const void *data, size_t len, char hex[65])
{
	struct sha256_ctx c;
	unsigned char d[32];

	sha256_init(&c);
	sha256_update(&c, data, len);
	sha256_final(&c, d);
	sha256_to_hex(d, hex);
}

int sha256_file_hex(const char *path, char hex[65])
{
	struct sha256_ctx c;
	unsigned char d[32];
	unsigned char *chunk;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;
	ssize_t n;

	if (fd < 0)
		return error_errno("cannot read '%s'", path);
	chunk = xmalloc(1 << 20);
	sha256_init(&c);
	while ((n = read(fd, chunk, 1 << 20)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = error_errno("cannot read '%s'", path);
			break;
		}
		sha256_update(&c, chunk, (size_t)n);
	}
	close(fd);
	free(chunk);
	sha256_final(&c, d);	/* also on an error: it frees what sha256_init took */
	if (ret == 0)
		sha256_to_hex(d, hex);
	return ret;
}
