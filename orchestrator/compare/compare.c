/* compare.c: A/B comparisons of jobs and kernels from the database, stored and printed (the nightly history is history.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "compare/compare.h"
#include "compare/noise.h"
#include "store/jobs.h"
#include "store/db.h"
#include "store/result.h"
#include "store/runs.h"
#include "store/series.h"
#include "store/ksample.h"
#include "store/side.h"
#include "log.h"
#include "strvec.h"
#include "util.h"

static int prof_cmp(const void *pa, const void *pb)
{
	const struct compare_prof *a = pa, *b = pb;
	int c = strcmp(a->workload, b->workload);
	double da = fabs(a->pct_b - a->pct_a), dbb = fabs(b->pct_b - b->pct_a);

	if (c)
		return c;
	if (da != dbb)
		return da > dbb ? -1 : 1;
	return strcmp(a->symbol, b->symbol);
}

#define PROF_TOP 10

/* Join the two sides' profiles; keep the PROF_TOP largest differences per workload. */
static void merge_profiles(struct profrow *a, size_t na, struct profrow *b, size_t nb,
			   struct compare_result *res)
{
	size_t i = 0, j = 0, n = 0, alloc = 0, k;
	struct compare_prof *all = NULL;

	while (i < na || j < nb) {
		int c;
		struct compare_prof p;

		if (i < na && j < nb) {
			c = strcmp(a[i].workload, b[j].workload);
			if (!c)
				c = strcmp(a[i].symbol, b[j].symbol);
		} else {
			c = i < na ? -1 : 1;
		}
		memset(&p, 0, sizeof(p));
		if (c <= 0) {
			p.workload = a[i].workload;
			p.symbol = a[i].symbol;
			p.dso = a[i].dso;
			p.pct_a = a[i].pct;
		}
		if (c >= 0) {
			if (c > 0) {
				p.workload = b[j].workload;
				p.symbol = b[j].symbol;
				p.dso = b[j].dso;
			}
			p.pct_b = b[j].pct;
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			all = xrealloc(all, alloc * sizeof(*all));
		}
		all[n++] = p;
	}
	if (n)
		qsort(all, n, sizeof(*all), prof_cmp);
	res->prof = n ? xmalloc(n * sizeof(*res->prof)) : NULL;
	res->n_prof = 0;
	for (k = 0; k < n; k++) {
		size_t rank = 0;

		/* position within its workload */
		for (size_t q = k; q > 0 && !strcmp(all[q - 1].workload, all[k].workload); q--)
			rank++;
		if (rank >= PROF_TOP)
			continue;
		res->prof[res->n_prof] = all[k];
		res->prof[res->n_prof].workload = xstrdup(all[k].workload);
		res->prof[res->n_prof].symbol = xstrdup(all[k].symbol);
		res->prof[res->n_prof].dso = all[k].dso ? xstrdup(all[k].dso) : NULL;
		res->n_prof++;
	}
	free(all);
}

/* Percentages (unit "%", names ending in _pct, the per-CPU rows) are compared as point differences. */
static int is_percent(const struct group *g)
{
	return (g->unit && !strcmp(g->unit, "%")) || ends_with(g->metric, "_pct");
}

static const char *const default_headlines[] = {
	"tps", "tx_pps", "rx_pps", "latency_p99_us", "cycles_per_op", "cpu_us_per_op", "insn_per_op",
};

static int is_headline(const char *metric, const char *wl_headline)
{
	if (wl_headline && !strcmp(metric, wl_headline))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(default_headlines); i++)
		if (!strcmp(metric, default_headlines[i]))
			return 1;
	return 0;
}

double compare_default_threshold(const char *clock)
{
	/* icount resolves parts per million: 0.1% is what LLVM's compile-time tracker acts on. */
	if (clock && !strcmp(clock, COMPARE_CLOCK_ICOUNT))
		return 0.1;
	return 1.0;
}

static const char *clock_name(const char *clock)
{
	return clock && !strcmp(clock, COMPARE_CLOCK_ICOUNT) ? COMPARE_CLOCK_ICOUNT : COMPARE_CLOCK_REAL;
}

static double workload_threshold(const struct compare_opts *o, const char *w, const char **headline)
{
	double t = 0;

	*headline = NULL;
	if (o->workload_info)
		t = o->workload_info(o->workload_arg, w, headline);
	if (!(t > 0))
		t = o->threshold_pct > 0 ? o->threshold_pct : compare_default_threshold(o->clock);
	return t;
}

static int group_wanted(const struct compare_opts *o, const struct group *g)
{
	if (o->workload && strcmp(o->workload, g->workload))
		return 0;
	if (o->metric && strcmp(o->metric, g->metric))
		return 0;
	return 1;
}

/* A job's calibrated instrument, for add_row() (NULL: a kernel comparison, or --no-calibration). */
struct noise_ctx {
	struct db *db;
	int64_t job_id;
	struct noise_job nj;
};

