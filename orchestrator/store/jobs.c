/* jobs.c: the jobs family of tables and a job's spec, parsed once with its defaults. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonh.h"
#include "log.h"
#include "store/db.h"
#include "store/jobs.h"
#include "util.h"

/* ---- the spec (jobs.spec) */

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int is_number(struct json_object *v)
{
	return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double));
}

static int64_t int_or(struct json_object *o, const char *key, int64_t def)
{
	struct json_object *v = get(o, key);

	return is_number(v) ? json_object_get_int64(v) : def;
}

static double double_or(struct json_object *o, const char *key, double def)
{
	struct json_object *v = get(o, key);

	return is_number(v) ? json_object_get_double(v) : def;
}

static struct json_object *array(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

static void parse_side(struct json_object *o, struct job_spec_side *s)
{
	const char *l = str(o, "side");
	struct json_object *b = get(o, "build");

	s->side = l ? l[0] : '\0';
	s->label = str(o, "label");
	s->ref = str(o, "ref");
	s->variant = str(o, "variant");
	s->profile = str(o, "profile");
	s->build = b && json_object_get_boolean(b);
	s->kernel_id = int_or(o, "kernel_id", 0);
	s->from_job = int_or(o, "from_job", 0);
}

static void parse_workload(struct json_object *o, struct job_spec_workload *w)
{
	struct json_object *p = get(o, "params"), *m = get(o, "monitors");

	w->name = str(o, "name");
	w->type = str(o, "type");
	w->params = p && json_object_is_type(p, json_type_object) ? p : NULL;
	w->monitors = m && json_object_is_type(m, json_type_array) ? m : NULL;
	w->duration_s = double_or(o, "duration_s", JOB_SPEC_DURATION_S);
	w->warmup_s = double_or(o, "warmup_s", JOB_SPEC_WARMUP_S);
	w->ops = int_or(o, "ops", -1);
	w->warmup_ops = int_or(o, "warmup_ops", 0);
	if (w->ops < -1 || w->ops > JOB_SPEC_OPS_MAX)
		w->ops = -1;
	if (w->warmup_ops < 0 || w->warmup_ops > JOB_SPEC_OPS_MAX || w->ops <= 0)
		w->warmup_ops = 0;
	w->perf_events = str(o, "perf_events");
	w->profile_cpus = str(o, "profile_cpus");
	w->bpftrace_script = str(o, "bpftrace_script");
	w->headline = str(o, "headline");
	if (w->headline && !*w->headline)
		w->headline = NULL;
	w->threshold_pct = double_or(o, "threshold_pct", 0);
	w->target = str(w->params, "target");
}

void job_spec_work(const struct job_spec_workload *w, int icount, struct job_work *out)
{
	int rr = w->type && !strcmp(w->type, "udp_rr"), tx = w->type && !strcmp(w->type, "udp_tx");

	memset(out, 0, sizeof(*out));
	out->warmup_s = w->warmup_s;
	out->duration_s = w->duration_s;
	out->limit_s = w->warmup_s + w->duration_s;
	if (w->ops > 0) {
		out->ops = w->ops;
		out->warmup_ops = w->warmup_ops;
		out->limit_s = w->duration_s;
	} else if (!w->ops) {
		return;	/* timed, as every run was before runs sized by work */
	} else if (icount && (rr || (tx && !str(w->params, "gso_size") && !str(w->params, "rate_pps")))) {
		out->ops = rr ? JOB_SPEC_ICOUNT_OPS_UDP_RR : JOB_SPEC_ICOUNT_OPS_UDP_TX;
		out->warmup_ops = rr ? JOB_SPEC_ICOUNT_WARMUP_OPS_UDP_RR : JOB_SPEC_ICOUNT_WARMUP_OPS_UDP_TX;
	}
	if (out->ops) {
		out->warmup_s = 0;
		out->duration_s = out->limit_s;
	}
	if (icount && !str(w->params, "seed"))
		out->seed = JOB_SPEC_ICOUNT_SEED;
}

void job_spec_work_observe(const struct job_spec_workload *w, int icount, struct job_work *out)
{
	job_spec_work(w, icount, out);
}

int job_spec_parse(const char *text, struct job_spec *spec)
{
	struct json_object *o, *a, *v;
	size_t n;

	memset(spec, 0, sizeof(*spec));
	strvec_init(&spec->local_patches);
	strvec_init(&spec->machines);
	/* the defaults, also of a spec that does not parse */
	spec->kind = "";
	spec->order = "abba";
	spec->boots = 1;
	spec->pairs = 1;
	spec->runs = 1;
	spec->warmup_runs = 1;
	spec->observe_boots = 1;
	o = text ? json_parse(text, strlen(text), "job spec") : NULL;
	if (!o)
		return -1;
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return error("job spec: not a JSON object");
	}
	spec->doc = o;
	spec->name = str(o, "name");
	if (str(o, "kind"))
		spec->kind = str(o, "kind");
	spec->tree = str(o, "tree");
	spec->base = str(o, "base");
	spec->test = str(o, "test");
	spec->series = str(o, "series");
	spec->pool = str(o, "pool");
	spec->schedule = str(o, "schedule");
	spec->uid_salt = str(o, "uid_salt");
	if (str(o, "order"))
		spec->order = str(o, "order");
	if ((a = array(o, "local_patches")))
		for (size_t i = 0; i < json_object_array_length(a); i++)
			strvec_push(&spec->local_patches, json_object_get_string(json_object_array_get_idx(a, i)));
	if ((a = array(o, "machines")))
		for (size_t i = 0; i < json_object_array_length(a); i++)
			strvec_push(&spec->machines, json_object_get_string(json_object_array_get_idx(a, i)));
	spec->boots = (int)int_or(o, "boots", spec->boots);
	spec->boots_min = (int)int_or(o, "boots_min", 0);
	spec->pairs = (int)int_or(o, "pairs", 1);
	if (spec->pairs < 1 || spec->pairs > 64 || !spec->pool)
		spec->pairs = 1;
	spec->runs = (int)int_or(o, "runs", spec->runs);
	if ((v = get(o, "warmup_runs")) && json_object_is_type(v, json_type_int))
		spec->warmup_runs = json_object_get_int(v);
	else if ((v = get(o, "warmup")) && json_object_is_type(v, json_type_int) && json_object_get_int(v) <= 100)
		spec->warmup_runs = json_object_get_int(v);
	if (spec->warmup_runs < 0)
		spec->warmup_runs = 0;
	if ((v = get(o, "observe_boots")) && json_object_is_type(v, json_type_int) && json_object_get_int(v) >= 0)
		spec->observe_boots = json_object_get_int(v);
	spec->seed = int_or(o, "seed", 0);
	spec->confirms = int_or(o, "confirms", 0);
	spec->bisection = int_or(o, "bisection", 0);
	spec->bisect_seq = (int)int_or(o, "bisect_seq", 0);
	if ((a = array(o, "sides")) && (n = json_object_array_length(a))) {
		spec->sides = xcalloc(n, sizeof(*spec->sides));
		for (size_t i = 0; i < n; i++) {
			struct job_spec_side *s = &spec->sides[spec->n_sides];

			parse_side(json_object_array_get_idx(a, i), s);
			if (!s->side)
				continue;
			if (spec->n_sides < 2)
				spec->letters[spec->n_sides] = s->side;
			spec->n_sides++;
		}
	}
	if ((a = array(o, "workloads")) && (n = json_object_array_length(a))) {
		spec->workloads = xcalloc(n, sizeof(*spec->workloads));
		for (size_t i = 0; i < n; i++)
			parse_workload(json_object_array_get_idx(a, i), &spec->workloads[spec->n_workloads++]);
	}
	if ((v = get(o, "profiles")) && json_object_is_type(v, json_type_object))
		spec->profiles = v;
	return 0;
}

