/* agent-bpftrace.c: libFuzzer target for the bpftrace parser of agents/parse.c (errors fine, crashes not). */
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
	struct bpf_output o;

	if (!parse_bpftrace(t, size, "fuzz", &o))
		bpf_output_free(&o);
	return 0;
}
