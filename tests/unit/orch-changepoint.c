/* orch-changepoint.c: change-point detection on synthetic series: steps, spikes, drifts, short series. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "stats/changepoint.h"
#include "rng.h"
#include "tap.h"

/* splitmix64 + Box-Muller: a fixed, portable noise source. */
static uint64_t rs;

static double unif(void)
{
	uint64_t z = splitmix64(&rs);

	return ((double)(z >> 11) + 0.5) * 0x1.0p-53;
}

static double gauss(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

/* x[i] = level(i) * (1 + cov N(0,1)) */
static void noise(double *x, size_t n, double cov, uint64_t seed)
{
	rs = seed;
	for (size_t i = 0; i < n; i++)
		x[i] *= 1 + cov * gauss();
}

static void fill(double *x, size_t from, size_t to, double v)
{
	for (size_t i = from; i < to; i++)
		x[i] = v;
}

static size_t alerts(const struct cp_result *r)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++)
		k += r->pts[i].alert;
	return k;
}

static void test_qhat(void)
{
	double x[] = { 1, 2, 1.5, 9, 8, 9.5, 8.7 };
	size_t n = ARRAY_SIZE(x);

	for (size_t tau = 1; tau < n; tau++) {
		/* Brute force of the definition. */
		double cross = 0, wl = 0, wr = 0, q;
		double a = (double)tau, b = (double)(n - tau);

		for (size_t i = 0; i < tau; i++)
			for (size_t j = tau; j < n; j++)
				cross += fabs(x[i] - x[j]);
		for (size_t i = 0; i < tau; i++)
			for (size_t j = i + 1; j < tau; j++)
				wl += fabs(x[i] - x[j]);
		for (size_t i = tau; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				wr += fabs(x[i] - x[j]);
		q = a * b / (a + b) * (2 / (a * b) * cross - (a > 1 ? wl / (a * (a - 1) / 2) : 0) -
				       (b > 1 ? wr / (b * (b - 1) / 2) : 0));
		is_double(cp_qhat(x, n, tau), q, 1e-9, "Q-hat at tau %zu matches the definition", tau);
	}
	{
		size_t best = 1;

		for (size_t tau = 2; tau < n; tau++)
			if (cp_qhat(x, n, tau) > cp_qhat(x, n, best))
				best = tau;
		is_int(best, 3, "Q-hat is largest at the step");
	}
	is_double(cp_ttest((double[]){ 1, 1, 1, 2, 2, 2 }, 0, 3, 6), 0, 0, "t-test of two constants: p 0");
	ok(cp_ttest((double[]){ 1, 2, 3, 1, 2, 3 }, 0, 3, 6) > 0.99, "t-test of equal samples: p 1");
}

static void test_steps(void)
{
	double x[200];
	struct cp_opts o = CP_OPTS_INIT;
	struct cp_result r;

	fill(x, 0, 30, 100);
	fill(x, 30, 60, 105);
	noise(x, 60, 0.01, 1);
	ok(cp_detect(x, 60, &o, &r) == 0, "detect runs");
	is_int(r.n, 1, "one step +5%% at CoV 1%%: one change point");
	if (r.n) {
		is_int(r.pts[0].idx, 30, "at index 30");
		ok(r.pts[0].alert, "with 30 points after: alert");
		ok(r.pts[0].change_pct > 3.5 && r.pts[0].change_pct < 6.5, "change %.2f%% near +5%%", r.pts[0].change_pct);
		ok(r.pts[0].p < 0.001, "p %g < 0.001", r.pts[0].p);
	}
	cp_result_free(&r);

	/* Two steps in a series longer than the window (120 > 50): down 5%, up 8%. */
	fill(x, 0, 40, 100);
	fill(x, 40, 80, 95);
	fill(x, 80, 120, 102.6);
	noise(x, 120, 0.01, 2);
	cp_detect(x, 120, &o, &r);
	is_int(r.n, 2, "two steps over several windows: two change points");
	if (r.n == 2) {
		is_int(r.pts[0].idx, 40, "first at 40");
		is_int(r.pts[1].idx, 80, "second at 80");
		ok(r.pts[0].change_pct < 0 && r.pts[1].change_pct > 0, "directions down then up");
	}
	cp_result_free(&r);

	/* A step that no window starts at: 150 points, window 50, step 25. */
	fill(x, 0, 87, 100);
	fill(x, 87, 150, 97);
	noise(x, 150, 0.008, 10);
	cp_detect(x, 150, &o, &r);
	ok(r.n == 1 && r.pts[0].idx == 87, "-3%% at 87 of 150 (inside a window): found at 87 (%zu points, first at %zu)", r.n, r.n ? r.pts[0].idx : 0);
	cp_result_free(&r);

	/* A step at the very end: 3 points after is enough, 2 is not. */
	fill(x, 0, 40, 100);
	fill(x, 40, 43, 106);
	noise(x, 43, 0.005, 3);
	cp_detect(x, 43, &o, &r);
	is_int(r.n, 1, "+6%% with 3 points after: found");
	if (r.n) {
		is_int(r.pts[0].idx, 40, "at 40");
		ok(r.pts[0].alert, "3 points after: alert");
	}
	cp_result_free(&r);
	cp_detect(x, 42, &o, &r);
	is_int(alerts(&r), 0, "+6%% with 2 points after: no alert yet");
	cp_result_free(&r);

	/* Below the threshold T: a clean 0.5% step is significant but not >= T = 1%. */
	fill(x, 0, 40, 100);
	fill(x, 40, 80, 100.5);
	noise(x, 80, 0.001, 4);
	cp_detect(x, 80, &o, &r);
	is_int(r.n, 0, "0.5%% step with T = 1%%: not reported");
	cp_result_free(&r);
	o.threshold_pct = 0.2;
	cp_detect(x, 80, &o, &r);
	ok(r.n == 1 && r.pts[0].idx == 40, "0.5%% step with T = 0.2%%: reported at 40");
	cp_result_free(&r);
}

static void test_spikes_and_noise(void)
{
	double x[100];
	struct cp_opts o = CP_OPTS_INIT;
	struct cp_result r;
	int false_alarm = 0;

	fill(x, 0, 60, 100);
	x[30] = 140;
	noise(x, 60, 0.01, 5);
	cp_detect(x, 60, &o, &r);
	is_int(alerts(&r), 0, "a single +40%% spike: no alert");
	cp_result_free(&r);

	fill(x, 0, 60, 100);
	x[10] = 60;
	x[35] = 150;
	x[58] = 130;
	noise(x, 60, 0.01, 6);
	cp_detect(x, 60, &o, &r);
	is_int(alerts(&r), 0, "three isolated spikes (one near the end): no alert");
	cp_result_free(&r);

	fill(x, 0, 60, 100);
	x[20] = x[21] = 130;
	noise(x, 60, 0.01, 7);
	cp_detect(x, 60, &o, &r);
	is_int(alerts(&r), 0, "a two-point spike (shorter than min segment): no alert");
	cp_result_free(&r);

	for (uint64_t seed = 100; seed < 200; seed++) {
		fill(x, 0, 100, 100);
		noise(x, 100, 0.01, seed);
		cp_detect(x, 100, &o, &r);
		false_alarm += alerts(&r) > 0;
		cp_result_free(&r);
	}
	diag("pure noise (CoV 1%%, 100 points): series with an alert: %d of 100", false_alarm);
	ok(false_alarm <= 3, "pure noise rarely alerts (%d of 100 series)", false_alarm);
}

static void test_drifts(void)
{
	double x[100];
	struct cp_opts o = CP_OPTS_INIT;
	struct cp_result r;
	int pos = 1;

	for (size_t i = 0; i < 60; i++)
		x[i] = 100 * (1 + 0.005 * (double)i / 59);
	noise(x, 60, 0.005, 8);
	cp_detect(x, 60, &o, &r);
	is_int(alerts(&r), 0, "a slow 0.5%% drift (below T): no alert");
	cp_result_free(&r);

	for (size_t i = 0; i < 80; i++)
		x[i] = 100 * (1 + 0.10 * (double)i / 79);
	noise(x, 80, 0.005, 9);
	cp_detect(x, 80, &o, &r);
	ok(r.n >= 1, "a 10%% drift over 80 nights is reported (%zu change points)", r.n);
	for (size_t i = 0; i < r.n; i++)
		pos &= r.pts[i].change_pct > 0;
	ok(pos, "every change point of an upward drift goes up");
	for (size_t i = 0; i < r.n; i++)
		diag("drift change point at %zu: %+.2f%% p=%.2g", r.pts[i].idx, r.pts[i].change_pct, r.pts[i].p);
	cp_result_free(&r);
}

static void test_short(void)
{
	double x[] = { 100, 100.1, 99.9, 110, 110.1, 109.9 };
	struct cp_opts o = CP_OPTS_INIT;
	struct cp_result r;

	ok(cp_detect(x, 0, &o, &r) == 0 && r.n == 0, "empty series");
	ok(cp_detect(x, 1, &o, &r) == 0 && r.n == 0, "one point");
	ok(cp_detect(x, 5, &o, &r) == 0 && r.n == 0, "five points (< 2 min segments)");
	cp_detect(x, 6, &o, &r);
	ok(r.n == 1 && r.pts[0].idx == 3 && r.pts[0].alert, "3 + 3 points with a clean +10%% step: change at 3, alert");
	cp_result_free(&r);
	{
		double bad[] = { 1, NAN, 2 };
		struct cp_opts bo = CP_OPTS_INIT;

		ok(cp_detect(bad, 3, &o, &r) == -1, "NaN refused");
		bo.min_seg = 0;
		ok(cp_detect(x, 6, &bo, &r) == -1, "min_seg 0 refused");
	}
	{
		double c[40];

		fill(c, 0, 40, 7);
		cp_detect(c, 40, &o, &r);
		is_int(r.n, 0, "a constant series has no change point");
		cp_result_free(&r);
	}
}

int main(void)
{
	test_qhat();
	test_steps();
	test_spikes_and_noise();
	test_drifts();
	test_short();
	return done_testing();
}
