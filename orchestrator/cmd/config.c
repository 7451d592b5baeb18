/* cmd/config.c: `klab config check [FILE]` and `klab config show [FILE]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "log.h"

int oldcmd_config(int argc, char **argv, struct klab_ctx *ctx)
{
	struct klab_config cfg;
	const char *path;

	if (argc < 2 || argc > 3)
		return cmd_usage("config", 2);
	if (strcmp(argv[1], "check") && strcmp(argv[1], "show")) {
		error("unknown config subcommand '%s' (check, show)", argv[1]);
		return 2;
	}
	path = argc == 3 ? argv[2] : ctx->config_path ? ctx->config_path : conf_default_path();
	if (!path) {
		error("no configuration file: give one, or --config FILE, or set KLAB_CONFIG");
		return 2;
	}
	if (conf_load(&cfg, path))
		return 1;
	if (!strcmp(argv[1], "check")) {
		if (ctx->json)
			printf("{\"file\": \"%s\", \"ok\": true, \"machines\": %zu, \"trees\": %zu, "
			       "\"workloads\": %zu, \"jobs\": %zu, \"schedules\": %zu}\n", path,
			       cfg.n_machines, cfg.n_trees, cfg.n_workloads, cfg.n_jobs, cfg.n_schedules);
		else
			printf("%s: ok (%zu machines, %zu trees, %zu profiles, %zu workloads, %zu jobs, "
			       "%zu schedules)\n", path, cfg.n_machines, cfg.n_trees, cfg.n_profiles,
			       cfg.n_workloads, cfg.n_jobs, cfg.n_schedules);
	} else {
		conf_print(&cfg, stdout);
	}
	conf_free(&cfg);
	return 0;
}
