/* orch-html.c: libFuzzer target for html_escape(), html_url() and html_fill(): output must stay inert. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "report/html.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* No raw markup byte, no control byte but tab and newline, valid UTF-8. */
static void check_inert(const struct buf *b)
{
	const unsigned char *p = (const unsigned char *)b->buf;
	size_t i = 0;

	while (i < b->len) {
		unsigned char c = p[i];
		size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;

		if (c == '<' || c == '>' || c == '"' || c == '\'' || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
			abort();
		if (c >= 0x80 && (c < 0xc2 || c > 0xf4 || i + n > b->len))
			abort();
		for (size_t k = 1; k < n && c >= 0x80; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				abort();
		i += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int once;
	struct buf b = BUF_INIT;
	char *s;

	if (!once++)
		log_init("fuzz", 0, LOG_CRIT);
	html_escape_n(&b, (const char *)data, size);
	check_inert(&b);
	buf_reset(&b);

	s = xstrndup((const char *)data, size);
	html_url(&b, s);
	check_inert(&b);
	if (b.len >= 11 && !strncasecmp(b.buf, "javascript:", 11))
		abort();
	buf_reset(&b);
	{
		const struct html_var v[] = { { "a", s, 0 }, { "b", "<i>raw</i>", 1 } };

		(void)html_fill(&b, s, "fuzz", v, 2);
	}
	free(s);
	buf_release(&b);
	return 0;
}
