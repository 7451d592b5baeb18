/* bin-udp-rr.c: main of the standalone program klab-udp-rr. */
#include "workloads.h"

int main(int argc, char **argv)
{
	return udp_rr_main(argc, argv);
}
