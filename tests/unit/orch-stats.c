/* orch-stats.c: stats.c against recorded reference values (scipy 1.10.1, Debian 12) and by properties. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "tap.h"
#include "util.h"

/*
 * Recorded with Debian 12's python3-scipy 1.10.1 (/usr/bin/python3):
 *	from scipy import stats; import numpy as np
 *	stats.ttest_ind(b, a, equal_var=False); stats.t.ppf(p, df);
 *	stats.mannwhitneyu(x, y, method='exact' | 'asymptotic')
 * and, for the exact test with ties, a brute-force enumeration of all
 * C(13,7) = 1716 assignments with scipy.stats.rankdata mid-ranks.
 * tests/unit/orch-stats-scipy.c compares many more samples at test time.
 */
static void test_distributions(void)
{
	is_double(stats_t_ppf(0.975, 1), 12.706204736432095, 1e-9, "t.ppf(0.975, 1)");
	is_double(stats_t_ppf(0.975, 10), 2.2281388519649385, 1e-10, "t.ppf(0.975, 10)");
	is_double(stats_t_ppf(0.95, 3.5), 2.2224334936496004, 1e-10, "t.ppf(0.95, 3.5)");
	is_double(stats_t_ppf(0.999, 2.2), 17.893611839528628, 1e-8, "t.ppf(0.999, 2.2)");
	is_double(stats_t_ppf(0.8, 7), 0.8960296443135947, 1e-10, "t.ppf(0.8, 7)");
	is_double(stats_t_ppf(0.025, 10), -2.2281388519649385, 1e-10, "t.ppf(0.025, 10) is symmetric");
	is_double(stats_t_cdf(-2.5, 4.3), 0.03122403731810567, 1e-12, "t.cdf(-2.5, 4.3)");
	is_double(2 * (1 - stats_t_cdf(8, 30)), 6.265822475700772e-09, 1e-13, "2 t.sf(8, 30)");
	is_double(stats_betainc(2.5, 0.5, 0.3), 0.018927124071945658, 1e-14, "I_0.3(2.5, 0.5)");
	is_double(stats_betainc(1, 1, 0.42), 0.42, 1e-14, "I_x(1,1) = x");
	is_double(stats_norm_ppf(0.975), 1.959963984540054, 1e-12, "norm.ppf(0.975)");
	is_double(stats_norm_ppf(1e-6), -4.753424308822899, 1e-9, "norm.ppf(1e-6)");
	is_double(stats_norm_cdf(stats_norm_ppf(0.3)), 0.3, 1e-14, "norm cdf(ppf(p)) = p");
	{
		double worst = 0, worst_p = 0, worst_df = 0;
		int points = 0;

		for (double df = 1; df < 200; df *= 1.7)
			for (double p = 0.01; p < 1; p += 0.07) {
				double e = fabs(stats_t_cdf(stats_t_ppf(p, df), df) - p);

				points++;
				if (!(e <= worst)) {	/* a NaN is the worst */
					worst = e;
					worst_p = p;
					worst_df = df;
				}
			}
		ok(points == 10 * 15 && worst <= 1e-12,
		   "t.cdf(t.ppf(p)) = p over %d points of df and p (worst error %.3g at p = %g, df = %g)",
		   points, worst, worst_p, worst_df);
	}
	ok(fabs(stats_t_ppf(0.975, 1e6) - 1.959963984540054) < 1e-5, "t -> normal for large df");
	ok(isnan(stats_t_ppf(0.5, -1)), "bad df gives NaN");
}

static void test_welch(void)
{
	double x[] = { 1.1, 2.3, 0.7, 3.3, 2.0 }, y[] = { 2.9, 3.1, 4.4, 3.9, 5.0, 2.2 };
	double c[] = { 5, 5, 5 };
	struct stats_welch w;

	ok(stats_welch(x, 5, y, 6, &w) == 0, "welch runs");
	is_double(w.t, 2.727477367136097, 1e-12, "welch t (scipy ttest_ind(y, x, equal_var=False))");
	is_double(w.p, 0.02407985689321114, 1e-12, "welch p");
	ok(stats_welch(x, 1, y, 6, &w) == -1, "n = 1 refused");
	ok(stats_welch(c, 3, c, 3, &w) == 0 && w.p == 1 && w.t == 0, "identical constants: p = 1");
}

