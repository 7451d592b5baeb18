/* monitor_cost.c: each monitor's cost per operation, from a boot's observation runs against its measurement runs (docs/observation.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare/monitor_cost.h"
#include "stats/stats.h"
#include "util.h"

/*
 * The mean rate and cost per operation of the measured runs of (side, boot),
 * and half the 95% interval of one more run's rate in % of the mean (NaN
 * with fewer than 2 runs): 0, or -1 when there are none.
 */
static int boot_reference(const struct run_cost *runs, size_t n, int warmup, char side, int boot,
			  double *rate, double *per_op, double *ci_pct)
{
	double sr = 0, sp = 0, ss = 0;
	size_t nr = 0, np = 0;

	for (size_t i = 0; i < n; i++) {
		const struct run_cost *r = &runs[i];

		if (r->observe || r->side != side || r->boot != boot || r->seq < warmup)
			continue;
		if (isfinite(r->rate) && r->rate > 0) {
			sr += r->rate;
			nr++;
		}
		if (isfinite(r->per_op)) {
			sp += r->per_op;
			np++;
		}
	}
	*rate = nr ? sr / (double)nr : NAN;
	*per_op = np ? sp / (double)np : NAN;
	*ci_pct = NAN;
	if (nr >= 2) {
		for (size_t i = 0; i < n; i++) {
			const struct run_cost *r = &runs[i];

			if (!r->observe && r->side == side && r->boot == boot && r->seq >= warmup &&
			    isfinite(r->rate) && r->rate > 0)
				ss += (r->rate - *rate) * (r->rate - *rate);
		}
		*ci_pct = stats_t_ppf(0.975, (double)nr - 1) * sqrt(ss / (double)(nr - 1)) / *rate *
			  sqrt(1 + 1 / (double)nr) * 100;
	}
	return nr || np ? 0 : -1;
}

struct acc {
	int boots;
	double rate, ci2, per_op, per_op_pct;
	int nrate, nci, nper;
};

static void acc_add(struct acc *a, double rate_pct, double ci, double per_op, double per_op_pct)
{
	a->boots++;
	if (isfinite(rate_pct)) {
		a->rate += rate_pct;
		a->nrate++;
		if (isfinite(ci)) {
			a->ci2 += ci * ci;
			a->nci++;
		}
	}
	if (isfinite(per_op) && isfinite(per_op_pct)) {
		a->per_op += per_op;
		a->per_op_pct += per_op_pct;
		a->nper++;
	}
}

static struct mc_side acc_mean(const struct acc *a)
{
	struct mc_side s = { a->boots, NAN, NAN, NAN, NAN };

	if (a->nrate)
		s.rate_pct = a->rate / a->nrate;
	if (a->nci && a->nci == a->nrate)	/* the mean of independent estimates */
		s.rate_ci = sqrt(a->ci2) / a->nci;
	if (a->nper) {
		s.per_op = a->per_op / a->nper;
		s.per_op_pct = a->per_op_pct / a->nper;
	}
	return s;
}

static size_t row_of(struct mc_row *rows, size_t *nrows, size_t max, const char *monitor)
{
	for (size_t i = 0; i < *nrows; i++)
		if (!strcmp(rows[i].monitor, monitor))
			return i;
	if (*nrows == max)
		return max;
	memset(&rows[*nrows], 0, sizeof(rows[*nrows]));
	snprintf(rows[*nrows].monitor, sizeof(rows[*nrows].monitor), "%s", monitor);
	return (*nrows)++;
}

size_t monitor_cost_table(const struct run_cost *runs, size_t n, int warmup, int rate_better_higher,
			  double threshold_pct, struct mc_row *rows, size_t max)
{
	struct acc acc[2][64];
	size_t nrows = 0;

	if (max > ARRAY_SIZE(acc[0]))
		max = ARRAY_SIZE(acc[0]);
	memset(acc, 0, sizeof(acc));
	for (size_t i = 0; i < n; i++) {
		const struct run_cost *r = &runs[i];
		double ref_rate, ref_per_op, ref_ci, rate_pct = NAN, per_op = NAN, per_op_pct = NAN;
		int bare;
		size_t k;

		if (!r->observe || !r->observes || (r->side != 'A' && r->side != 'B'))
			continue;
		if (boot_reference(runs, n, warmup, r->side, r->boot, &ref_rate, &ref_per_op, &ref_ci))
			continue;
		if ((k = row_of(rows, &nrows, max, r->observes)) == max)
			continue;
		bare = !strcmp(r->observes, "bare");
		if (isfinite(ref_rate) && isfinite(r->rate) && r->rate > 0) {
			/* the extra time an operation takes with the monitor (bare: the edge monitors' against none) */
			double slow = bare ? r->rate / ref_rate : ref_rate / r->rate;

			rate_pct = ((rate_better_higher ? slow : 1 / slow) - 1) * 100;
		}
		if (!bare && isfinite(ref_per_op) && isfinite(r->per_op) && ref_per_op != 0) {
			per_op = r->per_op - ref_per_op;
			per_op_pct = per_op / ref_per_op * 100;
		}
		acc_add(&acc[r->side == 'B'][k], rate_pct, ref_ci, per_op, per_op_pct);
	}
	for (size_t k = 0; k < nrows; k++) {
		struct mc_row *row = &rows[k];
		double da, db;

		row->a = acc_mean(&acc[0][k]);
		row->b = acc_mean(&acc[1][k]);
		da = isfinite(row->a.rate_pct) && isfinite(row->b.rate_pct) ? row->a.rate_pct : row->a.per_op_pct;
		db = isfinite(row->a.rate_pct) && isfinite(row->b.rate_pct) ? row->b.rate_pct : row->b.per_op_pct;
		row->differs = isfinite(da) && isfinite(db) && fabs(da - db) > threshold_pct;
		/* where both costs have an interval, the difference must be outside their combined one too */
		if (row->differs && isfinite(row->a.rate_pct) && isfinite(row->b.rate_pct) &&
		    isfinite(row->a.rate_ci) && isfinite(row->b.rate_ci))
			row->differs = fabs(row->a.rate_pct - row->b.rate_pct) >
				       sqrt(row->a.rate_ci * row->a.rate_ci + row->b.rate_ci * row->b.rate_ci);
	}
	return nrows;
}
