/* db.h: the klab database: opening it, migrations, statements, rows and columns. */
#ifndef KLAB_DB_H
#define KLAB_DB_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every module reaches the database through this layer and never through
 * the sqlite3 or libpq API: the store behind it is an embedded sqlite file
 * (db_sqlite.c, the default) or a PostgreSQL server that several klabd
 * share (db_pg.c, docs/database.md); the callers' SQL is the same for both.
 *
 * A connection is a `struct db`; a statement is a `struct db_stmt`, made
 * by db_prepare() with its parameters bound, stepped row by row with
 * db_step() and freed with db_finalize():
 *
 *	struct db_stmt *st = db_prepare(db, "SELECT id, name FROM jobs WHERE state = ?", "s", "queued");
 *	if (!st)
 *		return -1;
 *	while ((rc = db_step(st)) == DB_ROW)
 *		printf("%lld %s\n", (long long)db_col_int64(st, 0), db_col_text(st, 1));
 *	db_finalize(st);
 *	if (rc != DB_DONE)
 *		return -1;	// db_step logged the error with the SQL
 *
 * SQL uses `?` placeholders only (bound parameters; never a value printed
 * into the SQL text), and what sqlite 3.40 and PostgreSQL 15 both read:
 * INSERT ... ON CONFLICT, IS NOT DISTINCT FROM, CAST(x AS DOUBLE PRECISION);
 * json_extract, json_valid, group_concat and glob exist on both (migration
 * 0013 makes them on PostgreSQL).
 */
struct db;
struct db_stmt;

/* db_step() results. */
#define DB_ERROR (-1)
#define DB_DONE 0
#define DB_ROW 1

/* db_col_type() results. */
enum db_type { DB_NULL, DB_INTEGER, DB_FLOAT, DB_TEXT, DB_BLOB };

/*
 * Open the database PATH: a URL postgresql://USER:PASSWORD@HOST:PORT/NAME
 * (or postgres://...) connects to that PostgreSQL database, which must
 * exist; anything else is a sqlite file, created if needed (WAL journal,
 * foreign keys on, busy timeout 60 s). Every migration in db/migrations
 * (compiled in) not applied yet is applied, each in its own transaction.
 * A database newer than this klab is refused. Returns 0 or -1 (logged,
 * naming the file, or the URL without its password).
 */
int db_open(const char *path, struct db **out);
/* Open without migrating (for tests that build old databases): 0 or -1. */
int db_open_raw(const char *path, struct db **out);
/* Apply migrations up to `target` (0: all). 0 or -1. */
int db_migrate(struct db *db, int target);
/*
 * A connection of its own to DB's database (not migrated again), for a
 * child process after fork(), which must not use its parent's: 0 or -1
 * (logged).
 */
int db_reopen(struct db *db, struct db **out);
void db_close(struct db *db);
/* The newest migration compiled in. */
int db_latest_version(void);
/* The schema version the database is at (-1 on error). */
int db_version(struct db *db);
/*
 * The database's file (for lock files beside it and for messages), or
 * ":memory:" for an in-memory database; for PostgreSQL the URL without its
 * password. Never NULL.
 */
const char *db_file(struct db *db);
/* 1 if PATH names a PostgreSQL database (postgresql:// or postgres://). */
int db_is_url(const char *path);
/* 1 if DB is a PostgreSQL server (no file beside it; several klabd may share it). */
int db_is_server(struct db *db);

/*
 * Refresh the statistics the query planner reads. sqlite has none until
 * ANALYZE writes sqlite_stat1, and without them it picks an index by rules
 * of thumb (a listing of one job read every run of the metric); this runs
 * ANALYZE with an analysis limit (a few thousand index rows a table, so
 * milliseconds whatever the size). PostgreSQL's autovacuum keeps its own:
 * nothing to do there. klabd calls it after a job ends, at most once an
 * hour; `klab db rebuild-summaries` after its rows. 0 or -1 (logged).
 */
int db_refresh_stats(struct db *db);

/*
 * Run locks: "this process runs job 7" (KIND "job", ID 7), held until
 * db_run_unlock() or until the process or its connection ends, whatever
 * ends it. On a sqlite file it is an flock on FILE.KIND-ID.lock; on
 * PostgreSQL a session advisory lock, which the server drops when the
 * session goes, so a klabd on another host sees a killed runner's job free.
 * db_run_lock: 0 taken, 1 held by another process, -1 error (logged).
 * db_run_lock_held: 1 some process holds it, 0 none does, -1 error.
 */
int db_run_lock(struct db *db, const char *kind, int64_t id);
void db_run_unlock(struct db *db, const char *kind, int64_t id);
int db_run_lock_held(struct db *db, const char *kind, int64_t id);