static void test_compare(void)
{
	/* The claim of seed 1: 2268 -> 2380 Krps, as per-boot values. */
	double a[] = { 2268, 2250, 2290, 2275, 2261, 2283 };
	double b[] = { 2380, 2371, 2395, 2360, 2388, 2377 };
	struct stats_cmp c;

	stats_compare(a, 6, b, 6, 1.0, &c);
	is_double(c.w.t, 13.65378932834183, 1e-10, "log welch t");
	is_double(c.w.p, 1.3563336389528153e-07, 1e-15, "log welch p");
	is_double(c.w.df, 9.57429097026091, 1e-10, "log welch df");
	is_double(c.change_pct, 4.726543144909312, 1e-10, "change = 100(e^d - 1)");
	is_double(c.ci_lo, 3.935498645962999, 1e-9, "95%% CI low");
	is_double(c.ci_hi, 5.523608218225933, 1e-9, "95%% CI high");
	is_str(stats_verdict_name(c.verdict), "CHANGED", "verdict CHANGED");
	is_double(c.p_mwu, 2.0 / 924, 1e-15, "exact MWU p = 2/C(12,6) when separated");
	is_double(c.u, 0, 0, "U of A = 0");
	ok(c.hl_ratio > 1.04 && c.hl_ratio < 1.055, "Hodges-Lehmann ratio %g near 1.047", c.hl_ratio);
	ok(c.mde_pct > 0 && c.mde_pct < 2, "MDE %g%% is printed and small", c.mde_pct);
	is_str(stats_claim_check(4.94, 4.94, c.ci_lo, c.ci_hi), "consistent", "claim 2268 -> 2380 (+4.9%%) consistent");
	is_str(stats_claim_check(10, 20, c.ci_lo, c.ci_hi), "smaller", "claim +10..20%%: smaller than claimed");
	is_str(stats_claim_check(-20, -10, c.ci_lo, c.ci_hi), "opposite", "claim -10..-20%% opposite");
	ok(stats_claim_check(1, 2, NAN, NAN) == NULL, "no CI: no claim check");
	ok(stats_claim_check(NAN, NAN, -1, 1) == NULL, "a claim without a number: no claim check");
	{
		/* claim lo, hi; CI lo, hi; what the data can tell */
		static const struct { double lo, hi, cl, ch; const char *want, *why; } k[] = {
			{ 5, 5, -65, 65, "untestable", "the demo's tx_pps -24% [-65%, +65%] against +5%" },
			{ 5, 5, -35, 97, "untestable", "the demo's tps +13% [-35%, +97%] against +5%" },
			{ 5, 5, -1, 6, "untestable", "holds zero and the claim, wider than the claim" },
			{ 5, 5, 3, 7, "consistent", "excludes zero, holds the claim" },
			{ 5, 5, 1, 3, "smaller", "between zero and the claim" },
			{ 5, 5, -0.5, 0.5, "smaller", "holds zero but narrower than the claim: rules it out" },
			{ 5, 5, -3, 4, "untestable", "below the claim but as wide as it" },
			{ 5, 5, 6, 9, "larger", "beyond the claim" },
			{ 5, 5, -9, -1, "opposite", "the other side of zero" },
			{ 0.5, 2, -0.2, 0.7, "consistent", "a range: overlaps it, narrower than it" },
			{ 0.5, 2, -0.2, 2.5, "untestable", "a range: overlaps it, holds zero, wider" },
			{ -20, -10, -15, -11, "consistent", "a decrease inside the claimed range" },
			{ -20, -10, -8, -2, "smaller", "a decrease smaller than claimed" },
			{ -20, -10, -30, -25, "larger", "a decrease larger than claimed" },
			{ -20, -10, 2, 5, "opposite", "an increase against a claimed decrease" },
			{ -15, -15, -40, 30, "untestable", "a decrease claimed, a CI of +-35%" },
		};

		for (size_t i = 0; i < ARRAY_SIZE(k); i++)
			is_str(stats_claim_check(k[i].lo, k[i].hi, k[i].cl, k[i].ch), k[i].want,
			       "claim %g..%g%%, CI [%g, %g]: %s (%s)", k[i].lo, k[i].hi, k[i].cl, k[i].ch,
			       k[i].want, k[i].why);
	}

	/* Equivalent: tiny noise around the same value. */
	{
		double e1[] = { 1000, 1001, 999, 1000.5, 999.5, 1000 };
		double e2[] = { 1000.2, 999.1, 1000.9, 1000, 999.8, 1000.4 };

		stats_compare(e1, 6, e2, 6, 1.0, &c);
		is_str(stats_verdict_name(c.verdict), "EQUIVALENT", "0.1%% noise, same mean: EQUIVALENT");
		ok(c.ci90_lo > -1 && c.ci90_hi < 1, "90%% CI inside +-1%%");
	}
	/* Inconclusive: noisy, 3 per side. */
	{
		double i1[] = { 100, 104, 97 }, i2[] = { 101, 99, 105 };

		stats_compare(i1, 3, i2, 3, 1.0, &c);
		is_str(stats_verdict_name(c.verdict), "INCONCLUSIVE", "3%% noise, n=3: INCONCLUSIVE");
		ok(c.extra_boots > 0, "extra boots estimate %d > 0", c.extra_boots);
		ok(c.ci_lo < 0 && c.ci_hi > 0, "95%% CI spans 0");
	}
	/* Significant but below the threshold: not CHANGED. */
	{
		double s1[] = { 1000, 1000.1, 999.9, 1000, 1000.05, 999.95 };
		double s2[] = { 1003, 1003.1, 1002.9, 1003, 1003.05, 1002.95 };

		stats_compare(s1, 6, s2, 6, 1.0, &c);
		ok(c.ci_lo > 0, "+0.3%% significant");
		is_str(stats_verdict_name(c.verdict), "EQUIVALENT", "+0.3%% with T = 1%%: EQUIVALENT, not CHANGED");
		stats_compare(s1, 6, s2, 6, 0.2, &c);
		is_str(stats_verdict_name(c.verdict), "CHANGED", "+0.3%% with T = 0.2%%: CHANGED");
	}
	/* Edge cases. */
	{
		double z1[] = { 0, 0, 0 }, z2[] = { 0, 0, 0 }, z3[] = { 0, 1, 2 }, one[] = { 5 };

		stats_compare(z1, 3, z2, 3, 1.0, &c);
		is_str(stats_verdict_name(c.verdict), "EQUIVALENT", "zeros on both sides: EQUIVALENT");
		stats_compare(z1, 3, z3, 3, 1.0, &c);
		is_str(stats_verdict_name(c.verdict), "DESCRIPTIVE", "non-positive values: DESCRIPTIVE (no logs)");
		stats_compare(one, 1, z3, 3, 1.0, &c);
		is_str(stats_verdict_name(c.verdict), "INCONCLUSIVE", "one boot: INCONCLUSIVE");
		is_int(c.extra_boots, 2, "one boot: 2 more for 3 per side");
		stats_compare_points(z3, 3, one, 1, &c);
		is_double(c.change_pct, 4, 1e-12, "points: 5 - 1 = 4 pp");
		is_str(stats_verdict_name(c.verdict), "DESCRIPTIVE", "points: DESCRIPTIVE");
	}
}

