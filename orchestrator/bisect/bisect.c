/* bisect.c: the bisection engine's logic (bisect.h): the next commit, the classification, a whole bisection over a measurement function. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bisect/bisect.h"
#include "buf.h"
#include "stats/stats.h"
#include "util.h"

const char *bisect_verdict_name(enum bisect_verdict v)
{
	switch (v) {
	case BISECT_GOOD: return "good";
	case BISECT_BAD: return "bad";
	case BISECT_SKIP: return "skip";
	default: return "untested";
	}
}

/* [lo, hi): the range still open; hi is the first bad commit (n - 1 at worst). */
static void open_range(const enum bisect_verdict *v, size_t n, size_t *lo, size_t *hi)
{
	size_t i;

	*hi = n - 1;
	for (i = 0; i + 1 < n; i++)
		if (v[i] == BISECT_BAD) {
			*hi = i;
			break;
		}
	*lo = 0;
	for (i = *hi; i-- > 0;)
		if (v[i] == BISECT_GOOD) {
			*lo = i + 1;
			break;
		}
}

size_t bisect_next(const enum bisect_verdict *v, size_t n, size_t *remaining)
{
	size_t lo, hi, cnt = 0, k = 0, i;

	if (remaining)
		*remaining = 0;
	if (n < 2)
		return n;
	open_range(v, n, &lo, &hi);
	for (i = lo; i < hi; i++)
		cnt += v[i] == BISECT_UNTESTED;
	if (remaining)
		*remaining = cnt;
	if (!cnt)
		return n;
	/* the middle untested one: the (cnt / 2)-th, as rev-list --bisect halves the range */
	for (i = lo; i < hi; i++)
		if (v[i] == BISECT_UNTESTED && k++ == cnt / 2)
			return i;
	return n;
}

size_t bisect_first_bad(const enum bisect_verdict *v, size_t n, int *ambiguous)
{
	size_t lo, hi;

	*ambiguous = 0;
	if (!n)
		return 0;
	open_range(v, n, &lo, &hi);
	*ambiguous = hi > lo;	/* only skipped (or untested) commits between the last good and it */
	return hi;
}

static int logs(const double *x, size_t n, double *out)
{
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0))
			return -1;
		out[i] = log(x[i]);
	}
	return 0;
}

/* Both tests with the calibration: 0 with *wg and *wb, -1 when it is not to be used (Welch's then). */
static int cal_tests(const double *good, size_t ng, const double *bad, size_t nb, const double *x, size_t nx,
		     double alpha, const struct stats_cal *cal, struct stats_welch *wg, struct stats_welch *wb)
{
	struct stats_cmp c;

	for (size_t i = 0; i < ng; i++)
		if (!(good[i] > 0))
			return -1;
	for (size_t i = 0; i < nb; i++)
		if (!(bad[i] > 0))
			return -1;
	for (size_t i = 0; i < nx; i++)
		if (!(x[i] > 0))
			return -1;
	/* the threshold plays no part: only the pooled t's d and p are read */
	stats_compare_cal(good, ng, x, nx, 1, alpha, cal, &c);
	if (c.cal != STATS_CAL_USED || isnan(c.w.p))
		return -1;
	*wg = c.w;
	stats_compare_cal(bad, nb, x, nx, 1, alpha, cal, &c);
	if (c.cal != STATS_CAL_USED || isnan(c.w.p))
		return -1;
	*wb = c.w;
	return 0;
}

enum bisect_verdict bisect_classify(const double *good, size_t ng, const double *bad, size_t nb,
				    const double *x, size_t nx, double alpha, double *p_good, double *p_bad)
{
	return bisect_classify_cal(good, ng, bad, nb, x, nx, alpha, NULL, p_good, p_bad, NULL);
}

enum bisect_verdict bisect_classify_cal(const double *good, size_t ng, const double *bad, size_t nb,
					const double *x, size_t nx, double alpha, const struct stats_cal *cal,
					double *p_good, double *p_bad, int *cal_used)
{
	struct stats_welch wg, wb;
	double *lg = xcalloc(ng + 1, sizeof(double)), *lb = xcalloc(nb + 1, sizeof(double));
	double *lx = xcalloc(nx + 1, sizeof(double));
	enum bisect_verdict v = BISECT_UNTESTED;
	int lg_ok, lb_ok, lx_ok;

	if (p_good)
		*p_good = NAN;
	if (p_bad)
		*p_bad = NAN;
	if (cal_used)
		*cal_used = 0;
	if (cal && ng && nb && nx && !cal_tests(good, ng, bad, nb, x, nx, alpha, cal, &wg, &wb)) {
		if (cal_used)
			*cal_used = 1;
		goto decide;
	}
	lg_ok = !logs(good, ng, lg);
	lb_ok = !logs(bad, nb, lb);
	lx_ok = !logs(x, nx, lx);
	/* values that are not all positive are compared as they are */
	if (!(lg_ok && lb_ok && lx_ok)) {
		for (size_t i = 0; i < ng; i++) lg[i] = good[i];
		for (size_t i = 0; i < nb; i++) lb[i] = bad[i];
		for (size_t i = 0; i < nx; i++) lx[i] = x[i];
	}
	if (stats_welch(lg, ng, lx, nx, &wg) || stats_welch(lb, nb, lx, nx, &wb))
		goto out;
decide:
	if (p_good)
		*p_good = wg.p;
	if (p_bad)
		*p_bad = wb.p;
	/* and nearer the end it is classified as (a shared end's sample can be off) */
	if (wg.p < alpha && wb.p >= alpha && fabs(wb.d) < fabs(wg.d))
		v = BISECT_BAD;
	else if (wb.p < alpha && wg.p >= alpha && fabs(wg.d) < fabs(wb.d))
		v = BISECT_GOOD;
out:
	free(lg);
	free(lb);
	free(lx);
	return v;
}