/* The comparison of a metric that is not a percentage: with its calibration when there is one. */
static void compare_metric(struct noise_ctx *nc, const struct group *ga, const struct group *gb, double t,
			   double alpha, struct compare_row *r)
{
	struct stats_cal cal;
	struct calib_row cr;
	int found = 0, self = 0;

	if (nc && noise_job_find(nc->db, &nc->nj, ga->workload, ga->metric, &cal, &cr) == 1) {
		found = 1;
		self = noise_cal_without_job(&cal, &cr, nc->job_id, ga->v, ga->n, gb->v, gb->n);
		if (self < 0) {
			/* the calibration is this job alone: judged by its own boots */
			calib_row_release(&cr);
			found = 0;
		}
	}
	if (found) {
		stats_compare_cal(ga->v, ga->n, gb->v, gb->n, t, alpha, &cal, &r->st);
		r->noise.self = self;
		r->noise.boots = cr.boots;
		r->noise.aa_boots = cr.aa_boots;
		r->noise.date = cr.updated;
		r->noise.jobs = cr.jobs, cr.jobs = NULL;
		calib_row_release(&cr);
		return;
	}
	stats_compare_alpha(ga->v, ga->n, gb->v, gb->n, t, alpha, &r->st);
}

static void add_row(struct compare_result *res, size_t *alloc, const struct group *ga,
		    const struct group *gb, const struct compare_opts *o, struct noise_ctx *nc)
{
	struct compare_row *r;
	const char *headline;
	double t = workload_threshold(o, ga->workload, &headline);

	if (res->n_rows == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 32;
		res->rows = xrealloc(res->rows, *alloc * sizeof(*res->rows));
	}
	r = &res->rows[res->n_rows++];
	memset(r, 0, sizeof(*r));
	r->workload = xstrdup(ga->workload);
	r->metric = xstrdup(ga->metric);
	r->unit = ga->unit ? xstrdup(ga->unit) : gb->unit ? xstrdup(gb->unit) : NULL;
	r->better = ga->better ? xstrdup(ga->better) : gb->better ? xstrdup(gb->better) : NULL;
	r->p_holm = NAN;
	r->claim_pct = NAN;
	if (is_percent(ga)) {
		stats_compare_points(ga->v, ga->n, gb->v, gb->n, &r->st);
		r->st.threshold_pct = t;
		if (r->unit && !strcmp(r->unit, "%")) {
			free(r->unit);
			r->unit = xstrdup("pp");
		}
	} else {
		compare_metric(nc, ga, gb, t, o->alpha, r);
		r->headline = is_headline(r->metric, headline);
	}
}

/* Holm across the headline metrics that have a p value; CHANGED needs p_holm < alpha (0.05) too. */
static void apply_holm(struct compare_result *res, double alpha)
{
	size_t n = 0, k = 0;
	double *p, *adj;

	for (size_t i = 0; i < res->n_rows; i++)
		n += res->rows[i].headline && !isnan(res->rows[i].st.w.p);
	if (!n)
		return;
	p = xmalloc(n * sizeof(*p));
	adj = xmalloc(n * sizeof(*adj));
	for (size_t i = 0; i < res->n_rows; i++)
		if (res->rows[i].headline && !isnan(res->rows[i].st.w.p))
			p[k++] = res->rows[i].st.w.p;
	stats_holm(p, n, adj);
	k = 0;
	for (size_t i = 0; i < res->n_rows; i++) {
		struct compare_row *r = &res->rows[i];

		if (!r->headline || isnan(r->st.w.p))
			continue;
		r->p_holm = adj[k++];
		if (r->st.verdict == VERDICT_CHANGED && !(r->p_holm < alpha)) {
			size_t nn = r->st.n_a > r->st.n_b ? r->st.n_a : r->st.n_b;

			r->st.verdict = VERDICT_INCONCLUSIVE;
			r->st.extra_boots = stats_extra_boots(r->st.w.d, r->st.w.se * sqrt((double)nn / 2),
							      nn, r->st.threshold_pct);
		}
	}
	free(p);
	free(adj);
}

static void compute(const struct groups *a, const struct groups *b, const struct compare_opts *o,
		    struct compare_result *res, struct noise_ctx *nc)
{
	/* res may already hold rows of an earlier call (metrics, then per-CPU):
	 * take its length as the capacity, so the first add_row grows it. */
	size_t i = 0, j = 0, alloc = res->n_rows;

	while (i < a->n && j < b->n) {
		int c = key_cmp(&a->g[i], &b->g[j]);

		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			if (group_wanted(o, &a->g[i]))
				add_row(res, &alloc, &a->g[i], &b->g[j], o, nc);
			i++;
			j++;
		}
	}
}

static int group_sort_cmp(const void *pa, const void *pb)
{
	return key_cmp(pa, pb);
}

/* ---- the clock of the runs (real time or instruction count) -------------- */

/* "side A of job 12" or "kernel 'x'", for the errors below. */
static void side_words(struct buf *b, const struct side_sel *s)
{
	if (s->kernel)
		buf_addf(b, "the runs of kernel '%s'", s->kernel);
	else if (s->side)
		buf_addf(b, "side %s of job %lld", s->side, (long long)s->job_id);
	else
		buf_addf(b, "job %lld", (long long)s->job_id);
}

/*
 * The clock of a side's measured runs into *clock ("real" when it has
 * none): 0, or -1 when the side mixes clocks (logged).
 */
