/* bin-udp-tx.c: main of the standalone program klab-udp-tx. */
#include "workloads.h"

int main(int argc, char **argv)
{
	return udp_tx_main(argc, argv);
}
