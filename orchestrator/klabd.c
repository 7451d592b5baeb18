/* klabd.c: the daemon (minimal: config check; the job supervisor lands with issue 7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"

static int usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: klabd [-d] [-c CONFIG] [-n]\n"
		"  -d         stay in the foreground, log to stderr\n"
		"  -c CONFIG  configuration file\n"
		"  -n         check the configuration and exit\n");
	return status;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int check = 0, foreground = 0, opt;
	struct klab_config cfg;

	log_init("klabd", 0, LOG_NOTICE);
	while ((opt = getopt(argc, argv, "dc:nh")) != -1) {
		switch (opt) {
		case 'd': foreground = 1; break;
		case 'c': path = optarg; break;
		case 'n': check = 1; break;
		case 'h': return usage(0);
		default: return usage(2);
		}
	}
	if (optind < argc && !path)
		path = argv[optind];
	if (!path)
		path = conf_default_path();
	if (!path) {
		error("no configuration file: give -c CONFIG or set KLAB_CONFIG");
		return 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	if (conf_load(&cfg, path))
		return 1;
	if (check) {
		printf("%s: configuration ok\n", path);
		conf_free(&cfg);
		return 0;
	}
	(void)foreground;
	conf_free(&cfg);
	error("the job supervisor is not implemented yet");
	return 1;
}
