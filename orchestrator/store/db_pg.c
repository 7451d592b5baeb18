/* db_pg.c: the database backend for PostgreSQL (libpq), for several klabd sharing one queue. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <syslog.h>

#include "buf.h"
#include "store/db_int.h"
#include "log.h"
#include "strvec.h"
#include "util.h"

/* type oids (pg_type.h is not in libpq-dev) */
#define OID_BOOL 16
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_OID 26
#define OID_FLOAT4 700
#define OID_FLOAT8 701
#define OID_NUMERIC 1700

/* how long a lost connection is tried again before the statement fails */
#define RECONNECT_S 60

struct pg {
	PGconn *c;
	char *url;		/* as given, password included: for connecting only */
	char *shown;		/* without the password: for messages */
	int changes;
	struct strvec locks;	/* run locks held, "KIND ID", taken again after a reconnect */
	char err[512];
};

struct pst {
	char *sql;		/* with $N placeholders */
	const char *orig;	/* as the caller wrote it, for messages */
	int nparams;
	char **vals;
	Oid *types;
	PGresult *res;
	int row, rows;
};

#define PG(db) ((struct pg *)(db)->be)
#define PST(st) ((struct pst *)(st)->be)

/* The URL with its password cut out: user:secret@host -> user@host, and no password=... parameter. */
static char *url_shown(const char *url)
{
	const char *auth = strstr(url, "://"), *at, *colon, *q;
	struct buf b = BUF_INIT;

	if (!auth)
		return xstrdup(url);
	auth += 3;
	at = auth + strcspn(auth, "/?");
	while (at > auth && at[-1] != '@')
		at--;
	colon = at > auth ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	if (colon) {
		buf_add(&b, url, (size_t)(colon - url));
		buf_addstr(&b, at - 1);
	} else {
		buf_addstr(&b, url);
	}
	/* a password=... query parameter goes as well */
	q = strchr(b.buf, '?');
	while (q) {
		char *p = strstr(q, "password=");
		if (!p || (p[-1] != '?' && p[-1] != '&'))
			break;
		size_t n = strcspn(p, "&");
		memmove(p, p + n + (p[n] == '&'), strlen(p + n + (p[n] == '&')) + 1);
		b.len = strlen(b.buf);
	}
	if (b.len && (b.buf[b.len - 1] == '?' || b.buf[b.len - 1] == '&'))
		b.buf[--b.len] = '\0';
	return buf_detach(&b, NULL);
}

/* libpq's message on one line, without its trailing newline. */
static const char *one_line(char *dst, size_t n, const char *msg)
{
	size_t i = 0;

	for (; msg && *msg && i + 1 < n; msg++)
		dst[i++] = *msg == '\n' ? ' ' : *msg;
	while (i && dst[i - 1] == ' ')
		i--;
	dst[i] = '\0';
	return dst;
}

static const char *pg_file(struct db *db)
{
	return PG(db) && PG(db)->shown ? PG(db)->shown : "postgresql";
}

static const char *pg_errmsg(struct db *db)
{
	return PG(db)->err;
}

static void set_err(struct db *db, const char *msg)
{
	one_line(PG(db)->err, sizeof(PG(db)->err), msg);
}

static void quiet_notice(void *arg, const char *msg)
{
	char b[256];

	debug("database: %s", one_line(b, sizeof(b), msg));
}

/* A stable small number for a lock kind (the first key of pg's two-key advisory locks). */
static int kind_key(const char *kind)
{
	uint32_t h = 2166136261u;

	for (; *kind; kind++)
		h = (h ^ (unsigned char)*kind) * 16777619u;
	return (int)(h & 0x7fffffff);
}

/* Run SQL without parameters on the connection as it is, for the layer's own use: 0 or -1 (in err). */
static int raw(struct db *db, const char *sql)
{
	PGresult *r = PQexec(PG(db)->c, sql);
	int st = PQresultStatus(r), ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;

	if (!ok)
		set_err(db, PQerrorMessage(PG(db)->c));
	PQclear(r);
	return ok ? 0 : -1;
}

