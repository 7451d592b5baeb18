/* cmd/ctx.c: what the commands share: the config and the database, opened on first use, and the output format. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "store/db.h"
#include "log.h"
#include "util.h"

struct klab_ctx klab_ctx;
int cmd_format = PRINT_FMT_TEXT;

struct klab_config *ctx_config(struct klab_ctx *ctx)
{
	const char *path;

	if (ctx->cfg)
		return ctx->cfg;
	path = ctx->config_path ? ctx->config_path : conf_default_path();
	if (!path) {
		error("no configuration file: give --config FILE or set KLAB_CONFIG "
		      "(config.example documents every key)");
		return NULL;
	}
	ctx->cfg = xcalloc(1, sizeof(*ctx->cfg));
	if (conf_load(ctx->cfg, path)) {
		free(ctx->cfg);
		ctx->cfg = NULL;
		return NULL;
	}
	if (ctx->cfg->lab.log_level && log_get_level() < LOG_INFO) {
		int lvl = log_level_parse(ctx->cfg->lab.log_level);

		if (lvl >= 0)
			log_set_level(lvl);
	}
	return ctx->cfg;
}

struct klab_config *ctx_config_optional(struct klab_ctx *ctx, int *failed)
{
	const char *path = ctx->config_path ? ctx->config_path : conf_default_path();

	*failed = 0;
	if (!ctx->cfg && !ctx->config_path && (!path || !file_exists(path)))
		return NULL;
	if (!ctx_config(ctx))
		*failed = 1;
	return ctx->cfg;
}

struct db *ctx_db(struct klab_ctx *ctx)
{
	const char *path = ctx->db_path;

	if (ctx->db)
		return ctx->db;
	if (!path)
		path = getenv("KLAB_DB");
	if (!path) {
		struct klab_config *cfg = ctx_config(ctx);

		if (!cfg)
			return NULL;
		path = cfg->lab.db;
	}
	if (db_open(path, &ctx->db))
		return NULL;
	return ctx->db;
}

void ctx_release(struct klab_ctx *ctx)
{
	db_close(ctx->db);
	ctx->db = NULL;
	if (ctx->cfg) {
		conf_free(ctx->cfg);
		free(ctx->cfg);
		ctx->cfg = NULL;
	}
}
