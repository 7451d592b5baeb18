/* orch-diff.c (fuzz): the diff parser of patch intake (hostile patch text): locating, checking, diffstat, names. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "intake/diff.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);	/* the parser reads a C string, as series.c gives it */
	struct diff d;

	if (diff_parse(text, &d) == 1) {
		int f, a, r;
		char *st = diff_stat(&d, &f, &a, &r);

		/* what series.c relies on: the diff inside the text, the message before it */
		if (d.start > d.end || d.end > strlen(text) || d.msg_end > d.start)
			abort();
		if (!d.error && !d.n_files)
			abort();
		free(st);
	}
	diff_free(&d);
	free(text);
	return 0;
}
