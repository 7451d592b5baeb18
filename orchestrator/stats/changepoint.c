/* changepoint.c: change points of a nightly series, E-divisive means + t-test in the manner of Apache Otava. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/changepoint.h"
#include "stats/stats.h"
#include "util.h"

/*
 * Welch's t-test rather than Otava's pooled one: with pooled variance a
 * short segment that straddles a step (100 106 106 after forty 100s) borrows
 * the small variance of the long one and looks significant, which moves
 * change points one index early; Welch keeps each segment's own spread.
 */
double cp_ttest(const double *x, size_t a, size_t b, size_t c)
{
	struct stats_welch w;

	if (b - a < 2 || c - b < 2)
		return 1;
	if (stats_welch(x + a, b - a, x + b, c - b, &w))
		return 1;
	return w.p;
}

/*
 * Sum of |x_i - x_j| over the rectangle a1 <= i < a2, b1 <= j < b2 of the
 * window, from 2-D prefix sums P[(i)(w+1) + j] = sum over i' < i, j' < j.
 */
static double rect(const double *P, size_t w1, size_t a1, size_t a2, size_t b1, size_t b2)
{
	return P[a2 * w1 + b2] - P[a1 * w1 + b2] - P[a2 * w1 + b1] + P[a1 * w1 + b1];
}

/* E-divisive Q of X = [a, tau) against Y = [tau, kappa) (window-relative indices). */
static double qval(const double *P, size_t w1, size_t a, size_t tau, size_t kappa)
{
	double n = (double)(tau - a), m = (double)(kappa - tau), q;

	q = 2 / (m + n) * rect(P, w1, a, tau, tau, kappa);
	if (n > 1)
		q -= 2 * m / ((m + n) * (n - 1)) * rect(P, w1, a, tau, a, tau) / 2;
	if (m > 1)
		q -= 2 * n / ((m + n) * (m - 1)) * rect(P, w1, tau, kappa, tau, kappa) / 2;
	return q;
}

static double *prefix_sums(const double *x, size_t w)
{
	size_t w1 = w + 1;
	double *P = xcalloc(w1 * w1, sizeof(*P));

	for (size_t i = 0; i < w; i++)
		for (size_t j = 0; j < w; j++)
			P[(i + 1) * w1 + j + 1] = fabs(x[i] - x[j]) + P[i * w1 + j + 1] +
						  P[(i + 1) * w1 + j] - P[i * w1 + j];
	return P;
}

double cp_qhat(const double *x, size_t n, size_t tau)
{
	double *P, q;

	if (tau < 1 || tau >= n)
		return NAN;
	P = prefix_sums(x, n);
	q = qval(P, n + 1, 0, tau, n);
	free(P);
	return q;
}

struct idxvec {
	size_t *v;
	size_t n, alloc;
};

static void idx_insert_sorted(struct idxvec *iv, size_t idx)
{
	size_t k = 0;

	for (size_t i = 0; i < iv->n; i++)
		if (iv->v[i] == idx)
			return;
	if (iv->n == iv->alloc) {
		iv->alloc = iv->alloc ? 2 * iv->alloc : 8;
		iv->v = xrealloc(iv->v, iv->alloc * sizeof(*iv->v));
	}
	while (k < iv->n && iv->v[k] < idx)
		k++;
	memmove(iv->v + k + 1, iv->v + k, (iv->n - k) * sizeof(*iv->v));
	iv->v[k] = idx;
	iv->n++;
}

/*
 * Split one window x[s, e) recursively: take the best E-divisive candidate
 * over the current intervals (both sides >= min_seg), keep it when the
 * t-test of its two sides within its interval gives p <= p_weak, stop at
 * the first that fails. Found indices (absolute) go into `out`; returns
 * the largest one found, or 0.
 */
static size_t split_window(const double *x, size_t s, size_t e, const struct cp_opts *o,
			   struct idxvec *out)
{
	size_t w = e - s, w1 = w + 1, last = 0, ms = o->min_seg;
	double *P = prefix_sums(x + s, w);
	struct idxvec local = { 0 };

	for (;;) {
		double best_q = -INFINITY;
		size_t best_tau = 0, best_a = 0, best_c = 0;

		for (size_t k = 0; k <= local.n; k++) {
			size_t a = k ? local.v[k - 1] : 0, c = k < local.n ? local.v[k] : w;

			if (c - a < 2 * ms)
				continue;
			for (size_t tau = a + ms; tau + ms <= c; tau++)
				for (size_t kappa = tau + ms; kappa <= c; kappa++) {
					double q = qval(P, w1, a, tau, kappa);

					if (q > best_q) {
						best_q = q;
						best_tau = tau;
						best_a = a;
						best_c = c;
					}
				}
		}
		if (!best_tau)
			break;
		if (cp_ttest(x + s, best_a, best_tau, best_c) > o->p_weak)
			break;
		idx_insert_sorted(&local, best_tau);
	}
	for (size_t i = 0; i < local.n; i++) {
		idx_insert_sorted(out, s + local.v[i]);
		if (s + local.v[i] > last)
			last = s + local.v[i];
	}
	free(local.v);
	free(P);
	return last;
}

