/* db.c: the klab database over sqlite: open, migrations, statements, rows and columns. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <sys/statvfs.h>

#include "buf.h"
#include "db.h"
#include "log.h"
#include "strvec.h"

struct db {
	sqlite3 *sq;
};

struct db_stmt {
	struct db *db;
	sqlite3_stmt *st;
};

struct db_migration {
	int version;
	const char *name;
	const char *sql;
};
extern const struct db_migration db_migrations[];	/* generated: build/gen/migrations.c */

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
	const char *f = db ? sqlite3_db_filename(db->sq, "main") : NULL;

	return f && *f ? f : ":memory:";
}

const char *db_errmsg(struct db *db)
{
	return sqlite3_errmsg(db->sq);
}

/*
 * The error of the last call on DB, logged with the SQL it ran. A write that
 * fails for want of room says so: sqlite reports a full file system as
 * "database or disk is full" when the database file cannot grow, but as a
 * bare "disk I/O error" when its journal or WAL cannot (seen when a job's
 * database was opened on a full tmpfs), so the free space of the folder is
 * looked at for both.
 */
static int db_fail(struct db *db, const char *msg, const char *sql, int cut)
{
	int code = sqlite3_extended_errcode(db->sq) & 0xff;
	const char *file = db_file(db);
	struct buf why = BUF_INIT;
	struct statvfs fs;

	buf_addstr(&why, msg ? msg : sqlite3_errmsg(db->sq));
	if (code == SQLITE_FULL || code == SQLITE_IOERR) {
		const char *slash = strrchr(file, '/');
		char *dir = slash ? xstrndup(file, slash == file ? 1 : (size_t)(slash - file)) : xstrdup(".");

		if (!statvfs(dir, &fs) && (unsigned long long)fs.f_bavail * fs.f_frsize < 1024 * 1024)
			buf_addf(&why, ": the file system of '%s' is full (%llu KiB free): free space there and run "
				 "again; what was stored before is unchanged", dir,
				 (unsigned long long)fs.f_bavail * fs.f_frsize / 1024);
		free(dir);
	}
	/* CUT > 0: the SQL shown up to CUT characters (db_exec's scripts), else whole */
	if (cut > 0 && strlen(sql) > (size_t)cut)
		error("database '%s': %s (in: %.*s...)", file, why.buf, cut, sql);
	else
		error("database '%s': %s (in: %s)", file, why.buf, sql);
	buf_release(&why);
	return -1;
}

