/* bin-udp-rr.c: main of the standalone program klab-udp-rr. */
#include "log.h"
#include "workloads.h"

int main(int argc, char **argv)
{
	log_init("klab-udp-rr", 0, LOG_NOTICE);
	return udp_rr_main(argc, argv);
}
