/* bisect_run.c: the runner of a bisection: the two ends and each commit measured by jobs, classified as they end, resumable after a kill. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bisect/bisect.h"
#include "bisect/bisect_db.h"
#include "buf.h"
#include "compare/noise.h"
#include "store/jobs.h"
#include "job/job.h"
#include "job/job_int.h"
#include "jsonh.h"
#include "lock.h"
#include "log.h"
#include "stats/stats.h"
#include "store/bisections.h"
#include "store/runs.h"
#include "strvec.h"
#include "util.h"

/* A commit's lab failures (not a build or boot of the commit) before the bisection gives up. */
#define LAB_FAILURES_MAX 3
/* Failed boots of one commit before it is skipped as one that does not boot. */
#define BOOT_FAILURES_MAX 2

struct brun {
	struct klab_config *cfg;
	struct db *db;
	const char *db_path;
	int64_t id;
	const struct job_run_opts *o;
	char *tree, *good, *bad, *workload, *metric, *job;
	double alpha;
	int min_boots, max_boots, end_boots;
	struct json_object *spec;
	struct json_object *commits, *subjects;	/* of the spec */
	size_t n;
	enum bisect_verdict *v;
	double *gv, *bv;		/* per-boot values of the ends */
	size_t ng, nb;
	struct buf why;			/* a skip's or the failure's reason */
	/* the instrument's calibration (compare/noise.c), found from the ends' job: one boot a step */
	int has_cal;
	struct stats_cal cal;
	char *cal_instrument, *cal_text;
};

/* A count of the bisection's spec (bisections.spec), DEF when it has none. */
static int bspec_int(struct json_object *spec, const char *key, int def)
{
	struct json_object *v = obj_get(spec, key);

	return v ? json_object_get_int(v) : def;
}

/* How a measurement of one commit ended. */
enum measured { M_OK = 0, M_SKIP, M_STOPPED, M_FAILED };

static const char *commit_at(struct brun *r, size_t i)
{
	return json_object_get_string(json_object_array_get_idx(r->commits, i));
}

static const char *subject_at(struct brun *r, size_t i)
{
	struct json_object *s = r->subjects ? json_object_array_get_idx(r->subjects, i) : NULL;

	return s ? json_object_get_string(s) : "";
}

static void load_row(const struct bisection_spec *b, void *data)
{
	struct brun *r = data;

	r->tree = xstrdup(b->tree);
	r->good = xstrdup(b->good);
	r->bad = xstrdup(b->bad);
	r->workload = xstrdup(b->workload);
	r->metric = xstrdup(b->metric);
	r->alpha = b->alpha;
	r->spec = json_tokener_parse(b->spec);
}

static int load(struct brun *r)
{
	int got = bisection_load(r->db, r->id, load_row, r);

	if (got < 0)
		return -1;
	if (got == 0)
		return error("no bisection %lld (klab bisect list shows them)", (long long)r->id);
	if (!r->spec)
		return error("bisection %lld: its spec is not JSON", (long long)r->id);
	r->commits = obj_get(r->spec, "commits");
	r->subjects = obj_get(r->spec, "subjects");
	r->n = r->commits ? json_object_array_length(r->commits) : 0;
	r->min_boots = bspec_int(r->spec, "min_boots", 3);
	r->max_boots = bspec_int(r->spec, "max_boots", 8);
	r->end_boots = bspec_int(r->spec, "end_boots", 2 * r->min_boots);
	r->job = obj_str(r->spec, "job") ? xstrdup(obj_str(r->spec, "job")) : NULL;
	if (!r->n || !r->job)
		return error("bisection %lld: its spec has no commits or no job (made by an older klab: start it again)",
			     (long long)r->id);
	r->v = xcalloc(r->n, sizeof(*r->v));
	r->v[r->n - 1] = BISECT_BAD;	/* the bad end */
	return 0;
}