int db_exec(struct db *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db->sq, sql, NULL, NULL, &msg) != SQLITE_OK) {
		db_fail(db, msg, sql, 80);
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int db_begin(struct db *db)
{
	return db_exec(db, "BEGIN IMMEDIATE");
}

int db_commit(struct db *db)
{
	return db_exec(db, "COMMIT");
}

void db_rollback(struct db *db)
{
	if (!sqlite3_get_autocommit(db->sq))
		sqlite3_exec(db->sq, "ROLLBACK", NULL, NULL, NULL);
}

int db_in_transaction(struct db *db)
{
	return !sqlite3_get_autocommit(db->sq);
}

int64_t db_last_id(struct db *db)
{
	return sqlite3_last_insert_rowid(db->sq);
}

int db_changes(struct db *db)
{
	return sqlite3_changes(db->sq);
}

int db_version(struct db *db)
{
	int64_t v = -1;

	if (db_get_int(db, &v, "PRAGMA user_version", "") != 1)
		return -1;
	return (int)v;
}

int db_tables(struct db *db, struct strvec *out)
{
	struct db_stmt *st = db_prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table' "
					"AND name NOT LIKE 'sqlite_%' ORDER BY name", "");
	int rc;

	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		strvec_push(out, db_col_text(st, 0));
	db_finalize(st);
	return rc == DB_DONE ? 0 : -1;
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

int db_migrate(struct db *db, int target)
{
	int cur = db_version(db), latest = db_latest_version(), have_table;
	int64_t n = 0;

	if (cur < 0)
		return error("database '%s': cannot read its schema version: %s", db_file(db), db_errmsg(db));
	if (cur > latest)
		return error("database '%s': schema version %d is newer than this klab knows (%d): upgrade klab",
			     db_file(db), cur, latest);
	if (!target)
		target = latest;
	if (db_get_int(db, &n, "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
		       "AND name = 'schema_migrations'", "") < 0)
		return -1;
	have_table = n > 0;
	for (const struct db_migration *m = db_migrations; m->sql; m++) {
		char pragma[64];
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
			if (db_exec(db, "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
				    "name TEXT NOT NULL, applied REAL NOT NULL)"))
				goto fail;
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
		if (db_exec(db, m->sql))
			goto fail;
		if (db_run(db, "INSERT INTO schema_migrations VALUES (?, ?, ?)", "isd",
			   (int64_t)m->version, m->name, now_wall()))
			goto fail;
		if (m->version > cur) {
			snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", m->version);
			if (db_exec(db, pragma))
				goto fail;
			cur = m->version;
		}
		if (db_commit(db))
			goto fail;
		debug("database: applied migration %s", m->name);
		continue;
fail:
		db_rollback(db);
		return error("database '%s': migration %s failed; the database is unchanged", db_file(db), m->name);
	}
	return 0;
}

int db_open_raw(const char *path, struct db **out)
{
	sqlite3 *sq = NULL;
	struct db *db;

	*out = NULL;
	if (sqlite3_open_v2(path, &sq, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		error("cannot open database '%s': %s", path, sq ? sqlite3_errmsg(sq) : "out of memory");
		sqlite3_close(sq);
		return -1;
	}
	/*
	 * A writer waits up to 60 s for the lock: t0505 (64 pairs, 16 jobs at once on
	 * 2 CPUs at load 16) saw a step's UPDATE give up after 10 s; docs/scale.md.
	 */
	sqlite3_busy_timeout(sq, 60000);
	db = xcalloc(1, sizeof(*db));
	db->sq = sq;
	if (db_exec(db, "PRAGMA foreign_keys = ON") ||
	    db_exec(db, "PRAGMA journal_mode = WAL") ||
	    db_exec(db, "PRAGMA synchronous = NORMAL")) {
		error("cannot open database '%s'", path);
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
		error("cannot open database '%s'", path);
		db_close(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	sqlite3_close(db->sq);
	free(db);
}

/* ---- statements ---- */

static int bind_rc(struct db_stmt *st, int i, int rc)
{
	if (rc != SQLITE_OK)
		return error("database '%s': cannot bind parameter %d: %s", db_file(st->db), i,
			     sqlite3_errmsg(st->db->sq));
	return 0;
}

int db_bind_int64(struct db_stmt *st, int i, int64_t v)
{
	return bind_rc(st, i, sqlite3_bind_int64(st->st, i, v));
}

int db_bind_double(struct db_stmt *st, int i, double v)
{
	return bind_rc(st, i, sqlite3_bind_double(st->st, i, v));
}

int db_bind_text(struct db_stmt *st, int i, const char *s)
{
	if (!s)
		return db_bind_null(st, i);
	return bind_rc(st, i, sqlite3_bind_text(st->st, i, s, -1, SQLITE_TRANSIENT));
}

int db_bind_textn(struct db_stmt *st, int i, const char *s, size_t len)
{
	if (!s)
		return db_bind_null(st, i);
	return bind_rc(st, i, sqlite3_bind_text64(st->st, i, s, len, SQLITE_TRANSIENT, SQLITE_UTF8));
}

int db_bind_null(struct db_stmt *st, int i)
{
	return bind_rc(st, i, sqlite3_bind_null(st->st, i));
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
			return error("db_prepare: bad type '%c'", *t);
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
	if (sqlite3_prepare_v2(db->sq, sql, -1, &st->st, NULL) != SQLITE_OK) {
		db_fail(db, NULL, sql, 0);
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
	int rc = sqlite3_step(st->st);

	if (rc == SQLITE_ROW)
		return DB_ROW;
	if (rc == SQLITE_DONE)
		return DB_DONE;
	db_fail(st->db, NULL, sqlite3_sql(st->st), 0);
	return DB_ERROR;
}

int db_reset(struct db_stmt *st)
{
	sqlite3_reset(st->st);
	return 0;
}

void db_clear_bindings(struct db_stmt *st)
{
	sqlite3_clear_bindings(st->st);
}

void db_finalize(struct db_stmt *st)
{
	if (!st)
		return;
	sqlite3_finalize(st->st);
	free(st);
}

/* ---- columns ---- */

int db_col_count(struct db_stmt *st)
{
	return sqlite3_column_count(st->st);
}

const char *db_col_name(struct db_stmt *st, int i)
{
	return sqlite3_column_name(st->st, i);
}

enum db_type db_col_type(struct db_stmt *st, int i)
{
	switch (sqlite3_column_type(st->st, i)) {
	case SQLITE_INTEGER: return DB_INTEGER;
	case SQLITE_FLOAT: return DB_FLOAT;
	case SQLITE_TEXT: return DB_TEXT;
	case SQLITE_BLOB: return DB_BLOB;
	default: return DB_NULL;
	}
}

int db_col_null(struct db_stmt *st, int i)
{
	return sqlite3_column_type(st->st, i) == SQLITE_NULL;
}

int64_t db_col_int64(struct db_stmt *st, int i)
{
	return sqlite3_column_int64(st->st, i);
}

int db_col_int(struct db_stmt *st, int i)
{
	return sqlite3_column_int(st->st, i);
}

double db_col_double(struct db_stmt *st, int i)
{
	return sqlite3_column_double(st->st, i);
}

double db_col_num(struct db_stmt *st, int i)
{
	return db_col_null(st, i) ? NAN : sqlite3_column_double(st->st, i);
}

const char *db_col_text(struct db_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st->st, i);
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
