/* udp_rr.c: UDP request/response generator (client and echo server). */
#include <stdio.h>

#include "workloads.h"

int udp_rr_main(int argc, char **argv)
{
	fprintf(stderr, "udp-rr: not implemented yet\n");
	return 1;
}
