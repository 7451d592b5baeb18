/* store/bisections.c: the tables changepoints, confirmations, bisections and bisect_steps (store/bisections.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/bisections.h"

#define ROW_SQL "SELECT id, tree, good, bad, workload, metric, state, " \
	"json_array_length(json_extract(spec, '$.commits')), first_bad, error FROM bisections "

static void row_read(struct db_stmt *q, struct bisection_row *b)
{
	b->id = db_col_int(q, 0);
	b->tree = db_col_text(q, 1);
	b->good = db_col_text(q, 2);
	b->bad = db_col_text(q, 3);
	b->workload = db_col_text(q, 4);
	b->metric = db_col_text(q, 5);
	b->state = db_col_text(q, 6);
	b->commits = db_col_int(q, 7);
	b->first_bad = db_col_text(q, 8);
	b->error = db_col_text(q, 9);
}

int bisections_each(struct db *db, int (*fn)(const struct bisection_row *b, void *data), void *data)
{
	struct db_stmt *q = db_prepare(db, ROW_SQL "ORDER BY id DESC", "");
	int r = DB_DONE, ret = 0;

	if (!q)
		return -1;
	while (!ret && (r = db_step(q)) == DB_ROW) {
		struct bisection_row b;

		row_read(q, &b);
		ret = fn(&b, data);
	}
	db_finalize(q);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

int bisection_get(struct db *db, int64_t id, void (*fn)(const struct bisection_row *b, void *data), void *data)
{
	struct db_stmt *q = db_prepare(db, ROW_SQL "WHERE id = ?", "i", id);
	int r;

	if (!q)
		return -1;
	r = db_step(q);
	if (r == DB_ROW) {
		struct bisection_row b;

		row_read(q, &b);
		fn(&b, data);
	}
	db_finalize(q);
	return r == DB_ROW ? 1 : r == DB_DONE ? 0 : -1;
}

int bisection_outcome(struct db *db, int64_t id, char **state, char **result, char **first_bad, char **subject)
{
	struct db_stmt *q = db_prepare(db, "SELECT state, COALESCE(result, '-'), first_bad, "
				       "COALESCE(first_bad_subject, '') FROM bisections WHERE id = ?", "i", id);
	int r;

	*state = *result = *first_bad = *subject = NULL;
	if (!q)
		return -1;
	r = db_step(q);
	if (r == DB_ROW) {
		*state = db_col_strdup(q, 0);
		*result = db_col_strdup(q, 1);
		*first_bad = db_col_strdup(q, 2);
		*subject = db_col_strdup(q, 3);
	}
	db_finalize(q);
	return r == DB_ROW ? 1 : r == DB_DONE ? 0 : -1;
}

int bisect_steps_each(struct db *db, int64_t id, int (*fn)(const struct bisect_step_row *s, void *data), void *data)
{
	struct db_stmt *q = db_prepare(db, "SELECT seq, role, commit_id, coalesce(subject, ''), boots, value, verdict, "
				       "coalesce(reason, '') FROM bisect_steps WHERE bisection_id = ? ORDER BY seq", "i",
				       id);
	int r = DB_DONE, ret = 0;

	if (!q)
		return -1;
	while (!ret && (r = db_step(q)) == DB_ROW) {
		struct bisect_step_row s = {
			db_col_int(q, 0), db_col_text(q, 1), db_col_text(q, 2), db_col_text(q, 3), db_col_int(q, 4),
			db_col_null(q, 5) ? NAN : db_col_double(q, 5), db_col_text(q, 6), db_col_text(q, 7),
		};

		ret = fn(&s, data);
	}
	db_finalize(q);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

int confirmations_of_job_each(struct db *db, int64_t job_id,
			      int (*fn)(const struct confirmation_row *c, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT workload, metric, change_pct, state, confirm_job, bisection_id"
					" FROM confirmations WHERE job_id = ? ORDER BY id", "i", job_id);
	int r = DB_DONE, ret = 0;

	if (!st)
		return -1;
	while (!ret && (r = db_step(st)) == DB_ROW) {
		struct confirmation_row c = {
			job_id, db_col_text(st, 0), db_col_text(st, 1), db_col_null(st, 2) ? NAN : db_col_double(st, 2), db_col_text(st, 3),
			db_col_null(st, 4) ? 0 : db_col_int64(st, 4), db_col_null(st, 5) ? 0 : db_col_int64(st, 5),
		};

		ret = fn(&c, data);
	}
	db_finalize(st);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

/* ---- a bisection's life ---- */

