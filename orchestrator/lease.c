/* lease.c: leasing dut + peer pairs to jobs atomically (BEGIN IMMEDIATE), with expiry and reclaim. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "lease.h"
#include "log.h"
#include "util.h"

static const char *fmt_clock(double t, char *b, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	localtime_r(&tt, &tm);
	strftime(b, len, "%Y-%m-%d %H:%M:%S", &tm);
	return b;
}

int lease_sync_machines(sqlite3 *db, const struct klab_config *cfg)
{
	for (size_t i = 0; i < cfg->n_machines; i++) {
		const struct conf_machine *m = &cfg->machines[i];
		if (db_run(db, "INSERT INTO machines (name, host, port, role, state, state_since) "
			   "VALUES (?, ?, ?, ?, 'free', ?) ON CONFLICT (name) DO UPDATE SET "
			   "host = excluded.host, port = excluded.port, role = excluded.role",
			   "ssisd", m->name, m->host, (int64_t)m->port,
			   m->role == ROLE_DUT ? "dut" : "peer", now_wall()))
			return -1;
	}
	return 0;
}

/* Inside a transaction: drop expired leases and leases of jobs that are not running. */
static int reclaim_locked(sqlite3 *db)
{
	sqlite3_stmt *st;
	int n = 0;

	st = db_prepare(db, "SELECT l.machine, l.job_id, l.expires, j.state FROM leases l "
			"LEFT JOIN jobs j ON j.id = l.job_id "
			"WHERE l.expires < ? OR j.state IS NULL OR j.state NOT IN ('queued', 'running')",
			"d", now_wall());
	if (!st)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		char tb[32];
		const char *state = (const char *)sqlite3_column_text(st, 3);
		double exp = sqlite3_column_double(st, 2);
		if (exp < now_wall())
			log_msg(LOG_NOTICE, "reclaiming machine '%s' from job %lld: its lease expired at %s",
				(const char *)sqlite3_column_text(st, 0), (long long)sqlite3_column_int64(st, 1),
				fmt_clock(exp, tb, sizeof(tb)));
		else
			log_msg(LOG_NOTICE, "reclaiming machine '%s' from job %lld, which is %s",
				(const char *)sqlite3_column_text(st, 0), (long long)sqlite3_column_int64(st, 1),
				state ? state : "gone");
		n++;
	}
	sqlite3_finalize(st);
	if (n && db_run(db, "DELETE FROM leases WHERE machine IN (SELECT l.machine FROM leases l "
			"LEFT JOIN jobs j ON j.id = l.job_id WHERE l.expires < ? OR j.state IS NULL "
			"OR j.state NOT IN ('queued', 'running'))", "d", now_wall()))
		return -1;
	return n;
}

int lease_reclaim(sqlite3 *db)
{
	int n;

	if (db_begin(db))
		return -1;
	n = reclaim_locked(db);
	if (n < 0 || db_commit(db)) {
		db_rollback(db);
		return -1;
	}
	return n;
}

/*
 * Inside a transaction: can JOB_ID use machine NAME? LEASE_OK (free or
 * already ours), LEASE_BUSY, LEASE_UNUSABLE, with the reason in why.
 */
static enum lease_status check_machine(sqlite3 *db, int64_t job_id, const char *name, struct buf *why)
{
	sqlite3_stmt *st;
	enum lease_status ret = LEASE_ERROR;
	char tb[32];

	st = db_prepare(db, "SELECT state, state_since, state_reason FROM machines WHERE name = ?", "s", name);
	if (!st)
		return LEASE_ERROR;
	switch (sqlite3_step(st)) {
	case SQLITE_ROW: {
		const char *state = (const char *)sqlite3_column_text(st, 0);
		if (strcmp(state, "free")) {
			const char *reason = (const char *)sqlite3_column_text(st, 2);
			if (why)
				buf_addf(why, "machine '%s' is %s since %s%s%s", name, state,
					 fmt_clock(sqlite3_column_double(st, 1), tb, sizeof(tb)),
					 reason ? ": " : "", reason ? reason : "");
			ret = LEASE_UNUSABLE;
			goto out;
		}
		break;
	}
	case SQLITE_DONE:
		if (why)
			buf_addf(why, "machine '%s' is not in the config", name);
		ret = LEASE_UNUSABLE;
		goto out;
	default:
		error("cannot read machine '%s': %s", name, db_errmsg(db));
		goto out;
	}
	sqlite3_finalize(st);
	st = db_prepare(db, "SELECT job_id, expires FROM leases WHERE machine = ?", "s", name);
	if (!st)
		return LEASE_ERROR;
	ret = LEASE_OK;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) != job_id) {
		if (why)
			buf_addf(why, "machine '%s' is leased to job %lld until %s", name,
				 (long long)sqlite3_column_int64(st, 0),
				 fmt_clock(sqlite3_column_double(st, 1), tb, sizeof(tb)));
		ret = LEASE_BUSY;
	}