static void test_mwu(void)
{
	double x[] = { 1.1, 2.3, 0.7, 3.3, 2.0 }, y[] = { 2.9, 3.1, 4.4, 3.9, 5.0, 2.2 };
	double x2[] = { 1, 2, 2, 3, 4, 4, 4 }, y2[] = { 3, 4, 5, 5, 6, 2 };
	struct stats_mwu m;

	stats_mwu_exact(x, 5, y, 6, &m);
	is_double(m.u, 4, 0, "U (scipy mannwhitneyu exact)");
	is_double(m.p, 0.05194805194805195, 1e-14, "exact p");
	ok(!m.ties, "no ties");
	stats_mwu_normal(x2, 7, y2, 6, &m);
	is_double(m.u, 10, 0, "U with ties");
	is_double(m.p, 0.12500621852933796, 1e-12, "asymptotic p with tie correction");
	ok(m.ties, "ties seen");
	stats_mwu_exact(x2, 7, y2, 6, &m);
	is_double(m.p, 0.1386946386946387, 1e-14, "exact conditional p with mid-ranks (enumerated 1716)");
	stats_mwu(x, 5, y, 6, &m);
	ok(m.exact, "small n: exact");
	{
		/* 3000 and 2000 values on a grid of 40 (ties everywhere), unsorted: U against counting the pairs */
		size_t na = 3000, nb = 2000;
		double *xa = malloc(na * sizeof(*xa)), *xb = malloc(nb * sizeof(*xb)), u = 0;
		unsigned seed = 11;

		for (size_t i = 0; i < na; i++) {
			seed = seed * 1103515245 + 12345;
			xa[i] = (double)((seed >> 8) % 40);
		}
		for (size_t j = 0; j < nb; j++) {
			seed = seed * 1103515245 + 12345;
			xb[j] = (double)((seed >> 8) % 40) + 1;
		}
		for (size_t i = 0; i < na; i++)
			for (size_t j = 0; j < nb; j++)
				u += xa[i] > xb[j] ? 1 : xa[i] == xb[j] ? 0.5 : 0;
		stats_mwu_normal(xa, na, xb, nb, &m);
		is_double(m.u, u, 0, "U of 3000 x 2000 tied values = the pairs counted (%g)", u);
		ok(m.ties, "... ties seen");
		free(xa);
		free(xb);
	}
	{
		double big_a[30], big_b[30];

		for (int i = 0; i < 30; i++) {
			big_a[i] = i;
			big_b[i] = i + 0.5;
		}
		stats_mwu(big_a, 30, big_b, 30, &m);
		ok(!m.exact, "n = 60: normal approximation");
		ok(m.p > 0.5, "shift of half a step: p %g not significant", m.p);
	}
}

