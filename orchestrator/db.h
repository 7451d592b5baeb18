/* db.h: opening the klab sqlite database, migrations, and small query helpers. */
#ifndef KLAB_DB_H
#define KLAB_DB_H

#include <sqlite3.h>
#include <stdint.h>

/*
 * Open (creating if needed) the database at PATH: WAL journal, foreign keys
 * on, busy timeout 10 s, and every migration in db/migrations (compiled in)
 * newer than PRAGMA user_version applied, each in its own transaction.
 * A database newer than this klab is refused. Returns 0 or -1 (logged,
 * naming the file).
 */
int db_open(const char *path, sqlite3 **out);
/* Open without migrating (for tests that build old databases): 0 or -1. */
int db_open_raw(const char *path, sqlite3 **out);
/* Apply migrations up to `target` (0: all). 0 or -1. */
int db_migrate(sqlite3 *db, int target);
void db_close(sqlite3 *db);
/* The newest migration compiled in. */
int db_latest_version(void);
/* PRAGMA user_version. */
int db_version(sqlite3 *db);

/* Run SQL without results (may be several statements): 0 or -1 (logged). */
int db_exec(sqlite3 *db, const char *sql);
/* BEGIN IMMEDIATE / COMMIT / ROLLBACK: 0 or -1 (logged). */
int db_begin(sqlite3 *db);
int db_commit(sqlite3 *db);
void db_rollback(sqlite3 *db);

/*
 * Prepare a statement and bind parameters described by `types`, one char
 * per `?`: 'i' int64_t, 'd' double, 's' const char * (NULL binds NULL),
 * 'n' NULL (no argument consumed). NULL on error (logged with the SQL).
 *	sqlite3_stmt *st = db_prepare(db, "SELECT id FROM jobs WHERE state = ? AND id > ?", "si", "queued", (int64_t)3);
 */
sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql, const char *types, ...);
/* Prepare, bind, step to completion (no rows expected): 0 or -1. */
int db_run(sqlite3 *db, const char *sql, const char *types, ...);
/* First column of the first row as int64 (*out untouched when no row): 1 row, 0 none, -1 error. */
int db_get_int(sqlite3 *db, int64_t *out, const char *sql, const char *types, ...);
/* First column of the first row as a malloc'd string (NULL if no row / NULL value): 1, 0, -1. */
int db_get_str(sqlite3 *db, char **out, const char *sql, const char *types, ...);
/* The message of the last error on db. */
const char *db_errmsg(sqlite3 *db);

#endif
