/* stats.c: t and normal distributions, Welch on logs, exact Mann-Whitney, Holm, verdicts (pure math). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "util.h"

double stats_mean(const double *x, size_t n)
{
	double s = 0;

	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

/* Two-pass variance: the values are large (Mpps) and close together. */
double stats_var(const double *x, size_t n)
{
	double m, s = 0;

	if (n < 2)
		return NAN;
	m = stats_mean(x, n);
	for (size_t i = 0; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	return s / (double)(n - 1);
}

/* The k-th smallest of c[0..n) (Hoare's quickselect, c is reordered): O(n), no sort. */
static double select_kth(double *c, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double pivot = c[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (c[i] < pivot)
				i++;
			while (c[j] > pivot)
				j--;
			if (i <= j) {
				double t = c[i];

				c[i] = c[j];
				c[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return c[k];
	}
	return c[k];
}

/*
 * x[0..n) ascending: quicksort with the comparisons inline (median of three,
 * Hoare's partition, insertion sort below 16, the smaller part first so the
 * stack stays log n deep). A kernel side is 10k boot values a metric; this is
 * several times faster than qsort() with a comparison function.
 */
static void sort_doubles(double *x, size_t n)
{
	while (n > 16) {
		size_t m = n / 2, left;
		ptrdiff_t i = -1, j = (ptrdiff_t)n;
		double p, t;

#define SWAP(u, v) (t = (u), (u) = (v), (v) = t)
		if (x[m] < x[0])
			SWAP(x[m], x[0]);
		if (x[n - 1] < x[0])
			SWAP(x[n - 1], x[0]);
		if (x[n - 1] < x[m])
			SWAP(x[n - 1], x[m]);
		p = x[m];
		for (;;) {
			do
				i++;
			while (x[i] < p);
			do
				j--;
			while (x[j] > p);
			if (i >= j)
				break;
			SWAP(x[i], x[j]);
		}
#undef SWAP
		left = (size_t)j + 1;	/* x[0..left) <= p <= x[left..n) */
		if (left < n - left) {
			sort_doubles(x, left);
			x += left, n -= left;
		} else {
			sort_doubles(x + left, n - left);
			n = left;
		}
	}
	for (size_t i = 1; i < n; i++) {
		double v = x[i];
		size_t k = i;

		for (; k > 0 && x[k - 1] > v; k--)
			x[k] = x[k - 1];
		x[k] = v;
	}
}

/* Median of c[0..n), reordering c. */
static double median_inplace(double *c, size_t n)
{
	double hi = select_kth(c, n, n / 2), lo;

	if (n % 2)
		return hi;
	/* the largest of the lower half, which select_kth left below n/2 */
	lo = c[0];
	for (size_t i = 1; i < n / 2; i++)
		if (c[i] > lo)
			lo = c[i];
	return (lo + hi) / 2;
}

double stats_median(const double *x, size_t n)
{
	double *c, m;

	if (!n)
		return NAN;
	c = xmalloc(n * sizeof(*c));
	memcpy(c, x, n * sizeof(*c));
	m = median_inplace(c, n);
	free(c);
	return m;
}

double stats_lgamma(double x)
{
	/* lgamma_r: no global signgam, so safe in any thread. */
	int sign;

	return lgamma_r(x, &sign);
}

/*
 * Continued fraction of the incomplete beta (Numerical Recipes 6.4, with
 * the modified Lentz method); converges fast for x < (a+1)/(a+b+2).
 */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-16;
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 - qab * x / qap, h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 10000; m++) {
		int m2 = 2 * m;
		double aa = m * (b - m) * x / ((qam + m2) * (a + m2)), del;

		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

double stats_betainc(double a, double b, double x)
{
	double lbt;

	if (isnan(a) || isnan(b) || isnan(x) || a <= 0 || b <= 0)
		return NAN;
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lbt = stats_lgamma(a + b) - stats_lgamma(a) - stats_lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * betacf(a, b, x) / a;
	return 1 - exp(lbt) * betacf(b, a, 1 - x) / b;
}

/* P(|T| > |t|) for T ~ t(df): I_{df/(df+t^2)}(df/2, 1/2), precise for small p. */
static double t_two_sided(double t, double df)
{
	if (isnan(t) || isnan(df) || df <= 0)
		return NAN;
	if (isinf(t))
		return 0;
	return stats_betainc(df / 2, 0.5, df / (df + t * t));
}

double stats_t_cdf(double t, double df)
{
	double tail = t_two_sided(t, df) / 2;

	if (isnan(tail))
		return NAN;
	return t > 0 ? 1 - tail : tail;
}

double stats_t_ppf(double p, double df)
{
	double lo = -1, hi = 1;

	if (isnan(p) || isnan(df) || df <= 0 || p <= 0 || p >= 1)
		return p == 0 ? -INFINITY : p == 1 ? INFINITY : NAN;
	if (p == 0.5)
		return 0;
	/* Symmetric: solve in the upper half for precision. */
	if (p < 0.5)
		return -stats_t_ppf(1 - p, df);
	lo = 0;
	while (stats_t_cdf(hi, df) < p) {
		lo = hi;
		hi *= 2;
		if (hi > 1e300)
			return INFINITY;
	}
	for (int i = 0; i < 300 && hi - lo > 1e-15 * hi; i++) {
		double mid = (lo + hi) / 2;

		/* Compare upper tails: 1 - cdf loses digits near 1. */
		if (t_two_sided(mid, df) / 2 > 1 - p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double stats_norm_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

/* Acklam's rational approximation (rel. error 1.15e-9), then one Halley step. */
double stats_norm_ppf(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
		-2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01,
		2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
		-1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
		-2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00,
		2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
		2.445134137142996e+00, 3.754408661907416e+00 };
	double q, r, x, e, u;

	if (isnan(p) || p < 0 || p > 1)
		return NAN;
	if (p == 0)
		return -INFINITY;
	if (p == 1)
		return INFINITY;
	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p <= 1 - 0.02425) {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	} else {
		q = sqrt(-2 * log1p(-p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	e = stats_norm_cdf(x) - p;
	u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct stats_welch *w)
{
	double va, vb, qa, qb;

	w->d = w->se = w->df = w->t = w->p = NAN;
	if (na < 2 || nb < 2)
		return -1;
	va = stats_var(a, na);
	vb = stats_var(b, nb);
	qa = va / (double)na;
	qb = vb / (double)nb;
	w->d = stats_mean(b, nb) - stats_mean(a, na);
	w->se = sqrt(qa + qb);
	if (w->se == 0) {
		w->df = (double)(na + nb - 2);
		w->t = w->d == 0 ? 0 : w->d > 0 ? INFINITY : -INFINITY;
		w->p = w->d == 0 ? 1 : 0;
		return 0;
	}
	w->df = (qa + qb) * (qa + qb) /
		(qa * qa / (double)(na - 1) + qb * qb / (double)(nb - 1));
	w->t = w->d / w->se;
	w->p = t_two_sided(w->t, w->df);
	return 0;
}

/*
 * Doubled mid-ranks (integers: a tie group at 1-based positions i..j gets
 * i + j), the doubled rank sum of side a, and the tie term sum(t^3 - t):
 * both sides sorted, then merged a tie group at a time. The ranks come in
 * the merged order (the exact test only needs them all).
 */
static long *mid_ranks2(const double *a, size_t na, const double *b, size_t nb,
			long *r2a, double *tie_term, int *ties)
{
	size_t n = na + nb, i = 0, j = 0, pos = 0;
	double *sa = xmalloc((na + nb) * sizeof(*sa)), *sb = sa + na;
	long *rk = xmalloc(n * sizeof(*rk));

	memcpy(sa, a, na * sizeof(*sa));
	memcpy(sb, b, nb * sizeof(*sb));
	sort_doubles(sa, na);
	sort_doubles(sb, nb);
	*r2a = 0;
	*tie_term = 0;
	*ties = 0;
	while (i < na || j < nb) {
		double v = j == nb || (i < na && sa[i] <= sb[j]) ? sa[i] : sb[j];
		size_t ca = 0, cb = 0, t;
		long r2;

		while (i + ca < na && sa[i + ca] == v)
			ca++;
		while (j + cb < nb && sb[j + cb] == v)
			cb++;
		if (!ca && !cb) {	/* a NaN: a group of its own */
			if (i < na && isnan(sa[i]))
				ca = 1;
			else
				cb = 1;
		}
		t = ca + cb;
		r2 = (long)(pos + 1 + pos + t);
		for (size_t k = 0; k < t; k++)
			rk[pos + k] = r2;
		*r2a += (long)ca * r2;
		if (t > 1) {
			*ties = 1;
			*tie_term += (double)t * (double)t * (double)t - (double)t;
		}
		pos += t, i += ca, j += cb;
	}
	free(sa);
	return rk;
}

int stats_mwu_exact(const double *a, size_t na, const double *b, size_t nb, struct stats_mwu *m)
{
	size_t n = na + nb;
	long r2a, maxs = 0;
	double tie_term, total, le = 0, ge = 0, *f;
	long *rk;

	m->u = m->p = NAN;
	m->exact = 1;
	if (!na || !nb)
		return -1;
	rk = mid_ranks2(a, na, b, nb, &r2a, &tie_term, &m->ties);
	for (size_t i = 0; i < n; i++)
		maxs += rk[i];
	/*
	 * f[k][s]: ways to pick k of the items seen so far with doubled rank
	 * sum s. Counts stay below C(n, na), exact in a double up to n ~ 55.
	 */
	f = xcalloc((na + 1) * (size_t)(maxs + 1), sizeof(*f));
#define F(k, s) f[(size_t)(k) * (size_t)(maxs + 1) + (size_t)(s)]
	F(0, 0) = 1;
	for (size_t i = 0; i < n; i++) {
		size_t kmax = i + 1 < na ? i + 1 : na;

		for (size_t k = kmax; k >= 1; k--)
			for (long s = maxs; s >= rk[i]; s--)
				F(k, s) += F(k - 1, s - rk[i]);
	}
	total = 0;
	for (long s = 0; s <= maxs; s++) {
		double c = F(na, s);

		total += c;
		if (s <= r2a)
			le += c;
		if (s >= r2a)
			ge += c;
	}
#undef F
	m->u = (double)r2a / 2 - (double)na * (double)(na + 1) / 2;
	m->p = 2 * fmin(le, ge) / total;
	if (m->p > 1)
		m->p = 1;
	free(f);
	free(rk);
	return 0;
}

int stats_mwu_normal(const double *a, size_t na, const double *b, size_t nb, struct stats_mwu *m)
{
	double n = (double)(na + nb), tie_term, mu, s, u, z;
	long r2a;
	long *rk;

	m->u = m->p = NAN;
	m->exact = 0;
	if (!na || !nb)
		return -1;
	rk = mid_ranks2(a, na, b, nb, &r2a, &tie_term, &m->ties);
	free(rk);
	m->u = (double)r2a / 2 - (double)na * (double)(na + 1) / 2;
	mu = (double)na * (double)nb / 2;
	s = sqrt((double)na * (double)nb / 12 * ((n + 1) - tie_term / (n * (n - 1))));
	if (!(s > 0)) {
		m->p = 1;
		return 0;
	}
	u = fmax(m->u, (double)na * (double)nb - m->u);
	z = (u - mu - 0.5) / s;
	m->p = 2 * stats_norm_cdf(-z);
	if (m->p > 1)
		m->p = 1;
	return 0;
}

int stats_mwu(const double *a, size_t na, const double *b, size_t nb, struct stats_mwu *m)
{
	if (na + nb <= STATS_MWU_EXACT_MAX)
		return stats_mwu_exact(a, na, b, nb, m);
	return stats_mwu_normal(a, na, b, nb, m);
}

/*
 * Pairs with b_j - a_i <= x (as a_i >= b_j - x), for a and b sorted
 * ascending, in O(na + nb); with the largest difference among them (*in)
 * and the smallest among the others (*out), -inf and +inf when none.
 */
static size_t count_le(const double *a, size_t na, const double *b, size_t nb, double x, double *in, double *out)
{
	size_t cnt = 0, i = 0;

	*in = -INFINITY, *out = INFINITY;
	for (size_t j = 0; j < nb; j++) {
		while (i < na && a[i] < b[j] - x)
			i++;
		cnt += na - i;
		if (i < na && b[j] - a[i] > *in)
			*in = b[j] - a[i];
		if (i > 0 && b[j] - a[i - 1] < *out)
			*out = b[j] - a[i - 1];
	}
	return cnt;
}

/*
 * Calls EACH(d, arg) for every difference d = b_j - a_i in (lo, hi], a and b
 * sorted ascending: for b_j, the a_i in [first >= b_j - hi, first >= b_j - lo),
 * two pointers that only move up. Stops when EACH returns nonzero, and
 * returns that.
 */
static int each_pair_between(const double *a, size_t na, const double *b, size_t nb, double lo, double hi,
			     int (*each)(double d, void *arg), void *arg)
{
	size_t ia = 0, ib = 0;

	for (size_t j = 0; j < nb; j++) {
		while (ia < na && a[ia] < b[j] - hi)
			ia++;
		while (ib < na && a[ib] < b[j] - lo)
			ib++;
		for (size_t i = ia; i < ib; i++) {
			int r = each(b[j] - a[i], arg);

			if (r)
				return r;
		}
	}
	return 0;
}

/* The distinct values of a few tied differences and how often each comes. */
struct tally {
	double val[8];
	size_t cnt[8], nv;
};

static int tally_add(double d, void *arg)
{
	struct tally *t = arg;
	size_t v = 0;

	while (v < t->nv && t->val[v] != d)
		v++;
	if (v == t->nv) {
		if (t->nv == ARRAY_SIZE(t->val))
			return -1;
		t->val[v] = d, t->cnt[t->nv++] = 0;
	}
	t->cnt[v]++;
	return 0;
}

/*
 * The KK-th smallest (1-based) of the pairs in (lo, hi] when they could not
 * be narrowed to a short list: they take a few distinct values, counted
 * here. More than 8 values: hi.
 */
static double kth_tied(const double *a, size_t na, const double *b, size_t nb, double lo, double hi, size_t kk)
{
	struct tally t = { .nv = 0 };
	size_t sum = 0;

	if (each_pair_between(a, na, b, nb, lo, hi, tally_add, &t))
		return hi;
	for (size_t x = 1; x < t.nv; x++)	/* a handful: insertion sort by value */
		for (size_t y = x; y > 0 && t.val[y - 1] > t.val[y]; y--) {
			double tv = t.val[y];
			size_t tc = t.cnt[y];

			t.val[y] = t.val[y - 1], t.cnt[y] = t.cnt[y - 1];
			t.val[y - 1] = tv, t.cnt[y - 1] = tc;
		}
	for (size_t v = 0; v < t.nv; v++)
		if ((sum += t.cnt[v]) >= kk)
			return t.val[v];
	return hi;
}

/* Candidate differences, listed into a fixed-size array. */
struct cands {
	double *c;
	size_t m, max;
};

static int cands_add(double d, void *arg)
{
	struct cands *cs = arg;

	if (cs->m == cs->max)
		return 1;
	cs->c[cs->m++] = d;
	return 0;
}

/*
 * The k-th smallest (1-based) of all b_j - a_i, a and b sorted ascending.
 * Bisection narrows (lo, hi], which holds the k-th, between the smallest
 * difference above lo and the largest at or below hi (both actual
 * differences), until it holds at most 4 (na + nb) pairs, which are listed
 * (for each b_j, a run of a's) and the k-th selected among them, or until
 * those two differences are one value (ties: the answer). About a dozen
 * O(na + nb) counts for 10k x 10k pairs; the answer is one of the
 * differences, as the small path's.
 */
static double kth_difference(const double *a, size_t na, const double *b, size_t nb, size_t k)
{
	double lo = b[0] - a[na - 1], hi = b[nb - 1] - a[0], lo_v, hi_v, junk, v;
	size_t c_lo, c_hi, lim = 4 * (na + nb);
	struct cands cs = { NULL, 0, 0 };

	if (!isfinite(lo) || !isfinite(hi))
		return NAN;
	if (lo == hi)	/* every difference the same (a counter that stays 0, say) */
		return hi;
	/* nothing at or below lo, everything at or below hi (the counts round as the listing does) */
	for (int t = 0; t < 8 && (c_lo = count_le(a, na, b, nb, lo, &junk, &lo_v)) >= k; t++)
		lo -= hi - lo + 1;
	for (int t = 0; t < 8 && (c_hi = count_le(a, na, b, nb, hi, &hi_v, &junk)) < k; t++)
		hi += hi - lo + 1;
	if (c_lo >= k || c_hi < k)
		return NAN;
	for (int steps = 0; c_hi - c_lo > lim; steps++) {
		double mid = lo_v + (hi_v - lo_v) / 2, in, out;
		size_t cnt;

		if (lo_v >= hi_v)	/* one value left between them */
			return hi_v;
		if (mid >= hi_v)	/* two adjacent values: split between them */
			mid = lo_v;
		if (steps > 200)
			return kth_tied(a, na, b, nb, lo, hi, k - c_lo);
		cnt = count_le(a, na, b, nb, mid, &in, &out);
		if (cnt >= k)
			hi = mid, c_hi = cnt, hi_v = in;
		else
			lo = mid, c_lo = cnt, lo_v = out;
	}
	/* the pairs counted at hi and not at lo */
	cs.max = c_hi - c_lo;
	cs.c = xmalloc(cs.max * sizeof(*cs.c));
	each_pair_between(a, na, b, nb, lo, hi, cands_add, &cs);
	v = cs.m == cs.max ? select_kth(cs.c, cs.m, k - c_lo - 1) : NAN;
	free(cs.c);
	return v;
}

/*
 * Up to 1M pairs: the median of the differences by quickselect. Above (a
 * kernel compared across many jobs has thousands of boots per side, and
 * na nb doubles would not fit), kth_difference(): the same median, from a
 * few O(na + nb) counts and a short list of candidate pairs.
 */
double stats_hodges_lehmann(const double *a, size_t na, const double *b, size_t nb)
{
	double *d, m;
	size_t k = 0, n;

	if (!na || !nb)
		return NAN;
	for (size_t i = 0; i < na; i++)
		if (isnan(a[i]))
			return NAN;
	for (size_t j = 0; j < nb; j++)
		if (isnan(b[j]))
			return NAN;
	n = na * nb;
	if (n > STATS_HL_PAIRS_MAX) {
		double *sa = xmalloc(na * sizeof(*sa)), *sb = xmalloc(nb * sizeof(*sb));

		memcpy(sa, a, na * sizeof(*sa));
		memcpy(sb, b, nb * sizeof(*sb));
		sort_doubles(sa, na);
		sort_doubles(sb, nb);
		if (n % 2) {
			m = kth_difference(sa, na, sb, nb, n / 2 + 1);
		} else {
			/* the next difference up: the same value when more than n/2 pairs are at or below it */
			double in, out, lo = kth_difference(sa, na, sb, nb, n / 2);

			m = (lo + (count_le(sa, na, sb, nb, lo, &in, &out) > n / 2 ? lo : out)) / 2;
		}
		free(sa);
		free(sb);
		return m;
	}
	d = xmalloc(n * sizeof(*d));
	for (size_t j = 0; j < nb; j++)
		for (size_t i = 0; i < na; i++)
			d[k++] = b[j] - a[i];
	m = median_inplace(d, k);
	free(d);
	return m;
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *pa, const void *pb)
{
	const struct pidx *a = pa, *b = pb;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

void stats_holm(const double *p, size_t n, double *adj)
{
	struct pidx *s;
	double run = 0;

	if (!n)
		return;
	s = xmalloc(n * sizeof(*s));
	for (size_t i = 0; i < n; i++)
		s[i] = (struct pidx){ isnan(p[i]) ? 1 : p[i], i };
	qsort(s, n, sizeof(*s), cmp_pidx);
	for (size_t k = 0; k < n; k++) {
		double v = (double)(n - k) * s[k].p;

		if (v > 1)
			v = 1;
		if (v > run)
			run = v;
		adj[s[k].i] = isnan(p[s[k].i]) ? NAN : run;
	}
	free(s);
}

const char *stats_verdict_name(enum stats_verdict v)
{
	switch (v) {
	case VERDICT_CHANGED: return "CHANGED";
	case VERDICT_EQUIVALENT: return "EQUIVALENT";
	case VERDICT_DESCRIPTIVE: return "DESCRIPTIVE";
	case VERDICT_INCONCLUSIVE: break;
	}
	return "INCONCLUSIVE";
}

static double pct(double d)
{
	return 100 * expm1(d);
}

/*
 * Boots per side that would likely settle an inconclusive result, assuming
 * the observed effect and spread stay: the smallest n with 80% power either
 * to show the change (|change| >= T and (t_.975 + t_.80) se_n <= |d|) or to
 * show equivalence ((t_.95 + t_.80) se_n <= ln(1 + T) - |d|).
 */
int stats_extra_boots(double d, double s, size_t n_now, double threshold_pct)
{
	double lt = fmin(log1p(threshold_pct / 100), -log1p(-threshold_pct / 100));
	double ad = fabs(d);

	if (isnan(d) || isnan(s) || !(s > 0))
		return -1;
	for (size_t n = n_now + 1; n <= STATS_MAX_BOOTS; n++) {
		double se = s * sqrt(2.0 / (double)n), df = 2.0 * (double)n - 2;
		double t80 = stats_t_ppf(0.80, df);

		if (fabs(pct(d)) >= threshold_pct && (stats_t_ppf(0.975, df) + t80) * se <= ad)
			return (int)(n - n_now);
		if (lt - ad > 0 && (stats_t_ppf(0.95, df) + t80) * se <= lt - ad)
			return (int)(n - n_now);
	}
	return -1;
}

static void describe_sides(const double *a, size_t na, const double *b, size_t nb,
			   struct stats_cmp *c)
{
	memset(c, 0, sizeof(*c));
	c->n_a = na;
	c->n_b = nb;
	c->mean_a = stats_mean(a, na);
	c->mean_b = stats_mean(b, nb);
	c->cov_a = 100 * sqrt(stats_var(a, na)) / fabs(c->mean_a);
	c->cov_b = 100 * sqrt(stats_var(b, nb)) / fabs(c->mean_b);
	c->w.d = c->w.se = c->w.df = c->w.t = c->w.p = NAN;
	c->ci_lo = c->ci_hi = c->ci90_lo = c->ci90_hi = NAN;
	c->p_mwu = c->u = c->hl_ratio = c->mde_pct = NAN;
	c->change_pct = NAN;
	c->threshold_pct = NAN;
	c->extra_boots = -1;
	c->cal = STATS_CAL_NONE;
	c->cal_sd = c->cal_df = c->cal_z = c->cal_f = c->cal_f_p = NAN;
}

void stats_compare_points(const double *a, size_t na, const double *b, size_t nb,
			  struct stats_cmp *c)
{
	describe_sides(a, na, b, nb, c);
	c->change_pct = c->mean_b - c->mean_a;
	c->verdict = VERDICT_DESCRIPTIVE;
}

void stats_compare(const double *a, size_t na, const double *b, size_t nb,
		   double threshold_pct, struct stats_cmp *c)
{
	stats_compare_alpha(a, na, b, nb, threshold_pct, STATS_ALPHA, c);
}

void stats_compare_alpha(const double *a, size_t na, const double *b, size_t nb,
			 double threshold_pct, double alpha, struct stats_cmp *c)
{
	stats_compare_cal(a, na, b, nb, threshold_pct, alpha, NULL, c);
}

double stats_f_sf(double f, double d1, double d2)
{
	if (isnan(f) || !(d1 > 0) || !(d2 > 0))
		return NAN;
	if (f <= 0)
		return 1;
	if (isinf(f))
		return 0;
	/* P(F > f) = I_{d2/(d2 + d1 f)}(d2/2, d1/2) */
	return stats_betainc(d2 / 2, d1 / 2, d2 / (d2 + d1 * f));
}

void stats_pool_add(struct stats_pool *p, const double *x, size_t n)
{
	double m;

	if (n < 2)
		return;
	m = stats_mean(x, n);
	for (size_t i = 0; i < n; i++)
		p->ss += (x[i] - m) * (x[i] - m);
	p->df += (double)(n - 1);
	p->n += n;
	p->groups++;
}

double stats_pool_var(const struct stats_pool *p)
{
	return p->df > 0 ? p->ss / p->df : NAN;
}

double stats_cal_boot_var(double v_boot, double m_boot, double v_run, double m)
{
	double v;

	if (isnan(v_run) || !(m_boot > 0) || !(m > 0) || m == m_boot)
		return v_boot;
	/* Var(boot mean of m runs) = s_b^2 + s_r^2 / m; the calibration saw m_boot runs per boot. */
	v = v_boot + v_run * (1 / m - 1 / m_boot);
	return v > v_run / m ? v : v_run / m;
}

/*
 * Is the job's own spread that of the calibration (docs/statistics.md,
 * "A calibrated instrument")? Every boot of a side of 2 or more lies within
 * STATS_CAL_Z_MAX calibrated sd of its side's mean (its residual's sd is
 * s sqrt((n-1)/n)), and the own pooled variance is not above the
 * calibrated one by an F test at STATS_CAL_F_ALPHA. 1: consistent.
 */
static int cal_consistent(const double *la, size_t na, const double *lb, size_t nb, double var,
			  double df, struct stats_cmp *c)
{
	struct stats_pool own = { 0, 0, 0, 0 };
	double s = sqrt(var), zmax = NAN;

	for (int k = 0; k < 2; k++) {
		const double *x = k ? lb : la;
		size_t n = k ? nb : na;
		double m, f;

		if (n < 2)
			continue;
		m = stats_mean(x, n);
		f = s * sqrt((double)(n - 1) / (double)n);
		for (size_t i = 0; i < n; i++) {
			double z = fabs(x[i] - m) / f;

			if (isnan(zmax) || z > zmax)
				zmax = z;
		}
		stats_pool_add(&own, x, n);
	}
	c->cal_z = zmax;
	if (own.df > 0) {
		c->cal_f = stats_pool_var(&own) / var;
		c->cal_f_p = stats_f_sf(c->cal_f, own.df, df);
	}
	return !(zmax > STATS_CAL_Z_MAX) && !(c->cal_f_p < STATS_CAL_F_ALPHA);
}

/* The t test of d with the calibration's variance pooled with the sides' own (df = df_cal + own df). */
static void cal_test(const double *la, size_t na, const double *lb, size_t nb, double var, double df,
		     struct stats_welch *w)
{
	struct stats_pool own = { 0, 0, 0, 0 };
	double s2;

	stats_pool_add(&own, la, na);
	stats_pool_add(&own, lb, nb);
	s2 = (df * var + own.ss) / (df + own.df);
	w->d = stats_mean(lb, nb) - stats_mean(la, na);
	w->df = df + own.df;
	w->se = sqrt(s2 * (1 / (double)na + 1 / (double)nb));
	w->t = w->d / w->se;
	w->p = t_two_sided(w->t, w->df);
}

void stats_compare_cal(const double *a, size_t na, const double *b, size_t nb, double threshold_pct,
		       double alpha, const struct stats_cal *cal, struct stats_cmp *c)
{
	double *la = NULL, *lb = NULL, tq, t90, t80, tv, te, sp, cvar = NAN;
	int nonpos = 0, same = 1, use_cal = 0;
	struct stats_mwu m;

	describe_sides(a, na, b, nb, c);
	if (cal && cal->df > 0 && cal->var >= 0 && isfinite(cal->var)) {
		cvar = cal->var > STATS_CAL_SD_FLOOR * STATS_CAL_SD_FLOOR ? cal->var
			: STATS_CAL_SD_FLOOR * STATS_CAL_SD_FLOOR;
		c->cal = STATS_CAL_USED;
		c->cal_sd = sqrt(cvar);
		c->cal_df = cal->df;
		use_cal = 1;
	}
	if (!(threshold_pct > 0))
		threshold_pct = 1;
	c->threshold_pct = threshold_pct;
	if (!(alpha > 0 && alpha < 0.5))
		alpha = STATS_ALPHA;
	c->alpha = alpha;
	c->verdict = VERDICT_INCONCLUSIVE;
	for (size_t i = 0; i < na; i++) {
		nonpos |= !(a[i] > 0);
		same &= a[i] == a[0];
	}
	for (size_t i = 0; i < nb; i++) {
		nonpos |= !(b[i] > 0);
		same &= na && b[i] == a[0];
	}
	if (na && nb && c->mean_a != 0)
		c->change_pct = 100 * (c->mean_b / c->mean_a - 1);
	/* With a calibration one boot a side is a test; without, two are the least. */
	if (na < 1 || nb < 1 || (!use_cal && (na < 2 || nb < 2))) {
		size_t lo = na < nb ? na : nb;

		c->extra_boots = (int)((use_cal ? 1 : 3) - lo);
		return;
	}
	if (stats_mwu(a, na, b, nb, &m) == 0) {
		c->p_mwu = m.p;
		c->u = m.u;
	}
	if (same) {
		/* Identical constants (often 0 errors on both sides). */
		c->change_pct = c->ci_lo = c->ci_hi = c->ci90_lo = c->ci90_hi = 0;
		c->w.d = c->w.se = c->w.t = 0;
		c->w.p = 1;
		c->mde_pct = 0;
		c->hl_ratio = 1;
		c->verdict = VERDICT_EQUIVALENT;
		return;
	}
	if (nonpos) {
		c->verdict = VERDICT_DESCRIPTIVE;
		return;
	}
	la = xmalloc(na * sizeof(*la));
	lb = xmalloc(nb * sizeof(*lb));
	for (size_t i = 0; i < na; i++)
		la[i] = log(a[i]);
	for (size_t i = 0; i < nb; i++)
		lb[i] = log(b[i]);
	if (use_cal && !cal_consistent(la, na, lb, nb, cvar, cal->df, c)) {
		/* The job disagrees with the calibration: its own spread alone, as uncalibrated. */
		c->cal = STATS_CAL_REJECTED;
		use_cal = 0;
		if (na < 2 || nb < 2) {
			c->extra_boots = (int)(3 - (na < nb ? na : nb));
			goto out;
		}
	}
	if (use_cal) {
		cal_test(la, na, lb, nb, cvar, cal->df, &c->w);
		sp = c->w.se / sqrt(1 / (double)na + 1 / (double)nb);
	} else {
		stats_welch(la, na, lb, nb, &c->w);
		sp = sqrt((stats_var(la, na) + stats_var(lb, nb)) / 2);
	}
	c->change_pct = pct(c->w.d);
	c->hl_ratio = exp(stats_hodges_lehmann(la, na, lb, nb));
	tq = stats_t_ppf(0.975, c->w.df);
	t90 = stats_t_ppf(0.95, c->w.df);
	t80 = stats_t_ppf(0.80, c->w.df);
	c->ci_lo = pct(c->w.d - tq * c->w.se);
	c->ci_hi = pct(c->w.d + tq * c->w.se);
	c->ci90_lo = pct(c->w.d - t90 * c->w.se);
	c->ci90_hi = pct(c->w.d + t90 * c->w.se);
	c->mde_pct = pct((tq + t80) * c->w.se);
	/* The verdict's intervals: 1 - alpha (two-sided) and 1 - 2 alpha (TOST). */
	tv = alpha == STATS_ALPHA ? tq : stats_t_ppf(1 - alpha / 2, c->w.df);
	te = alpha == STATS_ALPHA ? t90 : stats_t_ppf(1 - alpha, c->w.df);
	if ((pct(c->w.d - tv * c->w.se) > 0 || pct(c->w.d + tv * c->w.se) < 0) &&
	    fabs(c->change_pct) >= threshold_pct)
		c->verdict = VERDICT_CHANGED;
	else if (pct(c->w.d - te * c->w.se) > -threshold_pct && pct(c->w.d + te * c->w.se) < threshold_pct)
		c->verdict = VERDICT_EQUIVALENT;
	else
		c->extra_boots = stats_extra_boots(c->w.d, sp, na > nb ? na : nb, threshold_pct);
out:
	free(la);
	free(lb);
}

int stats_seq_looks(int min, int max, int step)
{
	if (min < 1 || max < min || step < 1)
		return 0;
	/* min, min + step, ... below max, then max itself. */
	return (max - min + step - 1) / step + 1;
}

int stats_seq_look(int min, int max, int step, int n)
{
	if (!stats_seq_looks(min, max, step) || n < min || n > max)
		return 0;
	if (n == max)
		return stats_seq_looks(min, max, step);
	return (n - min) % step ? 0 : (n - min) / step + 1;
}

double stats_seq_alpha(int looks)
{
	return looks > 1 ? STATS_ALPHA / looks : STATS_ALPHA;
}

const char *stats_claim_check(double lo, double hi, double ci_lo, double ci_hi)
{
	double big;

	if (isnan(ci_lo) || isnan(ci_hi))
		return NULL;
	if (isnan(lo))
		lo = hi;
	if (isnan(hi))
		hi = lo;
	if (isnan(lo))
		return NULL;
	if (lo > hi) {
		double t = lo;

		lo = hi;
		hi = t;
	}
	/* A claim of a decrease is checked as the increase of the negated values. */
	if (hi <= 0 && lo < 0) {
		double t = -lo;

		lo = -hi;
		hi = t;
		t = -ci_lo;
		ci_lo = -ci_hi;
		ci_hi = t;
	}
	big = fmax(fabs(lo), fabs(hi));
	if (ci_hi < 0)
		return "opposite";
	if (ci_lo > hi)
		return "larger";
	/* Precise enough when the CI excludes zero, or is narrower than the claimed change. */
	if (!(ci_lo > 0) && !(ci_hi - ci_lo < big))
		return "untestable";
	if (ci_hi < lo)
		return "smaller";
	return "consistent";
}