static void test_holm_hl(void)
{
	double p[] = { 0.01, 0.04, 0.03, 0.005 }, adj[4];
	double a[] = { 1, 2, 3 }, b[] = { 2, 3, 4, 5 };

	stats_holm(p, 4, adj);
	/* Sorted 0.005 0.01 0.03 0.04 -> 0.02 0.03 0.06 0.06 (monotone). */
	is_double(adj[3], 0.02, 1e-15, "holm smallest x4");
	is_double(adj[0], 0.03, 1e-15, "holm second x3");
	is_double(adj[2], 0.06, 1e-15, "holm third x2");
	is_double(adj[1], 0.06, 1e-15, "holm fourth kept monotone");
	/* differences: 1 0 -1, 2 1 0, 3 2 1, 4 3 2 -> median of 12 = 1.5 */
	is_double(stats_hodges_lehmann(a, 3, b, 4), 1.5, 1e-15, "Hodges-Lehmann median of differences");
	is_double(stats_median(a, 3), 2, 0, "median odd");
	is_double(stats_median(b, 4), 3.5, 0, "median even");
	{
		/* quickselect against a sort, with many duplicates, odd and even n */
		double x[257], y[257];
		unsigned seed = 1;
		int bad = 0;

		for (size_t n = 1; n <= 257; n += 17) {
			for (size_t i = 0; i < n; i++) {
				seed = seed * 1103515245 + 12345;
				x[i] = y[i] = (double)((seed >> 16) % 23);
			}
			for (size_t i = 1; i < n; i++)
				for (size_t j = i; j > 0 && y[j - 1] > y[j]; j--) {
					double t = y[j];

					y[j] = y[j - 1];
					y[j - 1] = t;
				}
			bad += stats_median(x, n) != (n % 2 ? y[n / 2] : (y[n / 2 - 1] + y[n / 2]) / 2);
		}
		is_int(bad, 0, "median by quickselect equals the sorted median");
	}
	{
		/* Above STATS_HL_PAIRS_MAX: bisection against the full sort of 1001 x 1002 differences. */
		size_t na = 1001, nb = 1002, k = 0;
		double *xa = malloc(na * sizeof(*xa)), *xb = malloc(nb * sizeof(*xb));
		double *d = malloc(na * nb * sizeof(*d)), want;
		unsigned seed = 7;

		for (size_t i = 0; i < na; i++) {
			seed = seed * 1103515245 + 12345;
			xa[i] = (double)((seed >> 8) % 100000) / 1000;
		}
		for (size_t j = 0; j < nb; j++) {
			seed = seed * 1103515245 + 12345;
			xb[j] = (double)((seed >> 8) % 100000) / 1000 + 3.3;
		}
		for (size_t j = 0; j < nb; j++)
			for (size_t i = 0; i < na; i++)
				d[k++] = xb[j] - xa[i];
		want = stats_median(d, k);
		ok(na * nb > STATS_HL_PAIRS_MAX, "the large path is taken");
		is_double(stats_hodges_lehmann(xa, na, xb, nb), want, 0, "Hodges-Lehmann by bisection = sorted median (%g)", want);
		is_double(stats_hodges_lehmann(xa, na, xb, nb - 1), stats_median(d, k - na), 0,
			  "... with an odd number of pairs too (1001 x 1001: the last b's differences left out)");
		/* heavy ties: 3 distinct values a side, then one value a side (nothing to split) */
		for (size_t i = 0; i < na; i++)
			xa[i] = (double)(i % 3);
		for (size_t j = 0; j < nb; j++)
			xb[j] = 0.5 + (double)(j % 3);
		k = 0;
		for (size_t j = 0; j < nb; j++)
			for (size_t i = 0; i < na; i++)
				d[k++] = xb[j] - xa[i];
		is_double(stats_hodges_lehmann(xa, na, xb, nb), stats_median(d, k), 0, "ties: the sorted median (%g)",
			  stats_median(d, k));
		for (size_t i = 0; i < na; i++)
			xa[i] = 1.25;
		for (size_t j = 0; j < nb; j++)
			xb[j] = 2.5;
		is_double(stats_hodges_lehmann(xa, na, xb, nb), 1.25, 0, "one value a side: their difference");
		is_double(stats_hodges_lehmann(xa, 1000, xb, 1000), stats_hodges_lehmann(xa, 1000, xb, 1000), 0,
			  "1M pairs (the small path) runs");
		free(xa);
		free(xb);
		free(d);
	}
}

