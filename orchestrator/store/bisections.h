/*
 * bisections.h: what follows a nightly job, as stored: change points,
 * confirmations, bisections and their steps (tables changepoints,
 * confirmations, bisections, bisect_steps). The callers decide (nightly/,
 * bisect/); this file reads and writes the rows.
 */
#ifndef KLAB_STORE_BISECTIONS_H
#define KLAB_STORE_BISECTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/* A bisection as `klab bisect list/show` prints it (strings NULL where the column is). */
struct bisection_row {
	int64_t id;
	const char *tree, *good, *bad, *workload, *metric, *state;
	int64_t commits;		/* in its spec's range */
	const char *first_bad, *error;
};

/* Call FN with every bisection, newest first; stops at FN's first nonzero, which it returns. 0, or -1. */
int bisections_each(struct db *db, int (*fn)(const struct bisection_row *b, void *data), void *data);

/* Call FN with bisection ID: 1 (FN called), 0 when there is none, -1. */
int bisection_get(struct db *db, int64_t id, void (*fn)(const struct bisection_row *b, void *data), void *data);

/* How bisection ID ended, as `klab bisect run` says it (malloc'd; RESULT "-" and SUBJECT "" when none). 1, 0, -1. */
int bisection_outcome(struct db *db, int64_t id, char **state, char **result, char **first_bad, char **subject);

/* A step of a bisection (seq 0 the good end, 1 the bad end); VALUE NAN when not measured. */
struct bisect_step_row {
	int64_t seq;
	const char *role, *commit, *subject;	/* subject "" when none */
	int64_t boots;
	double value;
	const char *verdict;			/* NULL until decided */
	const char *reason;			/* "" when none */
};

/* Call FN with the steps of bisection ID by seq. 0, or -1. */
int bisect_steps_each(struct db *db, int64_t id, int (*fn)(const struct bisect_step_row *s, void *data), void *data);

/* A nightly's change waiting for, or given, its confirmation (confirm.h). */
struct confirmation_row {
	int64_t job_id;				/* the nightly's */
	const char *workload, *metric;
	double change_pct;			/* NAN when NULL */
	const char *state;
	int64_t confirm_job, bisection_id;	/* 0: none */
};

/* Call FN with the confirmations of job JOB_ID in id order. 0, or -1. */
int confirmations_of_job_each(struct db *db, int64_t job_id,
			      int (*fn)(const struct confirmation_row *c, void *data), void *data);

/* ---- confirmations (nightly/confirm.c, report/report_confirm.c) ---- */

/*
 * The confirmation job nightly JOB_ID queued already for kernel KA (its
 * side A) into *CJ (untouched without one). 1, 0 when there is none, -1.
 */
int confirmations_job_for_kernel(struct db *db, int64_t job_id, int64_t ka, int64_t *cj);

/*
 * The newest change point of WORKLOAD.METRIC in nightly JOB_ID's series
 * (its tree, dut+peer): its first job after the change into *CP_JOB, its
 * change into *CHANGE, the kernel of side A of that job into *BEFORE (0:
 * none). 1, 0 when there is none (or the step failed), -1.
 */
int changepoint_newest(struct db *db, int64_t job_id, const char *workload, const char *metric, int64_t *cp_job,
		       double *change, int64_t *before);

/* How many confirmations of WORKLOAD.METRIC have job JOB as their change point's or their nightly into *N. 1, 0, -1. */
int confirmations_count_seen(struct db *db, const char *workload, const char *metric, int64_t job, int64_t *n);

/* How many confirmations nightly JOB_ID queued into *N (untouched on an error). 1, 0, -1. */
int confirmations_count_of_job(struct db *db, int64_t job_id, int64_t *n);

/*
 * Nightly JOB_ID's change of WORKLOAD.METRIC (BETTER higher or lower,
 * CHANGE in %; CP_JOB its change point's job, 0: its own CHANGED verdict)
 * waits for confirmation job CONFIRM_JOB, made at NOW; kept as it is when
 * the row exists. 0, or -1.
 */
int confirmation_insert(struct db *db, int64_t job_id, int64_t confirm_job, const char *workload, const char *metric,
			const char *better, double change, double now, int64_t cp_job);

