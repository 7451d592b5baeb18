/* noise.c: the calibrated noise model: calibrations learnt from finished jobs, found for a job's comparison, stale or not. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compare/noise.h"
#include "log.h"
#include "util.h"

/* ---- learning ------------------------------------------------------------ */

/* A boot of the job being read: its instrument and its group of one kernel. */
struct lboot {
	int64_t id;
	char *instrument, *machine, *clock;
	int64_t kernel_id;	/* 0: none recorded (the machine's own kernel) */
	int64_t group;		/* its side's group: (kernel id, side), one kernel and one tuning profile */
};

/* One job's contribution to one calibration key. */
struct contrib {
	char *instrument, *machine, *clock, *workload, *wl_key, *metric;
	int64_t job;
	struct stats_pool boot, run;
	int64_t boots, aa_boots, runs;
};

struct learn {
	struct db *db;
	int64_t job;
	int aa;			/* the job runs one kernel on both sides */
	const struct job_spec *spec;
	struct lboot *boots;
	size_t n_boots, alloc_boots;
	/* the (workload, metric) being read: its values by boot */
	char *workload, *metric, *unit;
	int64_t *vboot;
	double *v;
	size_t nv, alloc_v;
	int bad;		/* a value <= 0 */
	struct contrib *c;
	size_t nc, alloc_c;
};

static void add_boot(const struct calib_boot *b, void *data)
{
	struct learn *l = data;
	struct lboot *x;

	if (l->n_boots == l->alloc_boots) {
		l->alloc_boots = l->alloc_boots ? 2 * l->alloc_boots : 16;
		l->boots = xrealloc(l->boots, l->alloc_boots * sizeof(*l->boots));
	}
	x = &l->boots[l->n_boots++];
	x->id = b->id;
	x->instrument = calib_instrument_key(b->machine, b->clock, b->sysinfo);
	x->machine = xstrdup(b->machine ? b->machine : "?");
	x->clock = xstrdup(b->clock ? b->clock : "real");
	x->kernel_id = b->kernel_id;
	x->group = 2 * b->kernel_id + (b->side && !strcmp(b->side, "B"));
}

static const struct lboot *find_boot(const struct learn *l, int64_t id)
{
	for (size_t i = 0; i < l->n_boots; i++)
		if (l->boots[i].id == id)
			return &l->boots[i];
	return NULL;
}

static int is_percent(const char *metric, const char *unit)
{
	return (unit && !strcmp(unit, "%")) || ends_with(metric, "_pct");
}

static struct contrib *contrib_for(struct learn *l, const struct lboot *b)
{
	const struct job_spec_workload *w = job_spec_workload(l->spec, l->workload);
	char key[CALIB_WL_KEY_LEN + 1];
	struct contrib *c;

	calib_workload_key(w, key);
	for (size_t i = 0; i < l->nc; i++) {
		c = &l->c[i];
		if (c->job == l->job && !strcmp(c->instrument, b->instrument) && !strcmp(c->workload, l->workload) &&
		    !strcmp(c->metric, l->metric))
			return c;
	}
	if (l->nc == l->alloc_c) {
		l->alloc_c = l->alloc_c ? 2 * l->alloc_c : 32;
		l->c = xrealloc(l->c, l->alloc_c * sizeof(*l->c));
	}
	c = &l->c[l->nc++];
	memset(c, 0, sizeof(*c));
	c->instrument = xstrdup(b->instrument);
	c->machine = xstrdup(b->machine);
	c->clock = xstrdup(b->clock);
	c->workload = xstrdup(l->workload);
	c->wl_key = xstrdup(key);
	c->metric = xstrdup(l->metric);
	c->job = l->job;
	return c;
}

/*
 * The values of one (workload, metric) of the job are in: per boot the log
 * of its mean and its runs' logs; boots grouped by (instrument, kernel).
 */
