/* confirm.c: a nightly's change confirmed by a second job before it is reported, and a confirmed regression bisected (docs/bisect.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect/bisect_db.h"
#include "compare/compare.h"
#include "compare/compare_fmt.h"
#include "nightly/confirm.h"
#include "store/bisections.h"
#include "store/jobs.h"
#include "store/kernels.h"
#include "job/job.h"
#include "job/job_int.h"
#include "jsonh.h"
#include "log.h"
#include "util.h"

/* 1 when CHANGE (in %) of a metric where BETTER is higher or lower is the worse way. */
static int worse(double change, const char *better)
{
	return better && !strcmp(better, "lower") ? change > 0 : change < 0;
}

/* The kernel ids of sides A and B of job ID (0: none). */
static void side_kernels(struct db *db, int64_t id, int64_t *ka, int64_t *kb)
{
	*ka = *kb = 0;
	job_sides_kernel(db, id, 'A', ka);
	job_sides_kernel(db, id, 'B', kb);
}

/*
 * The confirmation job of kernel KA against nightly ID's for its rows: the
 * one this nightly queued already for KA (several headlines share it), or
 * a new one (-1: error).
 */
static int64_t confirm_job_for(struct db *db, const struct klab_config *cfg, int64_t id, const char *name,
			       int64_t ka, int64_t kb)
{
	struct job_submit_opts o = JOB_SUBMIT_OPTS_INIT;
	int64_t cj = 0;

	if (confirmations_job_for_kernel(db, id, ka, &cj) < 0)
		return -1;
	if (cj > 0)
		return cj;
	o.job = name;
	o.kernel_a = ka;
	o.kernel_b = kb;
	o.confirms = id;
	return job_submit(db, cfg, &o, NULL);
}

/*
 * The newest change point that alerts in nightly ID's series of
 * WORKLOAD.METRIC (same tree and machines), if it was not confirmed (or
 * queued for confirmation) before, neither as a change point nor as the
 * CHANGED verdict of its own night: 1 with its first job after the change
 * in *cp_job, its change in *change and the kernel of the night before it
 * (side A of that job) in *before; 0 when there is none to confirm.
 */
static int changepoint_to_confirm(struct db *db, int64_t id, const char *workload, const char *metric,
				  int64_t *cp_job, double *change, int64_t *before)
{
	int64_t seen = 0;
	int found = changepoint_newest(db, id, workload, metric, cp_job, change, before) == 1 && *before > 0;

	if (found && confirmations_count_seen(db, workload, metric, *cp_job, &seen) < 0)
		return 0;
	return found && !seen;
}

/*
 * A nightly ended done: a CHANGED headline queues one confirmation job of
 * the same two kernels. A headline that is not CHANGED tonight but whose
 * series has a new change point that alerts (a drift over several nights)
 * queues one too: the kernel of the night before the change point against
 * tonight's (docs/bisect.md, "Confirmation").
 */
static int after_nightly(struct db *db, const struct klab_config *cfg, int64_t id, const char *name)
{
	struct compare_result res;
	int64_t ka, kb, cj, had = 0;
	int n = 0, ret = 0;

	side_kernels(db, id, &ka, &kb);
	if (!ka || !kb)
		return 0;	/* a first nightly: nothing compared */
	memset(&res, 0, sizeof(res));
	if (compare_load(db, id, 0, &res) != 1)
		return 0;
	confirmations_count_of_job(db, id, &had);
	for (size_t i = 0; !had && i < res.n_rows; i++) {
		const struct compare_row *r = &res.rows[i];
		int64_t cp_job = 0, before = ka;
		double change = r->st.change_pct;

		if (compare_headline_row(&res, r->workload) != r)
			continue;
		if (r->st.verdict != VERDICT_CHANGED &&
		    (!changepoint_to_confirm(db, id, r->workload, r->metric, &cp_job, &change, &before) || before == kb))
			continue;
		cj = confirm_job_for(db, cfg, id, name, before, kb);
		if (cj < 0) {
			ret = -1;
			break;
		}
		confirmation_insert(db, id, cj, r->workload, r->metric, r->better, change, now_wall(), cp_job);
		if (cp_job)
			log_msg(LOG_NOTICE, "job %lld: %s.%s change point at job %lld (%+.2f%%): confirmation job %lld "
				"queued (the kernel before it against tonight's; not reported until it agrees)",
				(long long)id, r->workload, r->metric, (long long)cp_job, change, (long long)cj);
		else
			log_msg(LOG_NOTICE, "job %lld: %s.%s CHANGED %+.2f%%: confirmation job %lld queued (not "
				"reported until it agrees)", (long long)id, r->workload, r->metric, change, (long long)cj);
		n++;
	}
	compare_result_free(&res);
	return ret < 0 ? -1 : n;
}

/* What after_confirmation() decides each pending confirmation with. */
struct confirm_ctx {
	struct db *db;
	const struct klab_config *cfg;
	const struct conf_job *cj;
	const struct compare_result *res;
	const char *tree, *good, *bad, *name;
	int64_t id, nightly;
};

