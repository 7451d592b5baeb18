/* agent-perf-stat.c: libFuzzer target for the perf-stat parser of agents/parse.c (errors fine, crashes not). */
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
	struct perf_stat_row *r;
	size_t n;

	if (!parse_perf_stat(t, size, "fuzz", &r, &n))
		perf_stat_rows_free(r, n);
	return 0;
}
