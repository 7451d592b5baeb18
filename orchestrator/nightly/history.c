/*
 * history.c: the nightly history: one series per (tree, machine pair,
 * workload, metric) of the nightly jobs' boot means, its change points found
 * and stored (changepoint.c), and the update a finished nightly job makes.
 * The declarations are in compare.h beside the comparisons they extend.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "stats/changepoint.h"
#include "store/bisections.h"
#include "store/db.h"
#include "store/runs.h"
#include "log.h"
#include "strvec.h"
#include "util.h"

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void series_add_point(struct history_series *s, int64_t job, double t, double sum, int n)
{
	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 32;
		s->pts = xrealloc(s->pts, s->alloc * sizeof(*s->pts));
	}
	s->pts[s->n++] = (struct history_point){ job, t, sum / n, n, 0 };
}

/* NULL first, then by strcmp (the order sqlite's ORDER BY gave) */
static int null_strcmp(const char *a, const char *b)
{
	if (!a || !b)
		return !!a - !!b;
	return strcmp(a, b);
}

static int series_cmp(const void *pa, const void *pb)
{
	const struct history_series *a = pa, *b = pb;
	int c = null_strcmp(a->tree, b->tree);

	return c ? c : null_strcmp(a->machines, b->machines);
}

/* The series of (TREE, MACHINES) in SER[0..*N) (a few: one per tree and machine pair), added when new. */
static size_t series_of(struct history_series **ser, size_t *n, size_t *alloc, const char *tree,
			const char *machines, const char *workload, const char *metric)
{
	struct history_series *s;

	for (size_t i = 0; i < *n; i++)
		if (same_str((*ser)[i].tree, tree) && same_str((*ser)[i].machines, machines))
			return i;
	if (*n == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 4;
		*ser = xrealloc(*ser, *alloc * sizeof(**ser));
	}
	s = &(*ser)[*n];
	memset(s, 0, sizeof(*s));
	s->tree = tree ? xstrdup(tree) : NULL;
	s->machines = machines ? xstrdup(machines) : NULL;
	s->workload = xstrdup(workload);
	s->metric = xstrdup(metric);
	return (*n)++;
}

static int store_changepoints(struct db *db, const struct history_series *s)
{
	struct changepoint_row *v = xcalloc(s->cps.n ? s->cps.n : 1, sizeof(*v));
	size_t n = 0;
	int r;

	for (size_t i = 0; i < s->cps.n; i++) {
		const struct cp_point *c = &s->cps.pts[i];

		if (!c->alert)
			continue;
		v[n++] = (struct changepoint_row){ s->pts[c->idx].job_id, (int64_t)c->idx, c->mean_before,
						   c->mean_after, c->change_pct, c->p };
	}
	r = changepoints_replace(db, s->tree, s->machines, s->workload, s->metric, v, n, now_wall());
	free(v);
	return r;
}

int history_analyse(struct db *db, const char *workload, const char *metric,
		    const char *tree, const char *machines, double threshold_pct,
		    struct history_series **out, size_t *n_out)
{
	/* one boot value a row, by job, side and boot (nightly_boots_open()); the series sorted at the end */
	struct nightly_boot_iter *st = nightly_boots_open(db, workload, metric, tree, machines);
	struct history_series *ser = NULL;
	size_t n = 0, alloc = 0, cur = 0;
	int rc, ret = -1;
	/* accumulation of the current job: per side sums */
	int64_t cur_job = -1;
	double cur_t = 0, sum[2] = { 0, 0 };
	int cnt[2] = { 0, 0 };

	*out = NULL;
	*n_out = 0;
	if (!st)
		return -1;
	for (;;) {
		struct nightly_boot b;
		int64_t job;
		int row, k;

		rc = nightly_boots_next(st, &b);
		row = rc == 1;
		if (rc < 0)
			break;
		job = row ? b.job_id : -2;
		/* flush the previous job when the job changes (or at the end): its newer side's boots */
		if (cur_job >= 0 && job != cur_job) {
			k = cnt[1] ? 1 : 0;
			series_add_point(&ser[cur], cur_job, cur_t, sum[k], cnt[k]);
			cur_job = -1;
		}
		if (!row)
			break;
		if (cur_job < 0) {
			cur = series_of(&ser, &n, &alloc, b.tree, b.machines, workload, metric);
			cur_job = job;
			cur_t = b.created;
			sum[0] = sum[1] = 0;
			cnt[0] = cnt[1] = 0;
		}
		k = b.side && !strcmp(b.side, "B") ? 1 : 0;
		sum[k] += b.value;
		cnt[k]++;
	}
	nightly_boots_close(st);
	if (rc < 0) {
		error("database '%s': cannot read the history of %s/%s: %s", db_file(db), workload, metric, db_errmsg(db));
		goto out;
	}
	if (n > 1)
		qsort(ser, n, sizeof(*ser), series_cmp);
	for (size_t i = 0; i < n; i++) {
		struct cp_opts co = CP_OPTS_INIT;
		double *x = xmalloc((ser[i].n ? ser[i].n : 1) * sizeof(*x));

		co.threshold_pct = threshold_pct > 0 ? threshold_pct : 1.0;
		for (size_t k = 0; k < ser[i].n; k++)
			x[k] = ser[i].pts[k].value;
		if (cp_detect(x, ser[i].n, &co, &ser[i].cps))
			ser[i].cps.n = 0;
		free(x);
		for (size_t k = 0; k < ser[i].cps.n; k++)
			ser[i].pts[ser[i].cps.pts[k].idx].changepoint = 1;
		if (store_changepoints(db, &ser[i]))
			goto out;
	}
	ret = 0;
out:
	if (ret) {
		history_free(ser, n);
		return -1;
	}
	*out = ser;
	*n_out = n;
	return 0;
}

void history_free(struct history_series *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].tree);
		free(s[i].machines);
		free(s[i].workload);
		free(s[i].metric);
		free(s[i].pts);
		cp_result_free(&s[i].cps);
	}
	free(s);
}

struct job_keys {
	struct strvec keys;
	char *tree, *machines;
};

static void job_key(const char *workload, const char *metric, const char *tree, const char *machines, void *data)
{
	struct job_keys *k = data;

	strvec_push(&k->keys, workload);
	strvec_push(&k->keys, metric);
	if (!k->tree && tree)
		k->tree = xstrdup(tree);
	if (!k->machines && machines)
		k->machines = xstrdup(machines);
}

int history_update_job(struct db *db, int64_t job_id, double threshold_pct)
{
	struct job_keys jk = { STRVEC_INIT, NULL, NULL };
	struct strvec keys;
	char *tree, *machines;
	int ret = 0;

	if (job_metric_keys_each(db, job_id, job_key, &jk) < 0)
		ret = -1;
	keys = jk.keys, tree = jk.tree, machines = jk.machines;
	for (size_t i = 0; !ret && i + 1 < keys.n; i += 2) {
		struct history_series *s;
		size_t n;

		if (history_analyse(db, keys.v[i], keys.v[i + 1], tree, machines, threshold_pct, &s, &n))
			ret = -1;
		else
			history_free(s, n);
	}
	strvec_clear(&keys);
	free(tree);
	free(machines);
	return ret;
}