void job_spec_release(struct job_spec *spec)
{
	if (spec->doc)
		json_object_put(spec->doc);
	strvec_clear(&spec->local_patches);
	strvec_clear(&spec->machines);
	free(spec->sides);
	free(spec->workloads);
	memset(spec, 0, sizeof(*spec));
}

const struct job_spec_side *job_spec_side(const struct job_spec *spec, char side)
{
	for (size_t i = 0; i < spec->n_sides; i++)
		if (spec->sides[i].side == side)
			return &spec->sides[i];
	return NULL;
}

const struct job_spec_workload *job_spec_workload(const struct job_spec *spec, const char *name)
{
	for (size_t i = 0; i < spec->n_workloads; i++)
		if (spec->workloads[i].name && !strcmp(spec->workloads[i].name, name))
			return &spec->workloads[i];
	return NULL;
}

/* ---- jobs */

int jobs_set_machines(struct db *db, int64_t id, const char *dut, const char *peer)
{
	return db_run(db, "UPDATE jobs SET dut = ?, peer = ? WHERE id = ?", "ssi", dut, peer, id);
}

static const char *const job_field_sql[] = {
	[JOB_NAME] = "SELECT name FROM jobs WHERE id = ?",
	[JOB_STATE] = "SELECT state FROM jobs WHERE id = ?",
	[JOB_SPEC] = "SELECT spec FROM jobs WHERE id = ?",
	[JOB_ERROR] = "SELECT error FROM jobs WHERE id = ?",
	[JOB_ERROR_TEXT] = "SELECT COALESCE(error, '') FROM jobs WHERE id = ?",
	[JOB_TREE] = "SELECT tree FROM jobs WHERE id = ?",
	[JOB_DUT] = "SELECT dut FROM jobs WHERE id = ?",
	[JOB_PEER] = "SELECT peer FROM jobs WHERE id = ?",
	[JOB_ORDER_SEED] = "SELECT order_seed FROM jobs WHERE id = ?",
	[JOB_CANCEL] = "SELECT cancel FROM jobs WHERE id = ?",
	[JOB_SERIES_ID] = "SELECT series_id FROM jobs WHERE id = ?",
};

int jobs_get_str(struct db *db, int64_t id, enum job_field f, char **out)
{
	return db_get_str(db, out, job_field_sql[f], "i", id);
}

