/* klab.c: the command-line tool: global options, then the subcommand from cli.c's table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "db.h"
#include "log.h"

int main(int argc, char **argv)
{
	struct klab_ctx ctx = { 0 };
	const char *name;
	int i, ret;

	log_init("klab", 0, LOG_NOTICE);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json")) {
			ctx.json = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			ctx.verbose++;
			log_set_level(ctx.verbose > 1 ? LOG_DEBUG : LOG_INFO);
		} else if (!strcmp(a, "--config") || !strcmp(a, "-c")) {
			if (++i >= argc) {
				error("option '%s' needs a file", a);
				return 2;
			}
			ctx.config_path = argv[i];
		} else if (skip_prefix(a, "--config=")) {
			ctx.config_path = skip_prefix(a, "--config=");
		} else if (!strcmp(a, "--db")) {
			if (++i >= argc) {
				error("option '--db' needs a file");
				return 2;
			}
			ctx.db_path = argv[i];
		} else if (!strcmp(a, "--version")) {
			printf("klab %s\n", KLAB_VERSION);
			return 0;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			klab_usage_all(stdout);
			return 0;
		} else {
			error("unknown option '%s'", a);
			klab_usage_all(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		klab_usage_all(stderr);
		return 2;
	}
	name = argv[i];
	ret = -1;
	if (!strcmp(name, "help")) {
		if (i + 1 < argc) {
			ret = cmd_usage(argv[i + 1], 0);
		} else {
			klab_usage_all(stdout);
			ret = 0;
		}
	} else if (!strcmp(name, "version")) {
		printf("klab %s\n", KLAB_VERSION);
		ret = 0;
	}
	for (size_t k = 0; ret < 0 && k < klab_ncmds; k++) {
		if (strcmp(klab_cmds[k].name, name))
			continue;
		if (i + 1 < argc && (!strcmp(argv[i + 1], "--help") || !strcmp(argv[i + 1], "-h")) &&
		    strcmp(name, "lab"))
			ret = cmd_usage(name, 0);
		else
			ret = klab_cmds[k].fn(argc - i, argv + i, &ctx);
	}
	if (ret < 0) {
		error("unknown command '%s' (see 'klab help')", name);
		return 2;
	}
	if (fflush(stdout) || ferror(stdout)) {
		error("cannot write the output: %s", strerror(errno));
		ret = 1;
	}
	db_close(ctx.db);
	if (ctx.cfg) {
		conf_free(ctx.cfg);
		free(ctx.cfg);
	}
	return ret;
}
