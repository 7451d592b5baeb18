/* db.c: the klab database: picks the backend (a sqlite file or PostgreSQL), migrations, parameters and one-shot helpers. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "store/db_int.h"
#include "log.h"
#include "strvec.h"
#include "util.h"

int db_is_url(const char *path)
{
	return path && (starts_with(path, "postgresql://") || starts_with(path, "postgres://"));
}

int db_latest_version(void)
{
	int v = 0;

	for (const struct db_migration *m = db_migrations; m->sql; m++)
		if (m->version > v)
			v = m->version;
	return v;
}

const char *db_file(struct db *db)
{
	return db ? db->ops->file(db) : ":memory:";
}

int db_is_server(struct db *db)
{
	return db && db->ops == &db_pg_ops;
}

int db_refresh_stats(struct db *db)
{
	/* a transaction of its own: ANALYZE inside the caller's would hold the write lock longer */
	if (db_in_transaction(db))
		return db_fail(db, "database '%s': statistics are refreshed outside a transaction", db_file(db));
	if (db_is_server(db))
		return 0;
	return db_exec(db, "PRAGMA analysis_limit = 2000; ANALYZE");
}

const char *db_errmsg(struct db *db)
{
	return db->ops->errmsg(db);
}

int db_exec(struct db *db, const char *sql)
{
	return db->ops->exec(db, sql);
}

int db_begin(struct db *db)
{
	return db->ops->begin(db);
}

int db_commit(struct db *db)
{
	return db->ops->exec(db, "COMMIT");
}

void db_rollback(struct db *db)
{
	db->ops->rollback(db);
}

int db_in_transaction(struct db *db)
{
	return db->ops->in_transaction(db);
}

int64_t db_last_id(struct db *db)
{
	return db->ops->last_id(db);
}

int db_changes(struct db *db)
{
	return db->ops->changes(db);
}

int db_version(struct db *db)
{
	return db->ops->version(db);
}

int db_tables(struct db *db, struct strvec *out)
{
	return db->ops->tables(db, out);
}

int db_table_rows(struct db *db, const char *table, int64_t *n)
{
	/* a name, not a value, so it cannot be bound: quoted, from db_tables() only */
	char *sql = xasprintf("SELECT count(*) FROM \"%s\"", table);
	int ret = db_get_int(db, n, sql, "") < 0 ? -1 : 0;

	free(sql);
	return ret;
}

int db_run_lock(struct db *db, const char *kind, int64_t id)
{
	return db->ops->run_lock(db, kind, id);
}

void db_run_unlock(struct db *db, const char *kind, int64_t id)
{
	db->ops->run_unlock(db, kind, id);
}

int db_run_lock_held(struct db *db, const char *kind, int64_t id)
{
	return db->ops->run_lock_held(db, kind, id);
}

/*
 * Which migrations are applied: the table schema_migrations lists them; a
 * database made before that table existed has every migration up to its
 * user_version. A migration numbered below user_version that is not listed
 * (it was added later than a higher one) is still applied, so numbers
 * reserved for work in progress cannot be skipped.
 */
static int applied(struct db *db, int version, int cur, int have_table)
{
	int64_t n = 0;

	if (!have_table)
		return version <= cur;
	if (db_get_int(db, &n, "SELECT count(*) FROM schema_migrations WHERE version = ?", "i",
		       (int64_t)version) < 0)
		return -1;
	return n > 0;
}

