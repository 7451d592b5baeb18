/* report.h: the static report pages (index, job, history), and the plain-text mail report. */
#ifndef KLAB_REPORT_H
#define KLAB_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "store/db.h"

struct buf;

/* Knobs of one report run; a NULL pointer means all defaults. */
struct report_opts {
	int no_charts;		/* 1: no gnuplot at all, a note where each chart would be */
	int max_jobs;		/* jobs listed on the index and rendered by report_write_all (0: 200) */
	/*
	 * NULL, or where a run that fails keeps its first failure (also
	 * logged): what could not be written, or which page could not be
	 * made, for a caller that keeps the reason (a job's report step).
	 */
	struct buf *why;
};

/* What one report run did, for logs and the benchmark. */
struct report_stats {
	int pages;		/* HTML files written */
	int charts;		/* charts queued */
	int charts_drawn;	/* chart files gnuplot made */
	int gnuplot_runs;	/* gnuplot processes started (0 or 1) */
};

/*
 * Render every page under OUTDIR (created if needed): index.html, one
 * job-N.html per job (the `max_jobs` most recent that are not queued),
 * one history-WORKLOAD--METRIC.html per measured workload metric, the
 * charts under OUTDIR/charts/ and style.css. All charts of the run are
 * drawn by one gnuplot process. Pages are written atomically, so a reader
 * never sees half a page. Returns 0 or -1 (logged); `st` may be NULL.
 */
int report_write_all(struct db *db, const char *outdir, const struct report_opts *opts,
		     struct report_stats *st);

/*
 * Render the pages of the given jobs, then the index and the history
 * pages (which link to them). report_job() is the one-job form the job
 * runner calls when a job finishes, with WHY (may be NULL) as its
 * report_opts.why. 0 or -1 (logged).
 */
int report_jobs(struct db *db, const char *outdir, const int64_t *ids, size_t n,
		const struct report_opts *opts, struct report_stats *st);
int report_job(struct db *db, const char *outdir, int64_t job_id, struct buf *why);

/* Options of the mail report. */
struct report_mail_opts {
	const char *tested_by;	/* "Name <addr>" for the Tested-by: line (NULL: $KLAB_TESTED_BY or a default) */
	const char *png_dir;	/* non-NULL: also draw PNG charts there, listed as attachments */
};

/*
 * Write the plain-text report of job JOB_ID to OUT, in the manner of the
 * LKP robot's mails: what was tested, the before/after table with % change
 * and CI, verdicts and the check of the patch's claims, the top profile
 * differences, and a Tested-by: line only when the measurements support
 * the claim. 0 or -1 (logged: e.g. no such job).
 */
int report_mail(struct db *db, int64_t job_id, FILE *out, const struct report_mail_opts *opts);

/*
 * What became of a nightly's change of WORKLOAD.METRIC, in words, appended
 * to OUT ("confirmed by job 7 (CHANGED -28.35%); bisection 2 done: first
 * bad commit 0123456789ab", "not confirmed by job 7 (EQUIVALENT +0.01%):
 * kept, not reported", "not reported yet: ...", after "change point at
 * job N, " when a change point queued it): 1, or 0 when JOB has no
 * confirmation of it.
 */
int confirm_text(struct db *db, int64_t job, const char *workload, const char *metric, struct buf *out);

#endif
