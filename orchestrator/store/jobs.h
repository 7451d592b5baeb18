/* jobs.h: the jobs family of tables (jobs, job_sides, steps, looks, comparisons) and a job's spec, parsed once. */
#ifndef KLAB_STORE_JOBS_H
#define KLAB_STORE_JOBS_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"
#include "strvec.h"

/*
 * A job's spec is the JSON document in jobs.spec (docs/jobs.md), written
 * once at submit (job/job_spec.c) so that a job runs and is judged the same
 * after the config changed. Everything that reads it reads this struct,
 * filled by job_spec_parse(); what a spec does not say takes the defaults
 * below, here and nowhere else.
 */

/* A workload's measured window and its warm-up when the config names none (job_spec.c writes them too). */
#define JOB_SPEC_DURATION_S 10.0
#define JOB_SPEC_WARMUP_S 2.0

/*
 * A run sized by work (docs/workloads.md, "--ops"): under the icount clock
 * a guest second is 10^9 instructions and a run's path length does not
 * depend on its length, so a workload that names no "ops" runs this much
 * work there, timed by the guest clock (not on a real clock, where the
 * default stays a timed run), with seeded source ports, so that the ports
 * no longer change the path from run to run. Against the timed 0.5 s + 2 s
 * a run step took 44-86% of the host time (load 3.5-15) and insn_per_op
 * spread 0.011% (udp_tx_dummy) and 0.30-0.43% (udp_rr) between runs,
 * against 0.27-0.32% and 0.57-0.59%: docs/qemu-icount.md, "Runs sized by
 * work".
 */
#define JOB_SPEC_ICOUNT_OPS_UDP_RR 40000	/* transactions: 0.59 s of guest time at 67.8k/s */
#define JOB_SPEC_ICOUNT_WARMUP_OPS_UDP_RR 8000
#define JOB_SPEC_ICOUNT_OPS_UDP_TX 200000	/* packets: 0.61 s of guest time at 330k/s */
#define JOB_SPEC_ICOUNT_WARMUP_OPS_UDP_TX 40000
#define JOB_SPEC_ICOUNT_SEED 1			/* the source ports' seed of a workload that names none */
/* The most operations a workload may ask for (the generators' own bound). */
#define JOB_SPEC_OPS_MAX 1000000000000LL

/* One side of the comparison ("sides" of the spec). */
struct job_spec_side {
	char side;			/* 'A' or 'B' */
	const char *label, *ref, *variant, *profile;	/* NULL when not given */
	int build;			/* 1: build the side's kernel; 0: reuse kernel_id or the machine's own */
	int64_t kernel_id, from_job;	/* a kernel of an earlier job (confirmations, nightlies); 0: none */
};

/* One workload as the config had it at submit ("workloads" of the spec). */
struct job_spec_workload {
	const char *name, *type;
	struct json_object *params;	/* the generator's keys as the config spells them (strings); may be NULL */
	struct json_object *monitors;	/* array of monitor names, as the agent takes it; may be NULL */
	double duration_s, warmup_s;	/* default JOB_SPEC_DURATION_S, JOB_SPEC_WARMUP_S */
	const char *perf_events, *profile_cpus, *bpftrace_script;	/* NULL when not given */
	const char *headline;		/* the headline metric; NULL when not given or empty */
	double threshold_pct;		/* the change that matters (0: not given) */
	const char *target;		/* udp_tx: params.target ("peer", "dummy", "blackhole"); NULL when not given */
	/*
	 * A run sized by work: ops N > 0; 0: timed on every clock; -1: not
	 * given (job_spec_work()).
	 */
	int64_t ops, warmup_ops;
};

