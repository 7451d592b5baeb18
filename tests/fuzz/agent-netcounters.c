/* agent-netcounters.c: libFuzzer target for the netcounters parser of agents/parse.c (errors fine, crashes not). */
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
	struct counters c = COUNTERS_INIT;
	struct channels ch;

	parse_snmp(t, size, "fuzz", &c);
	counters_free(&c);
	parse_softnet(t, size, "fuzz", &c);
	counters_free(&c);
	parse_ethtool_stats(t, size, "fuzz", &c);
	counters_free(&c);
	parse_ethtool_channels(t, size, "fuzz", &ch);
	return 0;
}