static int migrate_locked(struct db *db, int target)
{
	int cur = db_version(db), latest = db_latest_version(), have_table;

	if (cur < 0)
		return db_fail(db, "database '%s': cannot read its schema version: %s", db_file(db), db_errmsg(db));
	if (cur > latest)
		return db_fail(db, "database '%s': schema version %d is newer than this klab knows (%d): upgrade klab",
			       db_file(db), cur, latest);
	if (!target)
		target = latest;
	have_table = db->ops->has_table(db, "schema_migrations");
	if (have_table < 0)
		return -1;
	for (const struct db_migration *m = db_migrations; m->sql; m++) {
		char *sql = NULL;
		int done;

		if (m->version > target)
			continue;
		done = applied(db, m->version, cur, have_table);
		if (done < 0)
			return -1;
		if (done && have_table)
			continue;
		if (db_begin(db))
			return -1;
		if (!have_table) {
			/* record what is there already, then carry on */
			sql = db->ops->ddl("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
					   "name TEXT NOT NULL, applied REAL NOT NULL)");
			if (db_exec(db, sql))
				goto fail;
			free(sql);
			sql = NULL;
			for (const struct db_migration *o = db_migrations; o->sql; o++)
				if (o->version <= cur &&
				    db_run(db, "INSERT INTO schema_migrations VALUES (?, ?, ?)", "isd",
					   (int64_t)o->version, o->name, now_wall()))
					goto fail;
			have_table = 1;
			if (done) {
				if (db_commit(db))
					goto fail;
				continue;
			}
		}
		sql = db->ops->ddl(db_is_server(db) && m->pg_sql ? m->pg_sql : m->sql);
		if (db_exec(db, sql))
			goto fail;
		if (db_run(db, "INSERT INTO schema_migrations VALUES (?, ?, ?)", "isd",
			   (int64_t)m->version, m->name, now_wall()))
			goto fail;
		if (m->version > cur) {
			if (db->ops->set_version(db, m->version))
				goto fail;
			cur = m->version;
		}
		if (db_commit(db))
			goto fail;
		free(sql);
		debug("database: applied migration %s", m->name);
		continue;
fail:
		free(sql);
		db_rollback(db);
		return db_fail(db, "database '%s': migration %s failed; the database is unchanged", db_file(db), m->name);
	}
	return 0;
}

int db_migrate(struct db *db, int target)
{
	int ret;

	if (db->ops->migrate_lock(db, 1))
		return -1;
	ret = migrate_locked(db, target);
	db->ops->migrate_lock(db, 0);
	return ret;
}

