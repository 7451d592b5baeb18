/* bisect_db.h: bisections in the database (tables bisections, bisect_steps): start, cancel. */
#ifndef KLAB_BISECT_DB_H
#define KLAB_BISECT_DB_H

#include <stdint.h>

#include "conf/conf.h"
#include "store/db.h"

struct bisect_start_opts {
	const char *tree, *good, *bad, *workload, *metric;	/* metric NULL: the workload's headline */
	const char *job;	/* the [job] whose machines, runs and tuning measure each commit (NULL: the one job of
				   the tree that runs the workload) */
	double alpha;
	int min_boots, max_boots;
	int end_boots;		/* boots a side of the ends' job (0: 2 * min_boots) */
};

/*
 * Check everything before storing anything, each with its own error: the
 * tree is in the config and a local git work tree (not a tarball), the
 * workload exists, the metric is one the workload produced in its stored
 * runs (when it has any), good and bad are commits there, not the same one,
 * and bad descends from good. Then a 'queued' bisection with the commits of
 * rev-list --reverse --first-parent good..bad. The new id, or -1 with the
 * reason in ERR (error_to(): logged when ERR is NULL).
 */
struct buf;
int64_t bisect_start(struct db *db, const struct klab_config *cfg, const struct bisect_start_opts *o,
		     struct buf *err);

/*
 * Run (or resume) bisection ID until it ends (bisect_run.c, docs/bisect.md):
 * the ends as one ABBA job, then each commit bisect_next() proposes as jobs
 * of kind 'bisect', classified by bisect_classify() with more boots while
 * undecided. Every job is stored with the bisection and the step's seq
 * before it runs, so a killed runner resumes the job it was in. O's stop
 * flag and wait_lease are handed to the jobs. Locked like a job
 * (DBPATH.bisect-ID.lock). 0: done (found, ambiguous or no regression), 1:
 * failed or cancelled (bisections.error), 2: stopped, resumable;
 * JOB_RUN_TAKEN: another process runs it and O's taken_quiet is set; -1 an
 * error before it started.
 */
struct job_run_opts;
int bisect_run(struct klab_config *cfg, struct db *db, const char *db_path, int64_t id,
	       const struct job_run_opts *o);

/* 1 when a process runs bisection ID now (holds its lock), 0 when not, -1 on an error. */
int bisect_is_live(struct db *db, int64_t id);

/*
 * bisect_report.c: the mail text of bisection ID (bisect_mail()) appended
 * to OUT: 0; 1 when it names no commit (OUT says its state instead); -1 on
 * an error. bisect_page() writes OUTDIR/bisect-ID.html (the answer, the
 * steps as a table, a chart of the metric per measured commit, the mail
 * text) and OUTDIR/bisect-ID.txt (the mail text): 0 or -1.
 */
struct buf;
int bisect_mail_text(struct db *db, int64_t id, struct buf *out);
int bisect_page(struct db *db, int64_t id, const char *outdir);

/* A queued or running bisection becomes cancelled: 0 or -1 (logged). */
int bisect_cancel(struct db *db, int64_t id);

#endif
