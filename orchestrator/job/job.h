/* job.h: jobs as crash-safe state machines in sqlite: submit, plan, run/resume, cancel. */
#ifndef KLAB_JOB_H
#define KLAB_JOB_H

#include <json-c/json.h>
#include <signal.h>
#include <stdint.h>

#include "conf/conf.h"
#include "store/db.h"
#include "store/jobs.h"
#include "buf.h"
#include "strvec.h"

/*
 * A job is a row of `jobs` with its whole spec as JSON (docs/jobs.md), so
 * a job runs the same after the config changed. Its steps are rows of
 * `steps`, written before (state 'running', attempts + 1) and after
 * ('done', 'failed' or 'skipped', with the error) each step. A job run
 * again (after a crash, SIGKILL, a reboot) skips every step already done
 * and repeats the one that was running; a run step first looks for its
 * result in the database and on the agent, so no run is lost or stored
 * twice.
 */

/* What to submit: a [job "NAME"] section, with optional overrides. */
struct job_submit_opts {
	const char *job;	/* [job "NAME"] (required) */
	const char *series;	/* overrides the job's series (mbox:FILE | lore:MSGID | patchwork:ID | FILE) */
	const char *base;	/* overrides the base ref */
	const char *test;	/* a second ref to compare instead of a series */
	const char *schedule;	/* name of the schedule that fired it (NULL: by hand) */
	long seed;		/* order seed; -1: the job's, else random */
	int boots, runs, pairs;	/* overrides when > 0 */
	/* a bisection's job (docs/bisect.md): only this workload, and ... */
	const char *workload;
	const char *commit;	/* ... one side: this commit of the job's tree (kind 'bisect') */
	int64_t bisection;	/* jobs.bisection_id and bisect_seq (0: not a bisection's) */
	int bisect_seq;
	/* a confirmation (kind 'confirm'): these two kernels again, of nightly job CONFIRMS */
	int64_t kernel_a, kernel_b, confirms;
};

#define JOB_SUBMIT_OPTS_INIT { NULL, NULL, NULL, NULL, NULL, -1, 0, 0, 0, NULL, NULL, 0, 0, 0, 0, 0 }

/*
 * Build the spec of a job from the config and the options, check it
 * (machines, workloads and profiles exist; two sides to compare) and
 * insert it as 'queued' with its job_sides rows. Returns the new job id, or
 * -1 with why in ERR ("job 'x': workload 'y' is not in the config";
 * error_to(): logged when ERR is NULL).
 */
int64_t job_submit(struct db *db, const struct klab_config *cfg, const struct job_submit_opts *o,
		   struct buf *err);

/* For sched_tick(): submit the schedule's job; arg is a void *[2] = { struct db *, const struct klab_config * }. */
int64_t job_submit_schedule(void *arg, const struct conf_schedule *s);

/*
 * The list of step keys of a spec, in order (the plan), e.g. "intake",
 * "build:A", "lease", "boot:1:deploy", ..., "run:1:udp_rr_500:0", ...,
 * "release", "compare", "report", "notify". Used for progress (n/m). 0 or -1.
 */
int job_plan(const struct job_spec *spec, int64_t seed, struct strvec *keys);

/*
 * The ABBA boot order of a job: 2 * boots letters 'A'/'B' written to
 * out[0..2*boots-1] (NUL-terminated), from the seed (xoshiro256**). With
 * order "fixed": ABAB... Randomised ABBA: the boots form quads, each quad
 * is XYYX with X drawn from the seed; an odd pair at the end is drawn too.
 */
void job_order(int boots, int64_t seed, int fixed, char *out);

/*
 * The kind of a step key for its expected duration: every number becomes
 * '#' ("run:3:udp_rr:2" -> "run:#:udp_rr:#", "boot:2:deploy" ->
 * "boot:#:deploy"), so a run of a workload learns from its other runs.
 */
void job_step_kind(const char *key, char *out, size_t n);
/*
 * The expected seconds of each step of job ID's PLAN into EXPECTED[plan.n]:
 * 0 for a step the job has ended already, else the mean of the latest
 * (at most 10) durations of done steps of the same kind, of this job and
 * the earlier jobs of its name first, then of any job; -1 when none ran
 * yet. 0 or -1 (a database error).
 */
int job_expected(struct db *db, int64_t id, const struct strvec *plan, double *expected);
/* Seconds left of job ID when step POS of PLAN runs for CUR_S s (progress_eta_items()); -1: not known. */
double job_eta_s(struct db *db, int64_t id, const struct strvec *plan, size_t pos, double cur_s);

/* Options of job_run(). */
struct job_run_opts {
	int progress;		/* print "[  12.3s] 5/40 boot:1:prepare ..." lines on stdout */
	int wait_lease;		/* wait for a busy machine pair (else return 2 at once) */
	const char *agent_local;	/* local klab-agent to upload (NULL: next to this program, then PATH) */
	volatile sig_atomic_t *stop;	/* set by a signal: finish the current step, leave the job resumable */
	int taken_quiet;	/* a job another process runs is no error: return JOB_RUN_TAKEN (klabd) */
	/*
	 * The writer of the report step's pages (report_job() of report/report.h),
	 * given by the caller: the report sits above the job runner, which calls
	 * nothing of report/. NULL: the report step is skipped.
	 */
	int (*report)(struct db *db, const char *outdir, int64_t job_id, struct buf *why);
};

#define JOB_RUN_OPTS_INIT { 1, 1, NULL, NULL, 0, NULL }
/* job_run()'s and bisect_run()'s return when another process holds the run lock and taken_quiet is set */
#define JOB_RUN_TAKEN 3

/*
 * Run (or resume) job ID in this process until it ends. The job is locked
 * for the run (flock on DBPATH.job-ID.lock, DBPATH being the database's
 * file; db_path is unused and may be NULL), so a second runner is refused
 * ("job 3 is being run by another process"). Returns 0 when the job ended
 * done, 1 when it failed or was cancelled (jobs.error says why), 2 when it
 * stopped early (stop flag, or the machines were busy without wait_lease)
 * and can be resumed, JOB_RUN_TAKEN when another process runs it and
 * o->taken_quiet is set (nothing logged: the lock is the claim, so two
 * klabd racing for a job need no check before it), -1 on an error before
 * the job started (logged). What follows a job that ended done (its
 * nightly history, its confirmation, a bisection) is not done here:
 * after_job_run() of nightly/after_job.h runs it.
 */
int job_run(struct klab_config *cfg, struct db *db, const char *db_path, int64_t id,
	    const struct job_run_opts *o);

/*
 * 1 when a process holds job ID's run lock (the job is being run now),
 * 0 when not, -1 on an error.
 */
int job_is_live(struct db *db, int64_t id);

/* Find a job by id ("12") or by name (the newest job of that name): 0 with *id set, or -1 (logged). */
int job_find(struct db *db, const char *name_or_id, int64_t *id);

/* Ask job ID to stop at its next safe point (a queued job is cancelled at once): 0 or -1. */
int job_cancel(struct db *db, int64_t id);

#endif