int jobs_get_int(struct db *db, int64_t id, enum job_field f, int64_t *out)
{
	return db_get_int(db, out, job_field_sql[f], "i", id);
}

int jobs_exists(struct db *db, int64_t id)
{
	int64_t v;

	return db_get_int(db, &v, "SELECT id FROM jobs WHERE id = ?", "i", id);
}

int jobs_find_name(struct db *db, const char *name, int64_t *id)
{
	return db_get_int(db, id, "SELECT id FROM jobs WHERE name = ? ORDER BY id DESC LIMIT 1", "s", name);
}

void job_briefs_free(struct job_brief *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].state);
	free(v);
}

/* The rows (id, state) of ST, finalized, into *OUT: 0 or -1. */
static int read_briefs(struct db_stmt *st, struct job_brief **out, size_t *n)
{
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		(*out)[*n].id = db_col_int64(st, 0);
		(*out)[*n].state = db_col_count(st) > 1 ? db_col_strdup(st, 1) : NULL;
		(*n)++;
	}
	db_finalize(st);
	if (rc != DB_DONE) {
		job_briefs_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int jobs_list_running(struct db *db, struct job_brief **out, size_t *n)
{
	return read_briefs(db_prepare(db, "SELECT id FROM jobs WHERE state = 'running'", ""), out, n);
}

int jobs_list_startable(struct db *db, struct job_brief **out, size_t *n)
{
	return read_briefs(db_prepare(db, "SELECT id, state FROM jobs WHERE state IN ('running', 'queued') "
				      "AND bisection_id IS NULL ORDER BY state = 'queued', id LIMIT 64", ""), out, n);
}

int jobs_list_bisection_open(struct db *db, int64_t bisection, struct job_brief **out, size_t *n)
{
	return read_briefs(db_prepare(db, "SELECT id FROM jobs WHERE bisection_id = ? AND state IN ('queued', 'running')",
				      "i", bisection), out, n);
}

int jobs_list_bisect_step(struct db *db, int64_t bisection, int seq, struct job_brief **out, size_t *n)
{
	return read_briefs(db_prepare(db, "SELECT id, state FROM jobs WHERE bisection_id = ? AND "
				      "bisect_seq = ? ORDER BY id", "ii", bisection, (int64_t)seq), out, n);
}

int jobs_add(struct db *db, const struct job_new *j, int64_t *id)
{
	if (db_run(db, "INSERT INTO jobs (name, state, spec, tree, schedule, order_seed, dut, peer, created, "
		   "bisection_id, bisect_seq) VALUES (?, 'queued', ?, ?, ?, ?, ?, ?, ?, NULLIF(?, 0), NULLIF(?, -1))",
		   "ssssissdii", j->name, j->spec, j->tree, j->schedule, j->order_seed, j->dut, j->peer, j->created,
		   j->bisection, j->bisect_seq))
		return -1;
	*id = db_last_id(db);
	return 0;
}

int job_sides_add(struct db *db, int64_t id, const char *side, const char *label, int64_t kernel_id,
		  const char *profile)
{
	return db_run(db, "INSERT INTO job_sides (job_id, side, label, kernel_id, profile) "
		      "VALUES (?, ?, ?, NULLIF(?, 0), ?)", "issis", id, side, label, kernel_id, profile);
}

int jobs_cancel_queued(struct db *db, int64_t id, double now)
{
	return db_run(db, "UPDATE jobs SET state = 'cancelled', cancel = 1, finished = ?, "
		      "error = 'cancelled before it started' WHERE id = ?", "di", now, id);
}

int jobs_request_cancel(struct db *db, int64_t id)
{
	return db_run(db, "UPDATE jobs SET cancel = 1 WHERE id = ?", "i", id);
}

int jobs_set_running(struct db *db, int64_t id, int64_t pid, double now)
{
	return db_run(db, "UPDATE jobs SET state = 'running', pid = ?, started = coalesce(started, ?) WHERE id = ?",
		      "idi", pid, now, id);
}

int jobs_finish(struct db *db, int64_t id, const char *state, const char *err, double now)
{
	return db_run(db, "UPDATE jobs SET state = ?, error = ?, finished = ?, pid = NULL WHERE id = ?",
		      "ssdi", state, err, now, id);
}

int jobs_requeue(struct db *db, int64_t id)
{
	return db_run(db, "UPDATE jobs SET state = 'queued', pid = NULL WHERE id = ?", "i", id);
}

int jobs_clear_pid(struct db *db, int64_t id)
{
	return db_run(db, "UPDATE jobs SET pid = NULL WHERE id = ?", "i", id);
}

int jobs_set_series(struct db *db, int64_t id, int64_t series_id)
{
	return db_run(db, "UPDATE jobs SET series_id = ? WHERE id = ?", "ii", series_id, id);
}

int jobs_last_nightly_kernel(struct db *db, const char *schedule, const char *dut, const char *peer,
			     int64_t *kernel, int64_t *job)
{
	struct db_stmt *st = db_prepare(db, "SELECT s.kernel_id, j.id FROM jobs j JOIN job_sides s ON "
				      "s.job_id = j.id AND s.side = 'B' WHERE j.schedule = ? AND j.state = 'done' "
				      "AND j.dut IS NOT DISTINCT FROM ? AND j.peer IS NOT DISTINCT FROM ? AND s.kernel_id IS NOT NULL "
				      "ORDER BY j.id DESC LIMIT 1", "sss", schedule, dut, peer);
	int rc;

	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		*kernel = db_col_int64(st, 0);
		*job = db_col_int64(st, 1);
	}
	db_finalize(st);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}