struct job_spec {
	struct json_object *doc;	/* the parsed document: owns every string and object below */
	const char *name, *kind;	/* kind: series, refs, nightly, tuning, confirm, bisect ("" when not given) */
	const char *tree, *base, *test, *series, *pool, *schedule, *uid_salt;	/* NULL when not given */
	const char *order;		/* "abba" (default) or "fixed" */
	struct strvec local_patches, machines;	/* machines: dut and peer, or none (a pool) */
	int boots;			/* boots per job, the maximum of a range (default 1) */
	int boots_min;			/* boots = MIN..MAX: the first look (0: a plain count) */
	int pairs;			/* boots at once, each on a pair of the pool (default 1; docs/jobs.md) */
	int runs;			/* measured runs of each workload per boot (default 1) */
	/*
	 * Runs of each workload per boot before the measured ones, discarded
	 * by every comparison: "warmup_runs", else the old key "warmup" (a count
	 * up to 100), else 1; never below 0. The plan runs runs + warmup_runs.
	 */
	int warmup_runs;
	/*
	 * The first N boots of each side carry observation runs after their
	 * measurement runs (default 1; 0: none): docs/observation.md.
	 */
	int observe_boots;
	int64_t seed;
	int64_t confirms;		/* a confirmation: the nightly job it measures again (0: none) */
	int64_t bisection;		/* a bisection's job: its bisection (0: none) and step */
	int bisect_seq;
	struct job_spec_side *sides;	/* in the spec's order: A then B, or B alone */
	size_t n_sides;
	char letters[3];		/* the side letters in order: "AB", "B" (at most two) */
	struct job_spec_workload *workloads;
	size_t n_workloads;
	struct json_object *profiles;	/* profile name -> its tuning, as klab-agent prepare takes it; may be NULL */
};

/*
 * Parse a job's spec TEXT into *SPEC: 0, or -1 when it is not a JSON object
 * (logged; *SPEC then holds the defaults). *SPEC is released with
 * job_spec_release() either way.
 */
int job_spec_parse(const char *text, struct job_spec *spec);
void job_spec_release(struct job_spec *spec);

/*
 * What one run of a workload does. OPS 0: a timed run, WARMUP_S then
 * DURATION_S. OPS > 0: sized by work, WARMUP_OPS then OPS operations with
 * LIMIT_S the time limit of the whole run. SEED: the source ports' seed to
 * add to the client's params (0: none added; the workload's own "seed" param
 * is passed as it is).
 */
struct job_work {
	int64_t ops, warmup_ops, seed;
	double warmup_s, duration_s, limit_s;
};
/*
 * The work of a run of W on a machine whose clock is icount (ICOUNT 1) or
 * real: W's ops and warmup_ops when it names them (its duration_s the time
 * limit); W's timed run when its ops is 0 (as runs were before runs sized by
 * work: no seed added either); else under icount the JOB_SPEC_ICOUNT_* sizes
 * with warmup_s + duration_s the limit and seed JOB_SPEC_ICOUNT_SEED unless
 * W names one (udp_tx with gso_size keeps its timed run: its operation
 * counts must be multiples of the segments a send makes; so does udp_tx
 * with rate_pps, which the default work could outlast); else W's timed run.
 */
void job_spec_work(const struct job_spec_workload *w, int icount, struct job_work *out);
/*
 * The same for an observation run (docs/observation.md): the same work as
 * a measurement run. It was W's timed run under icount while bpftrace
 * attached during the run; the agent now starts the workload only once
 * bpftrace says its probes are attached (agents/monitor.h, MON_BPF_READY),
 * and perf stat and perf record cover the window sized by work from its
 * start to its end (open_window).
 */
void job_spec_work_observe(const struct job_spec_workload *w, int icount, struct job_work *out);

/* Side SIDE ('A', 'B') of the spec, a workload by name: NULL when it has none. */
const struct job_spec_side *job_spec_side(const struct job_spec *spec, char side);
const struct job_spec_workload *job_spec_workload(const struct job_spec *spec, const char *name);

/*
 * The tables of a job: `jobs` (one row a job: its spec, state, machines),
 * `job_sides` (side A and B: label, kernel, profile), `steps` (one row a
 * step of its plan as it ran), `looks` (the verdicts of each look of a
 * boots = MIN..MAX job) and `comparisons` (the verdicts a job's comparison
 * stored). This file holds the only SQL on them (docs/database.md, "Who
 * owns which table"); the job runner, the daemon, the commands and the
 * reports call the functions below. Unless said otherwise a function
 * returns 0 or -1 (logged with the SQL), and a getter of one value 1 (a
 * row: a NULL value reads as NULL, or leaves an integer *OUT untouched), 0
 * (no such row) or -1.
 */

