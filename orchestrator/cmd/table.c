/* cmd/table.c: the klab command table, the global options, `klab help` (and the man page), klab's main. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "log.h"
#include "util.h"

/* ---- transitional: commands not yet on the option tables -------------------- */

#define LEGACY(var, nm, fn, use, sum) \
	static const char *const var##_usage[] = { use, NULL }; \
	static const struct opt_spec var##_spec = { "klab " nm, var##_usage, sum, NULL, NULL }; \
	const struct klab_cmd var = { nm, fn, &var##_spec, NULL, CMD_LEGACY };

LEGACY(cmd_lab, "lab", oldcmd_lab, "up --netns|--qemu [options] | lab down | lab status",
       "the local lab: test machines made on this host (network namespaces or qemu guests)")
LEGACY(cmd_query, "query", oldcmd_query,
       "[--job ID] [--tree T] [--kernel K] [--machine M] [--workload W] [--metric M] [--side A|B] "
       "[--since WHEN] [--until WHEN] [--limit N] [--json|--csv]", "stored results, filtered")
LEGACY(cmd_compare, "compare", oldcmd_compare,
       "JOB | compare KERNEL_A KERNEL_B [--workload W] [--metric M] [--threshold PCT] [--warmup N] [--stored] [--json]",
       "A/B comparison: % change with 95% CI, p values, verdict")
LEGACY(cmd_history, "history", oldcmd_history,
       "WORKLOAD METRIC [--tree T] [--machines DUT+PEER] [--threshold PCT] [--json]",
       "a nightly series with its change points")
LEGACY(cmd_report, "report", oldcmd_report,
       "[--out DIR] [--format=html|mail] [--no-charts] [--tested-by 'NAME <ADDR>'] [JOB...]",
       "write the static report pages, or a mail-style text report")

int cmd_usage(const char *name, int status)
{
	for (const struct klab_cmd *const *c = klab_cmds; *c; c++) {
		if (!strcmp((*c)->name, name)) {
			cmd_help(status ? stderr : stdout, *c);
			return status;
		}
	}
	return status;
}

/* ---- the global options ------------------------------------------------------------ */

static int want_help, want_version;

static const struct opt global_opts[] = {
	OPT_STRING('c', "config", &klab_ctx.config_path, "FILE",
		   "the configuration file (default: $KLAB_CONFIG, ./klab.conf,\n"
		   "~/.config/klab/config, /etc/klab/config)"),
	OPT_STRING(0, "db", &klab_ctx.db_path, "FILE", "the database instead of [lab] db (also $KLAB_DB)"),
	OPT_JSON(),
	OPT_CSV(),
	OPT_COUNT('v', "verbose", &klab_ctx.verbose, "say what happens; twice: debug messages"),
	OPT_BOOL(0, "version", &want_version, "print the version"),
	OPT_BOOL('h', "help", &want_help, "the commands"),
	OPT_END(),
};

static const char *const global_usage[] = { "[--config FILE] [--db FILE] [--json|--csv] [-v] COMMAND [ARGS]", NULL };
static const struct opt_spec klab_spec = {
	"klab", global_usage, "kernel performance CI lab: submit, query, compare and report", NULL, global_opts,
};

/* The overview: usage, every command with its summary, the global options. */
static void overview(FILE *f)
{
	opt_usage(f, &klab_spec);
	fprintf(f, "\ncommands:\n");
	for (const struct klab_cmd *const *c = klab_cmds; *c; c++)
		if (!((*c)->flags & CMD_HELP_ONLY))
			fprintf(f, "  %-10s %s\n", (*c)->name, (*c)->spec->summary);
	fprintf(f, "\nglobal options:");
	opt_list(f, global_opts);
}

/* ---- klab help [COMMAND [SUBCOMMAND]], klab help --man -------------------------- */

static int help_man;

static const struct opt help_opts[] = {
	OPT_SET_INT_F(0, "man", &help_man, 1, "the man page klab(1) in roff, from these tables", OPT_HIDDEN),
	OPT_END(),
};
static const char *const help_usage[] = { "[COMMAND [SUBCOMMAND]]", NULL };
static const struct opt_spec help_spec = {
	"klab help", help_usage, "this text, or the usage and options of a command", NULL, help_opts,
};

static const char man_description[] =
	"builds baseline and patched Linux kernels, boots them on test machines,\n"
	"runs UDP request/response and UDP transmit workloads with monitors, stores\n"
	"every result in sqlite and compares the kernels with confidence intervals\n"
	"and a verdict.\n";

static const char man_output[] =
	"Listings (jobs, machines, kernels list, schedule list, series list, job log,\n"
	"query, history) print a table as text, a JSON array with --json, or CSV with\n"
	"--csv (a header line, RFC 4180 quoting). Other commands print text or, with\n"
	"--json, one JSON document. In JSON and CSV, numbers are written in the\n"
	"shortest form that reads back as the same value and times as ISO 8601 in UTC\n"
	"(2026-12-02T18:14:27Z).\n";

static void man_usage(FILE *f, const struct opt_spec *s)
{
	fputs(".nf\n", f);
	if (!s->usage || !*s->usage) {
		fputs("\\fB", f);
		opt_man_text(f, s->prog);
		fprintf(f, "\\fR%s\n", s->opts ? " [options]" : "");
	}
	for (const char *const *u = s->usage; u && *u; u++) {
		if (**u != ' ') {
			fputs("\\fB", f);
			opt_man_text(f, s->prog);
			fputs(**u ? "\\fR " : "\\fR", f);
		} else {
			fputs("   ", f);
		}
		opt_man_text(f, *u);
		fputc('\n', f);
	}
	fputs(".fi\n", f);
}

static void man_text(FILE *f, const char *s)
{
	if (!s)
		return;
	opt_man_text(f, s);
	if (*s && s[strlen(s) - 1] != '\n')
		fputc('\n', f);
}

static void man_cmd(FILE *f, const struct klab_cmd *c)
{
	if (c->subs) {
		for (const struct klab_cmd *const *sub = c->subs; *sub; sub++)
			man_cmd(f, *sub);
		return;
	}
	fputs(".SS ", f);
	opt_man_text(f, c->spec->prog);
	fputc('\n', f);
	man_usage(f, c->spec);
	fputs(".PP\n", f);
	man_text(f, c->spec->summary);
	if (c->spec->doc) {
		fputs(".PP\n", f);
		man_text(f, c->spec->doc);
	}
	opt_man(f, c->spec->opts);
}

static void man_page(FILE *f)
{
	fprintf(f, ".\\\" klab.1: generated by `klab help --man` from the option tables (make man)\n"
		   ".TH KLAB 1 \"\" \"klab %s\" \"klab manual\"\n"
		   ".SH NAME\nklab \\- ", KLAB_VERSION);
	man_text(f, klab_spec.summary);
	fputs(".SH SYNOPSIS\n", f);
	man_usage(f, &klab_spec);
	fputs(".SH DESCRIPTION\n.B klab\n", f);
	man_text(f, man_description);
	fputs(".B klab help\nlists the commands;\n.B klab help\n.I COMMAND\nor\n.B klab\n.I COMMAND\n"
	      ".B \\-\\-help\nprints the usage and the options of one.\n", f);
	fputs(".SH GLOBAL OPTIONS\n", f);
	opt_man(f, global_opts);
	fputs(".SH COMMANDS\n", f);
	for (const struct klab_cmd *const *c = klab_cmds; *c; c++)
		man_cmd(f, *c);
	fputs(".SH OUTPUT\n", f);
	man_text(f, man_output);
	fputs(".SH EXIT STATUS\n0 success, 1 failure, 2 usage error.\n"
	      ".SH FILES\n.I config.example\ndocuments every configuration key.\n"
	      ".SH SEE ALSO\n.BR klabd (8)\n", f);
}

static const struct klab_cmd *find(const struct klab_cmd *const *list, const char *name)
{
	for (; list && *list; list++)
		if (!((*list)->flags & CMD_HELP_ONLY) && !strcmp((*list)->name, name))
			return *list;
	return NULL;
}

static int do_help(int argc, char **argv, struct klab_ctx *ctx)
{
	const struct klab_cmd *c;
	int st;

	argc = cmd_parse(&help_spec, argc, argv, &st);
	if (argc < 0)
		return st;
	if (help_man) {
		man_page(stdout);
		return 0;
	}
	if (argc == 0) {
		overview(stdout);
		return 0;
	}
	if (argc > 2)
		return cmd_usage_error(&help_spec, "too many arguments");
	c = find(klab_cmds, argv[0]);
	if (c && argc == 2) {
		c = find(c->subs, argv[1]);
		if (!c)
			return cmd_usage_error(&help_spec, "no command 'klab %s %s'", argv[0], argv[1]);
	}
	if (!c)
		return cmd_usage_error(&help_spec, "no command '%s' (klab help lists them)", argv[0]);
	cmd_help(stdout, c);
	return 0;
}

static const struct klab_cmd cmd_help_cmd = { "help", do_help, &help_spec, NULL, 0 };

static const char *const version_usage[] = { "", NULL };
static const struct opt_spec version_spec = { "klab version", version_usage, "print the version", NULL, NULL };

static int do_version(int argc, char **argv, struct klab_ctx *ctx)
{
	int st;

	if (cmd_parse(&version_spec, argc, argv, &st) != 0)
		return st ? st : cmd_usage_error(&version_spec, "takes no arguments");
	printf("klab %s\n", KLAB_VERSION);
	return 0;
}

static const struct klab_cmd cmd_version = { "version", do_version, &version_spec, NULL, 0 };

const struct klab_cmd *const klab_cmds[] = {
	&cmd_config, &cmd_db, &cmd_machines, &cmd_machine, &cmd_lab, &cmd_series, &cmd_kernels,
	&cmd_submit, &cmd_run_job, &cmd_jobs, &cmd_job, &cmd_cancel, &cmd_schedule,
	&cmd_query, &cmd_compare, &cmd_history, &cmd_report, &cmd_help_cmd, &cmd_version, NULL,
};

/* ---- main ------------------------------------------------------------------------------ */

int cmd_main(int argc, char **argv)
{
	const struct klab_cmd *c;
	int n, ret;

	n = opt_parse(&klab_spec, argc, argv, OPT_STOP_AT_NON_OPTION);
	if (n < 0)
		return n == OPT_HELP ? 0 : 2;
	if (klab_ctx.verbose)
		log_set_level(klab_ctx.verbose > 1 ? LOG_DEBUG : LOG_INFO);
	if (want_version) {
		printf("klab %s\n", KLAB_VERSION);
		ret = 0;
	} else if (want_help) {
		overview(stdout);
		ret = 0;
	} else if (!n) {
		overview(stderr);
		return 2;
	} else if (!(c = find(klab_cmds, argv[0]))) {
		error("unknown command '%s' (see 'klab help')", argv[0]);
		return 2;
	} else {
		klab_ctx.json = cmd_format == PRINT_FMT_JSON;
		ret = cmd_run(c, n, argv, &klab_ctx);
	}
	if (fflush(stdout) || ferror(stdout)) {
		error("cannot write the output: %s", strerror(errno));
		ret = 1;
	}
	ctx_release(&klab_ctx);
	return ret;
}
