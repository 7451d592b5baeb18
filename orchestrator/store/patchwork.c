/* store/patchwork.c: the tables pw_cursors, pw_series, pw_patches and pw_checks (store/patchwork.h). */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/patchwork.h"
#include "util.h"

int pw_cursor_get(struct db *db, const char *watch, char **since)
{
	*since = NULL;
	return db_get_str(db, since, "SELECT since FROM pw_cursors WHERE watch = ?", "s", watch);
}

int pw_cursor_set(struct db *db, const char *watch, const char *since)
{
	return db_run(db, "INSERT INTO pw_cursors (watch, since, updated) VALUES (?, ?, ?)"
		      " ON CONFLICT (watch) DO UPDATE SET since = excluded.since, updated = excluded.updated",
		      "ssd", watch, since, now_wall());
}

void pw_series_row_release(struct pw_series_row *r)
{
	free(r->watch); free(r->name); free(r->submitter); free(r->state); free(r->reason);
	free(r->outcome); free(r->description); free(r->job_state); free(r->job_error);
	memset(r, 0, sizeof(*r));
}

/* The columns every reader of pw_series takes, with its job's row (p: pw_series, j: jobs). */
#define SERIES_COLS \
	"SELECT p.id, p.watch, p.pw_id, p.version, p.name, p.submitter, p.completed, p.seen, p.state," \
	" p.reason, p.series_id, p.job_id, p.outcome, p.description, p.final, j.state, j.error, j.created," \
	" j.started, j.finished FROM pw_series p LEFT JOIN jobs j ON j.id = p.job_id"

static void series_cols(struct db_stmt *st, struct pw_series_row *r)
{
	r->id = db_col_int64(st, 0);
	r->watch = db_col_strdup(st, 1);
	r->pw_id = db_col_int64(st, 2);
	r->version = db_col_int64(st, 3);
	r->name = db_col_strdup(st, 4);
	r->submitter = db_col_strdup(st, 5);
	r->completed = db_col_double(st, 6);
	r->seen = db_col_double(st, 7);
	r->state = db_col_strdup(st, 8);
	r->reason = db_col_strdup(st, 9);
	r->series_id = db_col_int64(st, 10);
	r->job_id = db_col_int64(st, 11);
	r->outcome = db_col_strdup(st, 12);
	r->description = db_col_strdup(st, 13);
	r->final = db_col_double(st, 14);
	r->job_state = db_col_strdup(st, 15);
	r->job_error = db_col_strdup(st, 16);
	r->job_created = db_col_double(st, 17);
	r->job_started = db_col_double(st, 18);
	r->job_finished = db_col_double(st, 19);
}

/*
 * Walk the rows of ST with FN; finalizes ST. The rows are read whole
 * before FN sees the first, so FN may write these tables, open a
 * transaction or wait on the network with no statement left open.
 */
static int series_walk(struct db_stmt *st, int (*fn)(const struct pw_series_row *r, void *data), void *data)
{
	struct pw_series_row *rows = NULL;
	size_t n = 0, alloc = 0;
	int rc, ret = 0;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			rows = xrealloc(rows, alloc * sizeof(*rows));
		}
		memset(&rows[n], 0, sizeof(rows[n]));
		series_cols(st, &rows[n++]);
	}
	db_finalize(st);
	if (rc == DB_ERROR)
		ret = -1;
	for (size_t i = 0; i < n; i++) {
		if (!ret)
			ret = fn(&rows[i], data);
		pw_series_row_release(&rows[i]);
	}
	free(rows);
	return ret;
}

int pw_series_add(struct db *db, const char *watch, int64_t pw_id, double completed, int *added)
{
	if (db_run(db, "INSERT INTO pw_series (watch, pw_id, completed, seen, state) VALUES (?, ?, ?, ?, 'seen')"
		   " ON CONFLICT (watch, pw_id) DO NOTHING", "sidd", watch, pw_id, completed, now_wall()) < 0)
		return -1;
	*added = db_changes(db) > 0;
	return 0;
}

int pw_series_set_info(struct db *db, int64_t id, int64_t version, const char *name, const char *submitter)
{
	return db_run(db, "UPDATE pw_series SET version = ?, name = ?, submitter = ? WHERE id = ?", "issi",
		      version, name, submitter, id);
}

