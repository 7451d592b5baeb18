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

/*
 * The change points of the series (TREE, MACHINES, WORKLOAD, METRIC) are
 * V[0..N-1] from now on (created NOW), in one transaction. 0, or -1.
 */
int changepoints_replace(struct db *db, const char *tree, const char *machines, const char *workload,
			 const char *metric, const struct changepoint_row *v, size_t n, double now);

#endif
