/* machines.c: the only SQL on `machines` and `leases` (lab/lease.c and lab/deploy.c decide, this stores). */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/machines.h"
#include "util.h"

void machine_row_release(struct machine_row *r)
{
	free(r->name);
	free(r->host);
	free(r->role);
	free(r->state);
	free(r->state_reason);
	free(r->last_kernel);
	free(r->last_build_id);
	memset(r, 0, sizeof(*r));
}

int machines_put_config(struct db *db, const char *name, const char *host, int port, const char *role,
			const char *clock, double now)
{
	return db_run(db, "INSERT INTO machines (name, host, port, role, state, state_since, clock) "
		      "VALUES (?, ?, ?, ?, 'free', ?, ?) ON CONFLICT (name) DO UPDATE SET "
		      "host = excluded.host, port = excluded.port, role = excluded.role, clock = excluded.clock",
		      "ssisds", name, host, (int64_t)port, role, now, clock);
}

int machines_put_state(struct db *db, const char *name, const char *state, double now, const char *reason)
{
	return db_run(db, "INSERT INTO machines (name, state, state_since, state_reason) VALUES (?, ?, ?, ?) "
		      "ON CONFLICT (name) DO UPDATE SET state = excluded.state, "
		      "state_since = excluded.state_since, state_reason = excluded.state_reason",
		      "ssds", name, state, now, reason) < 0 ? -1 : 0;
}

int machines_put_kernel(struct db *db, const char *name, const char *release, const char *build_id, double now)
{
	if (db_run(db, "INSERT INTO machines (name) VALUES (?) ON CONFLICT (name) DO NOTHING", "s", name) < 0 ||
	    db_run(db, "UPDATE machines SET last_kernel = ?, last_build_id = ?, last_seen = ? WHERE name = ?",
		   "ssds", release, build_id, now, name) < 0)
		return -1;
	return 0;
}

int machines_put_seen(struct db *db, const char *name, const char *release, double now)
{
	return db_run(db, "UPDATE machines SET last_kernel = ?, last_seen = ? WHERE name = ?", "sds", release,
		      now, name) < 0 ? -1 : 0;
}

int machines_get(struct db *db, const char *name, struct machine_row *r)
{
	struct db_stmt *st;
	int rc;

	memset(r, 0, sizeof(*r));
	st = db_prepare(db, "SELECT m.state, m.state_since, m.state_reason, m.last_kernel, m.last_build_id, "
			"m.last_seen, l.job_id, l.expires FROM machines m LEFT JOIN leases l ON l.machine = m.name "
			"WHERE m.name = ?", "s", name);
	if (!st)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		r->name = xstrdup(name);
		r->state = db_col_strdup(st, 0);
		r->state_since = db_col_double(st, 1);
		r->state_reason = db_col_strdup(st, 2);
		r->last_kernel = db_col_strdup(st, 3);
		r->last_build_id = db_col_strdup(st, 4);
		r->last_seen = db_col_double(st, 5);
		if (!db_col_null(st, 6)) {
			r->leased = 1;
			r->lease_job = db_col_int64(st, 6);
			r->lease_expires = db_col_double(st, 7);
		}
	}
	db_finalize(st);
	if (rc != DB_ROW && rc != DB_DONE)
		return error("cannot read machine '%s': %s", name, db_errmsg(db));
	return rc == DB_ROW;
}

int machines_list(struct db *db, struct machine_row **out, size_t *n)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT m.name, m.host, m.role, m.state, m.state_reason, m.last_kernel, m.last_seen, l.job_id "
		"FROM machines m LEFT JOIN leases l ON l.machine = m.name ORDER BY m.name", "");
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct machine_row *m;

		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		m = &(*out)[(*n)++];
		memset(m, 0, sizeof(*m));
		m->name = db_col_strdup(st, 0);
		m->host = db_col_strdup(st, 1);
		m->role = db_col_strdup(st, 2);
		m->state = db_col_strdup(st, 3);
		m->state_reason = db_col_strdup(st, 4);
		m->last_kernel = db_col_strdup(st, 5);
		m->last_seen = db_col_num(st, 6);
		m->leased = !db_col_null(st, 7);
		m->lease_job = db_col_int64(st, 7);
	}
	db_finalize(st);
	return 0;
}

