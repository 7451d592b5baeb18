/* db.c: open the sqlite database, apply the compiled-in migrations, query helpers, `klab db`. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "buf.h"
#include "cmds.h"
#include "db.h"
#include "jsonh.h"
#include "log.h"

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

/* The file name for messages: "database '/var/lib/klab/klab.db'". */
static const char *dbname(sqlite3 *db)
{
	const char *f = db ? sqlite3_db_filename(db, "main") : NULL;

	return f && *f ? f : ":memory:";
}

const char *db_errmsg(sqlite3 *db)
{
	return sqlite3_errmsg(db);
}

int db_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		error("database '%s': %s (in: %.80s%s)", dbname(db), msg ? msg : sqlite3_errmsg(db), sql,
		      strlen(sql) > 80 ? "..." : "");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int db_begin(sqlite3 *db)
{
	return db_exec(db, "BEGIN IMMEDIATE");
}

int db_commit(sqlite3 *db)
{
	return db_exec(db, "COMMIT");
}

void db_rollback(sqlite3 *db)
{
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

int db_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/*
 * Which migrations are applied: the table schema_migrations lists them; a
 * database made before that table existed has every migration up to its
 * user_version. A migration numbered below user_version that is not listed
 * (it was added later than a higher one) is still applied, so numbers
 * reserved for work in progress cannot be skipped.
 */
static int applied(sqlite3 *db, int version, int cur, int have_table)
{
	int64_t n = 0;

	if (!have_table)
		return version <= cur;
	if (db_get_int(db, &n, "SELECT count(*) FROM schema_migrations WHERE version = ?", "i",
		       (int64_t)version) < 0)
		return -1;
	return n > 0;
}

int db_migrate(sqlite3 *db, int target)
{
	int cur = db_version(db), latest = db_latest_version(), have_table;
	int64_t n = 0;

	if (cur < 0)
		return error("database '%s': cannot read its schema version: %s", dbname(db), sqlite3_errmsg(db));
	if (cur > latest)
		return error("database '%s': schema version %d is newer than this klab knows (%d): upgrade klab",
			     dbname(db), cur, latest);
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
		return error("database '%s': migration %s failed; the database is unchanged", dbname(db), m->name);
	}
	return 0;
}

int db_open_raw(const char *path, sqlite3 **out)
{
	sqlite3 *db = NULL;

	*out = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		error("cannot open database '%s': %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -1;
	}
	sqlite3_busy_timeout(db, 10000);
	if (db_exec(db, "PRAGMA foreign_keys = ON") ||
	    db_exec(db, "PRAGMA journal_mode = WAL") ||
	    db_exec(db, "PRAGMA synchronous = NORMAL")) {
		error("cannot open database '%s'", path);
		sqlite3_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

int db_open(const char *path, sqlite3 **out)
{
	if (db_open_raw(path, out))
		return -1;
	if (db_migrate(*out, 0)) {
		error("cannot open database '%s'", path);
		sqlite3_close(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

void db_close(sqlite3 *db)
{
	if (db)
		sqlite3_close(db);
}

static int bind_va(sqlite3 *db, sqlite3_stmt *st, const char *types, va_list ap)
{
	int i = 1, rc = SQLITE_OK;

	for (const char *t = types; t && *t && rc == SQLITE_OK; t++, i++) {
		switch (*t) {
		case 'i':
			rc = sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
			break;
		case 'd':
			rc = sqlite3_bind_double(st, i, va_arg(ap, double));
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);

			rc = s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
			break;
		}
		case 'n':
			rc = sqlite3_bind_null(st, i);
			break;
		default:
			return error("db_prepare: bad type '%c'", *t);
		}
	}
	if (rc != SQLITE_OK)
		return error("database '%s': cannot bind parameter %d: %s", dbname(db), i - 1, sqlite3_errmsg(db));
	return 0;
}

static sqlite3_stmt *vprepare(sqlite3 *db, const char *sql, const char *types, va_list ap)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		error("database '%s': %s (in: %s)", dbname(db), sqlite3_errmsg(db), sql);
		return NULL;
	}
	if (bind_va(db, st, types, ap)) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql, const char *types, ...)
{
	va_list ap;
	sqlite3_stmt *st;

	va_start(ap, types);
	st = vprepare(db, sql, types, ap);
	va_end(ap);
	return st;
}

int db_run(sqlite3 *db, const char *sql, const char *types, ...)
{
	va_list ap;
	sqlite3_stmt *st;
	int rc;

	va_start(ap, types);
	st = vprepare(db, sql, types, ap);
	va_end(ap);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return error("database '%s': %s (in: %s)", dbname(db), sqlite3_errmsg(db), sql);
	return 0;
}

int db_get_int(sqlite3 *db, int64_t *out, const char *sql, const char *types, ...)
{
	va_list ap;
	sqlite3_stmt *st;
	int rc, ret = 0;

	va_start(ap, types);
	st = vprepare(db, sql, types, ap);
	va_end(ap);
	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_NULL)
			*out = sqlite3_column_int64(st, 0);
		ret = 1;
	} else if (rc != SQLITE_DONE) {
		ret = error("database '%s': %s (in: %s)", dbname(db), sqlite3_errmsg(db), sql);
	}
	sqlite3_finalize(st);
	return ret;
}