/* ---- job_sides */

int job_sides_kernel(struct db *db, int64_t id, char side, int64_t *kernel)
{
	char s[2] = { side, 0 };

	return db_get_int(db, kernel, "SELECT kernel_id FROM job_sides WHERE job_id = ? AND side = ?", "is", id, s);
}

int job_sides_set_kernel(struct db *db, int64_t id, char side, int64_t kernel)
{
	char s[2] = { side, 0 };

	return db_run(db, "UPDATE job_sides SET kernel_id = ? WHERE job_id = ? AND side = ?", "iis", kernel, id, s);
}

/* ---- steps */

int steps_get(struct db *db, int64_t id, const char *key, struct step_row *r)
{
	struct db_stmt *st = db_prepare(db, "SELECT state, attempts, started FROM steps WHERE job_id = ? AND key = ?",
					"is", id, key);
	int rc;

	memset(r, 0, sizeof(*r));
	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		r->state = db_col_strdup(st, 0);
		r->attempts = db_col_int(st, 1);
		r->started = db_col_double(st, 2);
	}
	db_finalize(st);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}

int steps_get_state(struct db *db, int64_t id, const char *key, char **state)
{
	return db_get_str(db, state, "SELECT state FROM steps WHERE job_id = ? AND key = ?", "is", id, key);
}

int steps_start(struct db *db, int64_t id, const char *key, const char *name, double now)
{
	return db_run(db, "INSERT INTO steps (job_id, key, name, state, attempts, started) "
		      "VALUES (?, ?, ?, 'running', 1, ?) ON CONFLICT (job_id, key) DO UPDATE SET "
		      "state = 'running', attempts = steps.attempts + 1, started = excluded.started, "
		      "finished = NULL, error = NULL", "issd", id, key, name, now);
}

int steps_end(struct db *db, int64_t id, const char *key, const char *state, double now, const char *err,
	      const char *detail)
{
	return db_run(db, "UPDATE steps SET state = ?, finished = ?, error = ?, detail = ? "
		      "WHERE job_id = ? AND key = ?", "sdssis", state, now, err, detail, id, key);
}

int steps_interrupted(struct db *db, int64_t id, const char *key, double now, const char *err)
{
	return db_run(db, "UPDATE steps SET state = 'failed', finished = ?, error = ? WHERE job_id = ? AND key = ?",
		      "dsis", now, err, id, key);
}

int steps_redo(struct db *db, int64_t id, const char *key, const char *err)
{
	return db_run(db, "UPDATE steps SET state = 'failed', error = ? WHERE job_id = ? AND key = ?", "sis",
		      err, id, key);
}

int steps_ended_keys(struct db *db, int64_t id, struct strvec *keys)
{
	struct db_stmt *st = db_prepare(db, "SELECT key FROM steps WHERE job_id = ? AND state IN ('done', 'skipped')",
					"i", id);
	int rc;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		strvec_push(keys, db_col_text(st, 0));
	db_finalize(st);
	return rc == DB_DONE ? 0 : -1;
}

int steps_durations(struct db *db, int64_t id, const char *name, int others,
		    void (*fn)(const char *key, double seconds, void *data), void *data)
{
	static const char *const sql[] = {
		"SELECT s.key, s.finished - s.started FROM steps s JOIN jobs j ON j.id = s.job_id "
		"WHERE s.state = 'done' AND s.finished IS NOT NULL AND (j.name = ? OR s.job_id = ?) "
		"ORDER BY s.finished DESC LIMIT 5000",
		"SELECT s.key, s.finished - s.started FROM steps s JOIN jobs j ON j.id = s.job_id "
		"WHERE s.state = 'done' AND s.finished IS NOT NULL AND j.name <> ? AND s.job_id <> ? "
		"ORDER BY s.finished DESC LIMIT 5000",
	};
	struct db_stmt *st = db_prepare(db, sql[others != 0], "si", name, id);
	int rc;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		fn(db_col_text(st, 0), db_col_double(st, 1), data);
	db_finalize(st);
	return rc == DB_DONE ? 0 : -1;
}

int steps_last_failed(struct db *db, int64_t id, char **key, char **err)
{
	struct db_stmt *st = db_prepare(db, "SELECT key, COALESCE(error, '') FROM steps WHERE job_id = ? AND "
					"state = 'failed' ORDER BY finished DESC, id DESC LIMIT 1", "i", id);
	int rc;

	*key = *err = NULL;
	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		*key = db_col_strdup(st, 0);
		*err = db_col_strdup(st, 1);
	}
	db_finalize(st);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}