int bisection_insert(struct db *db, const char *tree, const char *good, const char *bad, const char *good_ref,
		     const char *bad_ref, const char *workload, const char *metric, double alpha, const char *spec,
		     double now, int64_t *id)
{
	if (db_run(db, "INSERT INTO bisections (tree, good, bad, good_ref, bad_ref, workload, metric, alpha, "
		   "spec, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "sssssssdsd", tree, good, bad,
		   good_ref, bad_ref, workload, metric, alpha, spec, now))
		return -1;
	*id = db_last_id(db);
	return 0;
}

int bisection_state(struct db *db, int64_t id, char **state)
{
	*state = NULL;
	return db_get_str(db, state, "SELECT state FROM bisections WHERE id = ?", "i", id);
}

int bisection_cancel_asked(struct db *db, int64_t id)
{
	int64_t c = 0;

	db_get_int(db, &c, "SELECT cancel FROM bisections WHERE id = ?", "i", id);
	return c != 0;
}

int bisection_set_cancelled(struct db *db, int64_t id, double now)
{
	return db_run(db, "UPDATE bisections SET state = 'cancelled', cancel = 1, finished = ?, "
		      "error = 'cancelled by request' WHERE id = ?", "di", now, id);
}

int bisection_set_running(struct db *db, int64_t id, int64_t pid, double now)
{
	return db_run(db, "UPDATE bisections SET state = 'running', pid = ?, started = COALESCE(started, ?) WHERE id = ?",
		      "idi", pid, now, id);
}

int bisection_finish(struct db *db, int64_t id, const char *state, const char *result, const char *error_msg,
		     double now)
{
	return db_run(db, "UPDATE bisections SET state = ?, result = ?, error = ?, finished = ?, pid = NULL "
		      "WHERE id = ?", "sssdi", state, result, error_msg, now, id);
}

int bisection_set_answer(struct db *db, int64_t id, const char *first_bad, const char *subject, double change_pct,
			 double ci_lo, double ci_hi)
{
	return db_run(db, "UPDATE bisections SET first_bad = ?, first_bad_subject = ?, change_pct = ?, ci_lo = ?, "
		      "ci_hi = ? WHERE id = ?", "ssdddi", first_bad, subject, change_pct, ci_lo, ci_hi, id);
}

int bisection_load(struct db *db, int64_t id, void (*fn)(const struct bisection_spec *b, void *data), void *data)
{
	struct db_stmt *q = db_prepare(db, "SELECT tree, good, bad, workload, metric, alpha, spec, state "
				       "FROM bisections WHERE id = ?", "i", id);
	int r;

	if (!q)
		return -1;
	r = db_step(q);
	if (r == DB_ROW) {
		struct bisection_spec b = {
			db_col_text(q, 0), db_col_text(q, 1), db_col_text(q, 2), db_col_text(q, 3), db_col_text(q, 4),
			db_col_double(q, 5), db_col_text(q, 6), db_col_text(q, 7),
		};

		fn(&b, data);
	}
	db_finalize(q);
	return r == DB_ROW ? 1 : r == DB_DONE ? 0 : -1;
}

int bisections_active_each(struct db *db, int (*fn)(int64_t id, int running, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT id, state FROM bisections WHERE state IN ('running', 'queued') "
					"AND cancel = 0 ORDER BY state = 'queued', id LIMIT 16", "");

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW && !fn(db_col_int64(st, 0), !strcmp(db_col_text(st, 1), "running"), data))
		;
	db_finalize(st);
	return 0;
}

int bisect_step_add(struct db *db, int64_t id, int seq, const char *role, const char *commit, const char *subject,
		    int64_t remaining, double now)
{
	return db_run(db, "INSERT INTO bisect_steps (bisection_id, seq, role, commit_id, subject, "
		      "remaining, started) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", "iisssid", id,
		      (int64_t)seq, role, commit, subject, remaining, now);
}

void bisect_step_set_job(struct db *db, int64_t id, int seq, int64_t job)
{
	db_run(db, "UPDATE bisect_steps SET job_id = ? WHERE bisection_id = ? AND seq = ?", "iii", job, id,
	       (int64_t)seq);
	if (seq == 0)	/* the ends are one job: both rows name it */
		db_run(db, "UPDATE bisect_steps SET job_id = ? WHERE bisection_id = ? AND seq = 1", "ii", job, id);
}

