/*
 * patchwork.h: what the patchwork watcher saw and did (tables pw_cursors,
 * pw_series, pw_patches, pw_checks; migration 0020, docs/patchwork.md):
 * rows in, rows out. watch/ decides; nothing else writes SQL on these
 * tables. A statement here may read the jobs row a series' job_id names
 * (its state, error and times), joined to its own rows.
 */
#ifndef KLAB_STORE_PATCHWORK_H
#define KLAB_STORE_PATCHWORK_H

#include <stdint.h>

#include "store/db.h"

/* The cursor of watcher WATCH (patchwork's date text) into *SINCE (caller frees): 1, 0 none, -1. */
int pw_cursor_get(struct db *db, const char *watch, char **since);
/* Move the cursor of WATCH to SINCE. 0 or -1. */
int pw_cursor_set(struct db *db, const char *watch, const char *since);

/*
 * A pw_series row with, when it has a job, that job's state, error and
 * times (NULL/0 without). Strings malloc'd on a read (pw_series_row_release()).
 */
struct pw_series_row {
	int64_t id;
	char *watch;
	int64_t pw_id, version;
	char *name, *submitter;
	double completed, seen;
	char *state, *reason;
	int64_t series_id, job_id;
	char *outcome, *description;
	double final;		/* 0: not yet */
	char *job_state, *job_error;
	double job_created, job_started, job_finished;
};
void pw_series_row_release(struct pw_series_row *r);

/*
 * Record series PW_ID of WATCH, completed at COMPLETED (unix time), as
 * 'seen', unless it is there already: *ADDED is 1 for a new row, 0 for one
 * seen before. 0 or -1.
 */
int pw_series_add(struct db *db, const char *watch, int64_t pw_id, double completed, int *added);
/* Set the version, name and submitter (from the series document) of row ID. 0 or -1. */
int pw_series_set_info(struct db *db, int64_t id, int64_t version, const char *name, const char *submitter);
/* Set the state of row ID, with its reason (may be NULL). 0 or -1. */
int pw_series_set_state(struct db *db, int64_t id, const char *state, const char *reason);
/* Row ID is queued: its klab series and job. 0 or -1. */
int pw_series_set_queued(struct db *db, int64_t id, int64_t series_id, int64_t job_id);
/* Row ID's job ended: the final check's state and description (state 'done'). 0 or -1. */
int pw_series_set_outcome(struct db *db, int64_t id, const char *outcome, const char *description);
/* The final check of row ID is on every patch since FINAL (unix time). 0 or -1. */
int pw_series_set_final(struct db *db, int64_t id, double final);

/*
 * Call FN with the rows of WATCH (NULL: every watcher) in arrival order
 * (completed, id); STATE non-NULL: only rows in that state. Strings are
 * borrowed for the call. FN returning non-zero stops the walk with that
 * value. 0, FN's value, or -1.
 */
int pw_series_each(struct db *db, const char *watch, const char *state,
		   int (*fn)(const struct pw_series_row *r, void *data), void *data);

/*
 * The rows of WATCH that an equal-named series of SUBMITTER at a version
 * below VERSION left queued or running (the ones a new version
 * supersedes): FN as in pw_series_each(). 0 or -1.
 */
int pw_series_older(struct db *db, const char *watch, const char *name, const char *submitter, int64_t version,
		    int (*fn)(const struct pw_series_row *r, void *data), void *data);

/*
 * The queue of WATCH as seen by job JOB: *PLACE is the job's place among
 * the queued jobs of the lab (1: next), *QUEUED how many are queued, *MEAN_S
 * the mean seconds from start to end of the watcher's finished jobs (0: none
 * yet), *OLDEST the completion time of its oldest series still queued or
 * running (0: none). 0 or -1.
 */
int pw_queue(struct db *db, const char *watch, int64_t job, int *place, int *queued, double *mean_s,
	     double *oldest);

/* Record patch PATCH_ID (position SEQ, its NAME) of series PW_SERIES of WATCH (again: no change). 0 or -1. */
int pw_patch_add(struct db *db, const char *watch, int64_t pw_series, int64_t patch_id, int seq, const char *name);
/* Call FN with the patch ids of series PW_SERIES of WATCH in order. 0, FN's non-zero value, or -1. */
int pw_patches_each(struct db *db, const char *watch, int64_t pw_series,
		    int (*fn)(int64_t patch_id, const char *name, void *data), void *data);

/* A pw_checks row (strings borrowed in the walk). */
struct pw_check_row {
	int64_t id;
	const char *watch;
	int64_t pw_series, patch_id;
	const char *context, *state, *description, *target_url;
	double intended;
	int attempts;
	double posted;
	int found;
	const char *error;
};

/*
 * The intent of a check: (PATCH_ID, CONTEXT, STATE) of series PW_SERIES is
 * to be posted with DESCRIPTION and TARGET_URL. Written once: an intent
 * that exists keeps its first description (so a post retried after a
 * crash posts what was meant the first time). 0 or -1.
 */
int pw_check_intend(struct db *db, const char *watch, int64_t pw_series, int64_t patch_id, const char *context,
		    const char *state, const char *description, const char *target_url);
/* Call FN with the checks of WATCH not yet posted, oldest intent first. 0, FN's non-zero value, or -1. */
int pw_checks_unposted(struct db *db, const char *watch, int (*fn)(const struct pw_check_row *c, void *data),
		       void *data);
/* Call FN with every check of series PW_SERIES of WATCH (NULL: every watcher, series 0: all) by id. */
int pw_checks_each(struct db *db, const char *watch, int64_t pw_series,
		   int (*fn)(const struct pw_check_row *c, void *data), void *data);
/* A post of check ID is about to be made (attempts + 1). 0 or -1. */
int pw_check_attempt(struct db *db, int64_t id);
/* Check ID is on the server: posted by us now (FOUND 0) or found there after an interrupted post (1). */
int pw_check_posted(struct db *db, int64_t id, int found);
/* The last post of check ID failed with ERR. 0 or -1. */
int pw_check_failed(struct db *db, int64_t id, const char *err);
/*
 * Of series PW_SERIES of WATCH, the checks in STATE other than 'pending'
 * (the final ones): *N of them, *UNPOSTED not yet posted, *LAST the latest
 * posting time. 0 or -1.
 */
int pw_checks_final(struct db *db, const char *watch, int64_t pw_series, int *n, int *unposted, double *last);

#endif
