/* cli.c: the klab subcommand table, help texts, and the lazily opened config and database. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "db.h"
#include "log.h"

const struct klab_cmd klab_cmds[] = {
	{ "config", cmd_config, "config check [FILE] | config show [FILE]",
	  "check a configuration file (every error as FILE:LINE: message) or print it normalised" },
	{ "db", cmd_db, "db init | db info", "create or upgrade the database; show its version and row counts" },
	{ "machines", cmd_machines, "machines", "list test machines: state, lease, last kernel, last seen" },
	{ "machine", cmd_machine, "machine trust|show|drain|undrain|repair NAME",
	  "record a machine's SSH host key, take it out of or back into service" },
	{ "lab", cmd_lab, "lab up --netns|--qemu [options] | lab down | lab status",
	  "the local lab: test machines made on this host (network namespaces or qemu guests)" },
	{ "series", cmd_series, "series show|import SOURCE [--subject S]",
	  "read a patch series (mbox file, lore:MSGID, patchwork:ID, text file) and its claims" },
	{ "kernels", cmd_kernels, "kernels list | show ID | build --tree NAME [options] | gc",
	  "build kernels (baseline, patched) and manage the artifact cache" },
	{ "submit", cmd_submit, "submit --job NAME [--series SRC | --mbox FILE] [--base REF --test REF] [--seed N] [--boots N] [--runs N]",
	  "queue a job for klabd" },
	{ "run", cmd_run, "run JOB_NAME|ID [--wait] [--quiet]", "run (or resume) a job in the foreground" },
	{ "jobs", cmd_jobs, "jobs [--state S] [--limit N]", "list jobs with state, progress and age" },
	{ "job", cmd_job, "job show|log ID", "a job's steps, errors and runs, or its log" },
	{ "cancel", cmd_cancel, "cancel ID", "stop a job at the next safe point and release its machines" },
	{ "schedule", cmd_schedule, "schedule list", "nightly schedules and their next fire times" },
	{ "query", cmd_query, "query [--job ID] [--tree T] [--kernel K] [--machine M] [--workload W] [--metric M] [--side A|B] [--since WHEN] [--until WHEN] [--limit N] [--json|--csv]",
	  "stored results, filtered" },
	{ "compare", cmd_compare, "compare JOB | compare KERNEL_A KERNEL_B [--workload W] [--metric M] [--threshold PCT] [--warmup N] [--stored] [--json]",
	  "A/B comparison: % change with 95% CI, p values, verdict" },
	{ "history", cmd_history, "history WORKLOAD METRIC [--tree T] [--machines DUT+PEER] [--threshold PCT] [--json]", "a nightly series with its change points" },
	{ "report", cmd_report, "report [--out DIR] [--format=html|mail] [--no-charts] [--tested-by 'NAME <ADDR>'] [JOB...]",
	  "write the static report pages, or a mail-style text report" },
};
const size_t klab_ncmds = ARRAY_SIZE(klab_cmds);

void klab_usage_all(FILE *f)
{
	fprintf(f, "usage: klab [--config FILE] [--db FILE] [--json] [-v] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < klab_ncmds; i++)
		fprintf(f, "  %-10s %s\n", klab_cmds[i].name, klab_cmds[i].help);
	fprintf(f, "  %-10s %s\n", "help", "help [COMMAND]: this text, or a command's");
	fprintf(f, "  %-10s %s\n", "version", "print the version");
}

int cmd_usage(const char *name, int status)
{
	FILE *f = status ? stderr : stdout;

	for (size_t i = 0; i < klab_ncmds; i++) {
		if (!strcmp(klab_cmds[i].name, name)) {
			fprintf(f, "usage: klab %s\n\n%s\n", klab_cmds[i].usage, klab_cmds[i].help);
			return status;
		}
	}
	klab_usage_all(f);
	return status;
}

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