/* Run SQL without results (may be several statements): 0 or -1 (logged). */
int db_exec(struct db *db, const char *sql);
/*
 * Transactions: BEGIN IMMEDIATE (takes the write lock at once, so two
 * writers never deadlock half-way; on PostgreSQL BEGIN and the database's
 * one transaction lock, to the same effect) / COMMIT / ROLLBACK (a no-op
 * outside a transaction). 0 or -1 (logged).
 */
int db_begin(struct db *db);
int db_commit(struct db *db);
void db_rollback(struct db *db);

/*
 * Prepare a statement and bind parameters described by `types`, one char
 * per `?`: 'i' int64_t, 'd' double, 's' const char * (NULL binds NULL),
 * 'n' NULL (no argument consumed). NULL on error (logged with the SQL).
 *	struct db_stmt *st = db_prepare(db, "SELECT id FROM jobs WHERE state = ? AND id > ?", "si", "queued", (int64_t)3);
 */
struct db_stmt *db_prepare(struct db *db, const char *sql, const char *types, ...);
/* The next row: DB_ROW, DB_DONE, or DB_ERROR (logged with the SQL). */
int db_step(struct db_stmt *st);
/*
 * Make a statement ready to run again from its first row, with the same
 * parameters (bind new ones over them, or clear them all first). 0 or -1.
 */
int db_reset(struct db_stmt *st);
/* Unbind every parameter of a statement (they read as NULL until bound anew). */
void db_clear_bindings(struct db_stmt *st);
void db_finalize(struct db_stmt *st);

/* Bind parameter `i` (1-based) of a statement made with no or fewer types: 0 or -1 (logged). */
int db_bind_int64(struct db_stmt *st, int i, int64_t v);
int db_bind_double(struct db_stmt *st, int i, double v);
/* A copy of the string is bound; NULL binds NULL. */
int db_bind_text(struct db_stmt *st, int i, const char *s);
/* The first len bytes of s (which need not be NUL-terminated). */
int db_bind_textn(struct db_stmt *st, int i, const char *s, size_t len);
int db_bind_null(struct db_stmt *st, int i);

/*
 * Columns of the current row, 0-based. A NULL value reads as 0 from the
 * number getters and as NULL from the text getters; db_col_num() reads it
 * as NaN, for statistics where "no value" must not look like zero.
 */
int db_col_count(struct db_stmt *st);
const char *db_col_name(struct db_stmt *st, int i);
enum db_type db_col_type(struct db_stmt *st, int i);
int db_col_null(struct db_stmt *st, int i);
int64_t db_col_int64(struct db_stmt *st, int i);
int db_col_int(struct db_stmt *st, int i);
double db_col_double(struct db_stmt *st, int i);
double db_col_num(struct db_stmt *st, int i);
/* Valid until the next db_step/db_reset/db_finalize of the statement. */
const char *db_col_text(struct db_stmt *st, int i);
/* A malloc'd copy, or NULL for NULL. */
char *db_col_strdup(struct db_stmt *st, int i);

/* Prepare, bind, step to completion (no rows expected): 0 or -1. */
int db_run(struct db *db, const char *sql, const char *types, ...);
/* First column of the first row as int64 (*out untouched when no row or NULL): 1 row, 0 none, -1 error. */
int db_get_int(struct db *db, int64_t *out, const char *sql, const char *types, ...);
/* First column of the first row as a malloc'd string (NULL if no row / NULL value): 1, 0, -1. */
int db_get_str(struct db *db, char **out, const char *sql, const char *types, ...);
/* The rowid of the row the last INSERT on this connection made. */
int64_t db_last_id(struct db *db);
/* Rows changed by the last INSERT, UPDATE or DELETE on this connection. */
int db_changes(struct db *db);
/* 1 inside a transaction (BEGIN without COMMIT/ROLLBACK yet), else 0. */
int db_in_transaction(struct db *db);
/* The message of the last error on db (the backend's own words). */
const char *db_errmsg(struct db *db);
/*
 * Why the last failed call on DB failed, as it was logged ("database
 * 'FILE': REASON (in: SQL)"; "" before any failure), as sqlite3_errmsg()
 * but with the database, the SQL and the full disk named: a store function
 * that fails only in the database hands its reason up this way, and its
 * caller puts db_error() in the message it keeps (a step's reason). A call
 * that succeeds leaves it as it was: read it right after the failed call.
 */
const char *db_error(struct db *db);
/*
 * For a store function that takes a `struct buf *err` and failed in the
 * database: db_error() into ERR (reset first; nothing when NULL: it was
 * logged already). -1, so `return db_error_to(db, err);`.
 */
struct buf;
int db_error_to(struct db *db, struct buf *err);
/* The names of the database's tables (schema_migrations included), sorted: 0 or -1. */
struct strvec;
int db_tables(struct db *db, struct strvec *out);
/* How many rows table TABLE (a name db_tables() gave) holds, into *N: 0 or -1 (logged). */
int db_table_rows(struct db *db, const char *table, int64_t *n);

#endif
