/* prepare.c: `klab-agent prepare` and `restore`: apply a tuning profile, put back what it changed. */
#include <stdio.h>

#include "agent.h"

int cmd_prepare(int argc, char **argv)
{
	fprintf(stderr, "klab-agent: prepare: not implemented yet\n");
	return 1;
}

int cmd_restore(int argc, char **argv)
{
	fprintf(stderr, "klab-agent: restore: not implemented yet\n");
	return 1;
}