static int clock_of_counts(const struct side_sel *s, const int64_t runs[2], const char **clock, struct buf *err)
{
	struct buf why = BUF_INIT, w = BUF_INIT;
	int n = 0, ret = 0;

	*clock = COMPARE_CLOCK_REAL;
	for (int k = 0; k < 2; k++) {
		const char *c = k ? COMPARE_CLOCK_ICOUNT : COMPARE_CLOCK_REAL;

		if (!runs[k])
			continue;
		buf_addf(&why, "%s%lld run%s on the %s clock", n ? " and " : "", (long long)runs[k],
			 runs[k] == 1 ? "" : "s", c);
		if (!n++)
			*clock = c;
	}
	if (n > 1) {
		side_words(&w, s);
		ret = error_to(err, "cannot compare %s: it mixes clocks (%s); an instruction count and a real-time "
			       "figure are not one quantity", w.buf, why.buf);
	}
	buf_release(&w);
	buf_release(&why);
	return ret;
}

static void clock_count(const char *clock, int64_t n, void *data)
{
	int64_t *runs = data;

	runs[!strcmp(clock_name(clock), COMPARE_CLOCK_ICOUNT)] += n;
}

static int side_clock(struct db *db, const struct side_sel *s, const char **clock, struct buf *err)
{
	int64_t runs[2] = { 0, 0 };

	*clock = COMPARE_CLOCK_REAL;
	if (side_runs_by_clock(db, s, clock_count, runs) < 0)
		return db_error_to(db, err);
	return clock_of_counts(s, runs, clock, err);
}

/* Both sides (their clocks CA, CB) on one clock: 0 with res->clock set, or -1 (logged, naming both). */
static int same_clock(const struct side_sel *sa, const char *ca, const struct side_sel *sb, const char *cb,
		      struct compare_result *res, struct buf *err)
{
	if (strcmp(ca, cb)) {
		struct buf a = BUF_INIT, b = BUF_INIT;

		side_words(&a, sa);
		side_words(&b, sb);
		error_to(err, "cannot compare %s, measured on the %s clock, with %s, measured on the %s clock: "
			 "an instruction count (icount) and a real-time figure are not one quantity; "
			 "compare runs of one clock", a.buf, ca, b.buf, cb);
		buf_release(&a);
		buf_release(&b);
		return -1;
	}
	res->clock = ca;
	return 0;
}

static void rows_clock(struct compare_result *res, const char *clock)
{
	res->clock = clock;
	for (size_t i = 0; i < res->n_rows; i++)
		res->rows[i].clock = clock;
}

int compare_clock_of_runs(struct db *db, int64_t job_id, const char **clock)
{
	struct side_sel all = { "r.job_id = ?1 AND (CAST(?2 AS TEXT) IS NULL OR r.side = ?2)", job_id, NULL, NULL, 0, 0 };

	return side_clock(db, &all, clock, NULL);
}

/* Compute a whole comparison between two side selections. */
static int compare_sides(struct db *db, const struct side_sel *sa, const struct side_sel *sb,
			 const struct compare_opts *o, struct compare_result *res, struct noise_ctx *nc)
{
	struct groups ma = { 0 }, mb = { 0 }, ca = { 0 }, cb = { 0 };
	struct profrow *pa = NULL, *pb = NULL;
	size_t npa = 0, npb = 0;
	int ret = -1;

	const char *clock_a, *clock_b;
	int samples = 0;

	/* two kernels, each job's warm-up left out: from the per-kernel samples when they are whole */
	if (sa->kernel && sb->kernel && sa->own_warmup && sb->own_warmup) {
		if ((samples = ksample_ready(db)) < 0)
			return -1;
		if (!samples)
			info("database '%s': the per-kernel samples are not made yet, so this reads every boot of both"
			     " kernels; klab db rebuild-summaries --kernel-samples makes them", db_file(db));
	}
	if (samples) {
		int64_t runs_a[2], runs_b[2];

		if (load_kernel_side(db, sa, sb->kernel, &ma, &ca, &pa, &npa, runs_a) ||
		    load_kernel_side(db, sb, sa->kernel, &mb, &cb, &pb, &npb, runs_b) ||
		    clock_of_counts(sa, runs_a, &clock_a, o->why) ||
		    clock_of_counts(sb, runs_b, &clock_b, o->why) || same_clock(sa, clock_a, sb, clock_b, res, o->why))
			goto out;
	} else if (side_clock(db, sa, &clock_a, o->why) || side_clock(db, sb, &clock_b, o->why) ||
		   same_clock(sa, clock_a, sb, clock_b, res, o->why) ||
		   load_side_metrics(db, sa, &ma) || load_side_metrics(db, sb, &mb) ||
		   load_side_cpus(db, sa, &ca) || load_side_cpus(db, sb, &cb) ||
		   load_side_profile(db, sa, &pa, &npa) || load_side_profile(db, sb, &pb, &npb))
		goto out;
	{
		/* The threshold of a workload without its own is the runs' clock's default. */
		struct compare_opts oc = *o;

		if (!oc.clock)
			oc.clock = res->clock;
		compute(&ma, &mb, &oc, res, nc);
	}
	apply_holm(res, o->alpha > 0 && o->alpha < 0.5 ? o->alpha : STATS_ALPHA);
	if (ca.n)
		qsort(ca.g, ca.n, sizeof(*ca.g), group_sort_cmp);
	if (cb.n)
		qsort(cb.g, cb.n, sizeof(*cb.g), group_sort_cmp);
	{
		struct compare_opts oc = *o;

		oc.metric = NULL;	/* per-CPU rows go with any metric filter's workload */
		if (!o->metric)
			compute(&ca, &cb, &oc, res, NULL);
	}
	merge_profiles(pa, npa, pb, npb, res);
	rows_clock(res, res->clock);
	ret = 0;
out:
	groups_free(&ma);
	groups_free(&mb);
	groups_free(&ca);
	groups_free(&cb);
	profrows_free(pa, npa);
	profrows_free(pb, npb);
	return ret;
}

