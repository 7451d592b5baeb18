/* bisect.h: the bisection engine's logic: which commit to measure next, and whether a measured commit is good or bad. */
#ifndef KLAB_BISECT_H
#define KLAB_BISECT_H

#include <stddef.h>

/*
 * The commits of a bisection are those of `git rev-list --reverse good..bad`
 * (oldest first, the bad end last), indexed 0..n-1; the good end is before
 * index 0. A commit is untested, good, bad or skipped (it did not build or
 * boot, or stayed undecided after the most boots: as `git bisect skip`).
 * Pure logic, no database: docs/bisect.md.
 */
enum bisect_verdict { BISECT_UNTESTED = 0, BISECT_GOOD, BISECT_BAD, BISECT_SKIP };

const char *bisect_verdict_name(enum bisect_verdict v);

/*
 * The next commit to measure: the middle untested commit between the last
 * good one and the first bad one (the bad end counts as bad), or n when
 * none is left. *remaining: the untested commits in that range.
 */
size_t bisect_next(const enum bisect_verdict *v, size_t n, size_t *remaining);

/*
 * When bisect_next() returns n: the index of the first bad commit, with
 * *ambiguous set when skipped commits lie just before it (any of them
 * may be the first bad one, as git bisect says "only skipped commits left").
 */
size_t bisect_first_bad(const enum bisect_verdict *v, size_t n, int *ambiguous);

/*
 * Classify per-boot values X of a commit against the per-boot values of the
 * good and the bad end (Welch's t on logs, two-sided, each at level alpha):
 * BAD when X differs from good and not from bad, GOOD the other way round,
 * BISECT_UNTESTED when undecided (both or neither differ: measure more
 * boots). p_good and p_bad (may be NULL) get the two p values. With fewer
 * than 2 values on a side: BISECT_UNTESTED.
 */
enum bisect_verdict bisect_classify(const double *good, size_t ng, const double *bad, size_t nb,
				    const double *x, size_t nx, double alpha, double *p_good, double *p_bad);

/*
 * bisect_classify() on a calibrated instrument (docs/bisect.md, "One boot a
 * step"): with CAL (the noise of a boot's log value, stats.h), each of the
 * two tests is stats_compare_cal()'s pooled t, so one boot of the commit is a
 * test, and the same rule decides: BAD when it differs from good at ALPHA
 * and not from bad (and is nearer bad), GOOD the other way round, else
 * undecided. When either test finds the boots inconsistent with the
 * calibration (a boot beyond 5 calibrated sd, a spread larger by the F
 * test), or a value is not positive, both are Welch's as without CAL (so
 * one boot is undecided). *CAL_USED (may be NULL): 1 when the calibration
 * decided, 0 when it was not used. CAL NULL: bisect_classify().
 */
struct stats_cal;
enum bisect_verdict bisect_classify_cal(const double *good, size_t ng, const double *bad, size_t nb,
					const double *x, size_t nx, double alpha, const struct stats_cal *cal,
					double *p_good, double *p_bad, int *cal_used);

/*
 * The boots a step measures before it classifies: one on a calibrated
 * instrument, else MIN_BOOTS; then bisect_more_boots(): MIN_BOOTS after the
 * one boot, else one more (K the boots it has).
 */
int bisect_first_boots(int calibrated, int min_boots);
int bisect_more_boots(int k, int min_boots);

/*
 * A whole bisection over a measurement function (the unit test simulates
 * one; the job runner builds, boots and runs): measure(arg, idx) gives one
 * per-boot value of commit idx (-1: the good end, n - 1: the bad end is
 * measured as a commit too), or returns -1 when the commit does not build
 * or boot (a skip). The ends get 2 * min_boots (they must differ at alpha,
 * else first_bad = n: no regression confirmed, no bisection); each commit
 * gets min_boots, then one more while
 * undecided, up to max_boots, then it is skipped. With CAL (a calibrated
 * instrument) a commit gets one boot first, and min_boots, then one more at
 * a time, only while undecided.
 */
struct bisect_sim {
	size_t n;
	int (*measure)(void *arg, long idx, double *value);
	void *arg;
	double alpha;
	int min_boots, max_boots;
	const struct stats_cal *cal;	/* NULL: uncalibrated */
	/* results */
	enum bisect_verdict *v;	/* n verdicts (malloc'd by bisect_simulate) */
	size_t first_bad;	/* n when the ends do not differ ("no regression confirmed") */
	int ambiguous;
	int steps;		/* commits measured between the ends */
	int boots;		/* boots in all, the ends included */
};
/* 0, or -1 when the ends cannot be measured. */
int bisect_simulate(struct bisect_sim *s);
void bisect_sim_release(struct bisect_sim *s);

/* What the mail text of a finished bisection says (bisect_mail). */
struct bisect_answer {
	const char *tree, *good, *bad;		/* the ends as given */
	const char *workload, *metric, *unit;
	const char *commit, *subject;		/* the first bad commit */
	const char *good_kernel, *bad_kernel;	/* releases of the ends' kernels */
	const char *dut, *peer;
	const char *clock;			/* what measured it: "real time" | "instruction count (icount)" */
	double change_pct, ci_lo, ci_hi;	/* bad end against good end, %, 95% CI */
	double alpha;
	int steps, boots, ambiguous;
	long long id;
};

/*
 * The mail text of a bisection in the form kernel developers know from the
 * kernel test robot: 'klab noticed a -X% regression of WORKLOAD.METRIC on
 * commit SHA ("subject")', the change with its CI and what measured it, the
 * good and bad kernels, the machines, the exact commands to reproduce it,
 * and a Reported-by: trailer. Appended to OUT. A change in a metric where
 * higher is better, negative, is the regression; the caller says which.
 */
struct buf;
void bisect_mail(struct buf *out, const struct bisect_answer *a, int regression);

#endif