int db_open_raw(const char *path, struct db **out)
{
	struct db *db = xcalloc(1, sizeof(*db));

	*out = NULL;
	buf_init(&db->err, 0);
	db->path = xstrdup(path);
	db->ops = db_is_url(path) ? &db_pg_ops : &db_sqlite_ops;
	if (db->ops->open(db, path)) {
		db_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

int db_open(const char *path, struct db **out)
{
	if (db_open_raw(path, out))
		return -1;
	if (db_migrate(*out, 0)) {
		db_fail(*out, "cannot open database '%s'", db_file(*out));
		db_close(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

int db_reopen(struct db *db, struct db **out)
{
	return db_open_raw(db->path, out);
}

void db_close(struct db *db)
{
	if (!db)
		return;
	db->ops->close(db);
	buf_release(&db->err);
	free(db->path);
	free(db);
}

/* ---- statements ---- */

int db_bind_int64(struct db_stmt *st, int i, int64_t v)
{
	return st->db->ops->bind_int64(st, i, v);
}

int db_bind_double(struct db_stmt *st, int i, double v)
{
	return st->db->ops->bind_double(st, i, v);
}

int db_bind_text(struct db_stmt *st, int i, const char *s)
{
	if (!s)
		return db_bind_null(st, i);
	return st->db->ops->bind_textn(st, i, s, strlen(s));
}

int db_bind_textn(struct db_stmt *st, int i, const char *s, size_t len)
{
	if (!s)
		return db_bind_null(st, i);
	return st->db->ops->bind_textn(st, i, s, len);
}

int db_bind_null(struct db_stmt *st, int i)
{
	return st->db->ops->bind_null(st, i);
}

static int bind_va(struct db_stmt *st, const char *types, va_list ap)
{
	int i = 1;

	for (const char *t = types; t && *t; t++, i++) {
		int rc;

		switch (*t) {
		case 'i':
			rc = db_bind_int64(st, i, va_arg(ap, int64_t));
			break;
		case 'd':
			rc = db_bind_double(st, i, va_arg(ap, double));
			break;
		case 's':
			rc = db_bind_text(st, i, va_arg(ap, const char *));
			break;
		case 'n':
			rc = db_bind_null(st, i);
			break;
		default:
			return db_fail(st->db, "db_prepare: bad type '%c'", *t);
		}
		if (rc)
			return -1;
	}
	return 0;
}

static struct db_stmt *vprepare(struct db *db, const char *sql, const char *types, va_list ap)
{
	struct db_stmt *st = xcalloc(1, sizeof(*st));

	st->db = db;
	if (db->ops->prepare(st, sql)) {
		free(st);
		return NULL;
	}
	if (bind_va(st, types, ap)) {
		db_finalize(st);
		return NULL;
	}
	return st;
}

struct db_stmt *db_prepare(struct db *db, const char *sql, const char *types, ...)
{
	va_list ap;
	struct db_stmt *st;

	va_start(ap, types);
	st = vprepare(db, sql, types, ap);
	va_end(ap);
	return st;
}

int db_step(struct db_stmt *st)
{
	return st->db->ops->step(st);
}

int db_reset(struct db_stmt *st)
{
	st->db->ops->reset(st);
	return 0;
}

void db_clear_bindings(struct db_stmt *st)
{
	st->db->ops->clear_bindings(st);
}

void db_finalize(struct db_stmt *st)
{
	if (!st)
		return;
	st->db->ops->finalize(st);
	free(st);
}

/* ---- columns ---- */

int db_col_count(struct db_stmt *st)
{
	return st->db->ops->col_count(st);
}

const char *db_col_name(struct db_stmt *st, int i)
{
	return st->db->ops->col_name(st, i);
}

enum db_type db_col_type(struct db_stmt *st, int i)
{
	return st->db->ops->col_type(st, i);
}

int db_col_null(struct db_stmt *st, int i)
{
	return db_col_type(st, i) == DB_NULL;
}

int64_t db_col_int64(struct db_stmt *st, int i)
{
	return st->db->ops->col_int64(st, i);
}

int db_col_int(struct db_stmt *st, int i)
{
	return (int)db_col_int64(st, i);
}

double db_col_double(struct db_stmt *st, int i)
{
	return st->db->ops->col_double(st, i);
}

double db_col_num(struct db_stmt *st, int i)
{
	return db_col_null(st, i) ? NAN : db_col_double(st, i);
}

const char *db_col_text(struct db_stmt *st, int i)
{
	return st->db->ops->col_text(st, i);
}

char *db_col_strdup(struct db_stmt *st, int i)
{
	const char *s = db_col_text(st, i);

	return s ? xstrdup(s) : NULL;
}

/* ---- one-shot helpers ---- */

int db_run(struct db *db, const char *sql, const char *types, ...)
{
	va_list ap;
	struct db_stmt *st;
	int rc;

	va_start(ap, types);
	st = vprepare(db, sql, types, ap);
	va_end(ap);
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		;
	db_finalize(st);
	return rc == DB_DONE ? 0 : -1;
}

int db_get_int(struct db *db, int64_t *out, const char *sql, const char *types, ...)
{
	va_list ap;
	struct db_stmt *st;
	int rc, ret = 0;

	va_start(ap, types);
	st = vprepare(db, sql, types, ap);
	va_end(ap);
	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		if (!db_col_null(st, 0))
			*out = db_col_int64(st, 0);
		ret = 1;
	} else if (rc == DB_ERROR) {
		ret = -1;
	}
	db_finalize(st);
	return ret;
}

int db_get_str(struct db *db, char **out, const char *sql, const char *types, ...)
{
	va_list ap;
	struct db_stmt *st;
	int rc, ret = 0;

	*out = NULL;
	va_start(ap, types);
	st = vprepare(db, sql, types, ap);
	va_end(ap);
	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		*out = db_col_strdup(st, 0);
		ret = 1;
	} else if (rc == DB_ERROR) {
		ret = -1;
	}
	db_finalize(st);
	return ret;
}
