/* orch-calib-sim.c: the calibrated noise model's math (stats_compare_cal) against scipy and by simulation (fixed seeds). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rng.h"
#include "stats/stats.h"
#include "tap.h"
#include "util.h"

struct rng {
	uint64_t s[4];
};

static double unif(struct rng *r)
{
	return ((double)(xoshiro_next(r->s) >> 11) + 0.5) * 0x1.0p-53;
}

/* Standard normal (Box-Muller, the cosine half only: simple, and the trials are cheap). */
static double norm(struct rng *r)
{
	double u = unif(r), v = unif(r);

	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* Per-boot values of a side: BASE (1 + SHIFT) e^(SD N(0,1)). */
static void side(struct rng *r, double *x, int n, double shift, double sd)
{
	for (int i = 0; i < n; i++)
		x[i] = 981632.0 * (1 + shift) * exp(sd * norm(r));
}

/* A calibration learnt from an A/A job of N boots of one kernel at spread SD: its variance and df. */
static struct stats_cal learn(struct rng *r, int n, double sd)
{
	double x[64];
	struct stats_pool p = { 0, 0, 0, 0 };
	struct stats_cal c;

	side(r, x, n, 0, sd);
	for (int i = 0; i < n; i++)
		x[i] = log(x[i]);
	stats_pool_add(&p, x, (size_t)n);
	c.var = stats_pool_var(&p);
	c.df = p.df;
	return c;
}

static void test_math(void)
{
	/* scipy 1.10.1: stats.f.sf(2.5, 3, 10), f.sf(40, 4, 23), f.sf(0.7, 1, 5) */
	is_double(stats_f_sf(2.5, 3, 10), 0.11903956265827814, 1e-12, "F.sf(2.5; 3, 10)");
	is_double(stats_f_sf(40, 4, 23), 4.844259229162993e-10, 1e-18, "F.sf(40; 4, 23)");
	is_double(stats_f_sf(0.7, 1, 5), 0.44092462406977073, 1e-12, "F.sf(0.7; 1, 5)");
	ok(stats_f_sf(0, 2, 2) == 1 && isnan(stats_f_sf(1, 0, 2)), "F.sf at 0 is 1; no df is NaN");

	{
		double g1[] = { 1, 2, 3 }, g2[] = { 10, 14 }, g3[] = { 7 };
		struct stats_pool p = { 0, 0, 0, 0 };

		stats_pool_add(&p, g1, 3);
		stats_pool_add(&p, g2, 2);
		stats_pool_add(&p, g3, 1);
		is_double(p.ss, 2 + 8, 1e-12, "pooled SS: 2 + 8 (a group of one adds nothing)");
		is_double(p.df, 3, 0, "pooled df: 2 + 1");
		is_double(stats_pool_var(&p), 10.0 / 3, 1e-12, "pooled variance SS/df");
		is_int(p.groups, 2, "two groups counted");
	}
	is_double(stats_cal_boot_var(4e-10, 2, 2e-10, 2), 4e-10, 0, "same runs per boot: the boot variance");
	is_double(stats_cal_boot_var(4e-10, 2, 2e-10, 1), 5e-10, 1e-22, "one run per boot adds half a run variance");
	is_double(stats_cal_boot_var(1e-10, 1, 4e-10, 4), 1e-10, 1e-22, "never below v_run / m");

	/*
	 * The pooled test by hand: a = {100, 100.01}, b = {100.5}, calibration
	 * var 1e-8 (sd 100 ppm) with 10 df. s^2 = (10e-8 + SS_a) / 11,
	 * se = s sqrt(1/2 + 1), df = 11.
	 */
	{
		double a[] = { 100, 100.01 }, b[] = { 100.5 };
		struct stats_cal cal = { 1e-8, 10 };
		struct stats_cmp c;
		double la0 = log(100), la1 = log(100.01), lm = (la0 + la1) / 2;
		double ss = (la0 - lm) * (la0 - lm) + (la1 - lm) * (la1 - lm);
		double s2 = (10 * 1e-8 + ss) / 11, se = sqrt(s2 * 1.5), d = log(100.5) - lm;

		stats_compare_cal(a, 2, b, 1, 0.1, 0.05, &cal, &c);
		is_int(c.cal, STATS_CAL_USED, "a job that agrees uses the calibration");
		is_double(c.w.df, 11, 0, "df = calibration df + own df (10 + 1)");
		is_double(c.w.se, se, 1e-15, "se from the pooled variance");
		is_double(c.w.t, d / se, 1e-9, "t = d / se");
		is_double(c.ci_lo, 100 * expm1(d - stats_t_ppf(0.975, 11) * se), 1e-9, "95%% CI from t(11)");
		is_int(c.verdict, VERDICT_CHANGED, "+0.495%% with 1 boot on side B: CHANGED");
		is_double(c.cal_sd, 1e-4, 1e-16, "the calibrated sd is reported");
		ok(c.cal_z < 1, "z of the side A boots (%.3f) is small", c.cal_z);
	}
	{
		double a[] = { 100 }, b[] = { 100.5 };
		struct stats_cmp c;

		stats_compare_cal(a, 1, b, 1, 0.1, 0.05, NULL, &c);
		is_int(c.verdict, VERDICT_INCONCLUSIVE, "without a calibration, 1 boot a side is no test");
		is_int(c.extra_boots, 2, "... it asks for 2 more per side");
		is_int(c.cal, STATS_CAL_NONE, "... and says no calibration");
	}
	{
		/* a boot 10 calibrated sd from its side's mean: flagged, the job's own spread used */
		double a[] = { 100, 100, 100.1 }, b[] = { 100.5, 100.5, 100.5 };
		struct stats_cal cal = { 1e-10, 20 };
		struct stats_cmp c, w;

		stats_compare_cal(a, 3, b, 3, 0.1, 0.05, &cal, &c);
		stats_compare_alpha(a, 3, b, 3, 0.1, 0.05, &w);
		is_int(c.cal, STATS_CAL_REJECTED, "an outlying boot rejects the calibration");
		ok(c.cal_z > STATS_CAL_Z_MAX, "its z %.0f > %.0f", c.cal_z, STATS_CAL_Z_MAX);
		is_double(c.w.df, w.w.df, 0, "the rejected comparison is Welch's (df)");
		is_double(c.ci_lo, w.ci_lo, 0, "... and Welch's CI");
		is_int(c.verdict, w.verdict, "... and Welch's verdict");
	}
	{
		/* the job's spread 3x the calibrated one, no boot beyond 5 sd: the F test (scipy: F 8.56, p 0.00011) */
		double a[] = { 100, 100.03, 99.97, 100.02 }, b[] = { 101, 101.03, 100.97, 100.98 };
		struct stats_cal cal = { 8.1e-9, 20 };	/* sd 90 ppm; the job: 260 ppm */
		struct stats_cmp c;

		stats_compare_cal(a, 4, b, 4, 0.1, 0.05, &cal, &c);
		ok(c.cal_z < STATS_CAL_Z_MAX, "no boot beyond 5 sd... (z %.2f)", c.cal_z);
		is_double(c.cal_f, 8.556837122371777, 1e-6, "F = own pooled variance / calibrated");
		is_double(c.cal_f_p, 0.0001099897036156486, 1e-9, "its p from F(6, 20)");
		ok(c.cal_f_p < STATS_CAL_F_ALPHA, "... but the F test (F %.0f, p %.2g) finds the spread larger",
		   c.cal_f, c.cal_f_p);
		is_int(c.cal, STATS_CAL_REJECTED, "and the calibration is not pooled");
	}
	{
		/* 1 boot a side: nothing to check against, the calibration decides */
		double a[] = { 981632 }, b[] = { 981632 };
		struct stats_cal cal = { 0, 23 };
		struct stats_cmp c;

		stats_compare_cal(a, 1, b, 1, 0.1, 0.05, &cal, &c);
		is_int(c.verdict, VERDICT_EQUIVALENT, "identical single boots on a 0-ppm instrument: EQUIVALENT");
		is_double(c.cal_sd, STATS_CAL_SD_FLOOR, 0, "a zero calibration is floored at 1 ppm");
	}
}

/*
 * The fraction of trials whose final verdict is V: each trial learns a
 * calibration from an A/A job of CAL_N boots (CAL_N 0: none), then runs a
 * job of boots MIN..MAX (looks per ABBA round of 2) with true spread SD and
 * change SHIFT, stopping at CHANGED or EQUIVALENT. T is the threshold (%).
 * *mean_n: boots per side used; *rejected: trials where a look rejected the
 * calibration.
 */
static double sim(uint64_t seed, int trials, int cal_n, double cal_sd, int min, int max, double sd,
		  double shift, double t, enum stats_verdict v, double *mean_n, double *rejected)
{
	int k = stats_seq_looks(min, max, 2), hits = 0, rej = 0;
	double alpha = stats_seq_alpha(k), used = 0, a[64], b[64];
	struct rng r;

	xoshiro_seed(r.s, seed);
	for (int i = 0; i < trials; i++) {
		struct stats_cal cal = { 0, 0 };
		struct stats_cmp c;
		int n, any = 0;

		if (cal_n)
			cal = learn(&r, cal_n, cal_sd);
		side(&r, a, max, 0, sd);
		side(&r, b, max, shift, sd);
		memset(&c, 0, sizeof(c));
		for (n = min; n <= max; n++) {
			if (!stats_seq_look(min, max, 2, n))
				continue;
			stats_compare_cal(a, (size_t)n, b, (size_t)n, t, alpha, cal_n ? &cal : NULL, &c);
			any |= c.cal == STATS_CAL_REJECTED;
			if (c.verdict == VERDICT_CHANGED || c.verdict == VERDICT_EQUIVALENT)
				break;
		}
		used += n > max ? max : n;
		hits += c.verdict == v;
		rej += any;
	}
	if (mean_n)
		*mean_n = used / trials;
	if (rejected)
		*rejected = (double)rej / trials;
	return (double)hits / trials;
}

static void test_simulation(void)
{
	double r, n, rej, naive = 0;
	const double ppm20 = 20e-6, tiny = 1e-6;	/* T so small that only the CI decides */

	is_int(stats_seq_looks(1, 3, 2), 2, "boots 1..3: looks at 1 and 3");
	is_int(stats_seq_look(1, 3, 2, 1), 1, "1 boot a side is look 1");

	/* A/A, the test's size: T ~ 0, so CHANGED is the CI excluding 0 */
	r = sim(11, 2000, 24, ppm20, 1, 1, ppm20, 0, tiny, VERDICT_CHANGED, NULL, &rej);
	diag("A/A, 24 A/A boots of calibration (df 23), 1 boot a side, one look at 0.05, T ~ 0: "
	     "false CHANGED %.2f%% of 2000", 100 * r);
	ok(r >= 0.035 && r <= 0.065, "one look at 0.05 errs at 0.05 (%.4f in 0.035..0.065)", r);
	r = sim(12, 2000, 4, ppm20, 1, 1, ppm20, 0, tiny, VERDICT_CHANGED, NULL, NULL);
	{
		/* what a z test with the estimated variance would do: df 3 makes it liberal */
		struct rng q;

		xoshiro_seed(q.s, 12);
		for (int i = 0; i < 2000; i++) {
			struct stats_cal cal = learn(&q, 4, ppm20);
			double a[1], b[1], z;

			side(&q, a, 1, 0, ppm20);
			side(&q, b, 1, 0, ppm20);
			z = log(b[0] / a[0]) / sqrt(2 * cal.var);
			naive += fabs(z) > 1.959963984540054;
		}
		naive /= 2000;
	}
	diag("A/A, a calibration of only 4 boots (df 3), 1 boot a side: false CHANGED %.2f%% "
	     "(a z test that trusted the estimate: %.2f%%)", 100 * r, 100 * naive);
	ok(r >= 0.035 && r <= 0.065, "the t with the calibration's df holds 0.05 (%.4f)", r);
	ok(naive > 0.08, "a z test on a 3-df estimate would not (%.4f > 0.08)", naive);

	r = sim(13, 2000, 24, ppm20, 1, 3, ppm20, 0, tiny, VERDICT_CHANGED, &n, &rej);
	diag("A/A, boots 1..3 (K = 2, alpha 0.025 a look), T ~ 0: false CHANGED %.2f%% over both looks, "
	     "mean %.2f boots a side, calibration rejected in %.2f%%", 100 * r, n, 100 * rej);
	ok(r <= 0.05, "A/A false CHANGED including the sequential looks %.4f <= 0.05", r);
	ok(rej <= 0.01, "the checks rarely reject a right calibration (%.4f <= 0.01)", rej);

	r = sim(14, 2000, 24, ppm20, 1, 3, ppm20, 0, 0.1, VERDICT_CHANGED, &n, NULL);
	diag("A/A, boots 1..3, icount's T = 0.1%%: false CHANGED %.2f%%", 100 * r);
	ok(r <= 0.05, "A/A false CHANGED at T = 0.1%% %.4f <= 0.05", r);
	r = sim(14, 2000, 24, ppm20, 1, 3, ppm20, 0, 0.1, VERDICT_EQUIVALENT, &n, NULL);
	diag("  ... EQUIVALENT %.1f%% after %.2f boots a side", 100 * r, n);
	ok(r >= 0.99 && n < 1.01, "a 20-ppm A/A is EQUIVALENT at the first look (%.3f, %.2f boots)", r, n);

	/* power: +0.5% path length, 1 boot a side, T = 0.1% */
	r = sim(15, 2000, 24, ppm20, 1, 3, ppm20, 0.005, 0.1, VERDICT_CHANGED, &n, NULL);
	diag("+0.5%%, sd 20 ppm calibrated by 24 A/A boots, boots 1..3, T = 0.1%%: CHANGED %.1f%%, "
	     "mean %.2f boots a side", 100 * r, n);
	ok(r >= 0.95, "+0.5%% CHANGED %.3f >= 0.95", r);
	ok(n < 1.01, "... at the first look (%.2f boots a side)", n);
	/* a change close to the noise: 4 sd (80 ppm), 1 boot a side */
	r = sim(16, 2000, 24, ppm20, 1, 1, ppm20, 80e-6, tiny, VERDICT_CHANGED, NULL, NULL);
	diag("+80 ppm (4 sd), 1 boot a side, one look: CHANGED %.1f%% (theory: about 77%%)", 100 * r);
	ok(r >= 0.65 && r <= 0.88, "power at 4 sd is that of a t(23) test (%.3f in 0.65..0.88)", r);

	/* uncalibrated: 1..3 on a real-clock instrument decides only from 3 boots, as before */
	r = sim(17, 2000, 0, 0, 1, 3, 0.01, 0.02, 1.0, VERDICT_CHANGED, &n, NULL);
	diag("uncalibrated, CoV 1%%, +2%%, boots 1..3, T = 1%%: CHANGED %.1f%%, mean %.2f boots a side",
	     100 * r, n);
	ok(n > 2.99, "uncalibrated, the first look (1 boot a side) never decides (%.2f boots)", n);
	{
		double r2 = sim(17, 2000, 0, 0, 3, 3, 0.01, 0.02, 1.0, VERDICT_CHANGED, NULL, NULL);

		diag("  the same with boots = 3: CHANGED %.1f%%", 100 * r2);
		/* the look at 1 boot a side spends half the alpha for nothing: a range from 1 is for calibrated instruments */
		ok(r < r2, "uncalibrated, boots 1..3 has less power than boots = 3 (%.3f < %.3f)", r, r2);
	}
	r = sim(18, 2000, 0, 0, 6, 6, 0.01, 0.02, 1.0, VERDICT_CHANGED, NULL, NULL);
	diag("uncalibrated, CoV 1%%, +2%%, 6 boots a side, T = 1%%: CHANGED %.1f%% (orch-stats-sim: 84.7%%)",
	     100 * r);
	ok(r >= 0.80, "uncalibrated power unchanged (%.3f >= 0.80)", r);

	/* a wrong calibration: the instrument got 50x noisier (1000 ppm), 3 boots a side */
	r = sim(19, 2000, 24, ppm20, 3, 3, 1e-3, 0, tiny, VERDICT_CHANGED, NULL, &rej);
	diag("calibrated at 20 ppm, the job at 1000 ppm, 3 boots a side: rejected %.1f%%, false CHANGED %.1f%%",
	     100 * rej, 100 * r);
	ok(rej >= 0.99, "a job 50x noisier than its calibration is flagged (%.3f)", rej);
	ok(r <= 0.07, "... and judged on its own spread (false CHANGED %.3f)", r);
}

int main(void)
{
	test_math();
	test_simulation();
	return done_testing();
}
