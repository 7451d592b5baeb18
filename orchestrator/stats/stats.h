/* stats.h: the statistics of klab: t and normal distributions, Welch on logs, Mann-Whitney, verdicts. */
#ifndef KLAB_STATS_H
#define KLAB_STATS_H

#include <stddef.h>

/*
 * Pure math: no database, no allocation visible to the caller. Formulas and
 * references are in docs/statistics.md. Functions that cannot compute a
 * value return NaN.
 */

/* Arithmetic mean; sample variance (n-1); NaN when n is too small. */
double stats_mean(const double *x, size_t n);
double stats_var(const double *x, size_t n);
/* Median (x is not changed). */
double stats_median(const double *x, size_t n);

/* ln Gamma(x), x > 0. */
double stats_lgamma(double x);
/* Regularised incomplete beta I_x(a, b), by Lentz's continued fraction. */
double stats_betainc(double a, double b, double x);
/* Student t: CDF and quantile (bisection on the CDF) with df > 0 (may be fractional). */
double stats_t_cdf(double t, double df);
double stats_t_ppf(double p, double df);
/* Standard normal CDF and quantile (Acklam's approximation + one Halley step). */
double stats_norm_cdf(double z);
double stats_norm_ppf(double p);

/* Welch's two-sample t-test of raw values (b - a). */
struct stats_welch {
	double d;		/* mean(b) - mean(a) */
	double se;		/* sqrt(va/na + vb/nb) */
	double df;		/* Welch-Satterthwaite */
	double t;		/* d / se */
	double p;		/* two-sided */
};
/* 0, or -1 when na < 2 or nb < 2. se == 0 gives t = 0, p = 1 when d == 0, else t = +-inf, p = 0. */
int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct stats_welch *w);

/* Mann-Whitney U of sample a against b with mid-ranks. */
struct stats_mwu {
	double u;		/* U of a: R_a - na(na+1)/2 (scipy's U1) */
	double p;		/* two-sided */
	int exact;		/* 1: exact permutation distribution of the mid-rank sum */
	int ties;		/* 1: there were ties */
};
/*
 * Exact when na + nb <= STATS_MWU_EXACT_MAX (a dynamic program over the
 * actual mid-ranks, so it is exact with ties too: the conditional
 * permutation test), otherwise the normal approximation with tie correction
 * and continuity correction (scipy's method='asymptotic'). 0 or -1 (n = 0).
 */
#define STATS_MWU_EXACT_MAX 40
int stats_mwu(const double *a, size_t na, const double *b, size_t nb, struct stats_mwu *m);
/* The two methods explicitly (for tests): exact DP and normal approximation. */
int stats_mwu_exact(const double *a, size_t na, const double *b, size_t nb, struct stats_mwu *m);
int stats_mwu_normal(const double *a, size_t na, const double *b, size_t nb, struct stats_mwu *m);

/*
 * Hodges-Lehmann shift: median of all b_j - a_i (NaN with a NaN value).
 * Above STATS_HL_PAIRS_MAX pairs it is found by bisection on the value and
 * a short list of candidate pairs instead of materialising every difference.
 */
#define STATS_HL_PAIRS_MAX 1000000
double stats_hodges_lehmann(const double *a, size_t na, const double *b, size_t nb);

/* Holm step-down adjusted p-values: adj[i] for p[i] (monotone, capped at 1). */
void stats_holm(const double *p, size_t n, double *adj);

enum stats_verdict {
	VERDICT_INCONCLUSIVE = 0,
	VERDICT_CHANGED,
	VERDICT_EQUIVALENT,
	VERDICT_DESCRIPTIVE,
};
const char *stats_verdict_name(enum stats_verdict v);

