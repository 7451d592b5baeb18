/* cmd/table.c: the klab subcommand table and help texts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

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