int db_get_str(sqlite3 *db, char **out, const char *sql, const char *types, ...)
{
	va_list ap;
	sqlite3_stmt *st;
	int rc, ret = 0;

	*out = NULL;
	va_start(ap, types);
	st = vprepare(db, sql, types, ap);
	va_end(ap);
	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *s = sqlite3_column_text(st, 0);

		*out = s ? xstrdup((const char *)s) : NULL;
		ret = 1;
	} else if (rc != SQLITE_DONE) {
		ret = error("database '%s': %s (in: %s)", dbname(db), sqlite3_errmsg(db), sql);
	}
	sqlite3_finalize(st);
	return ret;
}

/* ---- klab db init|info ---- */

static int db_info(struct klab_ctx *ctx)
{
	sqlite3 *db = ctx_db(ctx);
	sqlite3_stmt *st;
	struct json_object *o, *tables;
	int ret = 0;

	if (!db)
		return 1;
	st = db_prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table' "
			"AND name NOT LIKE 'sqlite_%' ORDER BY name", "");
	if (!st)
		return 1;
	o = json_object_new_object();
	tables = json_object_new_object();
	json_object_object_add(o, "path", json_object_new_string(sqlite3_db_filename(db, "main")));
	json_object_object_add(o, "schema_version", json_object_new_int(db_version(db)));
	json_object_object_add(o, "latest_version", json_object_new_int(db_latest_version()));
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		char *sql = xasprintf("SELECT count(*) FROM \"%s\"", name);
		int64_t n = 0;

		if (db_get_int(db, &n, sql, "") < 0)
			ret = 1;
		json_object_object_add(tables, name, json_object_new_int64(n));
		free(sql);
	}
	sqlite3_finalize(st);
	json_object_object_add(o, "tables", tables);
	if (ctx->json) {
		struct buf b = BUF_INIT;

		json_to_buf(&b, o, 1);
		printf("%s\n", b.buf);
		buf_release(&b);
	} else {
		printf("database        %s\n", sqlite3_db_filename(db, "main"));
		printf("schema version  %d (this klab knows up to %d)\n", db_version(db), db_latest_version());
		json_object_object_foreach(tables, k, v)
			printf("  %-16s %8lld rows\n", k, (long long)json_object_get_int64(v));
	}
	json_object_put(o);
	return ret;
}

int cmd_db(int argc, char **argv, struct klab_ctx *ctx)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_usage("db", argc < 2 ? 2 : 0);
	if (!strcmp(argv[1], "init")) {
		sqlite3 *db = ctx_db(ctx);

		if (!db)
			return 1;
		if (!ctx->json)
			printf("database '%s' is at schema version %d\n",
			       sqlite3_db_filename(db, "main"), db_version(db));
		else
			printf("{\"path\": \"%s\", \"schema_version\": %d}\n",
			       sqlite3_db_filename(db, "main"), db_version(db));
		return 0;
	}
	if (!strcmp(argv[1], "info"))
		return db_info(ctx);
	error("unknown db subcommand '%s' (init, info)", argv[1]);
	return 2;
}
