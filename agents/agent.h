/* agent.h: the klab-agent subcommands and what their files share. */
#ifndef KLAB_AGENT_H
#define KLAB_AGENT_H

#include <json-c/json.h>

#include "buf.h"

/* Version of the result document (docs/result-schema.md). */
#define RESULT_SCHEMA_VERSION 1
/* Version of the run spec this agent reads (docs/protocol.md section 2). */
#define RUN_SPEC_VERSION 1

/*
 * The agent's state folder: --state DIR, else $KLAB_AGENT_STATE, else
 * /var/lib/klab-agent. Holds prepare.json (saved tuning) and results/.
 */
const char *agent_state_dir(void);
void agent_set_state_dir(const char *dir);

/*
 * Subcommands (agents/main.c dispatches). argv[0] is the subcommand name.
 * Return the exit status: 0 ok, 1 failure, 2 usage.
 */
int cmd_sysinfo(int argc, char **argv);		/* sysinfo.c */
int cmd_prepare(int argc, char **argv);		/* prepare.c */
int cmd_restore(int argc, char **argv);		/* prepare.c */
int cmd_run(int argc, char **argv);		/* run.c */
int cmd_fetch(int argc, char **argv);		/* run.c */
int cmd_ack(int argc, char **argv);		/* run.c */
int cmd_list(int argc, char **argv);		/* run.c */

/*
 * The sysinfo document (kernel, CPUs, memory, NICs, sysctls, tools). With
 * `with_tools` 0 the tools' versions are left out (they cost a fork each).
 */
struct json_object *sysinfo_collect(int with_tools);

/*
 * The machine's PMU, as perf sees it: a CPU event source in ROOT/sys/bus/
 * event_source/devices ("cpu" on x86, "cpu_core" and "cpu_atom" on a hybrid
 * Intel, "armv8_pmuv3_0" or "armv8_cortex_a72" on ARM) and whether the agent
 * may count system-wide (ROOT/proc/sys/kernel/perf_event_paranoid <= 0, or
 * CAP_PERFMON or CAP_SYS_ADMIN in ROOT/proc/self/status). ROOT is "" on a
 * machine; the unit tests pass a tree of their own. Nothing is logged.
 */
struct pmu_info {
	int present;		/* a CPU PMU is registered */
	int usable;		/* present, and system-wide counting is allowed: hardware counters are counted */
	int hybrid;		/* more than one CPU PMU (cpu_core and cpu_atom) */
	long paranoid;		/* perf_event_paranoid, -9 when unreadable */
	char devices[256];	/* "cpu", "cpu_atom cpu_core", ... */
	char reason[512];	/* why not usable: "no hardware PMU: ..." */
};
void pmu_detect(const char *root, struct pmu_info *p);
/* {"present", "usable", "devices", "hybrid", "perf_event_paranoid", "reason"}: sysinfo's "pmu", a run's "pmu". */
struct json_object *pmu_json(const struct pmu_info *p);

/*
 * Read a small text file (sysfs, procfs) into `b`, trailing white space
 * removed: 0, or -1 (nothing logged; errno set).
 */
int read_small_file(const char *path, struct buf *b);

/*
 * The path of this program (from /proc/self/exe), so that children it
 * starts (generators, _tracefs-exec) show as "klab-agent" in profiles
 * rather than "exe".
 */
const char *agent_self_exe(void);

/* run_id_valid() is in lib/util.h: the orchestrator checks run uids the same way. */

#endif