int pw_series_set_state(struct db *db, int64_t id, const char *state, const char *reason)
{
	return db_run(db, "UPDATE pw_series SET state = ?, reason = ? WHERE id = ?", "ssi", state, reason, id);
}

int pw_series_set_queued(struct db *db, int64_t id, int64_t series_id, int64_t job_id)
{
	return db_run(db, "UPDATE pw_series SET state = 'queued', reason = NULL, series_id = ?, job_id = ? WHERE id = ?",
		      "iii", series_id, job_id, id);
}

int pw_series_set_outcome(struct db *db, int64_t id, const char *outcome, const char *description)
{
	return db_run(db, "UPDATE pw_series SET state = 'done', outcome = ?, description = ? WHERE id = ?", "ssi",
		      outcome, description, id);
}

int pw_series_set_final(struct db *db, int64_t id, double final)
{
	return db_run(db, "UPDATE pw_series SET final = ? WHERE id = ?", "di", final, id);
}

int pw_series_each(struct db *db, const char *watch, const char *state,
		   int (*fn)(const struct pw_series_row *r, void *data), void *data)
{
	return series_walk(db_prepare(db, SERIES_COLS " WHERE (CAST(? AS TEXT) IS NULL OR p.watch = ?)"
				      " AND (CAST(? AS TEXT) IS NULL OR p.state = ?) ORDER BY p.completed, p.id",
				      "ssss", watch, watch, state, state), fn, data);
}

int pw_series_older(struct db *db, const char *watch, const char *name, const char *submitter, int64_t version,
		    int (*fn)(const struct pw_series_row *r, void *data), void *data)
{
	return series_walk(db_prepare(db, SERIES_COLS " WHERE p.watch = ? AND p.name = ? AND p.submitter = ?"
				      " AND p.version < ? AND p.state IN ('queued', 'running') ORDER BY p.id",
				      "sssi", watch, name, submitter, version), fn, data);
}

int pw_queue(struct db *db, const char *watch, int64_t job, int *place, int *queued, double *mean_s,
	     double *oldest)
{
	struct db_stmt *st;
	int64_t n = 0;

	*place = *queued = 0;
	*mean_s = *oldest = 0;
	/* the queue is the lab's: every queued job counts, the watcher's or not */
	if (db_get_int(db, &n, "SELECT count(*) FROM pw_series p JOIN jobs j ON j.state = 'queued'"
		       " AND j.id <= p.job_id WHERE p.job_id = ?", "i", job) < 0)
		return -1;
	*place = (int)n;
	n = 0;
	if (db_get_int(db, &n, "SELECT count(*) FROM pw_series p JOIN jobs j ON j.state = 'queued'"
		       " WHERE p.job_id = ?", "i", job) < 0)
		return -1;
	*queued = (int)n;
	st = db_prepare(db, "SELECT avg(j.finished - j.started) FROM (SELECT job_id FROM pw_series WHERE watch = ?"
			" AND job_id IS NOT NULL ORDER BY id DESC LIMIT 10) AS p JOIN jobs j ON j.id = p.job_id"
			" WHERE j.state = 'done' AND j.started IS NOT NULL", "s", watch);
	if (!st || db_step(st) == DB_ERROR) {
		db_finalize(st);
		return -1;
	}
	*mean_s = db_col_double(st, 0);
	db_finalize(st);
	st = db_prepare(db, "SELECT min(completed) FROM pw_series WHERE watch = ? AND state IN ('queued', 'running')",
			"s", watch);
	if (!st || db_step(st) == DB_ERROR) {
		db_finalize(st);
		return -1;
	}
	*oldest = db_col_double(st, 0);
	db_finalize(st);
	return 0;
}

int pw_patch_add(struct db *db, const char *watch, int64_t pw_series, int64_t patch_id, int seq, const char *name)
{
	return db_run(db, "INSERT INTO pw_patches (watch, pw_series, patch_id, seq, name) VALUES (?, ?, ?, ?, ?)"
		      " ON CONFLICT (watch, pw_series, patch_id) DO NOTHING", "siiis", watch, pw_series, patch_id,
		      (int64_t)seq, name);
}

