/* agent-proc-stat.c: libFuzzer target for the proc-stat parser of agents/parse.c (errors fine, crashes not). */
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
	struct proc_stat ps;

	if (!parse_proc_stat(t, size, "fuzz", &ps))
		proc_stat_free(&ps);
	return 0;
}
