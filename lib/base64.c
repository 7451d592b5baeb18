/* base64.c: base64 encoding and decoding (RFC 4648). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "util.h"

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

/* The 6-bit value of each base64 character; 64: white space; 65: '='; 255: not base64. */
static unsigned char dtab[256];

static void dtab_init(void)
{
	memset(dtab, 255, sizeof(dtab));
	for (int i = 0; i < 64; i++)
		dtab[(unsigned char)alphabet[i]] = (unsigned char)i;
	for (int c = 1; c < 256; c++)
		if (isspace(c))
			dtab[c] = 64;
	dtab['='] = 65;
}

/* A table lookup per character into one allocation: kernel samples decode megabytes of it. */
int base64_decode(struct buf *out, const char *in, size_t len, int strict)
{
	unsigned acc = 0;
	int bits = 0, pad = 0;
	size_t nchars = 0;
	unsigned char *dec, *o;
	int ret = 0;

	if (dtab['='] != 65)
		dtab_init();
	o = dec = xmalloc(len / 4 * 3 + 3);
	for (size_t i = 0; i < len; i++) {
		unsigned v = dtab[(unsigned char)in[i]];

		if (v < 64) {
			if (pad) {
				ret = -1;	/* data after the padding */
				break;
			}
			nchars++;
			acc = (acc << 6) | v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				*o++ = (unsigned char)(acc >> bits);
			}
		} else if (v == 65) {
			pad++;
			nchars++;
		} else if (v != 64) {
			ret = -1;	/* not base64 */
			break;
		}
	}
	if (pad > 2 || (strict && nchars % 4 != 0))
		ret = -1;
	buf_add(out, dec, (size_t)(o - dec));
	free(dec);
	return ret;
}
