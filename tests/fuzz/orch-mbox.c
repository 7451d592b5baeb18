/* orch-mbox.c: libFuzzer target for the mail parser and series assembly (outside input). */
#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "intake/mbox.h"
#include "intake/series.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mail_list l;
	struct series *s = NULL;
	static int init;

	if (!init) {
		log_init("fuzz-mbox", 0, LOG_EMERG);
		init = 1;
	}
	if (mail_parse((const char *)data, size, "fuzz", &l) == 0)
		mail_list_free(&l);
	if (series_parse((const char *)data, size, "fuzz", "fuzz", NULL, &s) == 0)
		series_free(s);
	return 0;
}
