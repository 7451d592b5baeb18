/* agent-perf-script.c: libFuzzer target for the perf-script stack folder of agents/parse.c (errors fine, crashes not). */
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
	struct folded_stack *v;
	uint64_t samples;
	size_t n;

	if (!once++)
		log_init("fuzz", 0, LOG_CRIT);
	if (!parse_perf_script(t, size, "fuzz", &v, &n, &samples)) {
		folded_stacks_cap(&v, &n, 4);
		folded_stacks_free(v, n);
	}
	return 0;
}