/*
 * One A/B comparison of per-boot values a (baseline) and b (test), higher or
 * lower being better does not matter here: the sign of change_pct is that
 * of b relative to a.
 *
 * Values > 0: on logs, d = mean(ln b) - mean(ln a), Welch se and df,
 * change_pct = 100(e^d - 1), 95% CI 100(e^(d +- t_.975 se) - 1), 90% CI
 * likewise. Verdict with threshold T (%): CHANGED when the 95% CI excludes
 * 0 and |change_pct| >= T; EQUIVALENT when the 90% CI lies inside +-T;
 * else INCONCLUSIVE with extra_boots = the boots per side to add so that
 * the test would likely (80% power at the observed spread) settle it
 * (-1: more than STATS_MAX_BOOTS per side would be needed).
 * mde_pct: the smallest change detectable with 80% power at alpha 0.05
 * given the observed se: 100(e^((t_.975 + t_.80) se) - 1).
 *
 * Any value <= 0, or a side with < 2 values: no test; change_pct is taken
 * from the arithmetic means, the rest NaN, verdict INCONCLUSIVE
 * (extra_boots: enough for 3 per side when a side has < 2).
 */
#define STATS_MAX_BOOTS 100
struct stats_cmp {
	size_t n_a, n_b;
	double mean_a, mean_b;	/* arithmetic means */
	double cov_a, cov_b;	/* coefficient of variation, % (sd/mean) */
	struct stats_welch w;	/* on logs */
	double change_pct;
	double ci_lo, ci_hi;	/* 95% */
	double ci90_lo, ci90_hi;
	double p_mwu;
	double u;
	double hl_ratio;	/* exp(Hodges-Lehmann shift of the logs) */
	double mde_pct;
	double threshold_pct;
	double alpha;		/* the level the verdict was decided at (0.05, or a look's alpha/K) */
	enum stats_verdict verdict;
	int extra_boots;
	/* The calibration (stats_compare_cal()): STATS_CAL_NONE, STATS_CAL_USED or STATS_CAL_REJECTED. */
	int cal;
	double cal_sd, cal_df;	/* the calibrated sd of a boot's log value (floored) and its df */
	double cal_z;		/* the largest |boot - its side's mean| in calibrated sd (NaN: no side of 2) */
	double cal_f, cal_f_p;	/* own pooled variance / calibrated, and P(F > cal_f) (NaN: no own df) */
};
void stats_compare(const double *a, size_t na, const double *b, size_t nb,
		   double threshold_pct, struct stats_cmp *c);
/*
 * The same with the verdict decided at level ALPHA (<= 0 or NaN: 0.05):
 * CHANGED when the 100(1 - ALPHA)% CI excludes 0 and |change_pct| >= T,
 * EQUIVALENT when the 100(1 - 2 ALPHA)% CI lies inside +-T (two one-sided
 * tests at ALPHA). ci_lo/ci_hi and ci90_* stay the 95% and 90% intervals
 * (what is printed); stats_compare() is this with ALPHA = 0.05.
 */
void stats_compare_alpha(const double *a, size_t na, const double *b, size_t nb,
			 double threshold_pct, double alpha, struct stats_cmp *c);

/*
 * A calibrated instrument (docs/statistics.md, "A calibrated instrument"):
 * VAR is the variance of a boot's log value that A/A data measured, with
 * DF degrees of freedom. stats_compare_cal() tests d with the pooled
 * variance s^2 = (DF VAR + SS_a + SS_b) / (DF + n_a - 1 + n_b - 1) and
 * df = DF + n_a + n_b - 2, so one boot a side is a test. Before it pools,
 * it checks that the job agrees with the calibration: every boot of a side
 * of 2 or more within STATS_CAL_Z_MAX calibrated sd of its side's mean, and
 * the own pooled variance not above VAR by an F test at STATS_CAL_F_ALPHA;
 * when not, c->cal = STATS_CAL_REJECTED and the comparison is Welch's on
 * the job's own boots (INCONCLUSIVE with a side of 1). A VAR below
 * STATS_CAL_SD_FLOOR^2 counts as that: a calibration of zero spread means
 * "below what the values resolve", not "no noise". CAL NULL (or DF <= 0) is
 * stats_compare_alpha().
 */