/* Try to take advisory lock (k1, k2) for the session: 1 taken, 0 held by another session, -1 error. */
static int try_lock(struct db *db, int k1, int64_t k2)
{
	char sql[96];
	PGresult *r;
	int ret = -1;

	snprintf(sql, sizeof(sql), "SELECT pg_try_advisory_lock(%d, %d)", k1, (int)k2);
	r = PQexec(PG(db)->c, sql);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		ret = PQgetvalue(r, 0, 0)[0] == 't';
	else
		set_err(db, PQerrorMessage(PG(db)->c));
	PQclear(r);
	return ret;
}

/*
 * Every session's settings, at connect and reconnect: warnings only, and
 * no JIT. klab's queries are short index searches; PostgreSQL 15 compiles
 * a plan whose cost estimate passes jit_above_cost (100000, reached by a
 * kernel comparison over a large table) with LLVM first, which costs
 * hundreds of milliseconds before the first row (docs/query-scale.md).
 */
#define SESSION_SETUP "SET client_min_messages = warning; SET jit = off"

static int connect_url(struct db *db)
{
	struct pg *p = PG(db);

	p->c = PQconnectdb(p->url);
	if (!p->c || PQstatus(p->c) != CONNECTION_OK) {
		set_err(db, p->c ? PQerrorMessage(p->c) : "out of memory");
		return -1;
	}
	PQsetNoticeProcessor(p->c, quiet_notice, NULL);
	return raw(db, SESSION_SETUP);
}

/*
 * The connection broke (the server restarted, or the network went away):
 * connect again for up to RECONNECT_S seconds, then take the run locks this
 * process held again (the server dropped them with the old session). A
 * run lock another process took in between is not ours any more: that is
 * an error, so that two processes never run one job.
 */
static int reconnect(struct db *db, const char *why)
{
	struct pg *p = PG(db);
	char msg[256];
	int64_t t0 = now_ms();

	warn("database '%s': the connection was lost (%s); connecting again", p->shown,
	     one_line(msg, sizeof(msg), why));
	for (;;) {
		PQreset(p->c);
		if (PQstatus(p->c) == CONNECTION_OK)
			break;
		if (now_ms() - t0 > RECONNECT_S * 1000) {
			set_err(db, PQerrorMessage(p->c));
			return db_fail(db, "database '%s': cannot connect again within %d s: %s", p->shown,
				       RECONNECT_S, p->err);
		}
		sleep(1);
	}
	PQsetNoticeProcessor(p->c, quiet_notice, NULL);
	if (raw(db, SESSION_SETUP))
		return db_fail(db, "database '%s': %s", p->shown, p->err);
	for (size_t i = 0; i < p->locks.n; i++) {
		char kind[64];
		long long id;

		if (sscanf(p->locks.v[i], "%63s %lld", kind, &id) != 2)
			continue;
		if (try_lock(db, kind_key(kind), id) != 1)
			return db_fail(db, "database '%s': the run lock of %s %lld was lost with the connection "
				       "and another process holds it now", p->shown, kind, id);
	}
	log_msg(LOG_NOTICE, "database '%s': connected again after %.1f s", p->shown, (now_ms() - t0) / 1000.0);
	return 0;
}

static int lost(struct db *db)
{
	return PQstatus(PG(db)->c) == CONNECTION_BAD;
}

static int pg_fail(struct db *db, const char *sql, int cut)
{
	if (cut > 0 && strlen(sql) > (size_t)cut)
		return db_fail(db, "database '%s': %s (in: %.*s...)", pg_file(db), PG(db)->err, cut, sql);
	return db_fail(db, "database '%s': %s (in: %s)", pg_file(db), PG(db)->err, sql);
}

static int pg_in_transaction(struct db *db)
{
	PGTransactionStatusType t = PQtransactionStatus(PG(db)->c);

	return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || t == PQTRANS_ACTIVE;
}

/*
 * Run SQL with up to two text parameters (NULL: fewer) for the layer's own
 * use and give its result, or NULL (logged): db.c's helpers are for the
 * callers above; a backend keeps to libpq.
 */