/*
 * The per-boot values (mean of the measured runs of each boot) of the
 * metric, from every job of step SEQ, side SIDE. Runs are stored only when
 * their boot's state held, so a failed job's boots count too.
 */
static int step_values(struct brun *r, int seq, const char *side, double **out, size_t *n)
{
	if (runs_bisect_step_values(r->db, r->id, seq, side, r->workload, r->metric, out, n))
		return error_to(&r->why, "cannot read the values of step %d side %s: %s", seq, side, db_errmsg(r->db));
	return 0;
}

/* Why job JOB failed: 'b' its build, 'o' a boot (deploy or verify), 'l' anything else; the step's error in why. */
static char failure_kind(struct brun *r, int64_t job, struct buf *why)
{
	char *key = NULL, *err = NULL;
	char kind = 'l';

	buf_reset(why);
	if (steps_last_failed(r->db, job, &key, &err) == 1) {
		buf_addf(why, "job %lld, step %s: %s", (long long)job, key, err);
		if (!strncmp(key, "build:", 6))
			kind = 'b';
		else if (!strncmp(key, "boot:", 5) && (strstr(key, ":deploy") || strstr(key, ":verify")))
			kind = 'o';
	} else {
		char *e = NULL;
		jobs_get_str(r->db, job, JOB_ERROR_TEXT, &e);
		buf_addf(why, "job %lld: %s", (long long)job, e ? e : "failed");
		free(e);
	}
	free(key);
	free(err);
	return kind;
}

static int cancelled(struct brun *r)
{
	return bisection_cancel_asked(r->db, r->id);
}

static void set_step_job(struct brun *r, int seq, int64_t job)
{
	bisect_step_set_job(r->db, r->id, seq, job);
}

/*
 * Measure step SEQ until it has WANT boot values (of side B; the ends'
 * job, seq 0, both sides): run its unfinished jobs (a killed runner's job
 * resumes), count why its failed ones failed, submit another job for the
 * boots still missing. A commit that does not build, or twice does not
 * boot, is M_SKIP (r->why says why); a lab that keeps failing M_FAILED.
 */