/* Statistics of change point k of `iv` against its neighbouring segments. */
static void point_stats(const double *x, size_t n, const struct idxvec *iv, size_t k,
			const struct cp_opts *o, struct cp_point *pt)
{
	size_t a = k ? iv->v[k - 1] : 0, b = iv->v[k], c = k + 1 < iv->n ? iv->v[k + 1] : n;
	size_t n1 = b - a, n2 = c - b;
	double v1 = n1 > 1 ? stats_var(x + a, n1) : 0, v2 = n2 > 1 ? stats_var(x + b, n2) : 0;

	memset(pt, 0, sizeof(*pt));
	pt->idx = b;
	pt->mean_before = stats_mean(x + a, n1);
	pt->mean_after = stats_mean(x + b, n2);
	pt->change_pct = pt->mean_before != 0 ? 100 * (pt->mean_after / pt->mean_before - 1) : 0;
	pt->p = (n1 < o->min_seg || n2 < o->min_seg) ? 1 : cp_ttest(x, a, b, c);
	pt->mde_pct = INFINITY;
	if (n1 + n2 > 2 && pt->mean_before != 0) {
		struct stats_welch sw;
		double se = sqrt(v1 / (double)n1 + v2 / (double)n2), df = (double)(n1 + n2 - 2);

		if (n1 > 1 && n2 > 1 && !stats_welch(x + a, n1, x + b, n2, &sw) && sw.df > 0)
			df = sw.df;
		pt->mde_pct = 100 * (stats_t_ppf(0.975, df) + stats_t_ppf(0.80, df)) * se /
			      fabs(pt->mean_before);
	}
	pt->alert = n - b >= o->min_after;
}

/* Otava's magnitude: the larger of the forward and backward relative changes. */
static double magnitude(const struct cp_point *pt)
{
	double f = pt->mean_before != 0 ? fabs(pt->mean_after / pt->mean_before - 1) : 0;
	double b = pt->mean_after != 0 ? fabs(pt->mean_before / pt->mean_after - 1) : 0;

	return 100 * fmax(f, b);
}

/*
 * E-divisive (with its free right end kappa) may place a step one index
 * off when the point at the step lies between the levels. Move each kept
 * point, within min_seg of where it is, to the split of its two
 * neighbouring segments with the largest n1 n2 / (n1 + n2) (m2 - m1)^2:
 * the maximum-likelihood single mean shift.
 */
static void refine(const double *x, size_t n, struct idxvec *iv, size_t ms)
{
	for (size_t k = 0; k < iv->n; k++) {
		size_t a = k ? iv->v[k - 1] : 0, c = k + 1 < iv->n ? iv->v[k + 1] : n;
		size_t lo = iv->v[k] > a + ms + ms ? iv->v[k] - ms : a + ms;
		size_t hi = iv->v[k] + ms + ms < c ? iv->v[k] + ms : c - ms;
		double best = -1;

		for (size_t t = lo; t <= hi; t++) {
			double n1 = (double)(t - a), n2 = (double)(c - t);
			double d = stats_mean(x + t, c - t) - stats_mean(x + a, t - a);
			double v = n1 * n2 / (n1 + n2) * d * d;

			if (v > best) {
				best = v;
				iv->v[k] = t;
			}
		}
	}
}

int cp_detect(const double *x, size_t n, const struct cp_opts *opts, struct cp_result *res)
{
	struct cp_opts o = opts ? *opts : (struct cp_opts)CP_OPTS_INIT;
	struct idxvec iv = { 0 };
	struct cp_point *pts = NULL;
	size_t w, step, start = 0;

	res->pts = NULL;
	res->n = 0;
	if (o.min_seg < 1 || o.window_min < 2 || o.window_max < o.window_min)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -1;
	if (n < 2 * o.min_seg)
		return 0;

	/* 1. Split: sliding windows, union of the weak change points. */
	w = n <= o.window_min ? o.window_min : n < o.window_max ? n : o.window_max;
	step = w / 2 ? w / 2 : 1;
	while (start < n) {
		size_t end = start + w < n ? start + w : n, last;

		last = end - start >= 2 * o.min_seg ? split_window(x, start, end, &o, &iv) : 0;
		start = last > start + step ? last : start + step;
	}

	/* 2. Merge: drop the weakest until all are strong enough. */
	while (iv.n) {
		size_t worst = 0;
		double worst_p = -1, worst_margin = INFINITY;
		int drop = 0;

		pts = xrealloc(pts, iv.n * sizeof(*pts));
		for (size_t k = 0; k < iv.n; k++)
			point_stats(x, n, &iv, k, &o, &pts[k]);
		for (size_t k = 0; k < iv.n; k++)
			if (pts[k].p > worst_p) {
				worst_p = pts[k].p;
				worst = k;
			}
		if (worst_p >= o.p_max) {
			drop = 1;
		} else {
			for (size_t k = 0; k < iv.n; k++) {
				double floor = fmax(o.threshold_pct, 2 * pts[k].mde_pct);
				double margin = magnitude(&pts[k]) - floor;

				if (margin < worst_margin) {
					worst_margin = margin;
					worst = k;
				}
			}
			drop = worst_margin < 0;
		}
		if (!drop)
			break;
		memmove(iv.v + worst, iv.v + worst + 1, (iv.n - worst - 1) * sizeof(*iv.v));
		iv.n--;
	}
	if (iv.n) {
		refine(x, n, &iv, o.min_seg);
		for (size_t k = 0; k < iv.n; k++)
			point_stats(x, n, &iv, k, &o, &pts[k]);
		res->pts = pts;
		res->n = iv.n;
		pts = NULL;
	}
	free(pts);
	free(iv.v);
	return 0;
}

void cp_result_free(struct cp_result *res)
{
	free(res->pts);
	res->pts = NULL;
	res->n = 0;
}
