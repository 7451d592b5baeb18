/* lib-text.c: base64 against RFC 4648's vectors, strict and lax decoding; last_line for messages. */
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "tap.h"
#include "util.h"

static void test_base64(void)
{
	static const char *const vec[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(vec); i++) {
		buf_reset(&b);
		base64_encode(&b, vec[i][0], strlen(vec[i][0]), 1);
		is_str(b.buf, vec[i][1], "encode '%s'", vec[i][0]);
		buf_reset(&b);
		ok(base64_decode(&b, vec[i][1], strlen(vec[i][1]), 1) == 0 && !strcmp(b.buf, vec[i][0]),
		   "decode '%s'", vec[i][1]);
	}
	buf_reset(&b);
	base64_encode(&b, "fo", 2, 0);
	is_str(b.buf, "Zm8", "no padding when asked (fingerprints)");
	buf_reset(&b);
	ok(base64_decode(&b, "Zm8", 3, 0) == 0 && !strcmp(b.buf, "fo"), "lax: missing padding is fine");
	buf_reset(&b);
	is_int(base64_decode(&b, "Zm8", 3, 1), -1, "strict: missing padding fails");
	buf_reset(&b);
	ok(base64_decode(&b, "Zm9v\r\nYg==\n", 11, 1) == 0 && !strcmp(b.buf, "foob"), "white space is skipped");
	buf_reset(&b);
	is_int(base64_decode(&b, "Zm9*", 4, 0), -1, "a character outside the alphabet fails");
	buf_reset(&b);
	is_int(base64_decode(&b, "Zg==Zg==", 8, 0), -1, "data after the padding fails");
	buf_reset(&b);
	is_int(base64_decode(&b, "Zm\0v", 4, 0), -1, "a NUL byte fails");
	{
		unsigned char all[256];

		for (int i = 0; i < 256; i++)
			all[i] = (unsigned char)i;
		buf_reset(&b);
		base64_encode(&b, all, sizeof(all), 1);
		{
			struct buf d = BUF_INIT;

			ok(base64_decode(&d, b.buf, b.len, 1) == 0 && d.len == 256 && !memcmp(d.buf, all, 256),
			   "every byte value round-trips");
			buf_release(&d);
		}
	}
	buf_release(&b);
}

static void test_last_line(void)
{
	is_str(last_line("one\ntwo\n\n  \n"), "two", "the last line with text, blank lines after it skipped");
	is_str(last_line("error: x failed  \r\n"), "error: x failed", "trailing white space cut");
	is_str(last_line("only"), "only", "a text without a newline");
	is_str(last_line(""), "", "empty text");
	is_str(last_line(NULL), "", "NULL");
	is_str(last_line("\n\n"), "", "blank lines only");
	is_str(last_line_except("real error\nWARNING: RLIMIT_MEMLOCK\n", "RLIMIT_MEMLOCK"), "real error",
	       "last_line_except passes over the lines with SKIP");
	is_str(last_line_except("RLIMIT_MEMLOCK\n", "RLIMIT_MEMLOCK"), "", "and may find none");
	{
		char big[2000];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		is_int(strlen(last_line(big)), 511, "a long line is cut to 511 bytes");
	}
}

int main(void)
{
	test_base64();
	test_last_line();
	return done_testing();
}
