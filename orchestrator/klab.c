/* klab.c: the command-line tool; the commands and their table are in cmd/. */
#include <syslog.h>

#include "cmd/cmd.h"
#include "log.h"

int main(int argc, char **argv)
{
	log_init("klab", 0, LOG_NOTICE);
	return cmd_main(argc, argv);
}
