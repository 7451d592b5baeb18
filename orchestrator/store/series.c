/* store/series.c: the tables series, patches, expectations and proposals (store/series.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/series.h"

void series_row_release(struct series_row *r)
{
	free(r->source);
	free(r->source_url);
	free(r->subject);
	free(r->author);
	free(r->date);
	free(r->message_id);
	free(r->cover);
	free(r->content_sha256);
	memset(r, 0, sizeof(*r));
}

int series_id_by_hash(struct db *db, const char *sha, int64_t *id)
{
	return db_get_int(db, id, "SELECT id FROM series WHERE content_sha256 = ?", "s", sha);
}

int series_insert(struct db *db, const struct series_row *r, int64_t *id)
{
	if (db_run(db, "INSERT INTO series (source, source_url, subject, author, date, message_id, version,"
		   " total, cover, content_sha256, created) VALUES (?,?,?,?,?,?,?,?,?,?,?)", "ssssssiissd",
		   r->source, r->source_url, r->subject, r->author, r->date, r->message_id, r->version, r->total,
		   r->cover, r->content_sha256, r->created) < 0)
		return -1;
	*id = db_last_id(db);
	return 0;
}

int series_get(struct db *db, int64_t id, struct series_row *out)
{
	struct db_stmt *st = db_prepare(db, "SELECT source, source_url, subject, author, date, message_id, version, total,"
					" cover, content_sha256 FROM series WHERE id = ?", "i", id);
	int r;

	memset(out, 0, sizeof(*out));
	if (!st)
		return -1;
	r = db_step(st);
	if (r == DB_ROW) {
		out->id = id;
		out->source = db_col_strdup(st, 0);
		out->source_url = db_col_strdup(st, 1);
		out->subject = db_col_strdup(st, 2);
		out->author = db_col_strdup(st, 3);
		out->date = db_col_strdup(st, 4);
		out->message_id = db_col_strdup(st, 5);
		out->version = db_col_int64(st, 6);
		out->total = db_col_int64(st, 7);
		out->cover = db_col_strdup(st, 8);
		out->content_sha256 = db_col_strdup(st, 9);
	}
	db_finalize(st);
	return r == DB_ROW ? 1 : r == DB_DONE ? 0 : -1;
}

int series_each(struct db *db, int (*fn)(const struct series_item *it, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT s.id, s.subject, s.version, s.total, s.source, s.created,"
					" (SELECT COUNT(*) FROM patches p WHERE p.series_id = s.id),"
					" (SELECT COUNT(*) FROM expectations e WHERE e.series_id = s.id)"
					" FROM series s ORDER BY s.id", "");
	int r = DB_DONE, ret = 0;

	if (!st)
		return -1;
	while (!ret && (r = db_step(st)) == DB_ROW) {
		struct series_row s = {
			.id = db_col_int64(st, 0),
			.subject = (char *)db_col_text(st, 1),
			.version = db_col_int(st, 2),
			.total = db_col_int(st, 3),
			.source = (char *)db_col_text(st, 4),
			.created = db_col_double(st, 5),
		};
		struct series_item it = { &s, db_col_int(st, 6), db_col_int(st, 7) };

		ret = fn(&it, data);
	}
	db_finalize(st);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

int series_patch_insert(struct db *db, int64_t sid, const struct patch_row *p)
{
	return db_run(db, "INSERT INTO patches (series_id, seq, subject, author, date, message_id, body,"
		      " diff, diffstat, trailers) VALUES (?,?,?,?,?,?,?,?,?,?)", "iissssssss", sid, p->seq,
		      p->subject, p->author, p->date, p->message_id, p->body, p->diff, p->diffstat, p->trailers);
}

int series_patches_each(struct db *db, int64_t sid, int (*fn)(const struct patch_row *p, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT seq, subject, author, date, message_id, body, diff, diffstat, trailers"
					" FROM patches WHERE series_id = ? ORDER BY seq", "i", sid);
	int r = DB_DONE, ret = 0;

	if (!st)
		return -1;
	while (!ret && (r = db_step(st)) == DB_ROW) {
		struct patch_row p = {
			db_col_int(st, 0), (char *)db_col_text(st, 1), (char *)db_col_text(st, 2),
			(char *)db_col_text(st, 3), (char *)db_col_text(st, 4), (char *)db_col_text(st, 5),
			(char *)db_col_text(st, 6), (char *)db_col_text(st, 7), (char *)db_col_text(st, 8),
		};

		ret = fn(&p, data);
	}
	db_finalize(st);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

int series_claim_insert(struct db *db, int64_t sid, const struct claim_row *c)
{
	struct db_stmt *st = db_prepare(db, "INSERT INTO expectations (series_id, patch_seq, metric,"
				      " direction, lo_pct, hi_pct, unit, text) VALUES (?,?,?,?,?,?,?,?)",
				      "iissddss", sid, c->patch_seq, c->metric, c->direction,
				      c->lo_pct, c->hi_pct, c->unit, c->text);
	int r;

	if (!st)
		return -1;
	r = db_step(st);
	db_finalize(st);
	if (r != DB_DONE)
		return error("cannot insert an expectation: %s", db_errmsg(db));
	if (!isnan(c->before) && db_run(db, "UPDATE expectations SET before = ?, after = ? WHERE id = ?",
					"ddi", c->before, c->after, (int64_t)db_last_id(db)) < 0)
		return -1;
	return 0;
}

static double col_num(struct db_stmt *st, int i)
{
	return db_col_null(st, i) ? NAN : db_col_double(st, i);
}

/* The claims at ST to FN; SHAPE names ST's columns: the CLAIMS_* below. */
enum { CLAIMS_ALL, CLAIMS_BY_PATCH, CLAIMS_OF_JOB };