int bisect_step_end(struct db *db, int64_t id, int seq, int64_t boots, double value, double p_good, double p_bad,
		    const char *verdict, const char *reason, double now)
{
	return db_run(db, "UPDATE bisect_steps SET boots = ?, value = ?, p_good = ?, p_bad = ?, verdict = ?, "
		      "reason = ?, finished = ?, kernel_id = (SELECT s.kernel_id FROM job_sides s WHERE s.job_id = "
		      "bisect_steps.job_id AND s.side = CASE role WHEN 'good' THEN 'A' ELSE 'B' END) "
		      "WHERE bisection_id = ? AND seq = ?", "idddssdii", boots, value, p_good, p_bad, verdict, reason, now,
		      id, (int64_t)seq);
}

void bisect_step_verdicts_each(struct db *db, int64_t id, void (*fn)(const char *commit, const char *verdict,
								       void *data), void *data)
{
	struct db_stmt *q = db_prepare(db, "SELECT commit_id, verdict FROM bisect_steps WHERE bisection_id = ? "
				       "AND role = 'step' AND verdict IS NOT NULL", "i", id);

	while (q && db_step(q) == DB_ROW)
		fn(db_col_text(q, 0), db_col_text(q, 1), data);
	db_finalize(q);
}

int bisect_step_seq(struct db *db, int64_t id, const char *commit, int64_t *seq)
{
	return db_get_int(db, seq, "SELECT seq FROM bisect_steps WHERE bisection_id = ? AND commit_id = ? "
			  "AND role = 'step'", "is", id, commit);
}

void bisect_steps_max_seq(struct db *db, int64_t id, int64_t *seq)
{
	db_get_int(db, seq, "SELECT MAX(seq) FROM bisect_steps WHERE bisection_id = ?", "i", id);
}

/* ---- change points ---- */

int changepoints_replace(struct db *db, const char *tree, const char *machines, const char *workload,
			 const char *metric, const struct changepoint_row *v, size_t n, double now)
{
	if (db_begin(db))
		return -1;
	if (db_run(db, "DELETE FROM changepoints WHERE workload = ?1 AND metric = ?2"
		       " AND tree IS NOT DISTINCT FROM ?3 AND machines IS NOT DISTINCT FROM ?4", "ssss", workload, metric,
		   tree, machines))
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const struct changepoint_row *c = &v[i];

		if (db_run(db, "INSERT INTO changepoints (tree, machines, workload, metric, job_id, idx,"
			       " mean_before, mean_after, change_pct, p, created)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)", "ssssiidddd" "d",
			   tree, machines, workload, metric, c->job_id, c->idx, c->mean_before, c->mean_after,
			   c->change_pct, c->p, now))
			goto fail;
	}
	return db_commit(db);
fail:
	db_rollback(db);
	return -1;
}

/* ---- confirmations ---- */

int confirmations_job_for_kernel(struct db *db, int64_t job_id, int64_t ka, int64_t *cj)
{
	return db_get_int(db, cj, "SELECT c.confirm_job FROM confirmations c JOIN job_sides s ON s.job_id = c.confirm_job "
			  "AND s.side = 'A' WHERE c.job_id = ? AND s.kernel_id = ? LIMIT 1", "ii", job_id, ka);
}

int changepoint_newest(struct db *db, int64_t job_id, const char *workload, const char *metric, int64_t *cp_job,
		       double *change, int64_t *before)
{
	struct db_stmt *st = db_prepare(db, "SELECT c.job_id, c.change_pct, COALESCE(s.kernel_id, 0) "
					"FROM changepoints c JOIN jobs j ON j.id = ?1 "
					"LEFT JOIN job_sides s ON s.job_id = c.job_id AND s.side = 'A' "
					"WHERE c.workload = ?2 AND c.metric = ?3 AND c.tree IS NOT DISTINCT FROM j.tree "
					"AND c.machines IS NOT DISTINCT FROM j.dut || '+' || j.peer ORDER BY c.idx DESC LIMIT 1",
					"iss", job_id, workload, metric);
	int found = 0;

	if (!st)
		return -1;
	if (db_step(st) == DB_ROW) {
		*cp_job = db_col_int64(st, 0);
		*change = db_col_double(st, 1);
		*before = db_col_int64(st, 2);
		found = 1;
	}
	db_finalize(st);
	return found;
}