static PGresult *query(struct db *db, const char *sql, const char *a, const char *b)
{
	const char *vals[2] = { a, b };
	int outside = !pg_in_transaction(db);
	PGresult *r = PQexecParams(PG(db)->c, sql, b ? 2 : a ? 1 : 0, NULL, vals, NULL, NULL, 0);

	if (PQresultStatus(r) != PGRES_TUPLES_OK && outside && lost(db)) {
		set_err(db, PQerrorMessage(PG(db)->c));
		PQclear(r);
		if (reconnect(db, PG(db)->err))
			return NULL;
		r = PQexecParams(PG(db)->c, sql, b ? 2 : a ? 1 : 0, NULL, vals, NULL, NULL, 0);
	}
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		set_err(db, PQresultErrorMessage(r)[0] ? PQresultErrorMessage(r) : PQerrorMessage(PG(db)->c));
		PQclear(r);
		db_fail(db, "database '%s': %s (in: %s)", PG(db)->shown, PG(db)->err, sql);
		return NULL;
	}
	return r;
}

/* The first column of the first row as an integer (0 without a row): 0 or -1 (logged). */
static int query_int(struct db *db, const char *sql, const char *a, const char *b, int64_t *out)
{
	PGresult *r = query(db, sql, a, b);

	*out = 0;
	if (!r)
		return -1;
	if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		*out = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return 0;
}

static int pg_exec(struct db *db, const char *sql)
{
	int outside = !pg_in_transaction(db);

	if (!raw(db, sql))
		return 0;
	if (outside && lost(db) && !reconnect(db, PG(db)->err) && !raw(db, sql))
		return 0;
	return pg_fail(db, sql, 80);
}

/*
 * BEGIN, then the one transaction lock of the database: sqlite's BEGIN
 * IMMEDIATE made every writing transaction wait for the one before, and
 * the callers (the lease of a pool's pairs, a job's cancel, a migration)
 * read and then write on that promise; several klabd on one server keep it
 * through this lock, which pg releases at COMMIT or ROLLBACK.
 */
static int pg_begin(struct db *db)
{
	char sql[96];

	if (pg_exec(db, "BEGIN"))
		return -1;
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_xact_lock(%d, 0)", kind_key("transaction"));
	if (raw(db, sql)) {
		pg_fail(db, sql, 0);
		raw(db, "ROLLBACK");
		return -1;
	}
	return 0;
}

static void pg_rollback(struct db *db)
{
	if (pg_in_transaction(db))
		raw(db, "ROLLBACK");
}