/* ---- jobs */

/* Job ID runs on machines DUT and PEER (its lease): 0 or -1. */
int jobs_set_machines(struct db *db, int64_t id, const char *dut, const char *peer);

/* A column of a job's row, for jobs_get_str() and jobs_get_int(). */
enum job_field {
	JOB_NAME,		/* text */
	JOB_STATE,		/* queued, running, done, failed, cancelled */
	JOB_SPEC,		/* the JSON spec (job_spec_parse()) */
	JOB_ERROR,		/* why it failed or was cancelled; NULL */
	JOB_ERROR_TEXT,		/* the same, "" for NULL */
	JOB_TREE,		/* the tree of its spec; NULL */
	JOB_DUT,		/* its machines, once leased; NULL before */
	JOB_PEER,
	JOB_ORDER_SEED,		/* integer: the seed of its boot order */
	JOB_CANCEL,		/* integer: 1 once a cancel was asked for */
	JOB_SERIES_ID,		/* integer: the series intake stored; NULL */
};

/* Field F (a text one) of job ID into *OUT (malloc'd, NULL when NULL): 1, 0 (no job), -1. */
int jobs_get_str(struct db *db, int64_t id, enum job_field f, char **out);
/* Field F (an integer one) of job ID into *OUT (untouched when NULL): 1, 0 (no job), -1. */
int jobs_get_int(struct db *db, int64_t id, enum job_field f, int64_t *out);
/* 1 when job ID exists, 0 when not, -1 on error. */
int jobs_exists(struct db *db, int64_t id);
/* The newest job named NAME into *ID: 1, 0 (none), -1. */
int jobs_find_name(struct db *db, const char *name, int64_t *id);

/*
 * A job's row as `klab jobs` and `klab job show` print it. Strings are
 * malloc'd (NULL when NULL); times are seconds since 1970, NaN when NULL.
 */
struct job_row {
	int64_t id;
	char *name, *state, *spec, *tree, *dut, *peer, *schedule, *error;
	int64_t order_seed;
	int order_seed_null;		/* 1: no order seed */
	int64_t pid, series_id;		/* 0: NULL */
	int64_t cancel;
	double created, started, finished;
};
void job_row_release(struct job_row *r);
/* Job ID into *R: 1, 0 (no such job: R zeroed), -1. */
int job_get(struct db *db, int64_t id, struct job_row *r);
/*
 * The newest LIMIT jobs (all when STATE is NULL, else those in STATE), by id
 * from the newest, into *OUT (each row but its series_id, tree and cancel):
 * 0 or -1.
 */
int jobs_list(struct db *db, const char *state, int64_t limit, struct job_row **out, size_t *n);
void job_rows_free(struct job_row *v, size_t n);
/* How long job ID ran (its end, or 0 before it, minus its start, or its creation before it) into *SECONDS: 1, 0, -1. */
int jobs_took(struct db *db, int64_t id, double *seconds);
/* The oldest queued or running job named NAME into *ID: 1, 0 (none), -1. */
int jobs_find_unfinished(struct db *db, const char *name, int64_t *id);

/* A job as the report's index lists it: strings malloc'd, NULL when NULL. */
struct job_index_row {
	int64_t id;
	char *name, *state, *dut, *peer;
	char *label_a, *label_b;	/* its sides' labels */
	char *subject;			/* its series' subject */
	double created;
	int scheduled;			/* fired by a schedule */
};
/* The MAX newest jobs, newest first, into *OUT: 0 or -1. */
int jobs_list_index(struct db *db, int64_t max, struct job_index_row **out, size_t *n);
/* The jobs fired by a schedule, by id, with FN(ID, CREATED, DATA) for each: 0 or -1. */
int jobs_each_scheduled(struct db *db, void (*fn)(int64_t id, double created, void *data), void *data);

