/* orch-db.c: the database layer as callers see it, the same on a sqlite file and on PostgreSQL ($KLAB_TEST_DB, t0011). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/db.h"
#include "log.h"
#include "strvec.h"
#include "tap.h"

static char *str(struct db *db, const char *sql, const char *types, const char *s)
{
	char *out = NULL;

	db_get_str(db, &out, sql, types, s);
	return out;
}

int main(void)
{
	char *path = tap_db_path("db.db"), *s;
	struct db *db = NULL;
	struct db_stmt *st;
	struct strvec tables = STRVEC_INIT;
	int64_t n = -1, id1 = 0, id2 = 0;

	log_init("orch-db", 0, LOG_ERR);
	if (!ok(!db_open(path, &db), "database opens"))
		return done_testing();
	is_int(db_version(db), db_latest_version(), "at the newest schema version");
	ok(!db_tables(db, &tables) && tables.n > 20, "db_tables lists the tables");
	for (size_t i = 0; i < tables.n; i++)
		ok(strncmp(tables.v[i], "sqlite_", 7) && strncmp(tables.v[i], "pg_", 3), "a klab table: %s", tables.v[i]);
	strvec_clear(&tables);
	ok(!strstr(db_file(db), ":klab-pw-") && !strstr(db_file(db), "password="), "db_file shows no password");
	is_int(db_is_server(db), db_is_url(path), "db_is_server is the URL's");
	if (db_is_server(db)) {
		char *jit = NULL;
		/* PostgreSQL's JIT costs hundreds of ms on a large plan (docs/query-scale.md) */
		ok(db_get_str(db, &jit, "SHOW jit", "") == 1 && jit && !strcmp(jit, "off"), "the session runs with jit off (%s)",
		   jit ? jit : "?");
		free(jit);
	}

	/* ids, changes */
	ok(!db_run(db, "INSERT INTO machines (name, host, state) VALUES (?, ?, 'free')", "ss", "m1", "h1"), "insert");
	ok(!db_run(db, "INSERT INTO jobs (name, spec, created) VALUES ('a', '{}', 1)", ""), "insert a job");
	id1 = db_last_id(db);
	ok(!db_run(db, "INSERT INTO jobs (name, spec, created) VALUES ('b', '{}', 2)", ""), "insert another");
	id2 = db_last_id(db);
	ok(id1 > 0 && id2 == id1 + 1, "db_last_id numbers new rows (%lld, %lld)", (long long)id1, (long long)id2);
	ok(!db_run(db, "UPDATE jobs SET error = 'x' WHERE id >= ?", "i", id1), "update");
	is_int(db_changes(db), 2, "db_changes counts the rows updated");

	/* placeholders: ?N reused, ? after it, a ? inside quotes is text */
	db_get_int(db, &n, "SELECT count(*) FROM jobs WHERE id = ?1 OR (id = ?1 + 1 AND name = ?)", "is", id1, "b");
	is_int(n, 2, "?1 twice and a bare ? after it (?2)");
	s = str(db, "SELECT '?' || ? || '--?'", "s", "x");
	is_str(s, "?x--?", "a ? in quotes is not a parameter");
	free(s);
	n = -1;
	db_get_int(db, &n, "SELECT count(*) FROM jobs WHERE CAST(? AS TEXT) IS NULL OR name = ?", "ns", "a");
	is_int(n, 2, "CAST(? AS TEXT) IS NULL with a NULL");

	/* values: booleans read 0/1, whole sums are integers, NaN stores NULL */
	st = db_prepare(db, "SELECT 1 = 1, 1 = 2, sum(id), avg(id), 0.5, 'x', NULL FROM jobs", "");
	ok(st && db_step(st) == DB_ROW, "one row");
	if (st) {
		is_int(db_col_type(st, 0), DB_INTEGER, "a comparison is an integer");
		is_int(db_col_int(st, 0), 1, "true is 1");
		is_str(db_col_text(st, 1), "0", "false reads '0'");
		is_int(db_col_type(st, 2), DB_INTEGER, "sum of integers is an integer");
		is_int(db_col_int64(st, 2), 2 * id1 + 1, "its value");
		is_double(db_col_double(st, 3), id1 + 0.5, 1e-9, "avg");
		is_int(db_col_type(st, 4), DB_FLOAT, "0.5 is a float");
		is_int(db_col_type(st, 5), DB_TEXT, "text");
		ok(db_col_null(st, 6) && isnan(db_col_num(st, 6)) && !db_col_text(st, 6), "NULL");
		is_int(db_step(st), DB_DONE, "then done");
	}
	db_finalize(st);
	ok(!db_run(db, "UPDATE jobs SET started = ? WHERE id = ?", "di", NAN, id1), "bind NaN");
	n = -1;
	db_get_int(db, &n, "SELECT count(*) FROM jobs WHERE id = ? AND started IS NULL", "i", id1);
	is_int(n, 1, "NaN is stored as NULL");
	ok(!db_run(db, "UPDATE jobs SET started = ? WHERE id = ?", "di", 1796474689.2072561, id1), "bind a time");
	st = db_prepare(db, "SELECT started FROM jobs WHERE id = ?", "i", id1);
	ok(st && db_step(st) == DB_ROW && db_col_double(st, 0) == 1796474689.2072561, "a double comes back exact");
	db_finalize(st);

	/* reset and rebind; an error is an error */
	st = db_prepare(db, "SELECT name FROM jobs WHERE id = ?", "i", id1);
	ok(st && db_step(st) == DB_ROW && !strcmp(db_col_text(st, 0), "a"), "first binding");
	db_reset(st);
	db_clear_bindings(st);
	db_bind_int64(st, 1, id2);
	ok(db_step(st) == DB_ROW && !strcmp(db_col_text(st, 0), "b"), "reset, rebound");
	db_finalize(st);
	ok(!*db_error(db), "db_error: empty before a failure");
	ok(db_run(db, "SELECT nosuch FROM jobs", "") < 0, "a bad column fails");
	ok(strstr(db_error(db), "nosuch") && strstr(db_error(db), " (in: SELECT nosuch FROM jobs)") &&
	   strstr(db_error(db), db_file(db)), "db_error says why, naming the database and the SQL: %s", db_error(db));
	ok(db_get_int(db, &n, "SELECT 1", "") == 1 && strstr(db_error(db), "nosuch"), "a call that succeeds leaves it: %s", db_error(db));
	ok(db_run(db, "INSERT INTO machines (name, host, state) VALUES ('m1', 'h', 'free')", "") < 0,
	   "a duplicate key fails");

	/* transactions */
	ok(!db_begin(db) && db_in_transaction(db), "begin");
	db_run(db, "DELETE FROM jobs", "");
	db_rollback(db);
	ok(!db_in_transaction(db), "rolled back");
	n = 0;
	db_get_int(db, &n, "SELECT count(*) FROM jobs", "");
	is_int(n, 2, "the delete is undone");
	ok(!db_begin(db) && !db_run(db, "UPDATE jobs SET name = 'c' WHERE id = ?", "i", id1) && !db_commit(db),
	   "begin, update, commit");
	s = str(db, "SELECT name FROM jobs WHERE id = 1 OR name = ?", "s", "c");
	is_str(s, "c", "committed");
	free(s);

	/* the functions migration 0013 gives PostgreSQL */
	s = str(db, "SELECT json_extract(?, '$.a.b')", "s", "{\"a\": {\"b\": \"x y\"}}");
	is_str(s, "x y", "json_extract of a string");
	free(s);
	n = 0;
	db_get_int(db, &n, "SELECT CAST(json_extract(?, '$.n') AS DOUBLE PRECISION) + 1", "s", "{\"n\": 41}");
	is_int(n, 42, "json_extract of a number, CAST");
	s = str(db, "SELECT json_extract(?, '$.missing')", "s", "{}");
	ok(!s, "json_extract of a missing key is NULL");
	free(s);
	db_get_int(db, &n, "SELECT json_valid(?)", "s", "{\"a\":");
	is_int(n, 0, "json_valid of bad JSON");
	db_get_int(db, &n, "SELECT json_array_length(json_extract(?, '$.c'))", "s", "{\"c\": [1, 2, 3]}");
	is_int(n, 3, "json_array_length");
	s = str(db, "SELECT group_concat(name, ?) FROM (SELECT name FROM jobs ORDER BY name) AS x", "s", " / ");
	is_str(s, "b / c", "group_concat");
	free(s);
	db_get_int(db, &n, "SELECT count(*) FROM jobs WHERE glob(?, name)", "s", "[bc]*");
	is_int(n, 2, "glob with a class and *");
	db_get_int(db, &n, "SELECT count(*) FROM jobs WHERE glob(?, name)", "s", "b.");
	is_int(n, 0, "glob: a dot is a dot");

	/* run locks: free, ours, seen by another connection, given back */
	{
		struct db *other = NULL;

		ok(!db_open(path, &other), "a second connection");
		is_int(db_run_lock_held(other, "job", 7), 0, "nobody runs job 7");
		is_int(db_run_lock(db, "job", 7), 0, "we take its run lock");
		is_int(db_run_lock_held(other, "job", 7), 1, "the other connection sees it held");
		is_int(db_run_lock(other, "job", 7), 1, "and cannot take it");
		is_int(db_run_lock_held(other, "job", 8), 0, "job 8 is free");
		is_int(db_run_lock_held(other, "bisect", 7), 0, "bisection 7 is another lock");
		db_run_unlock(db, "job", 7);
		is_int(db_run_lock_held(other, "job", 7), 0, "given back");
		is_int(db_run_lock(other, "job", 7), 0, "the other takes it");
		db_close(other);
		/* a PostgreSQL session ends a moment after its client has gone */
		for (int i = 0; i < 50 && db_run_lock_held(db, "job", 7) == 1; i++)
			usleep(100 * 1000);
		is_int(db_run_lock_held(db, "job", 7), 0, "closing a connection gives its locks back");
	}

	/* the query planner's statistics: sqlite_stat1 on sqlite, autovacuum's on PostgreSQL */
	ok(!db_begin(db) && db_refresh_stats(db) == -1, "statistics are not refreshed inside a transaction");
	db_rollback(db);
	ok(!db_refresh_stats(db), "statistics refreshed");
	if (!db_is_server(db)) {
		n = -1;
		db_get_int(db, &n, "SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'jobs'", "");
		ok(n > 0, "sqlite_stat1 has the jobs table's indexes (%lld rows)", (long long)n);
	}
	db_close(db);
	free(path);
	return done_testing();
}