/* ---- looks */

int looks_decided_boots(struct db *db, int64_t id, int64_t *boots)
{
	return db_get_int(db, boots, "SELECT min(boots) FROM looks WHERE job_id = ? AND decided = 1", "i", id);
}

/* ---- comparisons */

int comparisons_bisection_ends(struct db *db, int64_t bisection, const char *workload, const char *metric,
			       double *change_pct, double *ci_lo, double *ci_hi)
{
	struct db_stmt *st = db_prepare(db, "SELECT c.change_pct, c.ci_lo, c.ci_hi FROM comparisons c JOIN jobs j "
				       "ON j.id = c.job_id WHERE j.bisection_id = ? AND j.bisect_seq = 0 AND c.workload = ? "
				       "AND c.metric = ? ORDER BY c.id DESC LIMIT 1", "iss", bisection, workload, metric);
	int rc;

	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		*change_pct = db_col_double(st, 0);
		*ci_lo = db_col_null(st, 1) ? NAN : db_col_double(st, 1);
		*ci_hi = db_col_null(st, 2) ? NAN : db_col_double(st, 2);
	}
	db_finalize(st);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}

int comparisons_metric_keys(struct db *db, struct strvec *out)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT workload, metric FROM comparisons UNION SELECT workload, metric FROM changepoints "
		"ORDER BY 1, 2", "");

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		const char *wl = db_col_text(st, 0);
		const char *m = db_col_text(st, 1);

		if (!wl || !m)
			continue;
		strvec_push(out, wl);
		strvec_push(out, m);
	}
	db_finalize(st);
	return 0;
}

int comparisons_unit(struct db *db, const char *workload, const char *metric, char **unit)
{
	return db_get_str(db, unit, "SELECT unit FROM comparisons WHERE workload = ? AND metric = ? AND unit IS NOT NULL "
			  "ORDER BY id DESC LIMIT 1", "ss", workload, metric);
}

int comparisons_count_changed(struct db *db, int64_t id, int64_t *n)
{
	return db_get_int(db, n, "SELECT count(*) FROM comparisons WHERE job_id = ? AND verdict = 'CHANGED'",
			  "i", id) < 0 ? -1 : 0;
}

/* ---- the rows `klab jobs`, `klab job show` and `klab job log` print */

static double col_time(struct db_stmt *st, int i)
{
	return db_col_null(st, i) ? NAN : db_col_double(st, i);
}

void job_row_release(struct job_row *r)
{
	free(r->name);
	free(r->state);
	free(r->spec);
	free(r->tree);
	free(r->dut);
	free(r->peer);
	free(r->schedule);
	free(r->error);
	memset(r, 0, sizeof(*r));
}

void job_rows_free(struct job_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		job_row_release(&v[i]);
	free(v);
}

/* Columns 0-12 of a row of jobs (id ... pid), and 13-15 (series_id, tree, cancel) when FULL. */
static void read_job(struct db_stmt *st, struct job_row *r, int full)
{
	memset(r, 0, sizeof(*r));
	r->id = db_col_int64(st, 0);
	r->name = db_col_strdup(st, 1);
	r->state = db_col_strdup(st, 2);
	r->spec = db_col_strdup(st, 3);
	r->order_seed_null = db_col_null(st, 4);
	r->order_seed = db_col_int64(st, 4);
	r->created = col_time(st, 5);
	r->started = col_time(st, 6);
	r->finished = col_time(st, 7);
	r->dut = db_col_strdup(st, 8);
	r->peer = db_col_strdup(st, 9);
	r->schedule = db_col_strdup(st, 10);
	r->error = db_col_strdup(st, 11);
	r->pid = db_col_int64(st, 12);
	if (!full)
		return;
	r->series_id = db_col_int64(st, 13);
	r->tree = db_col_strdup(st, 14);
	r->cancel = db_col_int64(st, 15);
}

int job_get(struct db *db, int64_t id, struct job_row *r)
{
	struct db_stmt *st = db_prepare(db, "SELECT id, name, state, spec, order_seed, created, started, finished, dut, peer, "
					"schedule, error, pid, series_id, tree, cancel FROM jobs WHERE id = ?", "i", id);
	int rc;

	memset(r, 0, sizeof(*r));
	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW)
		read_job(st, r, 1);
	db_finalize(st);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}

int jobs_list(struct db *db, const char *state, int64_t limit, struct job_row **out, size_t *n)
{
	struct db_stmt *st = db_prepare(db, "SELECT id, name, state, spec, order_seed, created, started, finished, dut, peer, "
			"schedule, error, pid FROM jobs WHERE CAST(?1 AS TEXT) IS NULL OR state = ?1 ORDER BY id DESC LIMIT ?",
			"si", state, limit);
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		read_job(st, &(*out)[(*n)++], 0);
	}
	db_finalize(st);
	if (rc != DB_DONE) {
		job_rows_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int jobs_took(struct db *db, int64_t id, double *seconds)
{
	struct db_stmt *st = db_prepare(db, "SELECT coalesce(finished, 0) - coalesce(started, created) "
					"FROM jobs WHERE id = ?", "i", id);
	int rc;

	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW)
		*seconds = db_col_double(st, 0);
	db_finalize(st);
	return rc == DB_ROW ? 1 : rc == DB_DONE ? 0 : -1;
}

