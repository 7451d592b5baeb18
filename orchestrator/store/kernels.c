/* store/kernels.c: the kernels table: a build's row, the cache, listing and removal (store/kernels.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/kernels.h"
#include "util.h"

#define KERNEL_COLS "id, key, tree, commit_id, variant, series_id, release, build_id, artifact_dir," \
		    " state, error, apply_log, duration_s, ccache_stats, created, compiler, config_sha256"

void kernel_row_release(struct kernel_row *k)
{
	free(k->key);
	free(k->tree);
	free(k->commit);
	free(k->variant);
	free(k->release);
	free(k->build_id);
	free(k->artifact_dir);
	free(k->state);
	free(k->error);
	free(k->apply_log);
	free(k->ccache_stats);
	free(k->compiler);
	free(k->config_sha256);
	memset(k, 0, sizeof(*k));
}

static double col_num(struct db_stmt *st, int i)
{
	return db_col_null(st, i) ? NAN : db_col_double(st, i);
}

/* The row at ST (KERNEL_COLS) into K. */
static void row_read(struct db_stmt *st, struct kernel_row *k)
{
	k->id = db_col_int64(st, 0);
	k->key = db_col_strdup(st, 1);
	k->tree = db_col_strdup(st, 2);
	k->commit = db_col_strdup(st, 3);
	k->variant = db_col_strdup(st, 4);
	k->series_id = db_col_null(st, 5) ? 0 : db_col_int64(st, 5);
	k->release = db_col_strdup(st, 6);
	k->build_id = db_col_strdup(st, 7);
	k->artifact_dir = db_col_strdup(st, 8);
	k->state = db_col_strdup(st, 9);
	k->error = db_col_strdup(st, 10);
	k->apply_log = db_col_strdup(st, 11);
	k->duration_s = col_num(st, 12);
	k->ccache_stats = db_col_strdup(st, 13);
	k->created = col_num(st, 14);
	k->compiler = db_col_strdup(st, 15);
	k->config_sha256 = db_col_strdup(st, 16);
}

int kernel_get(struct db *db, int64_t id, struct kernel_row *out)
{
	struct db_stmt *st = db_prepare(db, "SELECT " KERNEL_COLS " FROM kernels WHERE id = ?", "i", id);
	int r;

	memset(out, 0, sizeof(*out));
	if (!st)
		return -1;
	r = db_step(st);
	if (r == DB_ROW)
		row_read(st, out);
	db_finalize(st);
	return r == DB_ROW ? 1 : r == DB_DONE ? 0 : -1;
}

char *kernel_commit(struct db *db, int64_t id)
{
	char *c = NULL;

	db_get_str(db, &c, "SELECT commit_id FROM kernels WHERE id = ?", "i", id);
	return c;
}

int kernel_find(struct db *db, const char *what, struct kernel_row *out)
{
	char *like = xasprintf("%s%%", what);
	long id = 0;
	struct db_stmt *st;
	int n = 0, r;

	memset(out, 0, sizeof(*out));
	parse_long(what, 1, 1L << 62, &id);
	st = db_prepare(db, "SELECT " KERNEL_COLS " FROM kernels WHERE id = ? OR key = ? OR key LIKE ? ORDER BY id LIMIT 2",
			"iss", (int64_t)id, what, strlen(what) >= 8 ? like : "-");
	free(like);
	if (!st)
		return -1;
	while ((r = db_step(st)) == DB_ROW) {
		if (!n++)
			row_read(st, out);
	}
	db_finalize(st);
	if (r != DB_DONE || n != 1)
		kernel_row_release(out);
	return r != DB_DONE ? -1 : n > 1 ? 2 : n;
}

