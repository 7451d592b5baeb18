/*
 * noise.h: the calibrated noise model over the database (docs/statistics.md,
 * "A calibrated instrument"): learning a calibration from finished jobs,
 * finding the one that applies to a job's comparison, and telling whether a
 * stored one is stale. The table is store/calib.c's; the math is stats.h's
 * (stats_pool_*, stats_cal_boot_var, stats_compare_cal).
 */
#ifndef KLAB_COMPARE_NOISE_H
#define KLAB_COMPARE_NOISE_H

#include <stddef.h>
#include <stdint.h>

#include "stats/stats.h"
#include "store/calib.h"
#include "store/db.h"
#include "store/jobs.h"

/*
 * Learning. Each job's measured runs (its own warm-up left out) give, per
 * instrument key of its boots, workload and metric (every metric with
 * positive values, percentages left out):
 *   - boot variance: the variance of ln(boot mean) within each side of a
 *     job (one kernel, one tuning profile), pooled over sides and jobs (sum
 *     of squares over sum of df); boots of an A/A job (one kernel and one
 *     profile on both sides) are counted as A/A;
 *   - run variance: the variance of ln(run) within a boot, pooled over boots.
 * A calibration already stored adds the jobs it does not list yet (sums of
 * squares and df add up; a job it lists is not counted twice); RESET starts
 * it again from these jobs. Only jobs that ended done are read.
 */
struct noise_learnt {
	struct calib_row row;	/* as stored */
	char *added;		/* the jobs this pass added, "12,14" ("": none, the row had them all) */
	int is_new;		/* 1: no row of this key before */
};
int noise_learn(struct db *db, const int64_t *jobs, size_t n_jobs, int reset, struct noise_learnt **out, size_t *n);
void noise_learnt_free(struct noise_learnt *v, size_t n);

/*
 * A job's instrument: the key of its boots when they all have one key
 * (instrument NULL and why set otherwise: no boots, or boots on several
 * instruments), and its measured runs per boot.
 */
struct noise_job {
	char *instrument;
	char *why;
	size_t boots;		/* the job's boots (0: none yet) */
	int runs_per_boot;
	const struct job_spec *spec;
};
/* 0 (nj->instrument may be NULL: nothing to look up), -1 on a database error. */
int noise_job_open(struct db *db, int64_t job_id, const struct job_spec *spec, struct noise_job *nj);
void noise_job_release(struct noise_job *nj);

/*
 * The calibration of WORKLOAD/METRIC for job NJ: 1 with *CAL (the boot
 * variance at the job's runs per boot, stats_cal_boot_var(), and its df)
 * and *ROW (release with calib_row_release()), 0 when there is none, -1.
 */
int noise_job_find(struct db *db, const struct noise_job *nj, const char *workload, const char *metric,
		   struct stats_cal *cal, struct calib_row *row);

/*
 * When the calibration ROW lists the job being compared (it learnt from
 * it), the job's own boots are in it already: take them out of *CAL before
 * the comparison pools them again (their within-side sum of squares of
 * ln values and its df). 1 when it did, 0 when ROW does not list JOB, -1
 * when nothing is left of the calibration without the job (then compare
 * without one).
 */
int noise_cal_without_job(struct stats_cal *cal, const struct calib_row *row, int64_t job, const double *a,
			  size_t na, const double *b, size_t nb);

/*
 * Whether calibration R is stale: the newest boot of its machine that
 * recorded a sysinfo has another instrument key (the machine or its lab
 * changed since). 1 with *WHY (malloc'd: "the newest boot of dut (...) is
 * on ...; the calibration is of ..."), 0 (not stale, or no newer boot
 * known), -1.
 */
int noise_stale(struct db *db, const struct calib_row *r, char **why);

#endif