int confirmations_count_seen(struct db *db, const char *workload, const char *metric, int64_t job, int64_t *n)
{
	return db_get_int(db, n, "SELECT count(*) FROM confirmations WHERE workload = ?1 AND metric = ?2 "
			  "AND (cp_job = ?3 OR job_id = ?3)", "ssi", workload, metric, job);
}

int confirmations_count_of_job(struct db *db, int64_t job_id, int64_t *n)
{
	return db_get_int(db, n, "SELECT count(*) FROM confirmations WHERE job_id = ?", "i", job_id);
}

int confirmation_insert(struct db *db, int64_t job_id, int64_t confirm_job, const char *workload, const char *metric,
			const char *better, double change, double now, int64_t cp_job)
{
	return db_run(db, "INSERT INTO confirmations (job_id, confirm_job, workload, metric, better, change_pct, "
		      "created, cp_job) VALUES (?, ?, ?, ?, ?, ?, ?, NULLIF(?, 0)) ON CONFLICT DO NOTHING", "iisssddi",
		      job_id, confirm_job, workload, metric, better, change, now, cp_job);
}

int confirmations_pending_each(struct db *db, int64_t confirm_job,
			       int (*fn)(const struct confirmation_pending *c, void *data), void *data)
{
	struct db_stmt *q = db_prepare(db, "SELECT id, workload, metric, change_pct, better FROM confirmations "
				       "WHERE confirm_job = ? AND state = 'pending'", "i", confirm_job);
	int r = DB_DONE, ret = 0;

	if (!q)
		return -1;
	while (!ret && (r = db_step(q)) == DB_ROW) {
		struct confirmation_pending c = {
			db_col_int64(q, 0), db_col_text(q, 1), db_col_text(q, 2), db_col_double(q, 3), db_col_text(q, 4),
		};

		ret = fn(&c, data);
	}
	db_finalize(q);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

int confirmation_decide(struct db *db, int64_t id, const char *state, double change, const char *verdict, double now,
			int64_t bisection_id, const char *error_msg)
{
	return db_run(db, "UPDATE confirmations SET state = ?, confirm_change = ?, confirm_verdict = ?, decided = ?, "
		      "bisection_id = NULLIF(?, 0), error = ? WHERE id = ?", "sdsdisi", state, change, verdict, now,
		      bisection_id, error_msg, id);
}

int confirmation_outcome_get(struct db *db, int64_t job, const char *workload, const char *metric,
			     void (*fn)(const struct confirmation_outcome *c, void *data), void *data)
{
	struct db_stmt *q = db_prepare(db, "SELECT c.state, c.confirm_job, COALESCE(c.confirm_verdict, ''), "
				       "c.confirm_change, c.bisection_id, b.state, b.result, b.first_bad, c.error, c.cp_job "
				       "FROM confirmations c LEFT JOIN bisections b ON b.id = c.bisection_id "
				       "WHERE c.job_id = ? AND c.workload = ? AND c.metric = ?", "iss", job, workload, metric);
	int found = 0;

	if (!q)
		return -1;
	if (db_step(q) == DB_ROW) {
		struct confirmation_outcome c = {
			.state = db_col_text(q, 0),
			.confirm_job = db_col_int64(q, 1),
			.confirm_verdict = db_col_text(q, 2),
			.has_change = !db_col_null(q, 3),
			.has_bisection = !db_col_null(q, 4),
			.bisection_state = db_col_text(q, 5),
			.bisection_result = db_col_text(q, 6),
			.first_bad = db_col_text(q, 7),
			.error = db_col_text(q, 8),
			.has_cp_job = !db_col_null(q, 9),
		};

		c.confirm_change = c.has_change ? db_col_double(q, 3) : NAN;
		c.bisection_id = c.has_bisection ? db_col_int64(q, 4) : 0;
		c.cp_job = c.has_cp_job ? db_col_int64(q, 9) : 0;
		fn(&c, data);
		found = 1;
	}
	db_finalize(q);
	return found;
}

/* ---- a bisection's page and mail ---- */

int bisection_answer_get(struct db *db, int64_t id, void (*fn)(const struct bisection_answer_row *a, void *data),
			 void *data)
{
	struct db_stmt *q = db_prepare(db,
		"SELECT b.tree, b.good_ref, b.bad_ref, b.workload, b.metric, b.first_bad, b.first_bad_subject, "
		"(SELECT k.release FROM bisect_steps s JOIN kernels k ON k.id = s.kernel_id WHERE s.bisection_id = b.id "
		" AND s.seq = 0), "
		"(SELECT k.release FROM bisect_steps s JOIN kernels k ON k.id = s.kernel_id WHERE s.bisection_id = b.id "
		" AND s.seq = 1), "
		"j.dut, j.peer, "
		"(SELECT r.clock FROM runs r WHERE r.job_id = j.id LIMIT 1), "
		"(SELECT m.unit FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = j.id AND "
		" r.workload = b.workload AND m.name = b.metric LIMIT 1), "
		"(SELECT m.better FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = j.id AND "
		" r.workload = b.workload AND m.name = b.metric LIMIT 1), "
		"b.change_pct, b.ci_lo, b.ci_hi, b.alpha, b.state, COALESCE(b.result, ''), "
		"(SELECT count(*) FROM bisect_steps s WHERE s.bisection_id = b.id AND s.role = 'step'), "
		"(SELECT COALESCE(SUM(s.boots), 0) FROM bisect_steps s WHERE s.bisection_id = b.id) "
		"FROM bisections b LEFT JOIN jobs j ON j.id = (SELECT MAX(id) FROM jobs WHERE bisection_id = b.id AND "
		"bisect_seq = 0) WHERE b.id = ?", "i", id);
	int found = 0;

	if (!q)
		return -1;
	if (db_step(q) == DB_ROW) {
		struct bisection_answer_row a = {
			db_col_text(q, 0), db_col_text(q, 1), db_col_text(q, 2), db_col_text(q, 3), db_col_text(q, 4),
			db_col_text(q, 5), db_col_text(q, 6), db_col_text(q, 7), db_col_text(q, 8), db_col_text(q, 9),
			db_col_text(q, 10), db_col_text(q, 11), db_col_text(q, 12), db_col_text(q, 13),
			db_col_null(q, 14) ? NAN : db_col_double(q, 14), db_col_null(q, 15) ? NAN : db_col_double(q, 15),
			db_col_null(q, 16) ? NAN : db_col_double(q, 16), db_col_double(q, 17), db_col_text(q, 18),
			db_col_text(q, 19), db_col_int(q, 20), db_col_int(q, 21),
		};

		fn(&a, data);
		found = 1;
	}
	db_finalize(q);
	return found;
}

void bisect_steps_page_each(struct db *db, int64_t id, void (*fn)(const struct bisect_step_page_row *s, void *data),
			    void *data)
{
	struct db_stmt *q = db_prepare(db, "SELECT s.seq, s.role, s.commit_id, COALESCE(s.subject, ''), s.boots, "
				       "s.value, COALESCE(s.verdict, '-'), COALESCE(s.reason, ''), s.job_id, "
				       "COALESCE(s.remaining, 0) FROM bisect_steps s WHERE s.bisection_id = ? ORDER BY s.seq",
				       "i", id);

	while (q && db_step(q) == DB_ROW) {
		struct bisect_step_page_row s = {
			.seq = db_col_int(q, 0),
			.role = db_col_text(q, 1),
			.commit = db_col_text(q, 2),
			.subject = db_col_text(q, 3),
			.boots = db_col_int(q, 4),
			.has_value = !db_col_null(q, 5),
			.verdict = db_col_text(q, 6),
			.reason = db_col_text(q, 7),
			.has_job = !db_col_null(q, 8),
			.remaining = db_col_int(q, 9),
		};

		s.value = s.has_value ? db_col_double(q, 5) : NAN;
		s.job_id = s.has_job ? db_col_int(q, 8) : 0;
		fn(&s, data);
	}
	db_finalize(q);
}

int changepoints_each(struct db *db, const char *workload, const char *metric,
		      void (*fn)(const struct changepoint_info *c, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT job_id, tree, machines, mean_before, mean_after, change_pct, p, created "
		"FROM changepoints WHERE workload = ? AND metric = ? ORDER BY created, id", "ss", workload, metric);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct changepoint_info c = {
			db_col_int64(st, 0), db_col_text(st, 1), db_col_text(st, 2), db_col_num(st, 3), db_col_num(st, 4),
			db_col_num(st, 5), db_col_num(st, 6), db_col_num(st, 7),
		};

		fn(&c, data);
	}
	db_finalize(st);
	return 0;
}
