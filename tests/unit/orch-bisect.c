/* orch-bisect.c: the bisection logic over a simulated measurement: the commit found, the steps taken, skips, no regression. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bisect/bisect.h"
#include "buf.h"
#include "rng.h"
#include "stats/stats.h"
#include "tap.h"

/* A simulated tree: commit culprit (and after) costs pct % more; noise cov per boot; broken commits do not build. */
struct tree {
	long culprit;
	double pct, cov;
	const long *broken;
	uint64_t rs;
};

static double unif(uint64_t *rs)
{
	return ((double)(splitmix64(rs) >> 11) + 0.5) * 0x1.0p-53;
}

static int measure(void *arg, long idx, double *value)
{
	struct tree *t = arg;
	double z = sqrt(-2 * log(unif(&t->rs))) * cos(2 * M_PI * unif(&t->rs));

	for (const long *b = t->broken; b && *b >= -1; b++)
		if (*b == idx)
			return -1;
	*value = 1000.0 * (idx >= t->culprit ? 1 - t->pct / 100 : 1) * (1 + t->cov * z);
	return 0;
}

static int run_cal(size_t n, struct tree *t, struct bisect_sim *s, const struct stats_cal *cal)
{
	memset(s, 0, sizeof(*s));
	s->cal = cal;
	s->n = n;
	s->measure = measure;
	s->arg = t;
	s->alpha = 0.01;
	s->min_boots = 3;
	s->max_boots = 8;
	return bisect_simulate(s);
}

static int run(size_t n, struct tree *t, struct bisect_sim *s)
{
	return run_cal(n, t, s, NULL);
}

/*
 * Item 6 of issue 35: on a calibrated deterministic instrument (20 ppm a
 * boot, calibrated by 24 A/A boots) a step is one boot when the value is
 * clearly on one side, more only when not.
 */