/* One pending confirmation CONF of the confirmation job: confirmed or not, and a confirmed regression bisected. */
static int decide_one(const struct confirmation_pending *conf, void *data)
{
	struct confirm_ctx *x = data;
	struct db *db = x->db;
	const struct compare_result *res = x->res;
	const struct conf_job *cj = x->cj;
	const char *tree = x->tree, *good = x->good, *bad = x->bad, *name = x->name;
	int64_t id = x->id, nightly = x->nightly;
	int64_t cid = conf->id;
	const char *w = conf->workload, *m = conf->metric, *better = conf->better;
	double before = conf->change_pct;
	const struct compare_row *r = NULL;
	struct buf err = BUF_INIT;
	char *why = NULL;
	int64_t b = 0;
	int ok;

	for (size_t i = 0; i < res->n_rows && !r; i++)
		if (!strcmp(res->rows[i].workload, w) && !strcmp(res->rows[i].metric, m))
			r = &res->rows[i];
	ok = r && r->st.verdict == VERDICT_CHANGED && (r->st.change_pct < 0) == (before < 0);
	log_msg(LOG_NOTICE, "job %lld: %s.%s %+.2f%% %s by job %lld (%s%s%.2f%%)", (long long)nightly, w, m,
		before, ok ? "confirmed" : "not confirmed", (long long)id,
		r ? stats_verdict_name(r->st.verdict) : "no comparison", r ? " " : "", r ? r->st.change_pct : 0.0);
	if (ok && worse(r->st.change_pct, better) && tree && good && bad && strcmp(good, bad)) {
		struct bisect_start_opts bo;

		memset(&bo, 0, sizeof(bo));
		bo.tree = tree;
		bo.good = good;
		bo.bad = bad;
		bo.workload = w;
		bo.metric = m;
		bo.job = name;
		bo.alpha = 0.01;
		/* each commit measured as the nightly was: its boots (at least 2), up to three times that */
		bo.min_boots = cj && cj->boots > 2 ? cj->boots : 2;
		bo.max_boots = 3 * bo.min_boots;
		/*
		 * the ends get the default 2 * min_boots a side: with 2 a side one boot's
		 * 3% dip under icount left Welch df ~1 and the ends "not different" (t0902)
		 */
		b = bisect_start(db, x->cfg, &bo, &err);
		if (b > 0) {
			log_msg(LOG_NOTICE, "job %lld: confirmed regression of %s.%s: bisection %lld queued",
				(long long)nightly, w, m, (long long)b);
		} else {
			/* kept on the row (confirm_text: "no bisection: ...") and logged */
			why = xstrdup(err.len ? err.buf : "cannot start the bisection");
			error("%s", why);
		}
	}
	/* decided, with its bisection, in one statement: a reader never sees one without the other */
	confirmation_decide(db, cid, ok ? "confirmed" : "not confirmed", r ? r->st.change_pct : NAN,
			    r ? stats_verdict_name(r->st.verdict) : "no comparison", now_wall(), b > 0 ? b : 0, why);
	buf_release(&err);
	free(why);
	return 0;
}

/*
 * A confirmation ended done: each change it was to confirm is confirmed
 * when the same metric is CHANGED the same way again, else not confirmed;
 * a confirmed regression starts a bisection between the two kernels'
 * commits, measured by the nightly's job.
 */
static int after_confirmation(struct db *db, const struct klab_config *cfg, int64_t id, int64_t nightly,
			      const char *name)
{
	struct confirm_ctx x;
	struct compare_result res;
	char *tree = NULL, *good, *bad;
	int64_t ka, kb;

	memset(&res, 0, sizeof(res));
	if (compare_load(db, id, 0, &res) != 1)
		return 0;
	side_kernels(db, id, &ka, &kb);
	jobs_get_str(db, nightly, JOB_TREE, &tree);
	good = kernel_commit(db, ka);
	bad = kernel_commit(db, kb);
	memset(&x, 0, sizeof(x));
	x.db = db;
	x.cfg = cfg;
	x.cj = conf_job(cfg, name);
	x.res = &res;
	x.tree = tree;
	x.good = good;
	x.bad = bad;
	x.name = name;
	x.id = id;
	x.nightly = nightly;
	confirmations_pending_each(db, id, decide_one, &x);
	compare_result_free(&res);
	free(tree);
	free(good);
	free(bad);
	return 0;
}

int confirm_after_job(struct db *db, const struct klab_config *cfg, int64_t id, const struct job_spec *spec)
{
	const char *kind = spec->kind, *name = spec->name;

	if (!name || !cfg)
		return 0;
	if (!strcmp(kind, "nightly"))
		return after_nightly(db, cfg, id, name) < 0 ? -1 : 0;
	if (!strcmp(kind, "confirm"))
		return after_confirmation(db, cfg, id, spec->confirms, name);
	return 0;
}
