/* orch-bisect.c: the bisection logic over a simulated measurement: the commit found, the steps taken, skips, no regression. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bisect/bisect.h"
#include "buf.h"
#include "rng.h"
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

static int run(size_t n, struct tree *t, struct bisect_sim *s)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->measure = measure;
	s->arg = t;
	s->alpha = 0.01;
	s->min_boots = 3;
	s->max_boots = 8;
	return bisect_simulate(s);
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
	return done_testing();
}
