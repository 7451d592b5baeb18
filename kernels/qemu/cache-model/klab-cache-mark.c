/*
 * klab-cache-mark: execute the start or stop mark of klab's cache model
 * (cache-mark.h) in a guest, so a window can be bracketed from a shell or over
 * ssh: `klab-cache-mark start; WORK; klab-cache-mark stop`. The window then
 * holds what every vCPU did in between, the marks' own process start-up and
 * exit included (a few hundred thousand instructions).
 */
#include <stdio.h>
#include <string.h>

#include "cache-mark.h"

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "start"))
		cache_mark_start();
	else if (argc == 2 && !strcmp(argv[1], "stop"))
		cache_mark_stop();
	else {
		fprintf(stderr, "usage: klab-cache-mark start|stop\n");
		return 2;
	}
	return 0;
}