static void calibrated(void)
{
	const struct stats_cal cal = { 20e-6 * 20e-6, 23 };
	double g[6], b[6], pg, pb;
	int used;

	for (int i = 0; i < 6; i++) {
		g[i] = 1000 * (1 + 20e-6 * (i - 2.5) / 1.87);
		b[i] = 995 * (1 + 20e-6 * (2.5 - i) / 1.87);
	}
	{
		double x[] = { 995.01 }, y[] = { 999.98 }, h[] = { 997.5 };

		is_int(bisect_classify_cal(g, 6, b, 6, x, 1, 0.01, &cal, &pg, &pb, &used), BISECT_BAD,
		       "calibrated, one boot at the bad end's level: bad");
		ok(used && pg < 1e-6 && pb > 0.01, "the calibration decided (p good %.2g, p bad %.2g)", pg, pb);
		is_int(bisect_classify_cal(g, 6, b, 6, y, 1, 0.01, &cal, NULL, NULL, NULL), BISECT_GOOD,
		       "one boot at the good end's level: good");
		is_int(bisect_classify_cal(g, 6, b, 6, h, 1, 0.01, &cal, &pg, &pb, &used), BISECT_UNTESTED,
		       "one boot half-way: undecided, more boots (p %.2g, %.2g)", pg, pb);
		is_int(bisect_classify_cal(g, 6, b, 6, x, 1, 0.01, NULL, NULL, NULL, &used), BISECT_UNTESTED,
		       "uncalibrated, one boot is undecided as before");
		ok(!used, "... and says no calibration was used");
	}
	{
		/* the instrument got 50x noisier than its calibration: the ends' spread rejects it */
		double gn[6], x[] = { 995.01 };

		for (int i = 0; i < 6; i++)
			gn[i] = 1000 * (1 + 1e-3 * (i - 2.5) / 1.87);
		is_int(bisect_classify_cal(gn, 6, b, 6, x, 1, 0.01, &cal, NULL, NULL, &used), BISECT_UNTESTED,
		       "ends noisier than the calibration: one boot stays undecided");
		ok(!used, "... the calibration was not used");
	}
	is_int(bisect_first_boots(1, 3), 1, "calibrated: a step starts with one boot");
	is_int(bisect_more_boots(1, 3), 3, "then min_boots");
	is_int(bisect_more_boots(3, 3), 4, "then one more at a time");
	is_int(bisect_first_boots(0, 3), 3, "uncalibrated: min_boots");

	/* whole bisections of 12 commits, +0.5% cost at the culprit, 20 ppm a boot: with and without the calibration */
	{
		int found_c = 0, found_u = 0, steps_c = 0, steps_u = 0, boots_c = 0, boots_u = 0, trials = 0;

		for (long culprit = 0; culprit < 12; culprit++) {
			for (uint64_t seed = 0; seed < 20; seed++) {
				struct tree t = { culprit, 0.5, 20e-6, NULL, 0x5eed + 977 * seed + (uint64_t)culprit };
				struct tree u = t;
				struct bisect_sim s;

				trials++;
				if (run_cal(12, &t, &s, &cal) == 0 && s.first_bad == (size_t)culprit && !s.ambiguous)
					found_c++;
				steps_c += s.steps;
				boots_c += s.boots - 12;	/* the ends: 2 x 6 */
				bisect_sim_release(&s);
				if (run(12, &u, &s) == 0 && s.first_bad == (size_t)culprit && !s.ambiguous)
					found_u++;
				steps_u += s.steps;
				boots_u += s.boots - 12;
				bisect_sim_release(&s);
			}
		}
		diag("12 commits, +0.5%% at each culprit in turn, 20 ppm a boot, 20 seeds (%d bisections): "
		     "calibrated found %d, %.2f boots a step (%d steps, %d boots after the ends); "
		     "uncalibrated found %d, %.2f boots a step (%d boots)", trials, found_c,
		     (double)boots_c / steps_c, steps_c, boots_c, found_u, (double)boots_u / steps_u, boots_u);
		is_int(found_c, trials, "calibrated: every culprit found");
		/*
		 * Not exactly one: a boot at the bad end's level still differs from
		 * it at alpha 0.01 about once in a hundred steps, and that step
		 * takes min_boots (the "more boots only when not clear").
		 */
		ok(boots_c <= steps_c * 105 / 100, "calibrated: one boot a step, more in at most 5%% of them "
		   "(%d boots, %d steps)", boots_c, steps_c);
		ok(boots_u >= 3 * steps_u, "uncalibrated: min_boots (3) a step at least (%d boots, %d steps)", boots_u,
		   steps_u);
	}
	{
		/* a commit half-way (its cost is half the change): more boots, then skipped, as without a calibration */
		int boots = 0;

		for (uint64_t seed = 0; seed < 20; seed++) {
			double gv[6], bv[6], x[8];
			size_t nx = 0;
			int k;
			enum bisect_verdict v = BISECT_UNTESTED;
			uint64_t rs = 77 + seed;

			for (int i = 0; i < 6; i++) {
				double z1 = sqrt(-2 * log(unif(&rs))) * cos(2 * M_PI * unif(&rs));
				double z2 = sqrt(-2 * log(unif(&rs))) * cos(2 * M_PI * unif(&rs));

				gv[i] = 1000 * (1 + 20e-6 * z1);
				bv[i] = 995 * (1 + 20e-6 * z2);
			}
			for (k = bisect_first_boots(1, 3); k <= 8 && v == BISECT_UNTESTED; k = bisect_more_boots(k, 3)) {
				while ((int)nx < k) {
					double z = sqrt(-2 * log(unif(&rs))) * cos(2 * M_PI * unif(&rs));

					x[nx++] = 997.5 * (1 + 20e-6 * z);
				}
				v = bisect_classify_cal(gv, 6, bv, 6, x, nx, 0.01, &cal, NULL, NULL, NULL);
			}
			boots += (int)nx;
			ok(v == BISECT_UNTESTED, "half-way commit (seed %llu): undecided after %zu boots",
			   (unsigned long long)seed, nx);
		}
		is_int(boots, 20 * 8, "every half-way commit got max_boots (8)");
	}
}