int bisect_first_boots(int calibrated, int min_boots)
{
	return calibrated ? 1 : min_boots;
}

int bisect_more_boots(int k, int min_boots)
{
	return k < min_boots ? min_boots : k + 1;
}

struct sample {
	double *x;
	size_t n;
};

static int measure_n(struct bisect_sim *s, long idx, struct sample *m, int want)
{
	while ((int)m->n < want) {
		double val;
		if (s->measure(s->arg, idx, &val))
			return -1;
		m->x = xrealloc(m->x, (m->n + 1) * sizeof(double));
		m->x[m->n++] = val;
		s->boots++;
	}
	return 0;
}

int bisect_simulate(struct bisect_sim *s)
{
	struct sample g = { NULL, 0 }, b = { NULL, 0 };
	struct stats_welch w;
	int ret = -1;

	s->v = xcalloc(s->n ? s->n : 1, sizeof(*s->v));
	s->first_bad = s->n;
	s->ambiguous = 0;
	s->steps = s->boots = 0;
	/* the ends are the reference of every step: twice the boots */
	if (s->n < 1 || measure_n(s, -1, &g, 2 * s->min_boots) ||
	    measure_n(s, (long)s->n - 1, &b, 2 * s->min_boots))
		goto out;
	/* the ends must differ at level alpha, else there is nothing to bisect */
	if (stats_welch(g.x, g.n, b.x, b.n, &w) || !(w.p < s->alpha)) {
		ret = 0;
		goto out;
	}
	s->v[s->n - 1] = BISECT_BAD;
	for (;;) {
		size_t i = bisect_next(s->v, s->n, NULL);
		struct sample m = { NULL, 0 };
		enum bisect_verdict v = BISECT_UNTESTED;

		if (i >= s->n)
			break;
		s->steps++;
		for (int k = bisect_first_boots(s->cal != NULL, s->min_boots); k <= s->max_boots && v == BISECT_UNTESTED;
		     k = bisect_more_boots(k, s->min_boots)) {
			if (measure_n(s, (long)i, &m, k)) {
				v = BISECT_SKIP;	/* does not build or boot */
				break;
			}
			v = bisect_classify_cal(g.x, g.n, b.x, b.n, m.x, m.n, s->alpha, s->cal, NULL, NULL, NULL);
		}
		s->v[i] = v == BISECT_UNTESTED ? BISECT_SKIP : v;
		free(m.x);
	}
	s->first_bad = bisect_first_bad(s->v, s->n, &s->ambiguous);
	ret = 0;
out:
	free(g.x);
	free(b.x);
	return ret;
}

void bisect_sim_release(struct bisect_sim *s)
{
	free(s->v);
	s->v = NULL;
}

void bisect_mail(struct buf *out, const struct bisect_answer *a, int regression)
{
	const char *what = regression ? "regression" : "improvement";
	char sha[13];

	snprintf(sha, sizeof(sha), "%s", a->commit ? a->commit : "?");
	buf_addf(out, "Greeting,\n\nklab noticed a %+.1f%% %s of %s.%s on commit %s (\"%s\")%s\n\n",
		 a->change_pct, what, a->workload, a->metric, sha, a->subject ? a->subject : "",
		 a->ambiguous ? ", or on a skipped commit just before it" : "");
	buf_addf(out, "commit: %s\ntree:   %s\n\n", a->commit ? a->commit : "?", a->tree);
	buf_addf(out, "%s.%s: %+.2f%% (95%% CI %+.2f%% to %+.2f%%)%s%s, measured by %s\n", a->workload, a->metric,
		 a->change_pct, a->ci_lo, a->ci_hi, a->unit ? " " : "", a->unit ? a->unit : "",
		 a->clock ? a->clock : "real time");
	buf_addf(out, "good: %s (%s)\nbad:  %s (%s)\n", a->good, a->good_kernel ? a->good_kernel : "?", a->bad,
		 a->bad_kernel ? a->bad_kernel : "?");
	buf_addf(out, "machines: dut %s, peer %s\n", a->dut ? a->dut : "?", a->peer ? a->peer : "?");
	buf_addf(out, "bisection %lld: %d steps, %d boots; each step classified at an error rate of %g\n\n",
		 a->id, a->steps, a->boots, a->alpha);
	buf_addf(out, "To reproduce:\n\n"
		 "\tklab bisect start --tree %s --good %s --bad %s --workload %s --metric %s\n"
		 "\tklab bisect show %lld\n\n", a->tree, a->good, a->bad, a->workload, a->metric, a->id);
	buf_addf(out, "If you fix the issue, kindly add the following tag\n"
		 "Reported-by: klab performance lab <klab@localhost>\n");
}