/*
 * compare_opts.workload_info of a job: the threshold and headline of each
 * workload as its spec has them (what the config said at submit), so that a
 * job compared later, from a config without its workloads or from a bare
 * database, is judged by the same T as when it ran; what the spec does not
 * say comes from the caller's workload_info (the config), if any.
 */
struct spec_info {
	const struct job_spec *spec;
	double (*next)(void *arg, const char *workload, const char **headline);
	void *next_arg;
};

static double spec_workload_info(void *arg, const char *workload, const char **headline)
{
	const struct spec_info *si = arg;
	const struct job_spec_workload *w = job_spec_workload(si->spec, workload);
	const char *hl = NULL;
	double t = 0;

	*headline = NULL;
	if (si->next)
		t = si->next(si->next_arg, workload, &hl);
	if (w && w->headline)
		hl = w->headline;
	if (w && w->threshold_pct > 0)
		t = w->threshold_pct;
	*headline = hl;
	return t;
}

struct claimrow {
	char *metric;
	double lo, hi;		/* signed % range */
};

struct claims_acc {
	struct claimrow *v;
	size_t n, alloc;
};

/* A claim as a signed % range: its own, or from its before and after figures; none without either. */
static int claim_add(const struct claim_row *c, void *data)
{
	struct claims_acc *acc = data;
	double sign = c->direction && !strcmp(c->direction, "lower") ? -1 : 1, lo, hi;

	if (!c->metric)
		return 0;
	if (!isnan(c->lo_pct)) {
		lo = sign * fabs(c->lo_pct);
		hi = !isnan(c->hi_pct) ? sign * fabs(c->hi_pct) : lo;
	} else if (!isnan(c->before) && !isnan(c->after) && c->before != 0) {
		lo = hi = 100 * (c->after / c->before - 1);
	} else {
		return 0;
	}
	if (acc->n == acc->alloc) {
		acc->alloc = acc->alloc ? 2 * acc->alloc : 4;
		acc->v = xrealloc(acc->v, acc->alloc * sizeof(*acc->v));
	}
	acc->v[acc->n].metric = xstrdup(c->metric);
	acc->v[acc->n].lo = lo < hi ? lo : hi;
	acc->v[acc->n].hi = lo < hi ? hi : lo;
	acc->n++;
	return 0;
}

static int load_claims(struct db *db, int64_t job_id, struct claimrow **out, size_t *n)
{
	struct claims_acc acc = { NULL, 0, 0 };
	int r = series_job_claims_each(db, job_id, claim_add, &acc);

	*out = acc.v;
	*n = acc.n;
	return r;
}

static void type_bit(const char *t, void *data)
{
	int *types = data;

	if (t && !strcmp(t, "udp_rr"))
		*types |= 1;
	else if (t && !strcmp(t, "udp_tx"))
		*types |= 2;
}

/*
 * Which workload types the job's series proposes (its commands: super_netperf
 * UDP_RR -> udp_rr, ...): bit 1 udp_rr, bit 2 udp_tx; 0 when it proposes none.
 */
static int proposed_types(struct db *db, int64_t job_id)
{
	int types = 0;

	series_job_proposal_types(db, job_id, type_bit, &types);
	return types;
}

/*
 * "throughput" in a claim is the workload's headline rate: tps of udp_rr,
 * tx_pps of udp_tx; of only the types the series proposes when it proposes
 * any (a UDP_RR series' "+5% throughput" says nothing about a TX workload
 * the job also runs).
 */
static int claim_matches(const char *claim_metric, const char *metric, int types)
{
	/* a CPU-cost claim ("saves 10% of cycles"): any cost metric; apply_claims() takes one per workload */
	if (!strcmp(claim_metric, COMPARE_COST_CLAIM))
		return compare_cost_rank(metric) >= 0;
	if (!strcmp(claim_metric, metric))
		return 1;
	if (strcmp(claim_metric, "throughput"))
		return 0;
	if (!strcmp(metric, "tps"))
		return !types || (types & 1);
	if (!strcmp(metric, "tx_pps"))
		return !types || (types & 2);
	return 0;
}

int compare_cost_rank(const char *metric)
{
	static const char *const order[] = { "cycles_per_op", "insn_per_op", "cpu_us_per_op" };

	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		if (!strcmp(metric, order[i]))
			return (int)i;
	return -1;
}

/*
 * Whether R is the cost row of its workload a CPU-cost claim is checked
 * against: no other row of the workload ranks before it in
 * compare_cost_rank() (cycles_per_op where a PMU counted cycles, then the
 * icount lab's insn_per_op, then cpu_us_per_op). One check per workload:
 * two checks of one claim would count twice in the mail's verdict.
 */