int jobs_find_unfinished(struct db *db, const char *name, int64_t *id)
{
	return db_get_int(db, id, "SELECT id FROM jobs WHERE name = ? AND state IN ('queued', 'running') "
			  "ORDER BY id LIMIT 1", "s", name);
}

void job_side_rows_free(struct job_side_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].side);
		free(v[i].label);
		free(v[i].profile);
		free(v[i].tree);
		free(v[i].commit);
		free(v[i].variant);
		free(v[i].release);
		free(v[i].build_id);
		free(v[i].compiler);
	}
	free(v);
}

int job_sides_list(struct db *db, int64_t id, struct job_side_row **out, size_t *n)
{
	struct db_stmt *st = db_prepare(db, "SELECT s.side, s.label, s.profile, k.tree, k.commit_id, k.variant, k.release, "
			"k.build_id, k.compiler, s.kernel_id FROM job_sides s LEFT JOIN kernels k ON k.id = s.kernel_id "
			"WHERE s.job_id = ? ORDER BY s.side", "i", id);
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct job_side_row *s;

		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 2;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		s = &(*out)[(*n)++];
		s->side = db_col_strdup(st, 0);
		s->label = db_col_strdup(st, 1);
		s->profile = db_col_strdup(st, 2);
		s->tree = db_col_strdup(st, 3);
		s->commit = db_col_strdup(st, 4);
		s->variant = db_col_strdup(st, 5);
		s->release = db_col_strdup(st, 6);
		s->build_id = db_col_strdup(st, 7);
		s->compiler = db_col_strdup(st, 8);
		s->kernel_id = db_col_int64(st, 9);
	}
	db_finalize(st);
	if (rc != DB_DONE) {
		job_side_rows_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int job_sides_label(struct db *db, int64_t id, const char *side, char **label)
{
	return db_get_str(db, label,
			  "SELECT COALESCE(js.label, k.release, k.variant) FROM job_sides js"
			  " LEFT JOIN kernels k ON k.id = js.kernel_id WHERE js.job_id = ?1 AND js.side = ?2",
			  "is", id, side);
}

int jobs_list_index(struct db *db, int64_t max, struct job_index_row **out, size_t *n)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT j.id, j.name, j.state, j.created, j.dut, j.peer, "
		"(SELECT label FROM job_sides WHERE job_id = j.id AND side = 'A'), "
		"(SELECT label FROM job_sides WHERE job_id = j.id AND side = 'B'), s.subject, j.schedule "
		"FROM jobs j LEFT JOIN series s ON s.id = j.series_id ORDER BY j.id DESC LIMIT ?", "i", max);
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct job_index_row *r;

		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 32;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		r = &(*out)[(*n)++];
		r->id = db_col_int64(st, 0);
		r->name = db_col_strdup(st, 1);
		r->state = db_col_strdup(st, 2);
		r->created = db_col_num(st, 3);
		r->dut = db_col_strdup(st, 4);
		r->peer = db_col_strdup(st, 5);
		r->label_a = db_col_strdup(st, 6);
		r->label_b = db_col_strdup(st, 7);
		r->subject = db_col_strdup(st, 8);
		r->scheduled = !db_col_null(st, 9);
	}
	db_finalize(st);
	return 0;
}

int jobs_each_scheduled(struct db *db, void (*fn)(int64_t id, double created, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT id, created FROM jobs WHERE schedule IS NOT NULL ORDER BY id", "");
	int rc;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		fn(db_col_int64(st, 0), db_col_double(st, 1), data);
	db_finalize(st);
	return rc == DB_DONE ? 0 : -1;
}

int jobs_list_started(struct db *db, int64_t limit, struct job_brief **out, size_t *n)
{
	return read_briefs(db_prepare(db, "SELECT id FROM jobs WHERE state != 'queued' ORDER BY id DESC LIMIT ?", "i",
				      limit), out, n);
}

void step_infos_free(struct step_info *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].name);
		free(v[i].state);
		free(v[i].error);
		free(v[i].detail);
	}
	free(v);
}