int pw_patches_each(struct db *db, const char *watch, int64_t pw_series,
		    int (*fn)(int64_t patch_id, const char *name, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT patch_id, name FROM pw_patches WHERE watch = ? AND pw_series = ?"
					" ORDER BY seq, patch_id", "si", watch, pw_series);
	int rc, ret = 0;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		if ((ret = fn(db_col_int64(st, 0), db_col_text(st, 1), data)))
			break;
	if (rc == DB_ERROR)
		ret = -1;
	db_finalize(st);
	return ret;
}

int pw_check_intend(struct db *db, const char *watch, int64_t pw_series, int64_t patch_id, const char *context,
		    const char *state, const char *description, const char *target_url)
{
	return db_run(db, "INSERT INTO pw_checks (watch, pw_series, patch_id, context, state, description, target_url,"
		      " intended) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (patch_id, context, state) DO NOTHING",
		      "siissssd", watch, pw_series, patch_id, context, state, description, target_url, now_wall());
}

#define CHECK_COLS \
	"SELECT id, watch, pw_series, patch_id, context, state, description, target_url, intended, attempts," \
	" posted, found, error FROM pw_checks"

/* As series_walk(): the rows read whole first. */
static int check_walk(struct db_stmt *st, int (*fn)(const struct pw_check_row *c, void *data), void *data)
{
	struct pw_check_row *rows = NULL;
	size_t n = 0, alloc = 0;
	int rc, ret = 0;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct pw_check_row c = {
			db_col_int64(st, 0), db_col_strdup(st, 1), db_col_int64(st, 2), db_col_int64(st, 3),
			db_col_strdup(st, 4), db_col_strdup(st, 5), db_col_strdup(st, 6), db_col_strdup(st, 7),
			db_col_double(st, 8), db_col_int(st, 9), db_col_double(st, 10), db_col_int(st, 11),
			db_col_strdup(st, 12),
		};

		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			rows = xrealloc(rows, alloc * sizeof(*rows));
		}
		rows[n++] = c;
	}
	db_finalize(st);
	if (rc == DB_ERROR)
		ret = -1;
	for (size_t i = 0; i < n; i++) {
		if (!ret)
			ret = fn(&rows[i], data);
		free((char *)rows[i].watch); free((char *)rows[i].context); free((char *)rows[i].state);
		free((char *)rows[i].description); free((char *)rows[i].target_url); free((char *)rows[i].error);
	}
	free(rows);
	return ret;
}

int pw_checks_unposted(struct db *db, const char *watch, int (*fn)(const struct pw_check_row *c, void *data),
		       void *data)
{
	return check_walk(db_prepare(db, CHECK_COLS " WHERE watch = ? AND posted IS NULL ORDER BY id", "s", watch),
			  fn, data);
}

int pw_checks_each(struct db *db, const char *watch, int64_t pw_series,
		   int (*fn)(const struct pw_check_row *c, void *data), void *data)
{
	return check_walk(db_prepare(db, CHECK_COLS " WHERE (CAST(? AS TEXT) IS NULL OR watch = ?)"
				     " AND (? = 0 OR pw_series = ?) ORDER BY id", "ssii", watch, watch, pw_series,
				     pw_series), fn, data);
}

int pw_check_attempt(struct db *db, int64_t id)
{
	return db_run(db, "UPDATE pw_checks SET attempts = attempts + 1 WHERE id = ?", "i", id);
}

int pw_check_posted(struct db *db, int64_t id, int found)
{
	return db_run(db, "UPDATE pw_checks SET posted = ?, found = ?, error = NULL WHERE id = ?", "dii", now_wall(),
		      (int64_t)found, id);
}

int pw_check_failed(struct db *db, int64_t id, const char *err)
{
	return db_run(db, "UPDATE pw_checks SET error = ? WHERE id = ?", "si", err, id);
}

int pw_checks_final(struct db *db, const char *watch, int64_t pw_series, int *n, int *unposted, double *last)
{
	struct db_stmt *st = db_prepare(db, "SELECT count(*), count(*) - count(posted), max(posted) FROM pw_checks"
					" WHERE watch = ? AND pw_series = ? AND state <> 'pending'", "si", watch,
					pw_series);

	if (!st || db_step(st) != DB_ROW) {
		db_finalize(st);
		return -1;
	}
	*n = db_col_int(st, 0);
	*unposted = db_col_int(st, 1);
	*last = db_col_double(st, 2);
	db_finalize(st);
	return 0;
}
