/* cmd/cmd.h: the klab commands (orchestrator/cmd/) and the context they share. */
#ifndef KLAB_CMD_H
#define KLAB_CMD_H

#include <stdio.h>

#include "conf.h"
#include "db.h"

/*
 * Global options are parsed by klab.c before the subcommand runs. The
 * config and the database are opened on first use, so that `klab help`
 * needs neither.
 */
struct klab_ctx {
	int json;		/* --json: machine-readable output */
	int verbose;
	const char *config_path;	/* --config FILE, or NULL for the default */
	const char *db_path;	/* --db FILE overrides [lab] db */
	struct klab_config *cfg;
	struct db *db;
};

/* The loaded config, or NULL after printing the errors (cmd/ctx.c). */
struct klab_config *ctx_config(struct klab_ctx *ctx);
/* The database (opened and migrated), or NULL after an error. */
struct db *ctx_db(struct klab_ctx *ctx);

/*
 * Every subcommand: argv[0] is the subcommand's name. Return 0 success,
 * 1 failure, 2 usage. One file per command family in orchestrator/cmd/.
 */
typedef int (*klab_cmd_fn)(int argc, char **argv, struct klab_ctx *ctx);

int cmd_config(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/config.c */
int cmd_db(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/db.c */
int cmd_machines(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/machine.c */
int cmd_machine(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/machine.c */
int cmd_lab(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/lab.c */
int cmd_series(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/series.c */
int cmd_kernels(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/kernels.c */
int cmd_submit(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/job.c */
int cmd_jobs(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/job.c */
int cmd_job(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/job.c */
int cmd_cancel(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/job.c */
int cmd_run(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/job.c: run a job in the foreground */
int cmd_schedule(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/schedule.c */
int cmd_query(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/query.c */
int cmd_compare(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/query.c */
int cmd_history(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/query.c */
int cmd_report(int argc, char **argv, struct klab_ctx *ctx);	/* cmd/report.c */

/* Print "usage: klab CMD ..." help text of one command (from the table). */
int cmd_usage(const char *name, int status);

/* The subcommand table (cmd/table.c) and the overall usage text. */
struct klab_cmd {
	const char *name;
	klab_cmd_fn fn;
	const char *usage;
	const char *help;
};
extern const struct klab_cmd klab_cmds[];
extern const size_t klab_ncmds;
void klab_usage_all(FILE *f);

#endif