int steps_list(struct db *db, int64_t id, int by_start, struct step_info **out, size_t *n)
{
	static const char *const sql[] = {
		"SELECT key, name, state, attempts, started, finished, error, detail FROM steps "
		"WHERE job_id = ? ORDER BY id",
		"SELECT key, name, state, attempts, started, finished, error, detail FROM steps "
		"WHERE job_id = ? ORDER BY started, id",
	};
	struct db_stmt *st = db_prepare(db, sql[by_start != 0], "i", id);
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct step_info *s;

		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		s = &(*out)[(*n)++];
		s->key = db_col_strdup(st, 0);
		s->name = db_col_strdup(st, 1);
		s->state = db_col_strdup(st, 2);
		s->attempts = db_col_int64(st, 3);
		s->started = db_col_double(st, 4);
		s->finished = col_time(st, 5);
		s->error = db_col_strdup(st, 6);
		s->detail = db_col_strdup(st, 7);
	}
	db_finalize(st);
	if (rc != DB_DONE) {
		step_infos_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int steps_count_ended(struct db *db, int64_t id, int64_t *n)
{
	return db_get_int(db, n, "SELECT count(*) FROM steps WHERE job_id = ? AND state IN ('done', 'skipped')",
			  "i", id) < 0 ? -1 : 0;
}

/* ---- the verdicts: looks and comparisons */

static void bind_num(struct db_stmt *st, int i, double v)
{
	if (isnan(v) || isinf(v))
		db_bind_null(st, i);
	else
		db_bind_double(st, i, v);
}

static void col_verdict(struct db_stmt *st, int i, char *out, size_t n)
{
	snprintf(out, n, "%s", db_col_text(st, i) ? db_col_text(st, i) : "");
}

int looks_store(struct db *db, int64_t id, int look, const struct look_row *rows, size_t n, double now)
{
	if (db_exec(db, "BEGIN"))
		return -1;
	if (db_run(db, "DELETE FROM looks WHERE job_id = ? AND look = ?", "ii", id, (int64_t)look))
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const struct look_row *r = &rows[i];
		struct db_stmt *st;
		int rc;

		st = db_prepare(db, "INSERT INTO looks (job_id, look, looks, boots, alpha, decided, workload, metric,"
				" n_a, n_b, verdict, change_pct, ci_lo, ci_hi, p_holm, created)"
				" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", "iiiidiss", id, (int64_t)look,
				(int64_t)r->looks, (int64_t)r->boots, r->alpha, (int64_t)r->decided, r->workload, r->metric);
		if (!st)
			goto fail;
		db_bind_int64(st, 9, (int64_t)r->n_a);
		db_bind_int64(st, 10, (int64_t)r->n_b);
		db_bind_text(st, 11, r->verdict);
		bind_num(st, 12, r->change_pct);
		bind_num(st, 13, r->ci_lo);
		bind_num(st, 14, r->ci_hi);
		bind_num(st, 15, r->p_holm);
		db_bind_double(st, 16, now);
		rc = db_step(st);
		db_finalize(st);
		if (rc != DB_DONE) {
			error("database '%s': cannot store look %d of job %lld: %s", db_file(db), look,
			      (long long)id, db_errmsg(db));
			goto fail;
		}
	}
	if (db_exec(db, "COMMIT"))
		goto fail;
	return 0;
fail:
	db_exec(db, "ROLLBACK");
	return -1;
}

void looks_free(struct look_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].workload);
		free(v[i].metric);
	}
	free(v);
}

int looks_load(struct db *db, int64_t id, struct look_row **out, size_t *n)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT look, looks, boots, alpha, decided, workload, metric, n_a, n_b, verdict, change_pct,"
		" ci_lo, ci_hi, p_holm FROM looks WHERE job_id = ? ORDER BY look, workload, metric", "i", id);
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct look_row *l;

		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		l = &(*out)[(*n)++];
		l->look = db_col_int(st, 0);
		l->looks = db_col_int(st, 1);
		l->boots = db_col_int(st, 2);
		l->alpha = db_col_double(st, 3);
		l->decided = db_col_int(st, 4);
		l->workload = db_col_strdup(st, 5);
		l->metric = db_col_strdup(st, 6);
		l->n_a = db_col_int(st, 7);
		l->n_b = db_col_int(st, 8);
		col_verdict(st, 9, l->verdict, sizeof(l->verdict));
		l->change_pct = db_col_num(st, 10);
		l->ci_lo = db_col_num(st, 11);
		l->ci_hi = db_col_num(st, 12);
		l->p_holm = db_col_num(st, 13);
	}
	db_finalize(st);
	if (rc != DB_DONE) {
		looks_free(*out, *n);
		*out = NULL;
		*n = 0;
		return error("database '%s': cannot read the looks of job %lld: %s", db_file(db),
			     (long long)id, db_errmsg(db));
	}
	return 0;
}

void comparison_rows_free(struct comparison_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].label_a);
		free(v[i].label_b);
		free(v[i].workload);
		free(v[i].metric);
		free(v[i].unit);
		free(v[i].better);
		free(v[i].claim);
	}
	free(v);
}

