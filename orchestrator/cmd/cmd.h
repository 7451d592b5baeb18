/* cmd/cmd.h: the klab commands (orchestrator/cmd/), their table and the context they share. */
#ifndef KLAB_CMD_H
#define KLAB_CMD_H

#include <signal.h>
#include <stdio.h>

#include "conf/conf.h"
#include "store/db.h"
#include "opt.h"
#include "print.h"

/*
 * The one context of a klab process (cmd/ctx.c). The global options fill
 * it before the command runs; the config and the database are opened on
 * first use, so that `klab help` needs neither.
 */
struct klab_ctx {
	int verbose;		/* -v: info messages, -vv: debug */
	const char *config_path;	/* --config FILE, or NULL for the default */
	const char *db_path;	/* --db FILE overrides [lab] db */
	struct klab_config *cfg;
	struct db *db;
};
extern struct klab_ctx klab_ctx;

/* The loaded config, or NULL after printing the errors. */
struct klab_config *ctx_config(struct klab_ctx *ctx);
/*
 * The config when one is given (--config, $KLAB_CONFIG) or a default file
 * exists; NULL without an error when there is none, for commands that work
 * from a bare database too. -1 in *failed when a config exists but is
 * broken (its errors printed).
 */
struct klab_config *ctx_config_optional(struct klab_ctx *ctx, int *failed);
/* The database (opened and migrated), or NULL after an error. */
struct db *ctx_db(struct klab_ctx *ctx);
/* Close the database and free the config. */
void ctx_release(struct klab_ctx *ctx);

/*
 * The output format, PRINT_FMT_TEXT, _JSON or _CSV: --json and --csv given
 * before the command (klab --json jobs) or after it (klab jobs --json).
 */
extern int cmd_format;
#define OPT_JSON() OPT_SET_INT_F(0, "json", &cmd_format, PRINT_FMT_JSON, "print JSON", OPT_EXCLUSIVE)
#define OPT_CSV() \
	OPT_SET_INT_F(0, "csv", &cmd_format, PRINT_FMT_CSV, "print CSV (RFC 4180 quoting, one record per row)", \
		      OPT_EXCLUSIVE)

/*
 * A command. A family (kernels, lab, ...) has subs and no fn: `klab
 * kernels build` runs the sub "build" with argv[0] = "build". A command's
 * fn gets argv[0] = its own name, parses the rest with cmd_parse(), and
 * returns 0 success, 1 failure, 2 usage.
 */
struct klab_ctx;
typedef int (*klab_cmd_fn)(int argc, char **argv, struct klab_ctx *ctx);

#define CMD_LISTING 1u		/* prints a table: speaks --csv as well as --json */
#define CMD_DEFAULT_SUB 2u	/* a family: no subcommand runs its first one */
#define CMD_HELP_ONLY 4u	/* in the help and the man page, but run through another (lab up --qemu) */

struct klab_cmd {
	const char *name;
	klab_cmd_fn fn;
	const struct opt_spec *spec;		/* prog "klab kernels build", usage, summary, options */
	const struct klab_cmd *const *subs;	/* NULL-terminated, or NULL */
	unsigned flags;
};

/* The commands, in the order `klab help` lists them (cmd/table.c). */
extern const struct klab_cmd *const klab_cmds[];

/* Run command C (a family dispatches to its sub): argv[0] is its name. */
int cmd_run(const struct klab_cmd *c, int argc, char **argv, struct klab_ctx *ctx);
/*
 * Parse a command's options (opt_parse() on its spec): the count of the
 * other words, now argv[0..n-1], or < 0 with *status the exit status
 * (0 after --help, 2 after a usage error).
 */
int cmd_parse(const struct opt_spec *spec, int argc, char **argv, int *status);
/* The help of C: a command's usage, summary and options; a family's subcommands. */
void cmd_help(FILE *f, const struct klab_cmd *c);
/* "klab CMD: " and the message on stderr, then the usage: returns 2. */
int cmd_usage_error(const struct opt_spec *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Start the output in cmd_format on stdout. */
void cmd_print_begin(void);
/*
 * SIGINT and SIGTERM set the returned flag (a job or bisection stops at its
 * next safe point, resumable); a second one stops the process at once.
 */
volatile sig_atomic_t *cmd_stop_on_signals(void);
/* Finish it: 0, or 1 when stdout failed (klab's main says so). */
int cmd_print_end(void);

/* klab's main after log_init(): global options, the command, clean-up, exit status. */
int cmd_main(int argc, char **argv);

/* The command families (one file each in cmd/). */
extern const struct klab_cmd cmd_config;	/* cmd/config.c */
extern const struct klab_cmd cmd_db;		/* cmd/db.c */
extern const struct klab_cmd cmd_machines;	/* cmd/machine.c */
extern const struct klab_cmd cmd_machine;	/* cmd/machine.c */
extern const struct klab_cmd cmd_lab;		/* cmd/lab.c */
extern const struct klab_cmd cmd_series;	/* cmd/series.c */
extern const struct klab_cmd cmd_kernels;	/* cmd/kernels.c */
extern const struct klab_cmd cmd_submit;	/* cmd/job.c */
extern const struct klab_cmd cmd_run_job;	/* cmd/job.c: klab run */
extern const struct klab_cmd cmd_jobs;		/* cmd/job.c */
extern const struct klab_cmd cmd_job;		/* cmd/job.c */
extern const struct klab_cmd cmd_cancel;	/* cmd/job.c */
extern const struct klab_cmd cmd_schedule;	/* cmd/schedule.c */
extern const struct klab_cmd cmd_watch;	/* cmd/watch.c */
extern const struct klab_cmd cmd_bisect;	/* cmd/bisect.c */
extern const struct klab_cmd cmd_query;		/* cmd/query.c */
extern const struct klab_cmd cmd_compare;	/* cmd/query.c */
extern const struct klab_cmd cmd_calibrate;	/* cmd/calib.c */
extern const struct klab_cmd cmd_history;	/* cmd/query.c */
extern const struct klab_cmd cmd_report;	/* cmd/report.c */

#endif