static int cost_row_chosen(const struct compare_result *res, const struct compare_row *r)
{
	int rank = compare_cost_rank(r->metric);

	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *x = &res->rows[i];
		int k = compare_cost_rank(x->metric);

		if (k >= 0 && k < rank && !strcmp(x->workload, r->workload))
			return 0;
	}
	return 1;
}

/* The first claim about row R's metric (none for a descriptive row). */
static const struct claimrow *claim_for(const struct compare_row *r, const struct claimrow *c, size_t n,
					int types)
{
	if (r->st.verdict == VERDICT_DESCRIPTIVE)
		return NULL;
	for (size_t k = 0; k < n; k++)
		if (claim_matches(c[k].metric, r->metric, types))
			return &c[k];
	return NULL;
}

/* Check every row against its claim (CHECK = 1), or only restore the claimed % change of loaded rows. */
static void apply_claims(struct compare_result *res, const struct claimrow *c, size_t n, int types, int check)
{
	for (size_t i = 0; i < res->n_rows; i++) {
		struct compare_row *r = &res->rows[i];
		const struct claimrow *k = claim_for(r, c, n, types);
		const char *v;

		if (!k || (!strcmp(k->metric, COMPARE_COST_CLAIM) && !cost_row_chosen(res, r)))
			continue;
		free(r->claim_on);
		r->claim_on = xstrdup(k->metric);
		r->claim_pct = (k->lo + k->hi) / 2;
		if (check && (v = stats_claim_check(k->lo, k->hi, r->st.ci_lo, r->st.ci_hi)))
			r->claim = xstrdup(v);
	}
}

/*
 * The cache model's sizes and latencies, when a row of the job is a figure
 * of klab's cache model (model_*): every output labels those rows with it
 * (compare_fmt_modeled()).
 */
static void load_cache_model(struct db *db, struct compare_result *res)
{
	for (size_t i = 0; i < res->n_rows; i++)
		if (starts_with(res->rows[i].metric, "model_")) {
			free(res->cache_model);
			res->cache_model = NULL;
			if (runs_cache_model(db, res->job_id, &res->cache_model) < 0)
				res->cache_model = NULL;
			return;
		}
}

static void claims_free(struct claimrow *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].metric);
	free(c);
}

/* Replace the job's rows (only those of the workload/metric filter when one is given). */
static int store(struct db *db, const struct compare_result *res, const struct compare_opts *o)
{
	struct comparison_row *rows = xcalloc(res->n_rows ? res->n_rows : 1, sizeof(*rows));
	int ret;

	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *r = &res->rows[i];
		const struct stats_cmp *s = &r->st;
		struct comparison_row *c = &rows[i];

		/* the strings are lent, not copied */
		c->workload = r->workload;
		c->metric = r->metric;
		c->unit = r->unit;
		c->better = r->better;
		c->n_a = (int64_t)s->n_a;
		c->n_b = (int64_t)s->n_b;
		c->mean_a = s->mean_a;
		c->mean_b = s->mean_b;
		c->cov_a = s->cov_a;
		c->cov_b = s->cov_b;
		c->change_pct = s->change_pct;
		c->ci_lo = s->ci_lo;
		c->ci_hi = s->ci_hi;
		c->p_welch = s->w.p;
		c->p_holm = r->p_holm;
		c->p_mwu = s->p_mwu;
		c->hl_ratio = s->hl_ratio;
		c->mde_pct = s->mde_pct;
		c->threshold_pct = s->threshold_pct;
		snprintf(c->verdict, sizeof(c->verdict), "%s", stats_verdict_name(s->verdict));
		c->extra_boots = s->verdict == VERDICT_INCONCLUSIVE && s->extra_boots >= 0 ? s->extra_boots : -1;
		c->claim = r->claim;
	}
	ret = comparisons_store(db, res->job_id, o->workload, o->metric, res->label_a, res->label_b, rows,
				res->n_rows, now_wall());
	free(rows);
	return ret;
}

static char *side_label(struct db *db, int64_t job_id, const char *side)
{
	char *s = NULL;

	if (job_sides_label(db, job_id, side, &s) <= 0 || !s) {
		free(s);
		return xstrdup(side);
	}
	return s;
}

int compare_spec_looks(const struct job_spec *spec, int *min, int *max)
{
	*min = *max = 0;
	if (!spec->boots_min)
		return 0;
	*min = spec->boots_min;
	*max = spec->boots;
	return stats_seq_looks(*min, *max, COMPARE_LOOK_STEP);
}

double compare_spec_alpha(const struct job_spec *spec)
{
	int lo, hi;

	return stats_seq_alpha(compare_spec_looks(spec, &lo, &hi));
}

int compare_decided(const struct compare_result *res)
{
	int n = 0;

	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *r = &res->rows[i];

		if (!r->headline)
			continue;
		if (r->st.verdict != VERDICT_CHANGED && r->st.verdict != VERDICT_EQUIVALENT)
			return 0;
		/* one boot a side: only a calibration knows the noise (docs/statistics.md) */
		if ((r->st.n_a < 2 || r->st.n_b < 2) && r->st.cal != STATS_CAL_USED)
			return 0;
		n++;
	}
	return n > 0;
}