static enum measured measure(struct brun *r, int seq, const char *commit, int want)
{
	for (;;) {
		struct job_brief *v = NULL;
		size_t nv = 0;
		int64_t open_job = 0;
		int boot_fail = 0, lab_fail = 0;
		double *x = NULL;
		size_t nx = 0, na = 0;
		struct job_submit_opts so = JOB_SUBMIT_OPTS_INIT;
		int64_t job;

		if (jobs_list_bisect_step(r->db, r->id, seq, &v, &nv)) {
			error_to(&r->why, "cannot read the jobs of step %d: %s", seq, db_errmsg(r->db));
			return M_FAILED;
		}
		for (size_t i = 0; i < nv; i++) {
			const char *st = v[i].state;
			int64_t id = v[i].id;
			if (!strcmp(st, "queued") || !strcmp(st, "running")) {
				if (!open_job)
					open_job = id;
			} else if (!strcmp(st, "failed")) {
				char k = failure_kind(r, id, &r->why);
				if (k == 'b') {
					char *w = buf_detach(&r->why, NULL);
					buf_addf(&r->why, "does not build (%s)", w);
					free(w);
					job_briefs_free(v, nv);
					return M_SKIP;
				}
				if (k == 'o')
					boot_fail++;
				else
					lab_fail++;
			} else if (!strcmp(st, "cancelled")) {
				/* klab bisect cancel cancels its jobs too; a job cancelled alone ends the bisection */
				job_briefs_free(v, nv);
				buf_reset(&r->why);
				buf_addf(&r->why, "its job %lld was cancelled", (long long)id);
				return cancelled(r) ? M_STOPPED : M_FAILED;
			}
		}
		job_briefs_free(v, nv);
		if (open_job) {
			int rc;
			set_step_job(r, seq, open_job);
			rc = job_run(r->cfg, r->db, r->db_path, open_job, r->o);
			if (rc == 2 || rc == JOB_RUN_TAKEN || rc < 0) {
				buf_reset(&r->why);
				buf_addf(&r->why, rc == JOB_RUN_TAKEN ? "job %lld is being run by another process" :
					  "job %lld stopped before its end", (long long)open_job);
				return rc < 0 ? M_FAILED : M_STOPPED;
			}
			continue;	/* done or failed: count again */
		}
		if (cancelled(r))
			return M_STOPPED;
		if (step_values(r, seq, "B", &x, &nx))
			return M_FAILED;
		free(x);
		if (seq == 0) {
			if (step_values(r, seq, "A", &x, &na))
				return M_FAILED;
			free(x);
			if (na < nx)
				nx = na;
		}
		if ((int)nx >= want)
			return M_OK;
		if (boot_fail >= BOOT_FAILURES_MAX) {
			char *last = buf_detach(&r->why, NULL);
			buf_addf(&r->why, "does not boot (%d failed boots; last: %s)", boot_fail, last);
			free(last);
			return M_SKIP;
		}
		if (lab_fail + boot_fail > LAB_FAILURES_MAX) {
			char *last = buf_detach(&r->why, NULL);
			buf_addf(&r->why, "the lab failed %d times measuring %.12s (last: %s)", lab_fail + boot_fail,
				 commit, last);
			free(last);
			return M_FAILED;
		}
		so.job = r->job;
		so.workload = r->workload;
		so.bisection = r->id;
		so.bisect_seq = seq;
		so.boots = want - (int)nx;
		if (seq == 0) {
			so.base = r->good;
			so.test = r->bad;
		} else {
			so.commit = commit;
		}
		{
			struct buf why = BUF_INIT;

			job = job_submit(r->db, r->cfg, &so, &why);
			if (job < 0) {
				buf_reset(&r->why);
				buf_addf(&r->why, "cannot submit the job of %.12s: %s", commit, why.buf);
				buf_release(&why);
				return M_FAILED;
			}
			buf_release(&why);
		}
		set_step_job(r, seq, job);
		info("bisection %lld: step %d (%.12s): job %lld, %d boot(s)", (long long)r->id, seq, commit,
		     (long long)job, so.boots);
	}
}

/* The step row SEQ, made once (ON CONFLICT DO NOTHING: a resumed runner finds it). */
static int step_row(struct brun *r, int seq, const char *role, const char *commit, const char *subject,
		    size_t remaining)
{
	return bisect_step_add(r->db, r->id, seq, role, commit, subject, (int64_t)remaining, now_wall());
}

static double mean_of(const double *x, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += x[i];
	return n ? s / (double)n : NAN;
}

static int step_end(struct brun *r, int seq, size_t boots, double value, double pg, double pb, const char *verdict,
		    const char *reason)
{
	return bisect_step_end(r->db, r->id, seq, (int64_t)boots, value, pg, pb, verdict, reason, now_wall());
}

static int finish(struct brun *r, const char *state, const char *result, const char *error_msg)
{
	return bisection_finish(r->db, r->id, state, result, error_msg, now_wall());
}

/* The ends: one ABBA job of good against bad, end_boots (2 * min_boots) a side; *differ: at alpha (Welch). */
static enum measured measure_ends(struct brun *r, int *differ)
{
	enum measured m;
	struct stats_welch w;

