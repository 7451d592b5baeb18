/* main.c: klab-agent, the one binary copied to each test machine: subcommand table and dispatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "monitor.h"
#include "log.h"
#include "util.h"
#include "workloads.h"

static int cmd_version(int argc, char **argv)
{
	printf("klab-agent %s (result schema %d, run spec %d)\n", KLAB_VERSION,
	       RESULT_SCHEMA_VERSION, RUN_SPEC_VERSION);
	return 0;
}

static int cmd_udp_rr(int argc, char **argv)
{
	return udp_rr_main(argc, argv);
}

static int cmd_udp_tx(int argc, char **argv)
{
	return udp_tx_main(argc, argv);
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
} cmds[] = {
	{ "sysinfo", cmd_sysinfo, "sysinfo [--no-tools]          machine facts as JSON" },
	{ "prepare", cmd_prepare, "prepare [NAME] < PROFILE.json  apply a tuning profile, saving the old values" },
	{ "prepare", cmd_prepare, "prepare --check                is the machine still as its boot's prepare left it" },
	{ "restore", cmd_restore, "restore                       put back what prepare changed" },
	{ "run", cmd_run, "run < SPEC.json                run a workload with its monitors, print the result" },
	{ "fetch", cmd_fetch, "fetch [--results-dir D] RUN_ID print a kept result again (exit 3: still running)" },
	{ "ack", cmd_ack, "ack [--results-dir D] RUN_ID   forget a kept result" },
	{ "list", cmd_list, "list [--results-dir D]         run ids of the kept results" },
	{ "version", cmd_version, "version" },
	{ "udp-rr", cmd_udp_rr, "udp-rr server|client ...       the UDP request/response generator" },
	{ "udp-tx", cmd_udp_tx, "udp-tx send|sink ...           the UDP transmit generator" },
	{ "_tracefs-exec", cmd_tracefs_exec, NULL },	/* internal: bpftrace in a private mount namespace */
};

static int usage(int status)
{
	size_t i;
	FILE *f = status ? stderr : stdout;

	fprintf(f, "usage: klab-agent [-v] [--state DIR] COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (cmds[i].usage)
			fprintf(f, "  %s\n", cmds[i].usage);
	fprintf(f, "\nThe state folder (default $KLAB_AGENT_STATE or /var/lib/klab-agent) holds\n"
		"the saved tuning and the results kept until ack.\n");
	return status;
}

int main(int argc, char **argv)
{
	int i = 1, level = LOG_NOTICE;
	size_t k;

	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "-v")) {
			level = LOG_DEBUG;
		} else if (!strcmp(argv[i], "--state") && i + 1 < argc) {
			agent_set_state_dir(argv[++i]);
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			return usage(0);
		} else if (!strcmp(argv[i], "--version")) {
			return cmd_version(0, NULL);
		} else {
			fprintf(stderr, "klab-agent: error: unknown option '%s'\n", argv[i]);
			return usage(2);
		}
		i++;
	}
	if (i >= argc)
		return usage(2);
	for (k = 0; k < ARRAY_SIZE(cmds); k++) {
		if (strcmp(argv[i], cmds[k].name))
			continue;
		/* the generators keep their own program name in messages */
		log_init(!strncmp(argv[i], "udp-", 4) ? argv[i] : "klab-agent", 0, level);
		{
			int rc = cmds[k].fn(argc - i, argv + i);
			if (fflush(stdout) || ferror(stdout)) {
				fprintf(stderr, "klab-agent: error: cannot write to stdout\n");
				return 1;
			}
			return rc;
		}
	}
	fprintf(stderr, "klab-agent: error: unknown command '%s'\n", argv[i]);
	return usage(2);
}