static void flush_metric(struct learn *l)
{
	size_t i = 0;
	/* boot logs per (boot's instrument, group), in boot order: collected per group below */
	double *bl = NULL, *rl = NULL;
	const struct lboot **bb = NULL;
	size_t nb = 0;

	if (!l->nv || l->bad || is_percent(l->metric, l->unit))
		goto out;
	bl = xmalloc(l->nv * sizeof(*bl));
	rl = xmalloc(l->nv * sizeof(*rl));
	bb = xmalloc(l->nv * sizeof(*bb));
	while (i < l->nv) {
		size_t j = i, m;
		double sum = 0;
		const struct lboot *b = find_boot(l, l->vboot[i]);

		while (j < l->nv && l->vboot[j] == l->vboot[i])
			j++;
		m = j - i;
		for (size_t k = i; k < j; k++) {
			sum += l->v[k];
			rl[k - i] = log(l->v[k]);
		}
		if (b) {
			struct contrib *c = contrib_for(l, b);

			stats_pool_add(&c->run, rl, m);
			c->boots++;
			c->runs += (int64_t)m;
			c->aa_boots += l->aa;
			bl[nb] = log(sum / (double)m);
			bb[nb++] = b;
		}
		i = j;
	}
	/* the boot pool: per (instrument, group) */
	for (size_t a = 0; a < nb; a++) {
		double *g;
		size_t ng = 0;

		if (!bb[a])
			continue;
		g = xmalloc(nb * sizeof(*g));
		for (size_t k = a; k < nb; k++) {
			if (bb[k] && bb[k]->group == bb[a]->group && !strcmp(bb[k]->instrument, bb[a]->instrument)) {
				g[ng++] = bl[k];
				if (k != a)
					bb[k] = NULL;
			}
		}
		stats_pool_add(&contrib_for(l, bb[a])->boot, g, ng);
		free(g);
	}
out:
	free(bl);
	free(rl);
	free(bb);
	l->nv = 0;
	l->bad = 0;
}

static void add_value(const struct calib_run_value *v, void *data)
{
	struct learn *l = data;

	if (!l->workload || strcmp(l->workload, v->workload) || strcmp(l->metric, v->metric)) {
		flush_metric(l);
		free(l->workload);
		free(l->metric);
		free(l->unit);
		l->workload = xstrdup(v->workload);
		l->metric = xstrdup(v->metric);
		l->unit = v->unit ? xstrdup(v->unit) : NULL;
	}
	if (l->nv == l->alloc_v) {
		l->alloc_v = l->alloc_v ? 2 * l->alloc_v : 64;
		l->v = xrealloc(l->v, l->alloc_v * sizeof(*l->v));
		l->vboot = xrealloc(l->vboot, l->alloc_v * sizeof(*l->vboot));
	}
	l->bad |= !(v->value > 0) || !isfinite(v->value);
	l->v[l->nv] = v->value;
	l->vboot[l->nv++] = v->boot_id;
}

static void boots_clear(struct learn *l)
{
	for (size_t i = 0; i < l->n_boots; i++) {
		free(l->boots[i].instrument);
		free(l->boots[i].machine);
		free(l->boots[i].clock);
	}
	l->n_boots = 0;
}

/*
 * An A/A job: both sides have boots, all of one kernel, and the sides' tuning
 * profiles are the same (a tuning job of two profiles is not A/A even on one
 * kernel). Only what the boots are counted as; the groups are per side anyway.
 */
static int is_aa(const struct learn *l, const struct job_spec *spec)
{
	const struct job_spec_side *a = job_spec_side(spec, 'A'), *b = job_spec_side(spec, 'B');
	const char *pa = a ? a->profile : NULL, *pb = b ? b->profile : NULL;
	int sides = 0;

	if (!l->n_boots || ((pa || pb) && (!pa || !pb || strcmp(pa, pb))))
		return 0;
	for (size_t i = 0; i < l->n_boots; i++) {
		if (l->boots[i].kernel_id != l->boots[0].kernel_id)
			return 0;
		sides |= 1 << (l->boots[i].group & 1);
	}
	return sides == 3;
}

/* Read job JOB into l->c. 0, or -1 (logged). */
static int learn_job(struct learn *l, int64_t job)
{
	char *text = NULL, *state = NULL;
	struct job_spec spec;
	size_t before = l->nc;
	int ret = -1, found;

	memset(&spec, 0, sizeof(spec));
	found = jobs_get_str(l->db, job, JOB_STATE, &state);
	if (found <= 0) {
		if (!found)
			error("cannot learn from job %lld: there is no such job", (long long)job);
		goto out;
	}
	if (strcmp(state, "done")) {
		error("cannot learn from job %lld: it is %s; a calibration learns from jobs that ended done",
		      (long long)job, state);
		goto out;
	}
	if (jobs_get_str(l->db, job, JOB_SPEC, &text) < 0)
		goto out;
	job_spec_parse(text, &spec);	/* or its defaults */
	l->job = job;
	l->spec = &spec;
	boots_clear(l);
	if (calib_job_boots_each(l->db, job, add_boot, l))
		goto out;
	l->aa = is_aa(l, &spec);
	if (calib_job_runs_each(l->db, job, spec.warmup_runs, add_value, l))
		goto out;
	flush_metric(l);
	if (l->nc == before) {
		error("cannot learn from job %lld: it has no measured runs inside boots with positive values",
		      (long long)job);
		goto out;
	}
	ret = 0;
out:
	free(l->workload);
	free(l->metric);
	free(l->unit);
	l->workload = l->metric = l->unit = NULL;
	l->spec = NULL;
	job_spec_release(&spec);
	free(text);
	free(state);
	return ret;
}