int compare_store_look(struct db *db, int64_t job_id, int look, int looks, int boots, double alpha,
		       const struct compare_result *res)
{
	int decided = compare_decided(res);
	struct look_row *rows = xcalloc(res->n_rows ? res->n_rows : 1, sizeof(*rows));
	size_t n = 0;
	int ret;

	for (size_t i = 0; i < res->n_rows; i++) {
		const struct compare_row *r = &res->rows[i];
		struct look_row *l;

		if (!r->headline)
			continue;
		l = &rows[n++];
		l->look = look;
		l->looks = looks;
		l->boots = boots;
		l->alpha = alpha;
		l->decided = decided;
		l->workload = r->workload;	/* lent */
		l->metric = r->metric;
		l->n_a = (int)r->st.n_a;
		l->n_b = (int)r->st.n_b;
		snprintf(l->verdict, sizeof(l->verdict), "%s", stats_verdict_name(r->st.verdict));
		l->change_pct = r->st.change_pct;
		l->ci_lo = r->st.ci_lo;
		l->ci_hi = r->st.ci_hi;
		l->p_holm = r->p_holm;
	}
	ret = looks_store(db, job_id, look, rows, n, now_wall());
	free(rows);
	return ret;
}

static enum stats_verdict verdict_of(const char *v);

int compare_load_looks(struct db *db, int64_t job_id, struct compare_look **out, size_t *n)
{
	struct look_row *rows;
	size_t nr;

	*out = NULL;
	*n = 0;
	if (looks_load(db, job_id, &rows, &nr))
		return -1;
	if (nr)
		*out = xcalloc(nr, sizeof(**out));
	for (size_t i = 0; i < nr; i++) {
		struct compare_look *l = &(*out)[i];
		const struct look_row *r = &rows[i];

		l->look = r->look;
		l->looks = r->looks;
		l->boots = r->boots;
		l->alpha = r->alpha;
		l->decided = r->decided;
		l->workload = r->workload;	/* the strings move over */
		l->metric = r->metric;
		l->n_a = r->n_a;
		l->n_b = r->n_b;
		l->verdict = verdict_of(r->verdict);
		l->change_pct = r->change_pct;
		l->ci_lo = r->ci_lo;
		l->ci_hi = r->ci_hi;
		l->p_holm = r->p_holm;
	}
	*n = nr;
	free(rows);
	return 0;
}

void compare_looks_free(struct compare_look *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(l[i].workload);
		free(l[i].metric);
	}
	free(l);
}

int compare_job(struct db *db, int64_t job_id, const struct compare_opts *opts,
		struct compare_result *res_out)
{
	struct compare_opts o = opts ? *opts : (struct compare_opts)COMPARE_OPTS_INIT;
	struct compare_result res = { 0 };
	struct side_sel sa = { JOB_SIDE, job_id, "A", NULL, 0, 0 }, sb = { JOB_SIDE, job_id, "B", NULL, 0, 0 };
	struct claimrow *claims = NULL;
	size_t n_claims = 0;
	char *text = NULL;
	struct job_spec spec;
	struct spec_info si = { &spec, NULL, NULL };
	struct noise_ctx nc;
	int64_t na = 0, nb = 0;
	int ret = -1, found, parsed;

	memset(&nc, 0, sizeof(nc));
	if (o.why)
		buf_reset(o.why);
	found = jobs_get_str(db, job_id, JOB_SPEC, &text);
	parsed = !job_spec_parse(found == 1 ? text : NULL, &spec);	/* else the defaults */
	if (found < 0)
		goto out;
	if (!found) {
		error_to(o.why, "no job %lld", (long long)job_id);
		goto out;
	}
	sa.warmup = sb.warmup = o.warmup_runs >= 0 ? o.warmup_runs : spec.warmup_runs;
	sa.own_warmup = sb.own_warmup = o.warmup_runs < 0;
	if (!(o.alpha > 0))
		o.alpha = compare_spec_alpha(&spec);	/* a job with a boots range decides at its looks' level */
	if (!(o.threshold_pct > 0) && parsed) {
		si.next = o.workload_info;
		si.next_arg = o.workload_arg;
		o.workload_info = spec_workload_info;
		o.workload_arg = &si;
	}
	if (side_job_runs(db, job_id, "A", &na) < 0 || side_job_runs(db, job_id, "B", &nb) < 0)
		goto out;
	if (!na || !nb) {
		error_to(o.why, "cannot compare job %lld: it has no runs on side %s", (long long)job_id, na ? "B" : "A");
		goto out;
	}
	res.job_id = job_id;
	res.label_a = side_label(db, job_id, "A");
	res.label_b = side_label(db, job_id, "B");
	nc.db = db;
	nc.job_id = job_id;
	if (!o.no_calibration && noise_job_open(db, job_id, &spec, &nc.nj))
		goto out;
	if (compare_sides(db, &sa, &sb, &o, &res, o.no_calibration ? NULL : &nc))
		goto out;
	if (load_claims(db, job_id, &claims, &n_claims))
		goto out;
	apply_claims(&res, claims, n_claims, proposed_types(db, job_id), 1);
	load_cache_model(db, &res);
	if (store(db, &res, &o))
		goto out;
	ret = 0;
out:
	if (ret && o.why && !o.why->len)	/* the rest fails only in the database */
		db_error_to(db, o.why);
	noise_job_release(&nc.nj);
	claims_free(claims, n_claims);
	job_spec_release(&spec);
	free(text);
	if (!ret && res_out)
		*res_out = res;
	else
		compare_result_free(&res);
	return ret;
}

