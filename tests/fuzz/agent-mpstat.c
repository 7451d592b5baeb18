/* agent-mpstat.c: libFuzzer target for the mpstat parser of agents/parse.c (errors fine, crashes not). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "log.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *t = (const char *)data;
	static int once;

	if (!once++)
		log_init("fuzz", 0, LOG_CRIT);
	struct cpu_pct *r;
	size_t n;

	if (!parse_mpstat(t, size, "fuzz", &r, &n))
		free(r);
	return 0;
}