	step_row(r, 0, "good", r->good, obj_str(r->spec, "good_subject"), r->n);
	step_row(r, 1, "bad", r->bad, subject_at(r, r->n - 1), r->n);
	m = measure(r, 0, r->good, r->end_boots);
	if (m == M_SKIP) {
		/* an end that does not build or boot cannot be skipped: the bisection has no reference */
		char *w2 = buf_detach(&r->why, NULL);
		buf_addf(&r->why, "an end of the bisection does not build or boot (%s)", w2);
		free(w2);
		return M_FAILED;
	}
	if (m != M_OK)
		return m;
	free(r->gv);
	free(r->bv);
	if (step_values(r, 0, "A", &r->gv, &r->ng) || step_values(r, 0, "B", &r->bv, &r->nb))
		return M_FAILED;
	*differ = !stats_welch(r->gv, r->ng, r->bv, r->nb, &w) && w.p < r->alpha;
	step_end(r, 0, r->ng, mean_of(r->gv, r->ng), NAN, *differ ? w.p : NAN, "good", "the good end");
	step_end(r, 1, r->nb, mean_of(r->bv, r->nb), *differ ? w.p : NAN, NAN, "bad", "the bad end");
	return M_OK;
}

/* The instrument of job JOB's boots into *NJ (noise_job_open(); SPEC NULL: the defaults). 0 or -1. */
static int job_instrument(struct db *db, int64_t job, const struct job_spec *spec, struct noise_job *nj)
{
	static const struct job_spec none;

	return noise_job_open(db, job, spec ? spec : &none, nj);
}

/*
 * The calibration of the workload's metric on the instrument of the ends'
 * job (docs/bisect.md, "One boot a step"): r->has_cal and r->cal when there
 * is one. Without one (or on any error) the steps are measured as before.
 */
static void find_cal(struct brun *r)
{
	struct job_brief *v = NULL;
	size_t nv = 0;

	if (jobs_list_bisect_step(r->db, r->id, 0, &v, &nv))
		return;
	for (size_t i = 0; i < nv && !r->has_cal; i++) {
		struct job_spec spec;
		struct noise_job nj;
		struct calib_row row;
		char *text = NULL;
		char d[16];

		if (strcmp(v[i].state, "done") || jobs_get_str(r->db, v[i].id, JOB_SPEC, &text) != 1) {
			free(text);
			continue;
		}
		job_spec_parse(text, &spec);
		if (!job_instrument(r->db, v[i].id, &spec, &nj) &&
		    noise_job_find(r->db, &nj, r->workload, r->metric, &r->cal, &row) == 1) {
			time_t t = (time_t)row.updated;
			struct tm tm;

			if (!gmtime_r(&t, &tm) || !strftime(d, sizeof(d), "%Y-%m-%d", &tm))
				snprintf(d, sizeof(d), "?");
			r->has_cal = 1;
			r->cal_instrument = xstrdup(nj.instrument);
			r->cal_text = xasprintf("noise from %lld boots (%lld A/A), %s: sd %.3g ppm", (long long)row.boots,
						(long long)row.aa_boots, d, 1e6 * sqrt(r->cal.var));
			info("bisection %lld: calibrated instrument (%s): one boot a step while the value is clear",
			     (long long)r->id, r->cal_text);
			calib_row_release(&row);
		}
		noise_job_release(&nj);
		job_spec_release(&spec);
		free(text);
	}
	job_briefs_free(v, nv);
}

/* Whether every job of step SEQ that booted ran on the calibrated instrument. */
static int step_on_cal(struct brun *r, int seq)
{
	struct job_brief *v = NULL;
	size_t nv = 0;
	int same = 1;

	if (!r->has_cal || jobs_list_bisect_step(r->db, r->id, seq, &v, &nv))
		return 0;
	for (size_t i = 0; i < nv && same; i++) {
		struct noise_job nj;

		if (job_instrument(r->db, v[i].id, NULL, &nj))
			same = 0;
		else if (nj.instrument)
			same = !strcmp(nj.instrument, r->cal_instrument);
		else if (nj.boots)
			same = 0;	/* boots on several instruments */
		noise_job_release(&nj);
	}
	job_briefs_free(v, nv);
	return same;
}