int compare_kernels(struct db *db, const char *kernel_a, const char *kernel_b,
		    const struct compare_opts *opts, struct compare_result *res)
{
	struct compare_opts o = opts ? *opts : (struct compare_opts)COMPARE_OPTS_INIT;
	int w = o.warmup_runs >= 0 ? o.warmup_runs : 1;
	struct side_sel sa = { KERNEL_SIDE, 0, NULL, kernel_a, w, o.warmup_runs < 0 },
			sb = { KERNEL_SIDE, 0, NULL, kernel_b, w, o.warmup_runs < 0 };

	memset(res, 0, sizeof(*res));
	res->label_a = xstrdup(kernel_a);
	res->label_b = xstrdup(kernel_b);
	if (compare_sides(db, &sa, &sb, &o, res, NULL)) {
		compare_result_free(res);
		return -1;
	}
	if (!res->n_rows) {
		const char *which = kernel_a;
		int64_t n = side_kernel_runs(db, kernel_a);

		if (n > 0) {
			which = kernel_b;
			n = side_kernel_runs(db, kernel_b);
		}
		if (!n)
			error("no runs of kernel '%s' (give a kernel id, release, label or variant)", which);
		else
			error("kernels '%s' and '%s' have no workload metric in common", kernel_a, kernel_b);
		compare_result_free(res);
		return -1;
	}
	return 0;
}

/* ---- loading the stored rows --------------------------------------------- */

static enum stats_verdict verdict_of(const char *v)
{
	if (!v)
		return VERDICT_INCONCLUSIVE;
	if (!strcmp(v, "CHANGED"))
		return VERDICT_CHANGED;
	if (!strcmp(v, "EQUIVALENT"))
		return VERDICT_EQUIVALENT;
	if (!strcmp(v, "DESCRIPTIVE"))
		return VERDICT_DESCRIPTIVE;
	return VERDICT_INCONCLUSIVE;
}

/* One stored row, its strings moved over. */
static void read_row(struct comparison_row *c, struct compare_row *r)
{
	memset(r, 0, sizeof(*r));
	r->workload = c->workload, c->workload = NULL;
	r->metric = c->metric, c->metric = NULL;
	r->unit = c->unit, c->unit = NULL;
	r->better = c->better, c->better = NULL;
	r->st.n_a = (size_t)c->n_a;
	r->st.n_b = (size_t)c->n_b;
	r->st.mean_a = c->mean_a;
	r->st.mean_b = c->mean_b;
	r->st.cov_a = c->cov_a;
	r->st.cov_b = c->cov_b;
	r->st.change_pct = c->change_pct;
	r->st.ci_lo = c->ci_lo;
	r->st.ci_hi = c->ci_hi;
	r->st.ci90_lo = r->st.ci90_hi = NAN;
	r->st.w.p = c->p_welch;
	r->st.w.d = r->st.w.se = r->st.w.df = r->st.w.t = NAN;
	r->st.u = NAN;
	r->p_holm = c->p_holm;
	r->headline = !isnan(r->p_holm);
	r->st.p_mwu = c->p_mwu;
	r->st.hl_ratio = c->hl_ratio;
	r->st.mde_pct = c->mde_pct;
	r->st.threshold_pct = c->threshold_pct;
	r->st.verdict = verdict_of(c->verdict);
	r->st.extra_boots = (int)c->extra_boots;
	r->claim = c->claim, c->claim = NULL;
	r->claim_pct = NAN;
}

static struct compare_row *push_row(struct compare_result *res, size_t *alloc)
{
	if (res->n_rows == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 32;
		res->rows = xrealloc(res->rows, *alloc * sizeof(*res->rows));
	}
	return &res->rows[res->n_rows++];
}

/* The profile differences of a job's measured runs (they are not stored: cheap to read again). */
static void load_job_profile(struct db *db, int64_t job_id, struct compare_result *res)
{
	struct side_sel sa = { JOB_SIDE, job_id, "A", NULL, 1, 0 }, sb = { JOB_SIDE, job_id, "B", NULL, 1, 0 };
	struct profrow *pa = NULL, *pb = NULL;
	size_t npa = 0, npb = 0;
	char *text = NULL;

	if (jobs_get_str(db, job_id, JOB_SPEC, &text) == 1) {
		struct job_spec spec;

		job_spec_parse(text, &spec);	/* or its defaults */
		sa.warmup = sb.warmup = spec.warmup_runs;
		sa.own_warmup = sb.own_warmup = 1;
		job_spec_release(&spec);
	}
	free(text);
	if (!load_side_profile(db, &sa, &pa, &npa) && !load_side_profile(db, &sb, &pb, &npb))
		merge_profiles(pa, npa, pb, npb, res);
	profrows_free(pa, npa);
	profrows_free(pb, npb);
}