static struct claim_row claim_read(struct db_stmt *st, int shape)
{
	struct claim_row c = { 0, NULL, NULL, NAN, NAN, NAN, NAN, NULL, NULL };

	switch (shape) {
	case CLAIMS_ALL:	/* patch_seq, metric, direction, lo_pct, hi_pct, before, after, unit, text */
		c = (struct claim_row){ db_col_int64(st, 0), db_col_text(st, 1), db_col_text(st, 2), col_num(st, 3),
					col_num(st, 4), col_num(st, 5), col_num(st, 6), db_col_text(st, 7),
					db_col_text(st, 8) };
		break;
	case CLAIMS_BY_PATCH:	/* patch_seq, metric, direction, lo_pct, hi_pct, text */
		c.patch_seq = db_col_int64(st, 0);
		c.metric = db_col_text(st, 1);
		c.direction = db_col_text(st, 2);
		c.lo_pct = col_num(st, 3);
		c.hi_pct = col_num(st, 4);
		c.text = db_col_text(st, 5);
		break;
	default:		/* metric, direction, lo_pct, hi_pct, before, after */
		c.metric = db_col_text(st, 0);
		c.direction = db_col_text(st, 1);
		c.lo_pct = col_num(st, 2);
		c.hi_pct = col_num(st, 3);
		c.before = col_num(st, 4);
		c.after = col_num(st, 5);
		break;
	}
	return c;
}

static int claims_each(struct db_stmt *st, int shape, int (*fn)(const struct claim_row *c, void *data), void *data)
{
	int r = DB_DONE, ret = 0;

	while (!ret && (r = db_step(st)) == DB_ROW) {
		struct claim_row c = claim_read(st, shape);

		ret = fn(&c, data);
	}
	db_finalize(st);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

int series_claims_each(struct db *db, int64_t sid, int by_patch, int (*fn)(const struct claim_row *c, void *data),
		       void *data)
{
	struct db_stmt *st;

	if (by_patch)
		st = db_prepare(db, "SELECT patch_seq, metric, direction, lo_pct, hi_pct, text "
				"FROM expectations WHERE series_id = ? ORDER BY patch_seq, id", "i", sid);
	else
		st = db_prepare(db, "SELECT patch_seq, metric, direction, lo_pct, hi_pct, before, after, unit, text"
				" FROM expectations WHERE series_id = ? ORDER BY id", "i", sid);
	return st ? claims_each(st, by_patch ? CLAIMS_BY_PATCH : CLAIMS_ALL, fn, data) : -1;
}

int series_job_claims_each(struct db *db, int64_t job_id, int (*fn)(const struct claim_row *c, void *data),
			   void *data)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT e.metric, e.direction, e.lo_pct, e.hi_pct, e.before, e.after"
		" FROM expectations e JOIN jobs j ON j.series_id = e.series_id"
		" WHERE j.id = ?1 ORDER BY e.id", "i", job_id);

	if (!st)
		return -1;
	if (claims_each(st, CLAIMS_OF_JOB, fn, data) < 0)
		return error("database '%s': cannot read expectations: %s", db_file(db), db_errmsg(db));
	return 0;
}

int series_proposal_insert(struct db *db, int64_t sid, const struct proposal_row *p)
{
	return db_run(db, "INSERT INTO proposals (series_id, patch_seq, type, params, command)"
		      " VALUES (?,?,?,?,?)", "iisss", sid, p->patch_seq, p->type, p->params, p->command);
}

int series_proposals_each(struct db *db, int64_t sid, int (*fn)(const struct proposal_row *p, void *data),
			  void *data)
{
	struct db_stmt *st = db_prepare(db, "SELECT patch_seq, type, params, command FROM proposals WHERE series_id = ?"
					" ORDER BY id", "i", sid);
	int r = DB_DONE, ret = 0;

	if (!st)
		return -1;
	while (!ret && (r = db_step(st)) == DB_ROW) {
		struct proposal_row p = { db_col_int64(st, 0), db_col_text(st, 1), db_col_text(st, 2),
					  db_col_text(st, 3) };

		ret = fn(&p, data);
	}
	db_finalize(st);
	return ret ? ret : r == DB_DONE ? 0 : -1;
}

int series_job_proposal_types(struct db *db, int64_t job_id, void (*fn)(const char *type, void *data), void *data)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT DISTINCT p.type FROM proposals p JOIN jobs j ON j.series_id = p.series_id"
		" WHERE j.id = ?1", "i", job_id);

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW)
		fn(db_col_text(st, 0), data);
	db_finalize(st);
	return 0;
}
