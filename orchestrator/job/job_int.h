/* job_int.h: what the files of the job runner share: the context of a running job and the helpers between them. */
#ifndef KLAB_JOB_INT_H
#define KLAB_JOB_INT_H

/*
 * Not an API: job.h is. The job is split along its step table:
 *   job_spec.c      the spec of a job from the config, submit
 *   job_plan.c      the ABBA order and the plan (the list of step keys)
 *   job.c           find, cancel, the run lock, the step table, the loop (do_step, job_run)
 *   job_ctx.c       what the steps share: a step's failure and progress, sides, workloads, machines
 *   job_steps.c     one function per step of the table, in plan order
 *   agent_client.c  SSH to the machines, klab-agent calls, the server of a run
 */

#include <json-c/json.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "conf/conf.h"
#include "store/db.h"
#include "store/jobs.h"
#include "job/job.h"
#include "strvec.h"
#include "util.h"

struct ssh_conn;

/* What a step function returns: DONE or SKIPPED, or one of the STEP_* below. */
enum { STEP_OK = 0, STEP_FAIL = -1, STEP_CANCEL = -2, STEP_STOP = -3, STEP_WAIT = -4,
       STEP_REBOOT = -5 /* the machine left its boot's state: redo the boot (job.c) */ };
enum { DONE = 0, SKIPPED = 1 };

/* One run of a job (job_run()): its spec, plan and machines, and the step being run. */
struct job_ctx {
	struct klab_config *cfg;
	struct db *db;
	int64_t id;
	const struct job_run_opts *o;
	struct job_spec spec;		/* parsed once from jobs.spec */
	int64_t seed;
	char *order;
	struct strvec plan;
	size_t pos;			/* index of the current step in the plan */
	int64_t t0;
	const struct conf_machine *dut, *peer;
	struct ssh_conn *cdut, *cpeer;
	char *agent_local;
	char *agent_remote;
	char *state_dut, *state_peer;
	int ttl_s;
	int leased;
	int attempt;			/* attempts of the current step (1 = first) */
	double step_started_prev;	/* start time of the previous attempt (0: none) */
	struct buf why;			/* failure or skip reason of the current step */
	struct buf err;			/* why a callee of the step failed, for its step_fail() message */
	struct json_object *detail;	/* detail of the current step */
	int last_boot;			/* boots = MIN..MAX: a look decided, boots after this one are skipped (0: none) */
	/*
	 * A job with pairs > 1 (job_pairs.c): 0 in the job's own process, P + 1
	 * in the child process that runs one boot on pair P of its round.
	 */
	int slot;
};

/* How long a server or sink keeps running after the client's end. */
#define SERVER_LINGER_S 2.0
/*
 * A client sized by work ends when its work is done, before its time
 * limit: its server or sink ends this long after the last datagram
 * (run spec idle_end_s) instead of outliving the limit by SERVER_LINGER_S.
 */
#define SERVER_IDLE_END_S 0.5
/*
 * How long a server or sink waits for the client's first datagram: its
 * warm-up, duration and linger run from that datagram, not from its own
 * start, so a client whose agent starts late (at load 43 with 64 jobs on
 * 2 CPUs: more than 2 s after the server was ready) still finds it there.
 * Only a client that never sends pays for the wait (docs/scale.md).
 */
#define SERVER_START_WAIT_S 30.0
/* How long the job waits for a server or sink to say it is ready (its SSH connection included). */
#define SERVER_READY_MS 60000

/* ---- job_plan.c */
/*
 * 1 when monitor NAME adds work a verdict could see (a probe, a sampler, a
 * per-event counter, reads inside the window: bpftrace, perf-profile,
 * perf-stat, nic), so that it runs only in observation runs; 0 for cpu
 * (/proc/stat read at the window's edges), whose cost is below what a
 * verdict resolves and which measurement runs carry (docs/observation.md).
 */
int monitor_observes(const char *name);
/* What an observation run without any monitor observes (runs.observes). */
#define OBSERVE_BARE "bare"
/* The boot order of a spec, malloc'd ("ABBA..." or "BBB" for a one-sided job). */
char *spec_order(const struct job_spec *spec, int64_t seed);
/* The boot a key belongs to: N of boot:N:..., run:N:..., obs:N:..., 2N of look:N (a look follows boot 2N); 0 for others. */
int key_boot(const char *key);
/* The boot whose step KEY is (boot:N:..., run:N:..., obs:N:...): N; 0 for a look and the job's own steps. */
int step_boot(const char *key);
/* boots = MIN..MAX of an A/B spec: the looks K of its plan (the keys "look:N"), 0 for a plain count. */
int spec_looks(const struct job_spec *spec, int *min, int *max);