#define STATS_CAL_Z_MAX 5.0
#define STATS_CAL_F_ALPHA 0.001
#define STATS_CAL_SD_FLOOR 1e-6
enum { STATS_CAL_NONE = 0, STATS_CAL_USED, STATS_CAL_REJECTED };
struct stats_cal {
	double var;
	double df;
};
void stats_compare_cal(const double *a, size_t na, const double *b, size_t nb, double threshold_pct,
		       double alpha, const struct stats_cal *cal, struct stats_cmp *c);

/* P(F > f) for F ~ F(d1, d2) (the F test of a variance against another). */
double stats_f_sf(double f, double d1, double d2);

/*
 * A pooled within-group variance: stats_pool_add() adds a group's sum of
 * squared deviations from its mean and its n - 1 degrees of freedom (a
 * group of fewer than 2 adds nothing); stats_pool_var() is SS / df (NaN
 * without df). How a calibration learns from boots and runs.
 */
struct stats_pool {
	double ss, df;
	size_t n, groups;
};
void stats_pool_add(struct stats_pool *p, const double *x, size_t n);
double stats_pool_var(const struct stats_pool *p);

/*
 * The variance of a boot value that is the mean of M runs, from a
 * calibration that saw M_BOOT runs per boot (V_BOOT, the variance of its
 * boot values) and a run-to-run variance V_RUN within a boot:
 * V_BOOT + V_RUN (1/M - 1/M_BOOT), at least V_RUN / M; V_BOOT when V_RUN is
 * NaN or M = M_BOOT.
 */
double stats_cal_boot_var(double v_boot, double m_boot, double v_run, double m);

/*
 * Group-sequential testing (docs/statistics.md, "Looking more than once"):
 * a job with boots = MIN..MAX looks at its data after every STEP boots per
 * side from MIN on, and at MAX. stats_seq_looks() is the number K of looks
 * of such a plan (1 when MIN >= MAX; 0 when the plan is not valid; MIN 1
 * is a look at one boot a side, which decides only on a calibrated
 * instrument),
 * stats_seq_look() the 1-based look at which N boots per side are reached
 * (0: no look at N), stats_seq_alpha() the level of each look: 0.05 / K
 * (Bonferroni: the chance of a false CHANGED at any of the K looks is at most
 * the sum of the K per-look levels, whatever the looks' correlation).
 */
#define STATS_ALPHA 0.05
int stats_seq_looks(int min, int max, int step);
int stats_seq_look(int min, int max, int step, int n);
double stats_seq_alpha(int looks);

/*
 * Percentages (per-CPU %soft, cpu_busy_pct): descriptive point difference.
 * change_pct = mean(b) - mean(a) in points; CIs, p NaN; verdict DESCRIPTIVE.
 */
void stats_compare_points(const double *a, size_t na, const double *b, size_t nb,
			  struct stats_cmp *c);

/*
 * Claim check of an expected % change (a value, lo = hi, or a range
 * [lo, hi] of one sign) against the comparison's 95% CI, saying only what the
 * data can tell (docs/statistics.md, "Claim check"):
 *   "opposite"   the CI lies entirely on the other side of 0 from the claim;
 *   "larger"     the CI lies entirely beyond the claim (away from 0);
 *   "untestable" the CI holds 0 and is not narrower than the claimed change;
 *   "smaller"    the CI lies below the claim (between 0 and it, or holds 0
 *                while narrower than the claim);
 *   "consistent" the CI holds the claim (a range: overlaps it) and excludes 0
 *                or is narrower than the claimed change.
 * NULL when the CI or the claim is unknown.
 */
const char *stats_claim_check(double lo_pct, double hi_pct, double ci_lo, double ci_hi);

/* The extra boots per side estimate on its own (see stats_compare). */
int stats_extra_boots(double d, double s_pooled, size_t n_now, double threshold_pct);

#endif