static void verdict_of(const char *commit, const char *verdict, void *data)
{
	struct brun *r = data;

	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(commit_at(r, i), commit))
			r->v[i] = !strcmp(verdict, "good") ? BISECT_GOOD : !strcmp(verdict, "bad") ? BISECT_BAD : BISECT_SKIP;
}

/* Verdicts of the steps already classified (a resumed runner), by commit. */
static void load_verdicts(struct brun *r)
{
	bisect_step_verdicts_each(r->db, r->id, verdict_of, r);
}

/* The seq of the step row of commit C (a resumed runner's unfinished step), or the next free one. */
static int step_seq(struct brun *r, const char *c)
{
	int64_t seq = 0;

	if (bisect_step_seq(r->db, r->id, c, &seq) == 1)
		return (int)seq;
	seq = 1;
	bisect_steps_max_seq(r->db, r->id, &seq);
	return (int)seq + 1;
}

/* Measure and classify commit I; M_OK with r->v[i] set (good, bad or skip). */
static enum measured measure_commit(struct brun *r, size_t i, size_t remaining)
{
	const char *c = commit_at(r, i);
	int seq = step_seq(r, c);
	enum bisect_verdict v = BISECT_UNTESTED;
	double *x = NULL, pg = NAN, pb = NAN;
	size_t nx = 0;
	enum measured m = M_OK;
	char reason[320] = "";
	int cal_used = 0;

	step_row(r, seq, "step", c, subject_at(r, i), remaining);
	for (int k = bisect_first_boots(r->has_cal, r->min_boots); k <= r->max_boots && v == BISECT_UNTESTED;
	     k = bisect_more_boots(k, r->min_boots)) {
		m = measure(r, seq, c, k);
		if (m == M_SKIP) {
			v = BISECT_SKIP;
			snprintf(reason, sizeof(reason), "%s", r->why.buf);
			m = M_OK;
			break;
		}
		if (m != M_OK)
			break;
		free(x);
		if (step_values(r, seq, "B", &x, &nx))
			return M_FAILED;
		v = bisect_classify_cal(r->gv, r->ng, r->bv, r->nb, x, nx, r->alpha,
					step_on_cal(r, seq) ? &r->cal : NULL, &pg, &pb, &cal_used);
	}
	if (m != M_OK) {
		free(x);
		return m;
	}
	if (v == BISECT_UNTESTED) {
		v = BISECT_SKIP;
		snprintf(reason, sizeof(reason), "undecided after %zu boots (p against good %.3g, against bad %.3g)", nx,
			 pg, pb);
	} else if (v != BISECT_SKIP) {
		snprintf(reason, sizeof(reason), "%s: p against good %.3g, against bad %.3g at alpha %g%s%s%s",
			 v == BISECT_BAD ? "like the bad end" : "like the good end", pg, pb, r->alpha,
			 cal_used ? " (calibrated: " : "", cal_used ? r->cal_text : "", cal_used ? ")" : "");
	}
	step_end(r, seq, nx, mean_of(x, nx), pg, pb, bisect_verdict_name(v), reason);
	info("bisection %lld: %.12s is %s (%s)", (long long)r->id, c, bisect_verdict_name(v), reason);
	r->v[i] = v;
	free(x);
	return M_OK;
}

/* The answer: the first bad commit, the ends' change and CI from the ends' job's comparison. */
static int found(struct brun *r, int *ambiguous)
{
	size_t k = bisect_first_bad(r->v, r->n, ambiguous);
	double ch = NAN, lo = NAN, hi = NAN;

	comparisons_bisection_ends(r->db, r->id, r->workload, r->metric, &ch, &lo, &hi);
	if (isnan(ch) && r->ng && r->nb)
		ch = 100.0 * (mean_of(r->bv, r->nb) / mean_of(r->gv, r->ng) - 1);
	return bisection_set_answer(r->db, r->id, commit_at(r, k), subject_at(r, k), ch, lo, hi);
}

