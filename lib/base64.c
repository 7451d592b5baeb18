/* base64.c: base64 encoding and decoding (RFC 4648). */
#include <ctype.h>
#include <string.h>

#include "base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(struct buf *out, const void *data, size_t n, int pad)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];

		buf_addch(out, alphabet[v >> 18 & 63]);
		buf_addch(out, alphabet[v >> 12 & 63]);
		buf_addch(out, alphabet[v >> 6 & 63]);
		buf_addch(out, alphabet[v & 63]);
	}
	if (n - i == 1) {
		unsigned v = (unsigned)p[i] << 16;

		buf_addch(out, alphabet[v >> 18 & 63]);
		buf_addch(out, alphabet[v >> 12 & 63]);
		if (pad)
			buf_addstr(out, "==");
	} else if (n - i == 2) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;

		buf_addch(out, alphabet[v >> 18 & 63]);
		buf_addch(out, alphabet[v >> 12 & 63]);
		buf_addch(out, alphabet[v >> 6 & 63]);
		if (pad)
			buf_addch(out, '=');
	}
}

int base64_decode(struct buf *out, const char *in, size_t len, int strict)
{
	unsigned acc = 0;
	int bits = 0, pad = 0;
	size_t nchars = 0;

	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)in[i];
		const char *at;

		if (isspace(c))
			continue;
		if (c == '=') {
			pad++;
			nchars++;
			continue;
		}
		at = c ? memchr(alphabet, c, 64) : NULL;
		if (pad || !at)
			return -1;	/* data after the padding, or not base64 */
		nchars++;
		acc = (acc << 6) | (unsigned)(at - alphabet);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf_addch(out, (acc >> bits) & 0xff);
		}
	}
	if (pad > 2 || (strict && nchars % 4 != 0))
		return -1;
	return 0;
}