/* A confirmation still pending (strings valid during the call). */
struct confirmation_pending {
	int64_t id;
	const char *workload, *metric;
	double change_pct;
	const char *better;
};

/*
 * Call FN with the pending confirmations of confirmation job CONFIRM_JOB,
 * the statement open meanwhile; stops at FN's first nonzero, which it
 * returns. 0, or -1.
 */
int confirmations_pending_each(struct db *db, int64_t confirm_job,
			       int (*fn)(const struct confirmation_pending *c, void *data), void *data);

/*
 * Confirmation ID is decided at NOW: STATE (confirmed, not confirmed), the
 * confirmation job's CHANGE and VERDICT, its bisection (0: none) and why
 * there is none (ERROR_MSG, may be NULL), in one statement. 0, or -1.
 */
int confirmation_decide(struct db *db, int64_t id, const char *state, double change, const char *verdict, double now,
			int64_t bisection_id, const char *error_msg);

/* What became of a nightly's change: its confirmation and its bisection (strings valid during the call). */
struct confirmation_outcome {
	const char *state;
	int64_t confirm_job;
	const char *confirm_verdict;		/* "" when none */
	double confirm_change;
	int has_change;				/* confirm_change is not NULL */
	int64_t bisection_id;
	int has_bisection;			/* bisection_id is not NULL */
	const char *bisection_state, *bisection_result, *first_bad, *error;	/* NULL where the column is */
	int64_t cp_job;
	int has_cp_job;				/* cp_job is not NULL */
};

/*
 * Call FN with the confirmation of nightly JOB's WORKLOAD.METRIC, with its
 * bisection: 1 (FN called), 0 when there is none (or the step failed), -1.
 */
int confirmation_outcome_get(struct db *db, int64_t job, const char *workload, const char *metric,
			     void (*fn)(const struct confirmation_outcome *c, void *data), void *data);

/* ---- a bisection's page and mail (bisect/bisect_report.c) ---- */

/* What a bisection found, with its ends and its job (strings NULL where the column is, valid during the call). */
struct bisection_answer_row {
	const char *tree, *good_ref, *bad_ref, *workload, *metric, *first_bad, *subject;
	const char *good_kernel, *bad_kernel;	/* the releases of steps 0 and 1 */
	const char *dut, *peer;			/* of its newest job of step 0 */
	const char *clock, *unit, *better;	/* of that job's runs, and of its runs' METRIC */
	double change_pct, ci_lo, ci_hi;	/* NAN when NULL */
	double alpha;
	const char *state, *result;		/* result "" when none */
	int64_t steps, boots;			/* its steps of role 'step', all its steps' boots */
};

/* Call FN with bisection ID's answer: 1 (FN called), 0 when there is none (or the step failed), -1. */
int bisection_answer_get(struct db *db, int64_t id, void (*fn)(const struct bisection_answer_row *a, void *data),
			 void *data);

/* A step as a bisection's page shows it. */
struct bisect_step_page_row {
	int64_t seq;
	const char *role, *commit, *subject;	/* subject "" when none */
	int64_t boots;
	double value;
	int has_value;				/* value is not NULL */
	const char *verdict, *reason;		/* "-" and "" when none */
	int64_t job_id;
	int has_job;				/* job_id is not NULL */
	int64_t remaining;			/* commits left, 0 when NULL */
};

/* Call FN with the steps of bisection ID by seq (none on an error, logged). */
void bisect_steps_page_each(struct db *db, int64_t id, void (*fn)(const struct bisect_step_page_row *s, void *data),
			    void *data);

/* ---- a bisection's life (bisect/) ---- */

/* Make a bisection, state queued (SPEC: JSON, bisect_db.c); *ID its id. 0, or -1. */
int bisection_insert(struct db *db, const char *tree, const char *good, const char *bad, const char *good_ref,
		     const char *bad_ref, const char *workload, const char *metric, double alpha, const char *spec,
		     double now, int64_t *id);

/* The state of bisection ID (malloc'd): 1, 0 when there is none, -1. */
int bisection_state(struct db *db, int64_t id, char **state);