/* A job's id and state, as the lists below give them. */
struct job_brief {
	int64_t id;
	char *state;			/* malloc'd */
};
void job_briefs_free(struct job_brief *v, size_t n);
/* The jobs running (state 'running', whoever runs them), by id, into *OUT: 0 or -1. */
int jobs_list_running(struct db *db, struct job_brief **out, size_t *n);
/*
 * The jobs to start: running ones (interrupted) first, then the queued,
 * each by id, at most 64, none of a bisection (its runner runs them): 0 or -1.
 */
int jobs_list_startable(struct db *db, struct job_brief **out, size_t *n);
/* The queued or running jobs of bisection BISECTION, by id: 0 or -1. */
int jobs_list_bisection_open(struct db *db, int64_t bisection, struct job_brief **out, size_t *n);
/* The LIMIT newest jobs that are not queued (their state not read), newest first: 0 or -1. */
int jobs_list_started(struct db *db, int64_t limit, struct job_brief **out, size_t *n);
/* The jobs of step SEQ of bisection BISECTION, by id: 0 or -1. */
int jobs_list_bisect_step(struct db *db, int64_t bisection, int seq, struct job_brief **out, size_t *n);

/* What jobs_add() inserts: a queued job and its sides. */
struct job_new {
	const char *name, *spec, *tree, *schedule;	/* schedule, tree: NULL when none */
	int64_t order_seed;
	const char *dut, *peer;		/* the machines named at submit; NULL: leased later */
	double created;
	int64_t bisection;		/* its bisection (0: none) and step (-1: none) */
	int64_t bisect_seq;
};
/*
 * Insert job J, queued, into *ID (not in a transaction of its own: the
 * caller holds one with the sides, job_sides_add()): 0 or -1.
 */
int jobs_add(struct db *db, const struct job_new *j, int64_t *id);
/* Side SIDE ("A", "B") of job ID: its LABEL, its KERNEL_ID (0: none yet) and PROFILE (NULL: none). */
int job_sides_add(struct db *db, int64_t id, const char *side, const char *label, int64_t kernel_id,
		  const char *profile);

/* A queued job ID is cancelled at NOW before it started: 0 or -1. */
int jobs_cancel_queued(struct db *db, int64_t id, double now);
/* Ask running job ID to stop at its next step (jobs.cancel = 1): 0 or -1. */
int jobs_request_cancel(struct db *db, int64_t id);
/* Job ID runs in process PID since NOW (its first start stays): 0 or -1. */
int jobs_set_running(struct db *db, int64_t id, int64_t pid, double now);
/* Job ID ended at NOW in STATE (done, failed, cancelled) for ERR (NULL: none); no process runs it. 0 or -1. */
int jobs_finish(struct db *db, int64_t id, const char *state, const char *err, double now);
/* Job ID goes back to the queue (its machines were busy): 0 or -1. */
int jobs_requeue(struct db *db, int64_t id);
/* No process runs job ID any more (stopped, to resume): 0 or -1. */
int jobs_clear_pid(struct db *db, int64_t id);
/* Job ID measures series SERIES_ID (intake stored it): 0 or -1. */
int jobs_set_series(struct db *db, int64_t id, int64_t series_id);
/*
 * The kernel of side B of the newest job of SCHEDULE that ended done on
 * machines DUT and PEER (NULL matches NULL) and has one, into *KERNEL and
 * its job into *JOB: 1, 0 (none), -1.
 */
int jobs_last_nightly_kernel(struct db *db, const char *schedule, const char *dut, const char *peer,
			     int64_t *kernel, int64_t *job);

/* ---- job_sides */

