/* db_sqlite.c: the database backend for a sqlite file (the embedded default). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "buf.h"
#include "store/db_int.h"
#include "lock.h"
#include "log.h"
#include "strvec.h"

struct sq {
	sqlite3 *sq;
	/* run locks held: "KIND-ID" and the fd of its lock file */
	struct strvec locks;
	int *fds;
};

#define SQ(db) ((struct sq *)(db)->be)
#define STMT(st) ((sqlite3_stmt *)(st)->be)

static const char *sq_file(struct db *db)
{
	const char *f = db && SQ(db) ? sqlite3_db_filename(SQ(db)->sq, "main") : NULL;

	return f && *f ? f : ":memory:";
}

static const char *sq_errmsg(struct db *db)
{
	return sqlite3_errmsg(SQ(db)->sq);
}

/*
 * The error of the last call on DB, logged with the SQL it ran. A write that
 * fails for want of room says so: sqlite reports a full file system as
 * "database or disk is full" when the database file cannot grow, but as a
 * bare "disk I/O error" when its journal or WAL cannot (seen when a job's
 * database was opened on a full tmpfs), so the free space of the folder is
 * looked at for both.
 */
static int sq_fail(struct db *db, const char *msg, const char *sql, int cut)
{
	int code = sqlite3_extended_errcode(SQ(db)->sq) & 0xff;
	const char *file = sq_file(db);
	struct buf why = BUF_INIT;
	struct statvfs fs;

	buf_addstr(&why, msg ? msg : sqlite3_errmsg(SQ(db)->sq));
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
		db_fail(db, "database '%s': %s (in: %.*s...)", file, why.buf, cut, sql);
	else
		db_fail(db, "database '%s': %s (in: %s)", file, why.buf, sql);
	buf_release(&why);
	return -1;
}

