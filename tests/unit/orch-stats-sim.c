/* orch-stats-sim.c: validation of the verdict by simulation (fixed seeds): false and true CHANGED rates. */
#include <math.h>
#include <stdint.h>

#include "rng.h"
#include "stats.h"
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

int main(void)
{
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