int compare_load(struct db *db, int64_t job_id, unsigned flags, struct compare_result *res)
{
	struct comparison_row *rows;
	struct claimrow *claims = NULL;
	size_t alloc = 0, n_claims = 0, nr;

	memset(res, 0, sizeof(*res));
	res->job_id = job_id;
	res->clock = COMPARE_CLOCK_REAL;	/* rows_clock() below sets the runs' clock */
	if (comparisons_load_job(db, job_id, &rows, &nr))
		return error("database '%s': cannot read comparisons of job %lld: %s", db_file(db),
			     (long long)job_id, db_errmsg(db));
	for (size_t i = 0; i < nr; i++) {
		if (!res->label_a) {
			res->label_a = rows[i].label_a, rows[i].label_a = NULL;
			res->label_b = rows[i].label_b, rows[i].label_b = NULL;
		}
		read_row(&rows[i], push_row(res, &alloc));
	}
	comparison_rows_free(rows, nr);
	if (!res->n_rows)
		return 0;
	{
		const char *clock = "real";

		compare_clock_of_runs(db, job_id, &clock);	/* a mix was refused when it was compared */
		rows_clock(res, clock);
	}
	if (!load_claims(db, job_id, &claims, &n_claims))
		apply_claims(res, claims, n_claims, proposed_types(db, job_id), 0);
	claims_free(claims, n_claims);
	load_cache_model(db, res);
	if (flags & COMPARE_LOAD_PROFILE)
		load_job_profile(db, job_id, res);
	return 1;
}

int compare_load_job(struct db *db, int64_t job_id, struct compare_result *res)
{
	return compare_load(db, job_id, COMPARE_LOAD_PROFILE, res);
}

int compare_load_metric(struct db *db, const char *workload, const char *metric, unsigned flags,
			size_t limit, struct compare_result **out, size_t *n_out)
{
	struct comparison_row *rows;
	struct compare_result *v = NULL;
	size_t n = 0, nr;

	*out = NULL;
	*n_out = 0;
	if (comparisons_load_metric(db, workload, metric, !!(flags & COMPARE_LOAD_AA), (int64_t)limit, &rows, &nr))
		return error("database '%s': cannot read the comparisons of %s/%s: %s", db_file(db),
			     workload, metric, db_errmsg(db));
	if (nr)
		v = xcalloc(nr, sizeof(*v));
	for (; n < nr; n++) {
		size_t one = 0;

		v[n].job_id = rows[n].job_id;
		v[n].label_a = rows[n].label_a, rows[n].label_a = NULL;
		v[n].label_b = rows[n].label_b, rows[n].label_b = NULL;
		read_row(&rows[n], push_row(&v[n], &one));
	}
	comparison_rows_free(rows, nr);
	for (size_t i = 0; i < n; i++) {
		const char *clock = "real";

		if (v[i].job_id)
			compare_clock_of_runs(db, v[i].job_id, &clock);
		rows_clock(&v[i], clock);
	}
	*out = v;
	*n_out = n;
	return 0;
}

void compare_result_free(struct compare_result *res)
{
	for (size_t i = 0; i < res->n_rows; i++) {
		free(res->rows[i].workload);
		free(res->rows[i].metric);
		free(res->rows[i].unit);
		free(res->rows[i].better);
		free(res->rows[i].claim);
		free(res->rows[i].noise.jobs);
		free(res->rows[i].claim_on);
	}
	free(res->rows);
	for (size_t i = 0; i < res->n_prof; i++) {
		free(res->prof[i].workload);
		free(res->prof[i].symbol);
		free(res->prof[i].dso);
	}
	free(res->prof);
	free(res->label_a);
	free(res->label_b);
	free(res->cache_model);
	memset(res, 0, sizeof(*res));
}

void compare_results_free(struct compare_result *res, size_t n)
{
	for (size_t i = 0; i < n; i++)
		compare_result_free(&res[i]);
	free(res);
}

/* ---- reading order and direction ------------------------------------------ */

int compare_direction(const struct compare_row *r)
{
	double c = r->st.change_pct;

	if (!r->better || !isfinite(c) || c == 0)
		return 0;
	if (!strcmp(r->better, "higher"))
		return c > 0 ? 1 : -1;
	if (!strcmp(r->better, "lower"))
		return c < 0 ? 1 : -1;
	return 0;
}

int compare_metric_rank(const char *metric)
{
	static const char *const head[] = { "tps", "tx_pps", "rx_pps", "tx_bps" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(head); i++)
		if (!strcmp(metric, head[i]))
			return (int)i;
	if (compare_cost_rank(metric) >= 0)
		return 10;
	if (starts_with(metric, "latency_"))
		return 11;
	if (!strcmp(metric, "cpu_busy_pct"))
		return 12;
	return 20;
}

static int row_order(const void *x, const void *y)
{
	const struct compare_row *a = x, *b = y;
	int r = strcmp(a->workload, b->workload);

	if (r)
		return r;
	r = compare_metric_rank(a->metric) - compare_metric_rank(b->metric);
	return r ? r : strcmp(a->metric, b->metric);
}

void compare_sort_rows(struct compare_result *res)
{
	if (res->n_rows)
		qsort(res->rows, res->n_rows, sizeof(*res->rows), row_order);
}

