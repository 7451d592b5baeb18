/* bin-udp-tx.c: main of the standalone program klab-udp-tx. */
#include "log.h"
#include "workloads.h"

int main(int argc, char **argv)
{
	log_init("klab-udp-tx", 0, LOG_NOTICE);
	return udp_tx_main(argc, argv);
}
