/* db_int.h: what db.c asks of a database backend (db_sqlite.c, db_pg.c); only the db*.c files include it. */
#ifndef KLAB_DB_INT_H
#define KLAB_DB_INT_H

#include <stdint.h>

#include "buf.h"
#include "store/db.h"

struct db_ops;

struct db {
	const struct db_ops *ops;
	void *be;		/* the backend's connection */
	struct buf err;		/* the last failure as logged (db_fail(), db_error()) */
	char *path;		/* as db_open() was given it, for db_reopen() */
};

struct db_stmt {
	struct db *db;
	void *be;		/* the backend's statement */
};

struct db_migration {
	int version;
	const char *name;
	const char *sql;
	const char *pg_sql;	/* NNNN_name.pg.sql, which replaces sql on PostgreSQL; or NULL */
};
extern const struct db_migration db_migrations[];	/* generated: build/gen/migrations.c */

/*
 * A backend. Every function logs its own errors (naming the database and
 * the SQL) and returns 0 or -1 unless said otherwise; db.c holds what is
 * the same for both (migrations, parameter lists, one-shot helpers).
 */
struct db_ops {
	int (*open)(struct db *db, const char *path);
	void (*close)(struct db *db);
	const char *(*file)(struct db *db);
	const char *(*errmsg)(struct db *db);
	int (*exec)(struct db *db, const char *sql);
	int (*begin)(struct db *db);
	void (*rollback)(struct db *db);
	int (*in_transaction)(struct db *db);
	int64_t (*last_id)(struct db *db);
	int (*changes)(struct db *db);
	/* the schema version, -1 on error; set_version records a migration's number */
	int (*version)(struct db *db);
	int (*set_version)(struct db *db, int version);
	/* 1 if table NAME exists, 0 not, -1 error */
	int (*has_table)(struct db *db, const char *name);
	int (*tables)(struct db *db, struct strvec *out);
	/* a migration's CREATE and ALTER in this backend's types (a malloc'd string) */
	char *(*ddl)(const char *sql);
	/* around db_migrate: one migrating process at a time (1 take, 0 give back) */
	int (*migrate_lock)(struct db *db, int take);
	/* run locks (db.h): 0 taken, 1 busy, -1 error; held: 1, 0, -1 */
	int (*run_lock)(struct db *db, const char *kind, int64_t id);
	void (*run_unlock)(struct db *db, const char *kind, int64_t id);
	int (*run_lock_held)(struct db *db, const char *kind, int64_t id);

	int (*prepare)(struct db_stmt *st, const char *sql);
	int (*bind_int64)(struct db_stmt *st, int i, int64_t v);
	int (*bind_double)(struct db_stmt *st, int i, double v);
	int (*bind_textn)(struct db_stmt *st, int i, const char *s, size_t len);
	int (*bind_null)(struct db_stmt *st, int i);
	int (*step)(struct db_stmt *st);	/* DB_ROW, DB_DONE, DB_ERROR */
	void (*reset)(struct db_stmt *st);
	void (*clear_bindings)(struct db_stmt *st);
	void (*finalize)(struct db_stmt *st);

	int (*col_count)(struct db_stmt *st);
	const char *(*col_name)(struct db_stmt *st, int i);
	enum db_type (*col_type)(struct db_stmt *st, int i);
	int64_t (*col_int64)(struct db_stmt *st, int i);
	double (*col_double)(struct db_stmt *st, int i);
	const char *(*col_text)(struct db_stmt *st, int i);
};

/*
 * A failure on DB: logged as error() and kept as the connection's last
 * failure, which db_error() gives the caller of the store function that
 * failed. -1.
 */
int db_fail(struct db *db, const char *fmt, ...) KLAB_PRINTF(2, 3);

extern const struct db_ops db_sqlite_ops;
extern const struct db_ops db_pg_ops;

#endif