static int64_t pg_last_id(struct db *db)
{
	PGresult *r = PQexec(PG(db)->c, "SELECT lastval()");
	int64_t v = 0;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

static int pg_changes(struct db *db)
{
	return PG(db)->changes;
}

static int pg_has_table(struct db *db, const char *name)
{
	int64_t n = 0;

	if (query_int(db, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1",
		      name, NULL, &n))
		return -1;
	return n > 0;
}

/* The newest migration recorded (pg has no user_version; schema_migrations alone says). */
static int pg_version(struct db *db)
{
	int64_t v = 0;
	int has = pg_has_table(db, "schema_migrations");

	if (has <= 0)
		return has;
	if (query_int(db, "SELECT COALESCE(max(version), 0) FROM schema_migrations", NULL, NULL, &v))
		return -1;
	return (int)v;
}

static int pg_set_version(struct db *db, int version)
{
	return 0;
}

static int pg_tables(struct db *db, struct strvec *out)
{
	PGresult *r = query(db, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename",
			    NULL, NULL);

	if (!r)
		return -1;
	for (int i = 0; i < PQntuples(r); i++)
		strvec_push(out, PQgetvalue(r, i, 0));
	PQclear(r);
	return 0;
}

/* Length of the quoted string or comment at s (0 if none), so that translations skip them. */
static size_t skip_quoted(const char *s)
{
	const char *e;

	if (*s == '\'' || *s == '"') {
		for (e = s + 1; *e; e++)
			if (*e == *s) {
				if (e[1] != *s)
					return (size_t)(e - s + 1);
				e++;
			}
		return strlen(s);
	}
	if (s[0] == '-' && s[1] == '-')
		return strcspn(s, "\n");
	return 0;
}

static int word_at(const char *sql, const char *s, const char *w)
{
	size_t n = strlen(w);

	return !strncmp(s, w, n) && (s == sql || !(isalnum((unsigned char)s[-1]) || s[-1] == '_')) &&
	       !(isalnum((unsigned char)s[n]) || s[n] == '_');
}

/*
 * The migrations' column types as PostgreSQL says them: sqlite's INTEGER
 * is 64 bits and its INTEGER PRIMARY KEY numbers new rows; REAL is a double.
 */
static char *pg_ddl(const char *sql)
{
	static const char *const map[][2] = {
		{ "INTEGER PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" },
		{ "INTEGER", "BIGINT" },
		{ "REAL", "DOUBLE PRECISION" },
	};
	struct buf b = BUF_INIT;

	for (const char *s = sql; *s;) {
		size_t q = skip_quoted(s), i;

		if (q) {
			buf_add(&b, s, q);
			s += q;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(map); i++)
			if (word_at(sql, s, map[i][0])) {
				buf_addstr(&b, map[i][1]);
				s += strlen(map[i][0]);
				break;
			}
		if (i == ARRAY_SIZE(map))
			buf_add(&b, s++, 1);
	}
	return buf_detach(&b, NULL);
}

/* sqlite's ? and ?N placeholders as $N (a bare ? is one more than the highest before it); *n the highest. */
static char *placeholders(const char *sql, int *n)
{
	struct buf b = BUF_INIT;
	int max = 0;

	for (const char *s = sql; *s;) {
		size_t q = skip_quoted(s);

		if (q) {
			buf_add(&b, s, q);
			s += q;
		} else if (*s == '?') {
			int k;
			if (isdigit((unsigned char)s[1])) {
				k = (int)strtol(s + 1, (char **)&s, 10);
			} else {
				k = max + 1;
				s++;
			}
			if (k > max)
				max = k;
			buf_addf(&b, "$%d", k);
		} else {
			buf_add(&b, s++, 1);
		}
	}
	*n = max;
	return buf_detach(&b, NULL);
}

static int pg_migrate_lock(struct db *db, int take)
{
	char sql[96];

	snprintf(sql, sizeof(sql), "SELECT %s(%d, 0)", take ? "pg_advisory_lock" : "pg_advisory_unlock",
		 kind_key("migrate"));
	if (raw(db, sql))
		return take ? pg_fail(db, sql, 0) : 0;
	return 0;
}

/* ---- run locks: session advisory locks, dropped by the server when the session ends ---- */

static int pg_run_lock(struct db *db, const char *kind, int64_t id)
{
	int r = try_lock(db, kind_key(kind), id);

	if (r < 0 && lost(db) && !pg_in_transaction(db) && !reconnect(db, PG(db)->err))
		r = try_lock(db, kind_key(kind), id);
	if (r < 0)
		return db_fail(db, "database '%s': cannot take the run lock of %s %lld: %s", pg_file(db), kind,
			       (long long)id, PG(db)->err);
	if (r == 0)
		return 1;
	strvec_pushf(&PG(db)->locks, "%s %lld", kind, (long long)id);
	return 0;
}

static void pg_run_unlock(struct db *db, const char *kind, int64_t id)
{
	struct pg *p = PG(db);
	char sql[96], *k = xasprintf("%s %lld", kind, (long long)id);

	for (size_t i = 0; i < p->locks.n; i++)
		if (!strcmp(p->locks.v[i], k)) {
			snprintf(sql, sizeof(sql), "SELECT pg_advisory_unlock(%d, %d)", kind_key(kind), (int)id);
			raw(db, sql);
			p->locks.v[i][0] = '\0';
		}
	free(k);
}

static int pg_run_lock_held(struct db *db, const char *kind, int64_t id)
{
	char k1[16], k2[24];
	int64_t n = 0;

	snprintf(k1, sizeof(k1), "%d", kind_key(kind));
	snprintf(k2, sizeof(k2), "%d", (int)id);
	if (query_int(db, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
		      "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
		      "AND CAST(classid AS TEXT) = $1 AND CAST(objid AS TEXT) = $2 AND objsubid = 2", k1, k2, &n))
		return -1;
	return n > 0;
}

static int pg_open(struct db *db, const char *url)
{
	struct pg *p = xcalloc(1, sizeof(*p));

	strvec_init(&p->locks);
	p->url = xstrdup(url);
	p->shown = url_shown(url);
	db->be = p;
	if (connect_url(db))
		return error("[lab] db: cannot connect to %s: %s", p->shown, p->err);
	return 0;
}

static void pg_close(struct db *db)
{
	struct pg *p = PG(db);

	if (!p)
		return;
	PQfinish(p->c);
	free(p->url);
	free(p->shown);
	strvec_clear(&p->locks);
	free(p);
}

/* ---- statements: run at the first db_step, rows read from the whole result ---- */

static int pg_prepare(struct db_stmt *st, const char *sql)
{
	struct pst *s = xcalloc(1, sizeof(*s));

	s->orig = sql;
	s->sql = placeholders(sql, &s->nparams);
	if (s->nparams) {
		s->vals = xcalloc((size_t)s->nparams, sizeof(*s->vals));
		s->types = xcalloc((size_t)s->nparams, sizeof(*s->types));
	}
	s->row = -1;
	st->be = s;
	return 0;
}

static int set_param(struct db_stmt *st, int i, char *v, Oid type)
{
	struct pst *s = PST(st);

	if (i < 1 || i > s->nparams) {
		free(v);
		return db_fail(st->db, "database '%s': cannot bind parameter %d: column index out of range (in: %s)",
			       pg_file(st->db), i, s->orig);
	}
	free(s->vals[i - 1]);
	s->vals[i - 1] = v;
	s->types[i - 1] = type;
	return 0;
}

static int pg_bind_int64(struct db_stmt *st, int i, int64_t v)
{
	return set_param(st, i, xasprintf("%lld", (long long)v), OID_INT8);
}

/* NaN binds NULL, as sqlite stores it. */
static int pg_bind_double(struct db_stmt *st, int i, double v)
{
	if (isnan(v))
		return set_param(st, i, NULL, 0);
	return set_param(st, i, xasprintf("%.17g", v), OID_FLOAT8);
}

static int pg_bind_textn(struct db_stmt *st, int i, const char *str, size_t len)
{
	return set_param(st, i, xstrndup(str, len), 0);
}

static int pg_bind_null(struct db_stmt *st, int i)
{
	return set_param(st, i, NULL, 0);
}

static PGresult *run(struct db_stmt *st)
{
	struct pst *s = PST(st);

	return PQexecParams(PG(st->db)->c, s->sql, s->nparams, s->types, (const char *const *)s->vals, NULL, NULL,
			    0);
}

static int result_ok(PGresult *r)
{
	int t = PQresultStatus(r);

	return t == PGRES_TUPLES_OK || t == PGRES_COMMAND_OK;
}

/* Run the statement (at its first step): 0 or -1 (logged). */
static int execute(struct db_stmt *st)
{
	struct pst *s = PST(st);
	struct db *db = st->db;
	int outside = !pg_in_transaction(db);
	const char *tag;

	s->res = run(st);
	if (!result_ok(s->res) && outside && lost(db)) {
		set_err(db, PQerrorMessage(PG(db)->c));
		PQclear(s->res);
		s->res = NULL;
		if (reconnect(db, PG(db)->err))
			return -1;
		s->res = run(st);
	}
	if (!result_ok(s->res)) {
		set_err(db, PQresultErrorMessage(s->res)[0] ? PQresultErrorMessage(s->res) : PQerrorMessage(PG(db)->c));
		PQclear(s->res);
		s->res = NULL;
		return pg_fail(db, s->orig, 0);
	}
	tag = PQcmdStatus(s->res);
	if (starts_with(tag, "INSERT") || starts_with(tag, "UPDATE") || starts_with(tag, "DELETE"))
		PG(db)->changes = atoi(PQcmdTuples(s->res));
	s->rows = PQresultStatus(s->res) == PGRES_TUPLES_OK ? PQntuples(s->res) : 0;
	s->row = -1;
	return 0;
}

static int pg_step(struct db_stmt *st)
{
	struct pst *s = PST(st);

	if (!s->res && execute(st))
		return DB_ERROR;
	if (s->row + 1 < s->rows) {
		s->row++;
		return DB_ROW;
	}
	s->row = s->rows;
	return DB_DONE;
}

static void pg_reset(struct db_stmt *st)
{
	PQclear(PST(st)->res);
	PST(st)->res = NULL;
	PST(st)->row = -1;
}

static void pg_clear_bindings(struct db_stmt *st)
{
	struct pst *s = PST(st);

	for (int i = 0; i < s->nparams; i++) {
		free(s->vals[i]);
		s->vals[i] = NULL;
		s->types[i] = 0;
	}
}

static void pg_finalize(struct db_stmt *st)
{
	struct pst *s = PST(st);

	pg_reset(st);
	pg_clear_bindings(st);
	free(s->vals);
	free(s->types);
	free(s->sql);
	free(s);
}

/* ---- columns ---- */

static int have(struct db_stmt *st, int i)
{
	struct pst *s = PST(st);

	return s->res && s->row >= 0 && s->row < s->rows && i >= 0 && i < PQnfields(s->res);
}

static int pg_col_count(struct db_stmt *st)
{
	struct pst *s = PST(st);

	if (!s->res && execute(st))	/* the columns are known once it ran */
		return 0;
	return s->res ? PQnfields(s->res) : 0;
}

static const char *pg_col_name(struct db_stmt *st, int i)
{
	if (!PST(st)->res && execute(st))
		return NULL;
	return PQfname(PST(st)->res, i);
}

static enum db_type pg_col_type(struct db_stmt *st, int i)
{
	struct pst *s = PST(st);

	if (!have(st, i) || PQgetisnull(s->res, s->row, i))
		return DB_NULL;
	switch (PQftype(s->res, i)) {
	case OID_BOOL: case OID_INT2: case OID_INT4: case OID_INT8: case OID_OID:
		return DB_INTEGER;
	case OID_NUMERIC:
		/* sum() and avg() of integers: a whole number is an integer, as sqlite gives it */
		return strpbrk(PQgetvalue(s->res, s->row, i), ".eEN") ? DB_FLOAT : DB_INTEGER;
	case OID_FLOAT4: case OID_FLOAT8:
		return DB_FLOAT;
	default:
		return DB_TEXT;
	}
}

static const char *pg_col_text(struct db_stmt *st, int i)
{
	struct pst *s = PST(st);
	const char *v;

	if (!have(st, i) || PQgetisnull(s->res, s->row, i))
		return NULL;
	v = PQgetvalue(s->res, s->row, i);
	if (PQftype(s->res, i) == OID_BOOL)
		return *v == 't' ? "1" : "0";
	return v;
}

static double pg_col_double(struct db_stmt *st, int i)
{
	const char *v = pg_col_text(st, i);

	return v ? strtod(v, NULL) : 0;
}

static int64_t pg_col_int64(struct db_stmt *st, int i)
{
	const char *v = pg_col_text(st, i);

	if (!v)
		return 0;
	if (strpbrk(v, ".eEN")) {
		double d = strtod(v, NULL);
		return isnan(d) ? 0 : (int64_t)d;
	}
	return strtoll(v, NULL, 10);
}

const struct db_ops db_pg_ops = {
	.open = pg_open, .close = pg_close, .file = pg_file, .errmsg = pg_errmsg, .exec = pg_exec,
	.begin = pg_begin, .rollback = pg_rollback, .in_transaction = pg_in_transaction,
	.last_id = pg_last_id, .changes = pg_changes, .version = pg_version, .set_version = pg_set_version,
	.has_table = pg_has_table, .tables = pg_tables, .ddl = pg_ddl,
	.migrate_lock = pg_migrate_lock, .run_lock = pg_run_lock, .run_unlock = pg_run_unlock,
	.run_lock_held = pg_run_lock_held,
	.prepare = pg_prepare, .bind_int64 = pg_bind_int64, .bind_double = pg_bind_double,
	.bind_textn = pg_bind_textn, .bind_null = pg_bind_null, .step = pg_step, .reset = pg_reset,
	.clear_bindings = pg_clear_bindings, .finalize = pg_finalize,
	.col_count = pg_col_count, .col_name = pg_col_name, .col_type = pg_col_type,
	.col_int64 = pg_col_int64, .col_double = pg_col_double, .col_text = pg_col_text,
};
