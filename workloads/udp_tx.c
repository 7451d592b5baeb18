/* udp_tx.c: UDP transmit generator (sender and sink). */
#include <stdio.h>

#include "workloads.h"

int udp_tx_main(int argc, char **argv)
{
	fprintf(stderr, "udp-tx: not implemented yet\n");
	return 1;
}
