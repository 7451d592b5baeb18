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
#include "store/db.h"
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
	double now = now_wall();

	if (db_begin(db))
		return -1;
	if (db_run(db, "DELETE FROM changepoints WHERE workload = ?1 AND metric = ?2"
		       " AND tree IS NOT DISTINCT FROM ?3 AND machines IS NOT DISTINCT FROM ?4", "ssss", s->workload, s->metric, s->tree,
		   s->machines))
		goto fail;
	for (size_t i = 0; i < s->cps.n; i++) {
		const struct cp_point *c = &s->cps.pts[i];

		if (!c->alert)
			continue;
		if (db_run(db, "INSERT INTO changepoints (tree, machines, workload, metric, job_id, idx,"
			       " mean_before, mean_after, change_pct, p, created)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)", "ssssiidddd" "d",
			   s->tree, s->machines, s->workload, s->metric, s->pts[c->idx].job_id,
			   (int64_t)c->idx, c->mean_before, c->mean_after, c->change_pct, c->p, now))
			goto fail;
	}
	return db_commit(db);
fail:
	db_rollback(db);
	return -1;
}

int history_analyse(struct db *db, const char *workload, const char *metric,
		    const char *tree, const char *machines, double threshold_pct,
		    struct history_series **out, size_t *n_out)
{
	/*
	 * One row per (job, side, boot): the boot value, the mean of its
	 * measured runs, as boot_metrics keeps it (result_store()). In the
	 * order of boot_metrics_series, which holds every column read
	 * (migration 0018): PostgreSQL merges it with the jobs by id, where
	 * ordering by tree first had it fetch 20000 scattered rows and sort
	 * them (130 ms against 15 at 100M metric rows). The series are
	 * gathered here and sorted by tree and machines at the end.
	 */
	struct db_stmt *st = db_prepare(db,
		"SELECT j.tree, j.dut || '+' || j.peer, j.id, j.created, b.side, b.value"
		" FROM boot_metrics b JOIN jobs j ON j.id = b.job_id"
		" WHERE b.workload = ?1 AND b.name = ?2 AND j.schedule IS NOT NULL AND j.state = 'done'"
		" AND (CAST(?3 AS TEXT) IS NULL OR j.tree = ?3)"
		" AND (CAST(?4 AS TEXT) IS NULL OR j.dut || '+' || j.peer = ?4)"
		" ORDER BY b.job_id, b.side, b.bkey", "ssss", workload, metric, tree, machines);
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
		const char *side;
		int64_t job;
		int row, k;

		rc = db_step(st);
		row = rc == DB_ROW;
		if (!row && rc != DB_DONE)
			break;
		job = row ? db_col_int64(st, 2) : -2;
		/* flush the previous job when the job changes (or at the end): its newer side's boots */
		if (cur_job >= 0 && job != cur_job) {
			k = cnt[1] ? 1 : 0;
			series_add_point(&ser[cur], cur_job, cur_t, sum[k], cnt[k]);
			cur_job = -1;
		}
		if (!row)
			break;
		if (cur_job < 0) {
			cur = series_of(&ser, &n, &alloc, db_col_text(st, 0), db_col_text(st, 1), workload, metric);
			cur_job = job;
			cur_t = db_col_double(st, 3);
			sum[0] = sum[1] = 0;
			cnt[0] = cnt[1] = 0;
		}
		side = db_col_text(st, 4);
		k = side && !strcmp(side, "B") ? 1 : 0;
		sum[k] += db_col_double(st, 5);
		cnt[k]++;
	}
	db_finalize(st);
	if (rc != DB_DONE) {
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

int history_update_job(struct db *db, int64_t job_id, double threshold_pct)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT DISTINCT r.workload, m.name, j.tree, j.dut || '+' || j.peer"
		" FROM runs r JOIN metrics m ON m.run_id = r.id JOIN jobs j ON j.id = r.job_id"
		" WHERE r.job_id = ?1 ORDER BY 1, 2", "i", job_id);
	struct strvec keys = STRVEC_INIT;
	char *tree = NULL, *machines = NULL;
	int rc, ret = 0;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		strvec_push(&keys, db_col_text(st, 0));
		strvec_push(&keys, db_col_text(st, 1));
		if (!tree && db_col_text(st, 2))
			tree = db_col_strdup(st, 2);
		if (!machines && db_col_text(st, 3))
			machines = db_col_strdup(st, 3);
	}
	db_finalize(st);
	if (rc != DB_DONE)
		ret = error("database '%s': %s", db_file(db), db_errmsg(db));
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