/* ---- job_ctx.c: the runner's helpers for the steps */
/*
 * End the current step as failed with FMT as its reason (steps.error and
 * the job's error). The step puts its callee's reason in FMT itself: the
 * callee hands it up in a `struct buf *err` (error_to(); j->err is the
 * steps' buffer for it), or a connection keeps it (db_error(),
 * ssh_error()); nothing is read back from the log (docs/architecture.md,
 * "One error channel"). An argument may point into j->why. STEP_FAIL.
 */
int step_fail(struct job_ctx *j, const char *fmt, ...) KLAB_PRINTF(2, 3);
/* End the current step as skipped, saying why. SKIPPED. */
int skip_step(struct job_ctx *j, const char *fmt, ...) KLAB_PRINTF(2, 3);
/* A progress line: on stdout with the elapsed time (job_run_opts.progress), else logged. */
void job_print(struct job_ctx *j, const char *fmt, ...) KLAB_PRINTF(2, 3);
/* The string KEY of an agent's answer O (NULL when missing or not a string), its value KEY (NULL when missing). */
const char *obj_str(struct json_object *o, const char *key);
struct json_object *obj_get(struct json_object *o, const char *key);
/* The kernel id of a side (0: none). */
int64_t side_kernel(struct job_ctx *j, char side);
/* Test hook: KLAB_TEST_KILL_AT=KEY[@PHASE] kills this process on the first attempt of KEY. */
void test_kill_point(struct job_ctx *j, const char *key, const char *phase);
/* Dut and peer of the job from its row and the config (after the lease): 0, or -1 with ERR saying why (NULL: logged). */
int resolve_machines(struct job_ctx *j, struct buf *err);
/* The machines the steps use from now on: DUT and PEER, and their agents' state folders. */
void use_machines(struct job_ctx *j, const struct conf_machine *dut, const struct conf_machine *peer);
/* 1 when `klab cancel` asked the job to stop. */
int cancel_requested(struct job_ctx *j);
/* The state of step KEY into *state (malloc'd, NULL when it never ran): db_get_str's result. */
int step_state(struct job_ctx *j, const char *key, char **state);

/* ---- job_pairs.c: boots on several pairs of a pool at once (spec pairs > 1; docs/jobs.md) */
/*
 * At boot B's deploy step: when more pairs of the pool are free, lease
 * them and run boot B and the boots after it (up to the spec's pairs, not
 * past a look) at once, each in a child process on a pair of its own,
 * where RUN_BOOT (job.c's loop for one boot: its steps in plan order, a
 * boot whose machine left its state redone) runs it; wait for them.
 * STEP_OK when they all ended (or nothing was spread: the loop runs boot B
 * itself), else the first failure, cancel or stop, with j->pos at that
 * step and j->why saying why.
 */
int run_round(struct job_ctx *j, int b, int (*run_boot)(struct job_ctx *j, int b));

/* ---- job_steps.c: one function per entry of the step table (job.c) */
int step_intake(struct job_ctx *j, const char *key);
int step_build(struct job_ctx *j, const char *key);
int step_lease(struct job_ctx *j, const char *key);
int step_deploy(struct job_ctx *j, const char *key);
int step_verify(struct job_ctx *j, const char *key);
int step_agent(struct job_ctx *j, const char *key);
int step_prepare(struct job_ctx *j, const char *key);
int step_run(struct job_ctx *j, const char *key);
int step_restore(struct job_ctx *j, const char *key);
int step_release(struct job_ctx *j, const char *key);
int step_look(struct job_ctx *j, const char *key);
int step_compare(struct job_ctx *j, const char *key);
/* The boot after which a decided look stopped the job adding boots (0: none yet): from `looks`. */
int decided_last_boot(struct job_ctx *j);
int step_report(struct job_ctx *j, const char *key);
int step_notify(struct job_ctx *j, const char *key);
/*
 * 1 (why filled) when the dut is no longer in the state boot B left it in:
 * another boot id or kernel release than step verify recorded, the tuning
 * its prepare applied gone (`klab-agent prepare --check`), or the udp_tx
 * dummy target's route gone; with DOC (a run's result), also when the run
 * ran in another boot. A boot with no tuning prepared is checked by DOC's
 * boot id and release alone, and not at all before its run (no SSH session
 * around the run). 0 when it is.
 */