int main(void)
{
	enum bisect_verdict v[10];
	size_t rem;
	int amb;

	/* next: the middle of the open range */
	memset(v, 0, sizeof(v));
	v[9] = BISECT_BAD;
	is_int(bisect_next(v, 10, &rem), 4, "first step: the middle of 9 untested commits");
	is_int(rem, 9, "9 commits left before the bad end");
	v[4] = BISECT_GOOD;
	is_int(bisect_next(v, 10, &rem), 7, "after 4 good: the middle of 5..8");
	v[7] = BISECT_BAD;
	v[5] = BISECT_SKIP;
	is_int(bisect_next(v, 10, &rem), 6, "a skipped commit is stepped over");
	v[6] = BISECT_BAD;
	is_int(bisect_next(v, 10, &rem), 10, "done");
	is_int(bisect_first_bad(v, 10, &amb), 6, "first bad: 6");
	ok(amb, "ambiguous: skipped 5 may be the first bad one");
	v[5] = BISECT_GOOD;
	is_int(bisect_first_bad(v, 10, &amb), 6, "with 5 good: 6");
	ok(!amb, "not ambiguous");

	/* classify */
	{
		double g[] = { 100, 101, 99, 100.5 }, b[] = { 90, 91, 89, 90.5 };
		double x1[] = { 90.2, 90.8, 89.5 }, x2[] = { 100.1, 99.6, 100.7 }, x3[] = { 95, 95.5, 94.6 };
		double pg, pb;
		is_int(bisect_classify(g, 4, b, 4, x1, 3, 0.01, &pg, &pb), BISECT_BAD, "like the bad end: bad");
		ok(pg < 0.01 && pb > 0.01, "p against good %g < 0.01 < p against bad %g", pg, pb);
		is_int(bisect_classify(g, 4, b, 4, x2, 3, 0.01, NULL, NULL), BISECT_GOOD, "like the good end: good");
		is_int(bisect_classify(g, 4, b, 4, x3, 3, 0.01, NULL, NULL), BISECT_UNTESTED,
		       "half-way between: undecided (more boots)");
		is_int(bisect_classify(g, 4, b, 4, x1, 1, 0.01, NULL, NULL), BISECT_UNTESTED, "one boot: undecided");
	}

	/* whole bisections: 12 commits, a 5% cost at commit 7, 1% noise */
	for (long culprit = 0; culprit < 12; culprit++) {
		struct tree t = { culprit, 5, 0.01, NULL, 0x1234 + (uint64_t)culprit };
		struct bisect_sim s;
		ok(run(12, &t, &s) == 0 && s.first_bad == (size_t)culprit && !s.ambiguous,
		   "culprit %ld of 12 found (found %zu, %d steps, %d boots)", culprit, s.first_bad, s.steps, s.boots);
		ok(s.steps <= 4 + 2, "culprit %ld: %d steps <= ceil(log2 12) + 2", culprit, s.steps);
		bisect_sim_release(&s);
	}
	{
		long broken[] = { 5, 6, -2 };
		struct tree t = { 6, 5, 0.01, broken, 99 };
		struct bisect_sim s;
		ok(run(12, &t, &s) == 0 && s.first_bad == 7 && s.ambiguous,
		   "culprit 6 does not build: first bad 7, ambiguous (found %zu, ambiguous %d)", s.first_bad, s.ambiguous);
		is_int(s.v[6], BISECT_SKIP, "commit 6 skipped");
		bisect_sim_release(&s);
	}
	{
		struct tree t = { 4, 0, 0.01, NULL, 7 };
		struct bisect_sim s;
		ok(run(12, &t, &s) == 0 && s.first_bad == 12 && s.steps == 0,
		   "no change between the ends: no bisection (first_bad %zu, %d steps)", s.first_bad, s.steps);
		bisect_sim_release(&s);
	}
	{
		long broken[] = { -1, -2 };
		struct tree t = { 4, 5, 0.01, broken, 7 };
		struct bisect_sim s;
		ok(run(12, &t, &s) == -1, "the good end does not build: an error");
		bisect_sim_release(&s);
	}
	{
		struct bisect_answer a = { "net-local", "v6.1", "HEAD", "udp_tx", "pps", "pkt/s",
			"0123456789abcdef0123456789abcdef01234567", "udp: add a cost to udp_sendmsg",
			"6.1.0-klab", "6.1.0-klab+", "dut", "peer", "instruction count (icount)",
			-4.93, -5.1, -4.8, 0.01, 5, 31, 0, 3 };
		struct buf m = BUF_INIT;
		bisect_mail(&m, &a, 1);
		ok(strstr(m.buf, "klab noticed a -4.9% regression of udp_tx.pps on commit 0123456789ab "
			  "(\"udp: add a cost to udp_sendmsg\")\n") != NULL, "mail: the robot's first line");
		ok(strstr(m.buf, "(95% CI -5.10% to -4.80%) pkt/s, measured by instruction count (icount)") != NULL,
		   "mail: the change, its CI and the clock");
		ok(strstr(m.buf, "\tklab bisect start --tree net-local --good v6.1 --bad HEAD --workload udp_tx --metric pps\n"),
		   "mail: the command that reproduces it");
		ok(strstr(m.buf, "\nReported-by: klab performance lab <klab@localhost>\n") != NULL, "mail: the trailer");
		diag("%s", m.buf);
		buf_release(&m);
	}
	calibrated();
	return done_testing();
}
