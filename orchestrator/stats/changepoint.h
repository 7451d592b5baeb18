/* changepoint.h: change-point detection in nightly series (E-divisive means + t-test, as Apache Otava). */
#ifndef KLAB_CHANGEPOINT_H
#define KLAB_CHANGEPOINT_H

#include <stddef.h>

/*
 * The method (docs/statistics.md, after apache/otava analysis.py):
 *  1. Split: over sliding windows (window w = 30 while the series is short,
 *     growing with it up to 50; step w/2), E-divisive means finds the split
 *     tau that maximises Q-hat; a candidate is kept when a two-sample
 *     t-test (Welch's, where Otava pools) between the neighbouring segments
 *     gives p < p_weak (0.01), and each side has >= min_seg points. Each
 *     window is split recursively until no candidate passes.
 *  2. Merge: repeatedly drop the weakest change point (largest p, or below
 *     the magnitude floor), re-testing its neighbours against the merged
 *     segments, until every point has p < p_max (0.001) and
 *     |mean_after/mean_before - 1| >= max(T, 2 MDE) where MDE is that of
 *     the two neighbouring segments.
 *  3. A change point is an alert only with >= min_after (3) points after it.
 * Deterministic: no permutations, no randomness.
 */

struct cp_opts {
	size_t window_min;	/* 30 */
	size_t window_max;	/* 50 */
	double p_weak;		/* 0.01 */
	double p_max;		/* 0.001 */
	double threshold_pct;	/* T, % (1) */
	size_t min_seg;		/* 3 */
	size_t min_after;	/* 3 */
};
#define CP_OPTS_INIT { 30, 50, 0.01, 0.001, 1.0, 3, 3 }

struct cp_point {
	size_t idx;		/* first index of the new segment */
	double mean_before, mean_after;	/* of the neighbouring segments */
	double change_pct;	/* 100 (mean_after / mean_before - 1) */
	double p;		/* t-test between the neighbouring segments */
	double mde_pct;		/* 2-segment MDE at the observed spread */
	int alert;		/* >= min_after points after it */
};

struct cp_result {
	struct cp_point *pts;
	size_t n;
};

/* Find change points of x[0..n). 0, or -1 on bad options. res->pts is malloc'd (free with cp_result_free). */
int cp_detect(const double *x, size_t n, const struct cp_opts *opts, struct cp_result *res);
void cp_result_free(struct cp_result *res);

/*
 * E-divisive Q-hat of splitting x[0..n) at tau (1 <= tau < n), alpha = 1:
 * tau (n - tau) / n * (2/(tau (n-tau)) sum|x_i - x_j| across
 * - C(tau,2)^-1 sum within left - C(n-tau,2)^-1 sum within right).
 * Exposed for tests.
 */
double cp_qhat(const double *x, size_t n, size_t tau);

/* Welch two-sample t-test p (two-sided) of x[a..b) against x[b..c); 1 when a side has < 2 points. */
double cp_ttest(const double *x, size_t a, size_t b, size_t c);

#endif