int comparisons_store(struct db *db, int64_t id, const char *workload, const char *metric, const char *label_a,
		      const char *label_b, const struct comparison_row *rows, size_t n, double now)
{
	struct db_stmt *st = NULL;

	if (db_begin(db))
		return -1;
	if (db_run(db, "DELETE FROM comparisons WHERE job_id = ?1 AND (CAST(?2 AS TEXT) IS NULL OR workload = ?2)"
		   " AND (CAST(?3 AS TEXT) IS NULL OR metric = ?3)", "iss", id, workload, metric))
		goto fail;
	st = db_prepare(db,
		"INSERT INTO comparisons (job_id, label_a, label_b, workload, metric, unit, better,"
		" n_a, n_b, mean_a, mean_b, cov_a, cov_b, change_pct, ci_lo, ci_hi, p_welch, p_holm,"
		" p_mwu, hl_ratio, mde_pct, threshold_pct, verdict, extra_boots, claim, created)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
		" ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)", "");
	if (!st)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const struct comparison_row *r = &rows[i];

		db_reset(st);
		db_clear_bindings(st);
		db_bind_int64(st, 1, id);
		db_bind_text(st, 2, label_a);
		db_bind_text(st, 3, label_b);
		db_bind_text(st, 4, r->workload);
		db_bind_text(st, 5, r->metric);
		if (r->unit)
			db_bind_text(st, 6, r->unit);
		if (r->better)
			db_bind_text(st, 7, r->better);
		db_bind_int64(st, 8, r->n_a);
		db_bind_int64(st, 9, r->n_b);
		bind_num(st, 10, r->mean_a);
		bind_num(st, 11, r->mean_b);
		bind_num(st, 12, r->cov_a);
		bind_num(st, 13, r->cov_b);
		bind_num(st, 14, r->change_pct);
		bind_num(st, 15, r->ci_lo);
		bind_num(st, 16, r->ci_hi);
		bind_num(st, 17, r->p_welch);
		bind_num(st, 18, r->p_holm);
		bind_num(st, 19, r->p_mwu);
		bind_num(st, 20, r->hl_ratio);
		bind_num(st, 21, r->mde_pct);
		bind_num(st, 22, r->threshold_pct);
		db_bind_text(st, 23, r->verdict);
		if (r->extra_boots >= 0)
			db_bind_int64(st, 24, r->extra_boots);
		if (r->claim)
			db_bind_text(st, 25, r->claim);
		db_bind_double(st, 26, now);
		if (db_step(st) != DB_DONE) {
			error("database '%s': cannot store comparison of job %lld: %s", db_file(db),
			      (long long)id, db_errmsg(db));
			goto fail;
		}
	}
	db_finalize(st);
	return db_commit(db);
fail:
	db_finalize(st);
	db_rollback(db);
	return -1;
}

#define COMPARISON_COLS \
	"label_a, label_b, workload, metric, unit, better, n_a, n_b, mean_a, mean_b, cov_a, cov_b," \
	" change_pct, ci_lo, ci_hi, p_welch, p_holm, p_mwu, hl_ratio, mde_pct, threshold_pct, verdict," \
	" extra_boots, claim, job_id"

/* The rows of ST (columns COMPARISON_COLS), finalized, into *OUT: 0 or -1. */
static int read_comparisons(struct db_stmt *st, struct comparison_row **out, size_t *n)
{
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct comparison_row *r;

		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 32;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		r = &(*out)[(*n)++];
		r->label_a = db_col_strdup(st, 0);
		r->label_b = db_col_strdup(st, 1);
		r->workload = db_col_strdup(st, 2);
		r->metric = db_col_strdup(st, 3);
		r->unit = db_col_strdup(st, 4);
		r->better = db_col_strdup(st, 5);
		r->n_a = db_col_int64(st, 6);
		r->n_b = db_col_int64(st, 7);
		r->mean_a = db_col_num(st, 8);
		r->mean_b = db_col_num(st, 9);
		r->cov_a = db_col_num(st, 10);
		r->cov_b = db_col_num(st, 11);
		r->change_pct = db_col_num(st, 12);
		r->ci_lo = db_col_num(st, 13);
		r->ci_hi = db_col_num(st, 14);
		r->p_welch = db_col_num(st, 15);
		r->p_holm = db_col_num(st, 16);
		r->p_mwu = db_col_num(st, 17);
		r->hl_ratio = db_col_num(st, 18);
		r->mde_pct = db_col_num(st, 19);
		r->threshold_pct = db_col_num(st, 20);
		col_verdict(st, 21, r->verdict, sizeof(r->verdict));
		r->extra_boots = db_col_null(st, 22) ? -1 : db_col_int64(st, 22);
		r->claim = db_col_strdup(st, 23);
		r->job_id = db_col_int64(st, 24);
	}
	db_finalize(st);
	if (rc != DB_DONE) {
		comparison_rows_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int comparisons_load_job(struct db *db, int64_t id, struct comparison_row **out, size_t *n)
{
	return read_comparisons(db_prepare(db,
		"SELECT " COMPARISON_COLS " FROM comparisons WHERE id IN"
		" (SELECT MAX(id) FROM comparisons WHERE job_id = ?1 GROUP BY workload, metric) ORDER BY id",
		"i", id), out, n);
}

int comparisons_load_metric(struct db *db, const char *workload, const char *metric, int aa, int64_t limit,
			    struct comparison_row **out, size_t *n)
{
	return read_comparisons(db_prepare(db,
		"SELECT " COMPARISON_COLS " FROM comparisons WHERE workload = ?1 AND metric = ?2"
		" AND (?3 = 0 OR label_a = label_b) ORDER BY created DESC, id DESC LIMIT ?4",
		"ssii", workload, metric, (int64_t)!!aa, limit), out, n);
}