static void brun_release(struct brun *r)
{
	free(r->tree);
	free(r->good);
	free(r->bad);
	free(r->workload);
	free(r->metric);
	free(r->job);
	free(r->v);
	free(r->gv);
	free(r->bv);
	free(r->cal_instrument);
	free(r->cal_text);
	if (r->spec)
		json_object_put(r->spec);
	buf_release(&r->why);
}

/* The run lock "bisect" ID (db_run_lock) is held by the bisection's runner, as "job" ID by a job's. */
int bisect_run(struct klab_config *cfg, struct db *db, const char *db_path, int64_t id, const struct job_run_opts *o)
{
	struct brun r;
	char *state = NULL;
	int locked = -1, ret = -1, differ = 0, ambiguous = 0;
	enum measured m = M_OK;

	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	r.db = db;
	r.db_path = db_path ? db_path : db_file(db);
	r.id = id;
	r.o = o;
	buf_init(&r.why, 0);
	if (bisection_state(db, id, &state) != 1) {
		error("no bisection %lld (klab bisect list shows them)", (long long)id);
		goto out;
	}
	if (strcmp(state, "queued") && strcmp(state, "running")) {
		if (strcmp(state, "done"))
			error("bisection %lld is %s already: nothing to run (klab bisect show %lld)", (long long)id, state,
			      (long long)id);
		ret = strcmp(state, "done") ? 1 : 0;
		goto out;
	}
	locked = db_run_lock(db, "bisect", id);
	if (locked == 1 && o->taken_quiet) {
		ret = JOB_RUN_TAKEN;
		goto out;
	}
	if (locked == 1) {
		error("bisection %lld is being run by another process", (long long)id);
		ret = 2;
		goto out;
	}
	if (locked < 0 || load(&r))
		goto out;
	bisection_set_running(db, id, (int64_t)getpid(), now_wall());
	m = measure_ends(&r, &differ);
	if (m == M_OK && !differ) {
		info("bisection %lld: the ends do not differ at alpha %g: no regression confirmed", (long long)id, r.alpha);
		ret = finish(&r, "done", "no-regression", NULL) ? -1 : 0;
		goto page;
	}
	if (m == M_OK) {
		load_verdicts(&r);
		find_cal(&r);
	}
	while (m == M_OK) {
		size_t remaining, k = bisect_next(r.v, r.n, &remaining);
		if (k >= r.n)
			break;
		if (cancelled(&r)) {
			m = M_STOPPED;
			break;
		}
		m = measure_commit(&r, k, remaining);
		if (o && o->stop && *o->stop && m == M_OK)
			m = M_STOPPED;
	}
	if (m == M_OK) {
		if (found(&r, &ambiguous))
			goto out;
		ret = finish(&r, "done", ambiguous ? "ambiguous" : "found", NULL) ? -1 : 0;
	} else if (m == M_STOPPED && cancelled(&r)) {
		finish(&r, "cancelled", NULL, "cancelled by request");
		ret = 1;
	} else if (m == M_STOPPED) {
		info("bisection %lld stopped (%s): `klab bisect run %lld` resumes it", (long long)id, r.why.buf,
		     (long long)id);
		ret = 2;
	} else {
		/* every M_FAILED hands its reason up in r.why */
		error("bisection %lld failed: %s", (long long)id, r.why.buf);
		finish(&r, "failed", NULL, r.why.buf);
		ret = 1;
	}
page:
	if (ret >= 0 && ret != 2 && cfg->lab.report_dir && bisect_page(db, id, cfg->lab.report_dir))
		warn("bisection %lld: cannot write its page under '%s'", (long long)id, cfg->lab.report_dir);
out:
	if (locked == 0)
		db_run_unlock(db, "bisect", id);
	free(state);
	brun_release(&r);
	return ret;
}

int bisect_is_live(struct db *db, int64_t id)
{
	return db_run_lock_held(db, "bisect", id);
}
