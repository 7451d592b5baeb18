/* run.c: `klab-agent run`, `fetch`, `ack`, `list`: one workload with its monitors, results kept until acked. */
#include <stdio.h>

#include "agent.h"

int cmd_run(int argc, char **argv)
{
	fprintf(stderr, "klab-agent: run: not implemented yet\n");
	return 1;
}

int cmd_fetch(int argc, char **argv)
{
	fprintf(stderr, "klab-agent: fetch: not implemented yet\n");
	return 1;
}

int cmd_ack(int argc, char **argv)
{
	fprintf(stderr, "klab-agent: ack: not implemented yet\n");
	return 1;
}

int cmd_list(int argc, char **argv)
{
	fprintf(stderr, "klab-agent: list: not implemented yet\n");
	return 1;
}