int boot_state_lost(struct job_ctx *j, int b, const char *doc, struct buf *why);
/*
 * `klab-agent restore` after boot B when its prepare ran: 0, 1 when
 * nothing was prepared, -1 with ERR saying why (NULL: logged).
 */
int restore_boot(struct job_ctx *j, int b, struct buf *err);
/* $KLAB_NOTIFY_CMD with the job's outcome in its environment (a failure is only logged). */
void notify_command(struct job_ctx *j, const char *state, const char *err);

/* ---- agent_client.c */
/* Connect to a machine once per job run (3 tries): 0, or -1 with WHY (may be NULL) saying why (logged too). */
int connect_machine(struct job_ctx *j, const struct conf_machine *m, struct ssh_conn **c, struct buf *why);
void close_machines(struct job_ctx *j);
/*
 * klab-agent --state DIR ARGV... on the dut (peer 0) or the peer (1): its
 * exit status (0 ok) with its stderr appended to ERR, or -1 when it could
 * not be run, with ERR saying why (the connection's failure, logged too). A
 * dropped connection is reconnected and the call made again once when
 * IDEMPOTENT.
 */
int agent_call(struct job_ctx *j, int peer, const char *const *argv, const char *in,
	       struct buf *out, long timeout_ms, int idempotent, struct buf *err);
/*
 * klab-agent fetch UID: 0 found (the document in out), 1 not there,
 * AGENT_FETCH_RUNNING while a run of UID goes on there (an earlier
 * attempt's: its run lock is held), -1 error (WHY, may be NULL, says why).
 */
#define AGENT_FETCH_RUNNING 2
int agent_fetch(struct job_ctx *j, int peer, const char *uid, struct buf *out, struct buf *why);
/* klab-agent ack UID: the machine forgets the result (a failure is a warning). */
void agent_ack(struct job_ctx *j, int peer, const char *uid);
/* The local klab-agent to upload: OPT, $KLAB_AGENT, next to this program, or PATH (malloc'd or NULL). */
char *find_local_agent(const char *opt);
/* Role names of a workload type: "server"/"sink" on the peer. */
const char *role_server(const char *type);
/* The udp_tx target of a workload ("peer", "dummy", "blackhole"), NULL for other types. */
const char *tx_target(const struct job_spec_workload *w);
/* 1 when the workload needs a server (sink) on the peer. */
int needs_server(const struct job_spec_workload *w);

/* The server (or sink) of one run, running in a child process. */
struct server_run {
	pid_t pid;
	char *outfile;
	double linger_s;	/* set by the caller: how long the server outlives the client */
	double start_wait_s;	/* set by the caller: how long the server waits for the client's first datagram */
};
/*
 * The run spec (docs/protocol.md) of the client (server 0, sr NULL) or the
 * server (1, with sr's linger and start wait) of run UID: malloc'd JSON.
 * OBSERVES NULL: a measurement run, whose client carries only the
 * measurement monitor of the workload's list (cpu); OBSERVE_BARE: an observation run with no
 * monitor; a monitor's name: an observation run with that monitor beside the
 * measurement monitor, cpu (docs/observation.md). The server never runs monitors.
 */
char *run_spec(struct job_ctx *j, const struct job_spec_workload *w, const char *uid, int server,
	       const struct server_run *sr, const char *observes);
/* Start the server of run UID on the peer and wait until it is up: 0 or -1 (logged). */
int server_start(struct job_ctx *j, const struct job_spec_workload *w, const char *uid, struct server_run *sr);
/* Wait for the server (at most timeout_ms, then kill it); its output into out. 0 ok, -1 failed. */
int server_finish(struct server_run *sr, long timeout_ms, struct buf *out);
/* 1 (and why filled) when an agent's result document says the run failed, else 0. */
int result_failed(const char *doc, struct buf *why);

/*
 * Host milliseconds to allow for MS milliseconds of the dut's own clock:
 * MS on a real clock; under icount a guest second is 10^9 instructions, which
 * TCG runs in 3-4 host seconds on an idle 2-core host and 10-15 at load 15
 * (docs/qemu-icount.md), so 20 times MS.
 */
long guest_ms(const struct job_ctx *j, long ms);
/* 1 when the dut's clock is icount (its runs are timed by instructions), else 0. */
int job_icount(const struct job_ctx *j);

#endif