static int lists_job(const char *jobs, int64_t job)
{
	const char *p = jobs;

	while (p && *p) {
		char *end;
		long long v = strtoll(p, &end, 10);

		if (end == p)
			break;
		if (v == job)
			return 1;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static void contrib_free(struct contrib *c)
{
	free(c->instrument);
	free(c->machine);
	free(c->clock);
	free(c->workload);
	free(c->wl_key);
	free(c->metric);
}

static int same_key(const struct contrib *a, const struct contrib *b)
{
	return !strcmp(a->instrument, b->instrument) && !strcmp(a->workload, b->workload) &&
	       !strcmp(a->wl_key, b->wl_key) && !strcmp(a->metric, b->metric);
}

/* Merge the contributions of key C[first] (and every later one of that key) into its stored row. */
static int merge_key(struct db *db, struct contrib *c, size_t nc, size_t first, int reset, double now,
		     struct noise_learnt *out)
{
	struct calib_row old, *r = &out->row;
	struct stats_pool boot = { 0, 0, 0, 0 }, run = { 0, 0, 0, 0 };
	int64_t boots = 0, aa = 0, runs = 0;
	struct buf jobs = BUF_INIT, added = BUF_INIT;
	int have = reset ? 0 : calib_get(db, c[first].instrument, c[first].workload, c[first].wl_key,
					  c[first].metric, &old);

	if (have < 0)
		return -1;
	memset(out, 0, sizeof(*out));
	if (have) {
		boot.ss = old.boot_var * old.boot_df;
		boot.df = old.boot_df;
		if (!isnan(old.run_var)) {
			run.ss = old.run_var * old.run_df;
			run.df = old.run_df;
		}
		boots = old.boots;
		aa = old.aa_boots;
		runs = (int64_t)llround(old.runs_per_boot * (double)old.boots);
		buf_addstr(&jobs, old.jobs ? old.jobs : "");
	}
	for (size_t i = first; i < nc; i++) {
		if (!same_key(&c[i], &c[first]) || (have && lists_job(old.jobs, c[i].job)))
			continue;
		boot.ss += c[i].boot.ss;
		boot.df += c[i].boot.df;
		run.ss += c[i].run.ss;
		run.df += c[i].run.df;
		boots += c[i].boots;
		aa += c[i].aa_boots;
		runs += c[i].runs;
		if (!lists_job(jobs.buf, c[i].job))
			buf_addf(&jobs, "%s%lld", jobs.len ? "," : "", (long long)c[i].job);
		if (!lists_job(added.buf, c[i].job))
			buf_addf(&added, "%s%lld", added.len ? "," : "", (long long)c[i].job);
	}
	r->instrument = xstrdup(c[first].instrument);
	r->machine = xstrdup(c[first].machine);
	r->clock = xstrdup(c[first].clock);
	r->workload = xstrdup(c[first].workload);
	r->wl_key = xstrdup(c[first].wl_key);
	r->metric = xstrdup(c[first].metric);
	r->boot_var = boot.df > 0 ? boot.ss / boot.df : NAN;
	r->boot_df = boot.df;
	r->boots = boots;
	r->aa_boots = aa;
	r->runs_per_boot = boots ? (double)runs / (double)boots : 1;
	r->run_var = run.df > 0 ? run.ss / run.df : NAN;
	r->run_df = run.df > 0 ? run.df : NAN;
	r->jobs = buf_detach(&jobs, NULL);
	r->created = have ? old.created : now;
	r->updated = added.len ? now : have ? old.updated : now;
	out->added = buf_detach(&added, NULL);
	out->is_new = !have;
	if (have)
		calib_row_release(&old);
	/* no degrees of freedom yet (one boot a side, and no A/A job): nothing to store */
	if (!(boot.df > 0))
		return 1;
	return calib_put(db, r);
}

int noise_learn(struct db *db, const int64_t *jobs, size_t n_jobs, int reset, struct noise_learnt **out, size_t *n)
{
	struct learn l;
	size_t alloc = 0;
	double now = now_wall();
	int ret = -1;

	memset(&l, 0, sizeof(l));
	l.db = db;
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < n_jobs; i++) {
		int seen = 0;

		for (size_t k = 0; k < i; k++)
			seen |= jobs[k] == jobs[i];
		if (!seen && learn_job(&l, jobs[i]))
			goto out;
	}
	if (db_begin(db))
		goto out;
	for (size_t i = 0; i < l.nc; i++) {
		int done = 0, r;

		for (size_t k = 0; k < i && !done; k++)
			done = same_key(&l.c[k], &l.c[i]);
		if (done)
			continue;
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		r = merge_key(db, l.c, l.nc, i, reset, now, &(*out)[*n]);
		if (r < 0) {
			(*n)++;
			db_rollback(db);
			goto out;
		}
		if (r > 0) {	/* not stored: no df */
			calib_row_release(&(*out)[*n].row);
			free((*out)[*n].added);
			continue;
		}
		(*n)++;
	}
	if (db_commit(db))
		goto out;
	ret = 0;
out:
	boots_clear(&l);
	free(l.boots);
	for (size_t i = 0; i < l.nc; i++)
		contrib_free(&l.c[i]);
	free(l.c);
	free(l.v);
	free(l.vboot);
	if (ret) {
		noise_learnt_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return ret;
}

void noise_learnt_free(struct noise_learnt *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		calib_row_release(&v[i].row);
		free(v[i].added);
	}
	free(v);
}

/* ---- a job's calibration --------------------------------------------------- */

struct job_keys {
	char *key;
	int several;
	size_t n;
};

static void job_key(const struct calib_boot *b, void *data)
{
	struct job_keys *k = data;
	char *key = calib_instrument_key(b->machine, b->clock, b->sysinfo);

	k->n++;
	if (!k->key)
		k->key = key;
	else {
		k->several |= strcmp(k->key, key) != 0;
		free(key);
	}
}

int noise_job_open(struct db *db, int64_t job_id, const struct job_spec *spec, struct noise_job *nj)
{
	struct job_keys k = { NULL, 0, 0 };

	memset(nj, 0, sizeof(*nj));
	nj->spec = spec;
	nj->runs_per_boot = spec->runs > 0 ? spec->runs : 1;
	if (calib_job_boots_each(db, job_id, job_key, &k)) {
		free(k.key);
		return -1;
	}
	nj->boots = k.n;
	if (!k.n)
		nj->why = xstrdup("the job has no boots");
	else if (k.several)
		nj->why = xstrdup("the job's boots ran on more than one instrument");
	else
		nj->instrument = k.key, k.key = NULL;
	free(k.key);
	return 0;
}

void noise_job_release(struct noise_job *nj)
{
	free(nj->instrument);
	free(nj->why);
	memset(nj, 0, sizeof(*nj));
}

int noise_job_find(struct db *db, const struct noise_job *nj, const char *workload, const char *metric,
		   struct stats_cal *cal, struct calib_row *row)
{
	char key[CALIB_WL_KEY_LEN + 1];
	int r;

	memset(row, 0, sizeof(*row));
	if (!nj->instrument)
		return 0;
	calib_workload_key(job_spec_workload(nj->spec, workload), key);
	r = calib_get(db, nj->instrument, workload, key, metric, row);
	if (r <= 0)
		return r;
	if (!(row->boot_df > 0) || isnan(row->boot_var)) {
		calib_row_release(row);
		return 0;
	}
	cal->var = stats_cal_boot_var(row->boot_var, row->runs_per_boot, row->run_var, nj->runs_per_boot);
	cal->df = row->boot_df;
	return 1;
}

int noise_cal_without_job(struct stats_cal *cal, const struct calib_row *row, int64_t job, const double *a,
			  size_t na, const double *b, size_t nb)
{
	struct stats_pool own = { 0, 0, 0, 0 };
	double *l, ss;

	if (!lists_job(row->jobs, job))
		return 0;
	l = xmalloc((na + nb + 1) * sizeof(*l));
	for (size_t i = 0; i < na; i++)
		l[i] = a[i] > 0 ? log(a[i]) : NAN;
	for (size_t i = 0; i < nb; i++)
		l[na + i] = b[i] > 0 ? log(b[i]) : NAN;
	stats_pool_add(&own, l, na);
	stats_pool_add(&own, l + na, nb);
	free(l);
	ss = cal->var * cal->df - own.ss;
	if (!(cal->df - own.df > 0) || !(ss >= 0))
		return -1;
	cal->var = ss / (cal->df - own.df);
	cal->df -= own.df;
	return 1;
}

int noise_stale(struct db *db, const struct calib_row *r, char **why)
{
	char *clock = NULL, *sysinfo = NULL, *now_key;
	double started;
	int rc;

	*why = NULL;
	rc = calib_machine_last_boot(db, r->machine, &clock, &sysinfo, &started);
	if (rc <= 0)
		return rc;
	now_key = calib_instrument_key(r->machine, clock, sysinfo);
	if (strcmp(now_key, r->instrument)) {
		*why = xasprintf("the newest boot of %s is on instrument '%s'", r->machine, now_key);
		rc = 1;
	} else {
		rc = 0;
	}
	free(now_key);
	free(clock);
	free(sysinfo);
	return rc;
}