/* Whether bisection ID was asked to stop (cancel = 1). */
int bisection_cancel_asked(struct db *db, int64_t id);

/* Bisection ID is cancelled (by request, at NOW). 0, or -1. */
int bisection_set_cancelled(struct db *db, int64_t id, double now);

/* Bisection ID runs, in process PID (its start time kept once set). 0, or -1. */
int bisection_set_running(struct db *db, int64_t id, int64_t pid, double now);

/* Bisection ID ended in STATE (done, failed, ...), with RESULT and ERROR (either may be NULL). 0, or -1. */
int bisection_finish(struct db *db, int64_t id, const char *state, const char *result, const char *error_msg,
		     double now);

/* Bisection ID's answer: the first bad commit and its subject, the ends' change and its CI. 0, or -1. */
int bisection_set_answer(struct db *db, int64_t id, const char *first_bad, const char *subject, double change_pct,
			 double ci_lo, double ci_hi);

/* What a bisection's runner reads of it (strings borrowed for the call). */
struct bisection_spec {
	const char *tree, *good, *bad, *workload, *metric;
	double alpha;
	const char *spec;	/* JSON */
	const char *state;
};

/* Call FN with bisection ID: 1 (FN's result ignored), 0 when there is none, -1. */
int bisection_load(struct db *db, int64_t id, void (*fn)(const struct bisection_spec *b, void *data), void *data);

/*
 * Call FN with the bisections klabd runs: queued, or running (a runner that
 * died), not cancelled, queued after running, at most 16; stops at FN's
 * first nonzero. 0, or -1.
 */
int bisections_active_each(struct db *db, int (*fn)(int64_t id, int running, void *data), void *data);

/* The step row SEQ of bisection ID, made once (a resumed runner finds it). 0, or -1. */
int bisect_step_add(struct db *db, int64_t id, int seq, const char *role, const char *commit, const char *subject,
		    int64_t remaining, double now);

/* Step SEQ of bisection ID is measured by job JOB (seq 0: the ends' rows 0 and 1 both). */
void bisect_step_set_job(struct db *db, int64_t id, int seq, int64_t job);

/* Step SEQ is decided: its boots, mean value, p against each end, verdict and why; its kernel from its job. 0, -1. */
int bisect_step_end(struct db *db, int64_t id, int seq, int64_t boots, double value, double p_good, double p_bad,
		    const char *verdict, const char *reason, double now);

/* Call FN with the commit and verdict of each decided step (role 'step') of bisection ID. */
void bisect_step_verdicts_each(struct db *db, int64_t id, void (*fn)(const char *commit, const char *verdict,
								       void *data), void *data);

/* The seq of the step row of COMMIT: 1 with *SEQ, 0 none, -1. */
int bisect_step_seq(struct db *db, int64_t id, const char *commit, int64_t *seq);

/* The highest seq of bisection ID's steps into *SEQ (left as it is without any). */
void bisect_steps_max_seq(struct db *db, int64_t id, int64_t *seq);

/* ---- change points (nightly/history.c) ---- */

/* A change point of a nightly series that alerts: at point IDX, the job JOB_ID. */
struct changepoint_row {
	int64_t job_id, idx;
	double mean_before, mean_after, change_pct, p;
};

/* A stored change point of WORKLOAD.METRIC (strings NULL where the column is; numbers as db_col_num()). */
struct changepoint_info {
	int64_t job_id;
	const char *tree, *machines;
	double mean_before, mean_after, change_pct, p, created;
};

/* Call FN with the change points of WORKLOAD.METRIC of every series, by created and id. 0, or -1 (FN not called). */
int changepoints_each(struct db *db, const char *workload, const char *metric,
		      void (*fn)(const struct changepoint_info *c, void *data), void *data);

/*
 * The change points of the series (TREE, MACHINES, WORKLOAD, METRIC) are
 * V[0..N-1] from now on (created NOW), in one transaction. 0, or -1.
 */
int changepoints_replace(struct db *db, const char *tree, const char *machines, const char *workload,
			 const char *metric, const struct changepoint_row *v, size_t n, double now);

#endif