int kernels_each(struct db *db, int (*fn)(const struct kernel_row *k, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT " KERNEL_COLS " FROM kernels ORDER BY id", "");
	int r = DB_DONE, ret = 0;

	if (!st)
		return -1;
	while (!ret && (r = db_step(st)) == DB_ROW) {
		struct kernel_row k;

		row_read(st, &k);
		ret = fn(&k, data);
		kernel_row_release(&k);
	}
	db_finalize(st);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

int kernel_id_by_key(struct db *db, const char *key, int ok, int64_t *id)
{
	if (ok)
		return db_get_int(db, id, "SELECT id FROM kernels WHERE key = ? AND state = 'ok'", "s", key);
	return db_get_int(db, id, "SELECT id FROM kernels WHERE key = ?", "s", key);
}

int kernel_start(struct db *db, const char *key, const char *tree, const char *commit, const char *variant,
		 const char *compiler, const char *artifact_dir, double created, int64_t series_id, int64_t *id)
{
	if (kernel_id_by_key(db, key, 0, id) == 1) {
		if (db_run(db, "UPDATE kernels SET state = 'building', error = NULL, tree = ?, commit_id = ?, variant = ?,"
			   " config_sha256 = NULL, compiler = ?, artifact_dir = ?, created = ? WHERE id = ?", "sssssdi",
			   tree, commit, variant, compiler, artifact_dir, created, *id) < 0)
			return -1;
	} else {
		if (db_run(db, "INSERT INTO kernels (key, tree, commit_id, variant, compiler, artifact_dir, state, created)"
			   " VALUES (?,?,?,?,?,?,'building',?)", "ssssssd", key, tree, commit, variant, compiler,
			   artifact_dir, created) < 0)
			return -1;
		*id = db_last_id(db);
	}
	if (series_id)
		db_run(db, "UPDATE kernels SET series_id = ? WHERE id = ?", "ii", series_id, *id);
	else
		db_run(db, "UPDATE kernels SET series_id = NULL WHERE id = ?", "i", *id);
	return 0;
}

int kernel_set_failed(struct db *db, int64_t id, const char *msg, const char *apply_log)
{
	return db_run(db, "UPDATE kernels SET state = 'failed', error = ?, apply_log = ? WHERE id = ?", "ssi", msg,
		      apply_log, id);
}

int kernel_set_ok(struct db *db, int64_t id, const char *release, const char *build_id, const char *artifact_dir,
		  const char *config_sha256, const char *apply_log, double duration_s, const char *ccache_stats)
{
	if (!artifact_dir)
		return db_run(db, "UPDATE kernels SET state = 'ok', error = NULL, release = ?, build_id = ?,"
			      " config_sha256 = ?, apply_log = ?, duration_s = ?, ccache_stats = ? WHERE id = ?",
			      "ssssdsi", release, build_id, config_sha256, apply_log, duration_s, ccache_stats, id);
	return db_run(db, "UPDATE kernels SET state = 'ok', error = NULL, release = ?, build_id = ?, artifact_dir = ?,"
		      " config_sha256 = ?, apply_log = ?, duration_s = ?, ccache_stats = ? WHERE id = ?", "sssssdsi",
		      release, build_id, artifact_dir, config_sha256, apply_log, duration_s, ccache_stats, id);
}

int kernels_use_each(struct db *db, int (*fn)(const struct kernel_use *u, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT id, artifact_dir, state, created,"
					" EXISTS (SELECT 1 FROM job_sides j WHERE j.kernel_id = k.id)"
					" OR EXISTS (SELECT 1 FROM boots b WHERE b.kernel_id = k.id)"
					" OR EXISTS (SELECT 1 FROM runs r WHERE r.kernel_id = k.id) FROM kernels k", "");
	int r = DB_DONE, ret = 0;

	if (!st)
		return -1;
	while (!ret && (r = db_step(st)) == DB_ROW) {
		struct kernel_use u = {
			db_col_int64(st, 0), db_col_text(st, 1), db_col_text(st, 2), db_col_double(st, 3),
			db_col_int(st, 4),
		};

		ret = fn(&u, data);
	}
	db_finalize(st);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

int kernel_delete(struct db *db, int64_t id)
{
	return db_run(db, "DELETE FROM kernels WHERE id = ?", "i", id);
}