/* The kernel of side SIDE ('A', 'B') of job ID into *KERNEL (untouched when none yet): 1, 0 (no side), -1. */
int job_sides_kernel(struct db *db, int64_t id, char side, int64_t *kernel);
/* Side SIDE ('A', 'B') of job ID boots kernel KERNEL: 0 or -1. */
int job_sides_set_kernel(struct db *db, int64_t id, char side, int64_t kernel);
/* A side of a job with its kernel (when built). Strings malloc'd, NULL when NULL. */
struct job_side_row {
	char *side, *label, *profile;
	char *tree, *commit, *variant, *release, *build_id, *compiler;	/* its kernel's */
	int64_t kernel_id;		/* 0: none yet */
};
/* The sides of job ID, A then B, into *OUT: 0 or -1. */
int job_sides_list(struct db *db, int64_t id, struct job_side_row **out, size_t *n);
void job_side_rows_free(struct job_side_row *v, size_t n);

/* The label of side SIDE ("A", "B") of job ID, else its kernel's release, else its variant, into *LABEL: 1, 0, -1. */
int job_sides_label(struct db *db, int64_t id, const char *side, char **label);

/* ---- steps */

/* A step of a job as it ran: state (running, done, skipped, failed), attempts, started (0: NULL). */
struct step_row {
	char *state;			/* malloc'd */
	int attempts;
	double started;
};
/* Step KEY of job ID into *R (release R->state with free()): 1, 0 (not run yet: R zeroed), -1 (R zeroed). */
int steps_get(struct db *db, int64_t id, const char *key, struct step_row *r);
/* The state of step KEY of job ID into *STATE (malloc'd; NULL when it did not run): 1, 0, -1. */
int steps_get_state(struct db *db, int64_t id, const char *key, char **state);
/*
 * Step KEY (NAME) of job ID starts at NOW: inserted running, attempt 1, or
 * its row running again with one more attempt and no end nor error. 0 or -1.
 */
int steps_start(struct db *db, int64_t id, const char *key, const char *name, double now);
/* Step KEY of job ID ended at NOW in STATE (done, skipped, failed), with ERR and DETAIL (JSON; NULL: none). */
int steps_end(struct db *db, int64_t id, const char *key, const char *state, double now, const char *err,
	      const char *detail);
/* Step KEY of job ID was interrupted at NOW (ERR: cancelled, stopped, why): failed, to start over. */
int steps_interrupted(struct db *db, int64_t id, const char *key, double now, const char *err);
/* Step KEY of job ID is to run again (its boot is redone, for ERR): failed, its end kept. */
int steps_redo(struct db *db, int64_t id, const char *key, const char *err);
/* A step's row as `klab job show` and `klab job log` print it: strings malloc'd (NULL when NULL), finished NaN when NULL. */
struct step_info {
	char *key, *name, *state, *error, *detail;
	int64_t attempts;
	double started, finished;
};
/* The steps of job ID into *OUT, in the order they were made (BY_START 0) or by their start then that: 0 or -1. */
int steps_list(struct db *db, int64_t id, int by_start, struct step_info **out, size_t *n);
void step_infos_free(struct step_info *v, size_t n);
/* How many steps of job ID ended (done or skipped), into *N: 0 or -1. */
int steps_count_ended(struct db *db, int64_t id, int64_t *n);
/* The keys of the steps job ID ended (done or skipped) onto *KEYS: 0 or -1. */
int steps_ended_keys(struct db *db, int64_t id, struct strvec *keys);
/*
 * The durations of the latest 5000 steps done (newest first), with FN(KEY,
 * SECONDS, DATA) for each: OTHERS 0, the steps of job ID and of the jobs
 * named NAME; OTHERS 1, those of every other job. 0 or -1.
 */
int steps_durations(struct db *db, int64_t id, const char *name, int others,
		    void (*fn)(const char *key, double seconds, void *data), void *data);

/*
 * The step of job ID that failed last (by its end, then its row) into *KEY
 * and its error into *ERR ("" when none; both malloc'd, NULL unless found):
 * 1, 0 (no failed step), -1.
 */
int steps_last_failed(struct db *db, int64_t id, char **key, char **err);

/* ---- looks */

