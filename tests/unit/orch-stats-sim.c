/* orch-stats-sim.c: validation of the verdict by simulation (fixed seeds): false and true CHANGED rates. */
#include <math.h>
#include <stdint.h>

#include "rng.h"
#include "util.h"
#include "stats/stats.h"
#include "tap.h"

/* xoshiro256** (Blackman & Vigna), seeded by splitmix64. */
struct rng {
	uint64_t s[4];
	int have_spare;
	double spare;
};

static uint64_t rng_next(struct rng *r)
{
	return xoshiro_next(r->s);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	xoshiro_seed(r->s, seed);
	r->have_spare = 0;
}

/* Uniform in (0, 1). */
static double rng_unif(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

/* Standard normal by Box-Muller. */
static double rng_norm(struct rng *r)
{
	double u, v;

	if (r->have_spare) {
		r->have_spare = 0;
		return r->spare;
	}
	u = rng_unif(r);
	v = rng_unif(r);
	r->spare = sqrt(-2 * log(u)) * sin(2 * M_PI * v);
	r->have_spare = 1;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* Fraction of trials with verdict v for per-boot values base*(1 + cov N(0,1)), B shifted by `shift`. */
static double rate(uint64_t seed, int trials, size_t n, double cov, double shift,
		   enum stats_verdict v, double *mean_mde)
{
	struct rng r;
	double a[64], b[64], mde = 0;
	int hits = 0;

	rng_seed(&r, seed);
	for (int t = 0; t < trials; t++) {
		struct stats_cmp c;

		for (size_t i = 0; i < n; i++) {
			a[i] = 2268e3 * (1 + cov * rng_norm(&r));
			b[i] = 2268e3 * (1 + shift) * (1 + cov * rng_norm(&r));
		}
		stats_compare(a, n, b, n, 1.0, &c);
		hits += c.verdict == v;
		mde += c.mde_pct;
	}
	if (mean_mde)
		*mean_mde = mde / trials;
	return (double)hits / trials;
}

/*
 * The sequential plan of a job with boots = MIN..MAX: after every STEP boots
 * per side from MIN on (and at MAX), decide at level ALPHA (0: the plan's
 * alpha/K) and stop at CHANGED or EQUIVALENT. The fraction of trials whose
 * final verdict is V; *mean_n the mean boots per side used.
 */
static double seq_rate(uint64_t seed, int trials, int min, int max, int step, double cov,
		       double shift, double alpha, enum stats_verdict v, double *mean_n)
{
	int k = stats_seq_looks(min, max, step);
	double a[64], b[64], used = 0;
	struct rng r;
	int hits = 0;

	if (!(alpha > 0))
		alpha = stats_seq_alpha(k);
	rng_seed(&r, seed);
	for (int t = 0; t < trials; t++) {
		struct stats_cmp c = { 0 };
		int n;

		for (int i = 0; i < max; i++) {
			a[i] = 2268e3 * (1 + cov * rng_norm(&r));
			b[i] = 2268e3 * (1 + shift) * (1 + cov * rng_norm(&r));
		}
		for (n = min; n <= max; n++) {
			if (!stats_seq_look(min, max, step, n))
				continue;
			stats_compare_alpha(a, (size_t)n, b, (size_t)n, 1.0, alpha, &c);
			if (c.verdict == VERDICT_CHANGED || c.verdict == VERDICT_EQUIVALENT)
				break;
		}
		used += n > max ? max : n;
		hits += c.verdict == v;
	}
	if (mean_n)
		*mean_n = used / trials;
	return (double)hits / trials;
}

static void sequential(void)
{
	/* The plans: looks after each ABBA round (2 boots per side), and after every boot per side. */
	static const struct { int min, max, step; } plan[] = { { 2, 8, 2 }, { 2, 8, 1 } };
	double n_used;

	is_int(stats_seq_looks(2, 8, 1), 7, "boots 2..8, a look per boot: K = 7");
	is_int(stats_seq_looks(2, 8, 2), 4, "boots 2..8, a look per ABBA round: K = 4 (2, 4, 6, 8)");
	is_int(stats_seq_looks(2, 7, 2), 4, "boots 2..7 by 2: 2, 4, 6 and the maximum 7");
	is_int(stats_seq_looks(4, 4, 2), 1, "boots 4..4: one look");
	is_int(stats_seq_looks(0, 4, 2), 0, "a minimum below 1 is no plan");
	is_int(stats_seq_looks(1, 4, 2), 3, "boots 1..4: looks at 1, 3 and 4 (one boot a side decides on a calibrated instrument)");
	is_int(stats_seq_looks(5, 4, 2), 0, "min > max is no plan");
	is_int(stats_seq_look(2, 7, 2, 6), 3, "6 boots of 2..7: look 3");
	is_int(stats_seq_look(2, 7, 2, 7), 4, "7 boots of 2..7: look 4 (the maximum)");
	is_int(stats_seq_look(2, 7, 2, 5), 0, "5 boots of 2..7: no look");
	ok(fabs(stats_seq_alpha(4) - 0.0125) < 1e-15, "alpha per look for K = 4: 0.05/4");
	ok(stats_seq_alpha(1) == 0.05, "one look: 0.05");

	for (size_t i = 0; i < ARRAY_SIZE(plan); i++) {
		int min = plan[i].min, max = plan[i].max, st = plan[i].step;
		int k = stats_seq_looks(min, max, st);
		double aa, naive, pw, eq;

		aa = seq_rate(100, 1000, min, max, st, 0.01, 0, 0, VERDICT_CHANGED, &n_used);
		diag("sequential boots %d..%d, look every %d (K=%d, alpha %.4f per look), A/A CoV 1%%, T=1%%: "
		     "false CHANGED %.1f%% of 1000 (mean %.2f boots per side)", min, max, st, k,
		     stats_seq_alpha(k), 100 * aa, n_used);
		ok(aa <= 0.05, "K=%d: A/A false CHANGED %.3f <= 0.05", k, aa);
		naive = seq_rate(100, 1000, min, max, st, 0.01, 0, 0.05, VERDICT_CHANGED, NULL);
		diag("  the same looking at 0.05 every time: false CHANGED %.1f%%", 100 * naive);
		ok(naive >= aa, "K=%d: looking at 0.05 each time is no better (%.3f >= %.3f)", k, naive, aa);
		eq = seq_rate(200 + i, 1000, min, max, st, 0.002, 0, 0, VERDICT_EQUIVALENT, &n_used);
		diag("  A/A CoV 0.2%%: EQUIVALENT %.1f%% (mean %.2f boots per side)", 100 * eq, n_used);
		ok(eq >= 0.95, "K=%d: quiet A/A stops EQUIVALENT (%.3f)", k, eq);
		pw = seq_rate(300, 1000, min, max, st, 0.01, 0.02, 0, VERDICT_CHANGED, &n_used);
		diag("  true +2%% CoV 1%%: CHANGED by the maximum %.1f%% (mean %.2f boots per side)",
		     100 * pw, n_used);
		/* The job's plan (a look per ABBA round) must reach 80%; a look per boot is shown beside it. */
		if (st == 2)
			ok(pw >= 0.80, "K=%d: true +2%% CHANGED %.3f >= 0.80 by %d boots", k, pw, max);
		else
			ok(pw >= 0.5, "K=%d: true +2%% CHANGED %.3f >= 0.5 (a look per boot pays with power)",
			   k, pw);
	}
}

int main(void)
{
	sequential();

	double mde, aa, shift2, eq, shift05;

	aa = rate(1, 1000, 6, 0.01, 0, VERDICT_CHANGED, &mde);
	diag("A/A, CoV 1%%, n=6 per side, T=1%%: CHANGED in %.1f%% of 1000 trials (mean MDE %.2f%%)",
	     100 * aa, mde);
	ok(aa <= 0.05, "A/A false CHANGED rate %.3f <= 0.05", aa);

	shift2 = rate(2, 1000, 6, 0.01, 0.02, VERDICT_CHANGED, NULL);
	diag("true +2%%, CoV 1%%, n=6 per side, T=1%%: CHANGED in %.1f%% of 1000 trials", 100 * shift2);
	ok(shift2 >= 0.80, "+2%% shift detected rate %.3f >= 0.80", shift2);

	eq = rate(3, 1000, 6, 0.01, 0, VERDICT_EQUIVALENT, NULL);
	diag("A/A, CoV 1%%, n=6, T=1%%: EQUIVALENT in %.1f%% of trials", 100 * eq);
	ok(eq < 0.5, "with MDE above T, A/A is rarely EQUIVALENT (%.3f)", eq);

	eq = rate(4, 1000, 10, 0.002, 0, VERDICT_EQUIVALENT, NULL);
	diag("A/A, CoV 0.2%%, n=10, T=1%%: EQUIVALENT in %.1f%% of trials", 100 * eq);
	ok(eq >= 0.95, "low noise A/A is EQUIVALENT (%.3f)", eq);

	shift05 = rate(5, 1000, 6, 0.01, -0.02, VERDICT_CHANGED, NULL);
	diag("true -2%%, CoV 1%%, n=6: CHANGED in %.1f%% of trials", 100 * shift05);
	ok(shift05 >= 0.80, "-2%% shift detected rate %.3f >= 0.80", shift05);

	/* Welch's p is uniform under H0: the 5% false positive rate of p < 0.05 alone. */
	{
		struct rng r;
		double a[6], b[6];
		int sig = 0;

		rng_seed(&r, 6);
		for (int t = 0; t < 2000; t++) {
			struct stats_welch w;

			for (int i = 0; i < 6; i++) {
				a[i] = rng_norm(&r);
				b[i] = rng_norm(&r);
			}
			stats_welch(a, 6, b, 6, &w);
			sig += w.p < 0.05;
		}
		diag("Welch p < 0.05 under H0 in %.1f%% of 2000 trials", 100.0 * sig / 2000);
		ok(sig >= 60 && sig <= 140, "Welch size near 5%% (%d of 2000)", sig);
	}
	return done_testing();
}