/* A verdict at a sequential look's level: the same data, CHANGED at 0.05, not at 0.05/4. */
static void test_alpha(void)
{
	static const double a[] = { 100, 102, 98, 101 }, b[] = { 104, 106, 102, 104 };
	static const double qa[] = { 1000, 1001, 999, 1000.5 }, qb[] = { 1000.2, 1000.9, 999.6, 1000.4 };
	struct stats_cmp c05, c;

	stats_compare(a, 4, b, 4, 1.0, &c05);
	stats_compare_alpha(a, 4, b, 4, 1.0, 0.0125, &c);
	ok(c05.w.p < 0.05 && c05.w.p > 0.0125, "the example's p %.4f lies between 0.0125 and 0.05", c05.w.p);
	is_str(stats_verdict_name(c05.verdict), "CHANGED", "at 0.05: CHANGED (%+.2f%%)", c05.change_pct);
	is_str(stats_verdict_name(c.verdict), "INCONCLUSIVE", "at 0.0125 (look of K = 4): INCONCLUSIVE");
	ok(c.alpha == 0.0125 && c05.alpha == 0.05, "the level is kept with the verdict");
	is_double(c.ci_lo, c05.ci_lo, 0, "the printed CI stays the 95%% one");
	stats_compare_alpha(qa, 4, qb, 4, 1.0, 0.0125, &c);
	stats_compare(qa, 4, qb, 4, 1.0, &c05);
	is_str(stats_verdict_name(c05.verdict), "EQUIVALENT", "quiet A/A at 0.05: EQUIVALENT");
	is_str(stats_verdict_name(c.verdict), "EQUIVALENT", "and at 0.0125 (the 97.5%% CI inside +-1%%)");
	stats_compare_alpha(a, 4, b, 4, 1.0, 0, &c);
	ok(c.alpha == 0.05, "alpha 0 means 0.05");
}

int main(void)
{
	test_alpha();
	test_distributions();
	test_welch();
	test_compare();
	test_mwu();
	test_holm_hl();
	return done_testing();
}