/* A headline metric's verdict at a look of a boots = MIN..MAX job. Strings malloc'd when loaded. */
struct look_row {
	int look, looks, boots;
	double alpha;
	int decided;
	char *workload, *metric;
	int n_a, n_b;
	char verdict[16];		/* CHANGED, EQUIVALENT, INCONCLUSIVE, DESCRIPTIVE ("" when NULL) */
	double change_pct, ci_lo, ci_hi, p_holm;	/* NaN: NULL (stored NULL when NaN or infinite) */
};
/*
 * Look LOOK of job ID is ROWS (each of that look), stored at NOW in place of
 * its earlier rows, in a transaction of its own: 0 or -1 (logged).
 */
int looks_store(struct db *db, int64_t id, int look, const struct look_row *rows, size_t n, double now);
/* The looks of job ID in order (look, workload, metric) into *OUT (looks_free()): 0 or -1 (logged). */
int looks_load(struct db *db, int64_t id, struct look_row **out, size_t *n);
void looks_free(struct look_row *v, size_t n);

/* The fewest boots a side had at a look that decided job ID, into *BOOTS (untouched when none did): 1 or -1. */
int looks_decided_boots(struct db *db, int64_t id, int64_t *boots);

/* ---- comparisons */

/*
 * A stored verdict of a comparison (compare/compare.c makes them). Strings
 * malloc'd when loaded, NULL when NULL; numbers NaN when NULL (and stored
 * NULL when NaN or infinite).
 */
struct comparison_row {
	int64_t job_id;
	char *label_a, *label_b;	/* loaded only: comparisons_store() takes them once */
	char *workload, *metric, *unit, *better;
	int64_t n_a, n_b;
	double mean_a, mean_b, cov_a, cov_b, change_pct, ci_lo, ci_hi, p_welch, p_holm, p_mwu, hl_ratio,
	       mde_pct, threshold_pct;
	char verdict[16];		/* CHANGED, EQUIVALENT, INCONCLUSIVE, DESCRIPTIVE ("" when NULL) */
	int64_t extra_boots;		/* -1: NULL */
	char *claim;
};
void comparison_rows_free(struct comparison_row *v, size_t n);
/*
 * Job ID's comparison, labelled LABEL_A and LABEL_B, is ROWS, stored at
 * NOW in place of its earlier rows (only those of WORKLOAD and METRIC when
 * not NULL), in a transaction of its own: 0 or -1 (logged).
 */
int comparisons_store(struct db *db, int64_t id, const char *workload, const char *metric, const char *label_a,
		      const char *label_b, const struct comparison_row *rows, size_t n, double now);
/* The latest row of each workload and metric of job ID, in the order stored, into *OUT: 0 or -1. */
int comparisons_load_job(struct db *db, int64_t id, struct comparison_row **out, size_t *n);
/*
 * The LIMIT latest rows of WORKLOAD's METRIC (of any job; only A/A ones,
 * label_a = label_b, when AA), newest first, into *OUT: 0 or -1.
 */
int comparisons_load_metric(struct db *db, const char *workload, const char *metric, int aa, int64_t limit,
			    struct comparison_row **out, size_t *n);

/*
 * The change of WORKLOAD's METRIC that the ends' job (step 0) of bisection
 * BISECTION measured last, into *CHANGE_PCT, *CI_LO and *CI_HI (NaN when
 * NULL): 1, 0 (none: untouched), -1.
 */
int comparisons_bisection_ends(struct db *db, int64_t bisection, const char *workload, const char *metric,
			       double *change_pct, double *ci_lo, double *ci_hi);
/*
 * Every workload and metric that a comparison or a change point names,
 * sorted, pushed onto *OUT as pairs (workload, then metric): 0 or -1.
 */
int comparisons_metric_keys(struct db *db, struct strvec *out);
/* The unit the latest comparison of WORKLOAD's METRIC that has one stored, into *UNIT (malloc'd): 1, 0, -1. */
int comparisons_unit(struct db *db, const char *workload, const char *metric, char **unit);
/* How many verdicts of job ID are CHANGED, into *N: 0 or -1. */
int comparisons_count_changed(struct db *db, int64_t id, int64_t *n);

#endif
