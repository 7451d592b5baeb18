/* cmd/config.c: `klab config check [FILE]` and `klab config show [FILE]`. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "log.h"

static const char *const file_usage[] = { "[FILE]", NULL };
static const struct opt check_opts[] = { OPT_JSON(), OPT_END() };
static const struct opt_spec check_spec = {
	"klab config check", file_usage,
	"check a configuration file (every error as FILE:LINE: message)",
	"FILE defaults to --config, $KLAB_CONFIG, ./klab.conf, ~/.config/klab/config,\n"
	"/etc/klab/config, the first that is given or exists.\n",
	check_opts,
};
static const struct opt_spec show_spec = {
	"klab config show", file_usage,
	"print a configuration back normalised: defaults filled in, one key per line", NULL, NULL,
};

static int config_do(const struct opt_spec *spec, int argc, char **argv, struct klab_ctx *ctx)
{
	struct klab_config cfg;
	const char *path;
	int st, ret = 0;

	argc = cmd_parse(spec, argc, argv, &st);
	if (argc < 0)
		return st;
	if (argc > 1)
		return cmd_usage_error(spec, "unexpected argument '%s'", argv[1]);
	path = argc == 1 ? argv[0] : ctx->config_path ? ctx->config_path : conf_default_path();
	if (!path) {
		error("no configuration file: give one, or --config FILE, or set KLAB_CONFIG");
		return 2;
	}
	if (conf_load(&cfg, path))
		return 1;
	if (spec == &show_spec) {
		conf_print(&cfg, stdout);
	} else {
		cmd_print_begin();
		print_str(PRINT_ANY, "file", "%s: ok", path);
		print_data_bool("ok", 1);
		print_int(PRINT_ANY, "machines", " (%lld machines", (long long)cfg.n_machines);
		print_int(PRINT_ANY, "trees", ", %lld trees", (long long)cfg.n_trees);
		print_int(PRINT_ANY, "profiles", ", %lld profiles", (long long)cfg.n_profiles);
		print_int(PRINT_ANY, "workloads", ", %lld workloads", (long long)cfg.n_workloads);
		print_int(PRINT_ANY, "jobs", ", %lld jobs", (long long)cfg.n_jobs);
		print_int(PRINT_ANY, "schedules", ", %lld schedules)\n", (long long)cfg.n_schedules);
		ret = cmd_print_end();
	}
	conf_free(&cfg);
	return ret;
}

static int config_check(int argc, char **argv, struct klab_ctx *ctx)
{
	return config_do(&check_spec, argc, argv, ctx);
}

static int config_show(int argc, char **argv, struct klab_ctx *ctx)
{
	return config_do(&show_spec, argc, argv, ctx);
}

static const struct klab_cmd config_check_cmd = { "check", config_check, &check_spec, NULL, 0 };
static const struct klab_cmd config_show_cmd = { "show", config_show, &show_spec, NULL, 0 };
static const struct klab_cmd *const config_subs[] = { &config_check_cmd, &config_show_cmd, NULL };
static const struct opt_spec config_spec = {
	"klab config", NULL, "check a configuration file (every error as FILE:LINE: message) or print it normalised",
	NULL, NULL,
};
const struct klab_cmd cmd_config = { "config", NULL, &config_spec, config_subs, 0 };