void machines_list_free(struct machine_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		machine_row_release(&v[i]);
	free(v);
}

int machines_count_busy(struct db *db, const char *a, const char *b, double now, int64_t *busy)
{
	*busy = 0;
	return db_get_int(db, busy, "SELECT count(*) FROM machines m WHERE m.name IN (?, ?) AND "
			  "(m.state != 'free' OR EXISTS (SELECT 1 FROM leases l JOIN jobs j ON j.id = l.job_id "
			  "WHERE l.machine = m.name AND l.expires >= ? AND j.state IN ('queued', 'running')))",
			  "ssd", a, b, now) < 0 ? -1 : 0;
}

/* ---- leases */

int leases_stale(struct db *db, double now, struct lease_row **out, size_t *n)
{
	struct db_stmt *st = db_prepare(db, "SELECT l.machine, l.job_id, l.expires, j.state FROM leases l "
					"LEFT JOIN jobs j ON j.id = l.job_id "
					"WHERE l.expires < ? OR j.state IS NULL OR j.state NOT IN ('queued', 'running')",
					"d", now);
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		struct lease_row *l;

		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 4;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		l = &(*out)[(*n)++];
		l->machine = db_col_strdup(st, 0);
		l->job_id = db_col_int64(st, 1);
		l->expires = db_col_double(st, 2);
		l->job_state = db_col_strdup(st, 3);
	}
	db_finalize(st);
	return 0;
}

void leases_free(struct lease_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].machine);
		free(v[i].job_state);
	}
	free(v);
}

int leases_delete_stale(struct db *db, double now)
{
	return db_run(db, "DELETE FROM leases WHERE machine IN (SELECT l.machine FROM leases l "
		      "LEFT JOIN jobs j ON j.id = l.job_id WHERE l.expires < ? OR j.state IS NULL "
		      "OR j.state NOT IN ('queued', 'running'))", "d", now);
}

int leases_get(struct db *db, const char *machine, int64_t *job_id, double *expires)
{
	struct db_stmt *st = db_prepare(db, "SELECT job_id, expires FROM leases WHERE machine = ?", "s", machine);
	int found;

	if (!st)
		return -1;
	found = db_step(st) == DB_ROW;
	if (found) {
		*job_id = db_col_int64(st, 0);
		*expires = db_col_double(st, 1);
	}
	db_finalize(st);
	return found;
}

int leases_put(struct db *db, const char *machine, int64_t job_id, double now, double expires)
{
	return db_run(db, "INSERT INTO leases (machine, job_id, acquired, expires) VALUES (?, ?, ?, ?) "
		      "ON CONFLICT (machine) DO UPDATE SET expires = excluded.expires",
		      "sidd", machine, job_id, now, expires);
}

int leases_first_of_job(struct db *db, int64_t job_id, char **machine)
{
	*machine = NULL;
	return db_get_str(db, machine, "SELECT machine FROM leases WHERE job_id = ? ORDER BY machine LIMIT 1", "i",
			  job_id) < 0 ? -1 : 0;
}

int leases_count_job(struct db *db, int64_t job_id, int64_t *n)
{
	*n = 0;
	return db_get_int(db, n, "SELECT count(*) FROM leases WHERE job_id = ?", "i", job_id) < 0 ? -1 : 0;
}

int leases_renew(struct db *db, int64_t job_id, double expires)
{
	if (db_run(db, "UPDATE leases SET expires = ? WHERE job_id = ?", "di", expires, job_id))
		return -1;
	return db_changes(db);
}

int leases_delete_job(struct db *db, int64_t job_id)
{
	return db_run(db, "DELETE FROM leases WHERE job_id = ?", "i", job_id);
}

int leases_delete_machine(struct db *db, const char *machine)
{
	return db_run(db, "DELETE FROM leases WHERE machine = ?", "s", machine) < 0 ? -1 : 0;
}

int leases_held_by_others(struct db *db, int64_t id, double now, int64_t *n)
{
	*n = 0;
	return db_get_int(db, n, "SELECT count(*) FROM leases l JOIN jobs j ON j.id = ? JOIN jobs o ON o.id = l.job_id "
			  "WHERE l.machine IN (j.dut, j.peer) AND l.job_id != j.id AND l.expires >= ? "
			  "AND o.state IN ('queued', 'running')", "id", id, now) < 0 ? -1 : 0;
}
