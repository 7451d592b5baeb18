/* quote.c: single-quote shell words; the only builder of the SSH command string. */
#include "quote.h"

void sq_quote(struct buf *dst, const char *src)
{
	buf_addch(dst, '\'');
	for (; *src; src++) {
		if (*src == '\'')
			buf_addstr(dst, "'\\''");
		else
			buf_addch(dst, *src);
	}
	buf_addch(dst, '\'');
}

void sq_quote_argv(struct buf *dst, const char *const *argv)
{
	int first = 1;

	for (; argv && *argv; argv++) {
		if (!first)
			buf_addch(dst, ' ');
		sq_quote(dst, *argv);
		first = 0;
	}
}