static int sq_exec(struct db *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(SQ(db)->sq, sql, NULL, NULL, &msg) != SQLITE_OK) {
		sq_fail(db, msg, sql, 80);
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int sq_begin(struct db *db)
{
	return sq_exec(db, "BEGIN IMMEDIATE");
}

static void sq_rollback(struct db *db)
{
	if (!sqlite3_get_autocommit(SQ(db)->sq))
		sqlite3_exec(SQ(db)->sq, "ROLLBACK", NULL, NULL, NULL);
}

static int sq_in_transaction(struct db *db)
{
	return !sqlite3_get_autocommit(SQ(db)->sq);
}

static int64_t sq_last_id(struct db *db)
{
	return sqlite3_last_insert_rowid(SQ(db)->sq);
}

static int sq_changes(struct db *db)
{
	return sqlite3_changes(SQ(db)->sq);
}

/*
 * The first column of SQL's first row as an integer (0 without a row), the
 * text ARG bound to its one parameter if given: 0 or -1 (logged). db.c's
 * helpers are for the callers above; a backend keeps to its own library.
 */
static int sq_int(struct db *db, const char *sql, const char *arg, int64_t *out)
{
	sqlite3_stmt *s = NULL;
	int rc;

	*out = 0;
	if (sqlite3_prepare_v2(SQ(db)->sq, sql, -1, &s, NULL) != SQLITE_OK)
		return sq_fail(db, NULL, sql, 0);
	if (arg)
		sqlite3_bind_text(s, 1, arg, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sq_fail(db, NULL, sql, 0);
	return 0;
}

static int sq_version(struct db *db)
{
	int64_t v = -1;

	if (sq_int(db, "PRAGMA user_version", NULL, &v))
		return -1;
	return (int)v;
}

static int sq_set_version(struct db *db, int version)
{
	char pragma[64];

	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", version);
	return sq_exec(db, pragma);
}

static int sq_has_table(struct db *db, const char *name)
{
	int64_t n = 0;

	if (sq_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", name, &n))
		return -1;
	return n > 0;
}

static int sq_tables(struct db *db, struct strvec *out)
{
	const char *sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name";
	sqlite3_stmt *s = NULL;
	int rc;

	if (sqlite3_prepare_v2(SQ(db)->sq, sql, -1, &s, NULL) != SQLITE_OK)
		return sq_fail(db, NULL, sql, 0);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		strvec_push(out, (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : sq_fail(db, NULL, sql, 0);
}

static char *sq_ddl(const char *sql)
{
	return xstrdup(sql);
}

static int sq_migrate_lock(struct db *db, int take)
{
	return 0;	/* each migration is its own BEGIN IMMEDIATE transaction */
}

/* ---- run locks: a file beside the database, FILE.KIND-ID.lock ---- */

static char *run_lock_path(struct db *db, const char *kind, int64_t id)
{
	return xasprintf("%s.%s-%lld.lock", sq_file(db), kind, (long long)id);
}

static int sq_run_lock(struct db *db, const char *kind, int64_t id)
{
	struct sq *s = SQ(db);
	char *p = run_lock_path(db, kind, id);
	int fd = lock_file(p, 0);

	free(p);
	if (fd == LOCK_FILE_BUSY)
		return 1;
	if (fd < 0)
		return -1;
	strvec_pushf(&s->locks, "%s-%lld", kind, (long long)id);
	s->fds = xrealloc(s->fds, s->locks.n * sizeof(*s->fds));
	s->fds[s->locks.n - 1] = fd;
	return 0;
}

static void sq_run_unlock(struct db *db, const char *kind, int64_t id)
{
	struct sq *s = SQ(db);
	char *k = xasprintf("%s-%lld", kind, (long long)id);

	for (size_t i = 0; i < s->locks.n; i++)
		if (!strcmp(s->locks.v[i], k)) {
			close(s->fds[i]);
			s->fds[i] = -1;
			s->locks.v[i][0] = '\0';
		}
	free(k);
}

static int sq_run_lock_held(struct db *db, const char *kind, int64_t id)
{
	char *p = run_lock_path(db, kind, id);
	int ret = lock_held(p);

	free(p);
	return ret;
}

/*
 * KLAB_SQL_PROFILE=MS: every statement that took MS milliseconds or more,
 * its time and its first 300 characters, on stderr (how the slow queries of
 * docs/query-scale.md were found). A debugging aid, sqlite only.
 */
static int sq_profile(unsigned type, void *ctx, void *stmt, void *ns)
{
	long long ms = *(long long *)ns / 1000000;

	(void)type;
	if (ms >= (long long)(intptr_t)ctx)
		fprintf(stderr, "klab: sql %lld ms: %.300s\n", ms, sqlite3_sql(stmt));
	return 0;
}

/*
 * A database klab makes is readable by its owner only (0600): the results
 * of every job, the machines and their addresses are not for every local
 * user, nor for a build that might see the file (docs/security.md). sqlite
 * would make it 0644; made empty here first, it keeps this mode, and
 * sqlite gives the -wal and -shm files the mode of the database. An
 * existing database keeps the mode its admin gave it.
 */
static void sq_create_private(const char *path)
{
	int fd;

	if (!*path || !strcmp(path, ":memory:") || !strncmp(path, "file:", 5))
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);	/* EEXIST and the rest: sqlite opens it, or says why not */
}

static int sq_open(struct db *db, const char *path)
{
	struct sq *s = xcalloc(1, sizeof(*s));

	strvec_init(&s->locks);
	db->be = s;
	sq_create_private(path);
	if (sqlite3_open_v2(path, &s->sq, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK)
		return error("cannot open database '%s': %s", path, s->sq ? sqlite3_errmsg(s->sq) : "out of memory");
	/*
	 * A writer waits up to 60 s for the lock: t0505 (64 pairs, 16 jobs at once on
	 * 2 CPUs at load 16) saw a step's UPDATE give up after 10 s; docs/scale.md.
	 */
	sqlite3_busy_timeout(s->sq, 60000);
	if (getenv("KLAB_SQL_PROFILE"))
		sqlite3_trace_v2(s->sq, SQLITE_TRACE_PROFILE, sq_profile,
				 (void *)(intptr_t)atol(getenv("KLAB_SQL_PROFILE")));
	if (sq_exec(db, "PRAGMA foreign_keys = ON") ||
	    sq_exec(db, "PRAGMA journal_mode = WAL") ||
	    sq_exec(db, "PRAGMA synchronous = NORMAL"))
		return error("cannot open database '%s'", path);
	return 0;
}

static void sq_close(struct db *db)
{
	struct sq *s = SQ(db);

	if (!s)
		return;
	sqlite3_close(s->sq);
	for (size_t i = 0; i < s->locks.n; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	free(s->fds);
	strvec_clear(&s->locks);
	free(s);
}

/* ---- statements ---- */

static int bind_rc(struct db_stmt *st, int i, int rc)
{
	if (rc != SQLITE_OK)
		return db_fail(st->db, "database '%s': cannot bind parameter %d: %s", sq_file(st->db), i,
			       sqlite3_errmsg(SQ(st->db)->sq));
	return 0;
}

static int sq_bind_int64(struct db_stmt *st, int i, int64_t v)
{
	return bind_rc(st, i, sqlite3_bind_int64(STMT(st), i, v));
}

static int sq_bind_double(struct db_stmt *st, int i, double v)
{
	return bind_rc(st, i, sqlite3_bind_double(STMT(st), i, v));
}

static int sq_bind_textn(struct db_stmt *st, int i, const char *s, size_t len)
{
	return bind_rc(st, i, sqlite3_bind_text64(STMT(st), i, s, len, SQLITE_TRANSIENT, SQLITE_UTF8));
}

static int sq_bind_null(struct db_stmt *st, int i)
{
	return bind_rc(st, i, sqlite3_bind_null(STMT(st), i));
}

static int sq_prepare(struct db_stmt *st, const char *sql)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(SQ(st->db)->sq, sql, -1, &s, NULL) != SQLITE_OK)
		return sq_fail(st->db, NULL, sql, 0);
	st->be = s;
	return 0;
}

static int sq_step(struct db_stmt *st)
{
	int rc = sqlite3_step(STMT(st));

	if (rc == SQLITE_ROW)
		return DB_ROW;
	if (rc == SQLITE_DONE)
		return DB_DONE;
	sq_fail(st->db, NULL, sqlite3_sql(STMT(st)), 0);
	return DB_ERROR;
}

static void sq_reset(struct db_stmt *st)
{
	sqlite3_reset(STMT(st));
}

static void sq_clear_bindings(struct db_stmt *st)
{
	sqlite3_clear_bindings(STMT(st));
}

static void sq_finalize(struct db_stmt *st)
{
	sqlite3_finalize(STMT(st));
}

/* ---- columns ---- */

static int sq_col_count(struct db_stmt *st)
{
	return sqlite3_column_count(STMT(st));
}

static const char *sq_col_name(struct db_stmt *st, int i)
{
	return sqlite3_column_name(STMT(st), i);
}

static enum db_type sq_col_type(struct db_stmt *st, int i)
{
	switch (sqlite3_column_type(STMT(st), i)) {
	case SQLITE_INTEGER: return DB_INTEGER;
	case SQLITE_FLOAT: return DB_FLOAT;
	case SQLITE_TEXT: return DB_TEXT;
	case SQLITE_BLOB: return DB_BLOB;
	default: return DB_NULL;
	}
}

static int64_t sq_col_int64(struct db_stmt *st, int i)
{
	return sqlite3_column_int64(STMT(st), i);
}

static double sq_col_double(struct db_stmt *st, int i)
{
	return sqlite3_column_double(STMT(st), i);
}

static const char *sq_col_text(struct db_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(STMT(st), i);
}

const struct db_ops db_sqlite_ops = {
	.open = sq_open, .close = sq_close, .file = sq_file, .errmsg = sq_errmsg, .exec = sq_exec,
	.begin = sq_begin, .rollback = sq_rollback, .in_transaction = sq_in_transaction,
	.last_id = sq_last_id, .changes = sq_changes, .version = sq_version, .set_version = sq_set_version,
	.has_table = sq_has_table, .tables = sq_tables, .ddl = sq_ddl,
	.migrate_lock = sq_migrate_lock, .run_lock = sq_run_lock, .run_unlock = sq_run_unlock,
	.run_lock_held = sq_run_lock_held,
	.prepare = sq_prepare, .bind_int64 = sq_bind_int64, .bind_double = sq_bind_double,
	.bind_textn = sq_bind_textn, .bind_null = sq_bind_null, .step = sq_step, .reset = sq_reset,
	.clear_bindings = sq_clear_bindings, .finalize = sq_finalize,
	.col_count = sq_col_count, .col_name = sq_col_name, .col_type = sq_col_type,
	.col_int64 = sq_col_int64, .col_double = sq_col_double, .col_text = sq_col_text,
};