out:
	sqlite3_finalize(st);
	return ret;
}

enum lease_status lease_acquire(sqlite3 *db, int64_t job_id, const char *dut, const char *peer,
				int ttl_s, struct buf *why)
{
	enum lease_status ret = LEASE_ERROR, s;
	const char *names[2] = { dut, peer };
	double now = now_wall();

	if (!dut || !peer || !strcmp(dut, peer)) {
		if (why)
			buf_addf(why, "a job needs two different machines (dut and peer), got '%s' and '%s'",
				 dut ? dut : "", peer ? peer : "");
		return LEASE_UNUSABLE;
	}
	if (db_begin(db))
		return LEASE_ERROR;
	if (reclaim_locked(db) < 0)
		goto out;
	for (int i = 0; i < 2; i++) {
		s = check_machine(db, job_id, names[i], why);
		if (s != LEASE_OK) {
			ret = s;
			goto out;
		}
	}
	for (int i = 0; i < 2; i++)
		if (db_run(db, "INSERT INTO leases (machine, job_id, acquired, expires) VALUES (?, ?, ?, ?) "
			   "ON CONFLICT (machine) DO UPDATE SET expires = excluded.expires",
			   "sidd", names[i], job_id, now, now + ttl_s))
			goto out;
	if (db_run(db, "UPDATE jobs SET dut = ?, peer = ? WHERE id = ?", "ssi", dut, peer, job_id))
		goto out;
	if (db_commit(db))
		goto out;
	return LEASE_OK;
out:
	db_rollback(db);
	return ret;
}

enum lease_status lease_acquire_pool(sqlite3 *db, const struct klab_config *cfg, int64_t job_id,
				     const char *pool, int ttl_s, const char **dut, const char **peer,
				     struct buf *why)
{
	enum lease_status best = LEASE_UNUSABLE;
	struct buf reasons = BUF_INIT;
	int pairs = 0;

	for (size_t i = 0; i < cfg->n_machines; i++) {
		const struct conf_machine *m = &cfg->machines[i];
		struct buf w = BUF_INIT;
		enum lease_status s;

		if (m->role != ROLE_DUT || !m->pool || strcmp(m->pool, pool) || !m->peer)
			continue;
		pairs++;
		s = lease_acquire(db, job_id, m->name, m->peer, ttl_s, &w);
		if (s == LEASE_OK || s == LEASE_ERROR) {
			if (s == LEASE_OK) {
				*dut = m->name;
				*peer = m->peer;
			}
			buf_release(&w);
			buf_release(&reasons);
			return s;
		}
		if (s == LEASE_BUSY)
			best = LEASE_BUSY;
		buf_addf(&reasons, "%s%s", reasons.len ? "; " : "", w.buf);
		buf_release(&w);
	}
	if (why) {
		if (!pairs)
			buf_addf(why, "pool '%s' has no dut with a peer", pool);
		else
			buf_addf(why, "no free pair in pool '%s': %s", pool, reasons.buf);
	}
	buf_release(&reasons);
	return best;
}

int lease_renew(sqlite3 *db, int64_t job_id, int ttl_s)
{
	if (db_run(db, "UPDATE leases SET expires = ? WHERE job_id = ?", "di", now_wall() + ttl_s, job_id))
		return -1;
	if (sqlite3_changes(db) == 0)
		return error("job %lld holds no machine lease any more", (long long)job_id);
	return 0;
}

int lease_release(sqlite3 *db, int64_t job_id)
{
	return db_run(db, "DELETE FROM leases WHERE job_id = ?", "i", job_id);
}

int lease_free_pairs(sqlite3 *db, const struct klab_config *cfg)
{
	int n = 0;

	for (size_t i = 0; i < cfg->n_machines; i++) {
		const struct conf_machine *m = &cfg->machines[i];
		int64_t busy = 0;
		if (m->role != ROLE_DUT || !m->peer)
			continue;
		if (db_get_int(db, &busy, "SELECT count(*) FROM machines m WHERE m.name IN (?, ?) AND "
			       "(m.state != 'free' OR EXISTS (SELECT 1 FROM leases l JOIN jobs j ON j.id = l.job_id "
			       "WHERE l.machine = m.name AND l.expires >= ? AND j.state IN ('queued', 'running')))",
			       "ssd", m->name, m->peer, now_wall()) < 0)
			return -1;
		if (busy == 0)
			n++;
	}
	return n;
}
