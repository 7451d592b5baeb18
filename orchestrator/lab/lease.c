/* lease.c: leasing dut + peer pairs to jobs atomically (BEGIN IMMEDIATE), with expiry and reclaim. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/db.h"
#include "lab/lease.h"
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

int lease_sync_machines(struct db *db, const struct klab_config *cfg)
{
	for (size_t i = 0; i < cfg->n_machines; i++) {
		const struct conf_machine *m = &cfg->machines[i];
		if (db_run(db, "INSERT INTO machines (name, host, port, role, state, state_since, clock) "
			   "VALUES (?, ?, ?, ?, 'free', ?, ?) ON CONFLICT (name) DO UPDATE SET "
			   "host = excluded.host, port = excluded.port, role = excluded.role, clock = excluded.clock",
			   "ssisds", m->name, m->host, (int64_t)m->port,
			   m->role == ROLE_DUT ? "dut" : "peer", now_wall(), m->clock ? m->clock : "real"))
			return -1;
	}
	return 0;
}

/* Inside a transaction: drop expired leases and leases of jobs that are not running. */
static int reclaim_locked(struct db *db)
{
	struct db_stmt *st;
	int n = 0;

	st = db_prepare(db, "SELECT l.machine, l.job_id, l.expires, j.state FROM leases l "
			"LEFT JOIN jobs j ON j.id = l.job_id "
			"WHERE l.expires < ? OR j.state IS NULL OR j.state NOT IN ('queued', 'running')",
			"d", now_wall());
	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		char tb[32];
		const char *state = db_col_text(st, 3);
		double exp = db_col_double(st, 2);
		if (exp < now_wall())
			log_msg(LOG_NOTICE, "reclaiming machine '%s' from job %lld: its lease expired at %s",
				db_col_text(st, 0), (long long)db_col_int64(st, 1),
				fmt_clock(exp, tb, sizeof(tb)));
		else
			log_msg(LOG_NOTICE, "reclaiming machine '%s' from job %lld, which is %s",
				db_col_text(st, 0), (long long)db_col_int64(st, 1),
				state ? state : "gone");
		n++;
	}
	db_finalize(st);
	if (n && db_run(db, "DELETE FROM leases WHERE machine IN (SELECT l.machine FROM leases l "
			"LEFT JOIN jobs j ON j.id = l.job_id WHERE l.expires < ? OR j.state IS NULL "
			"OR j.state NOT IN ('queued', 'running'))", "d", now_wall()))
		return -1;
	return n;
}

int lease_reclaim(struct db *db)
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
static enum lease_status check_machine(struct db *db, int64_t job_id, const char *name, struct buf *why)
{
	struct db_stmt *st;
	enum lease_status ret = LEASE_ERROR;
	char tb[32];

	st = db_prepare(db, "SELECT state, state_since, state_reason FROM machines WHERE name = ?", "s", name);
	if (!st)
		return LEASE_ERROR;
	switch (db_step(st)) {
	case DB_ROW: {
		const char *state = db_col_text(st, 0);
		if (strcmp(state, "free")) {
			const char *reason = db_col_text(st, 2);
			if (why)
				buf_addf(why, "machine '%s' is %s since %s%s%s", name, state,
					 fmt_clock(db_col_double(st, 1), tb, sizeof(tb)),
					 reason ? ": " : "", reason ? reason : "");
			ret = LEASE_UNUSABLE;
			goto out;
		}
		break;
	}
	case DB_DONE:
		if (why)
			buf_addf(why, "machine '%s' is not in the config", name);
		ret = LEASE_UNUSABLE;
		goto out;
	default:
		error("cannot read machine '%s': %s", name, db_errmsg(db));
		goto out;
	}
	db_finalize(st);
	st = db_prepare(db, "SELECT job_id, expires FROM leases WHERE machine = ?", "s", name);
	if (!st)
		return LEASE_ERROR;
	ret = LEASE_OK;
	if (db_step(st) == DB_ROW && db_col_int64(st, 0) != job_id) {
		if (why)
			buf_addf(why, "machine '%s' is leased to job %lld until %s", name,
				 (long long)db_col_int64(st, 0),
				 fmt_clock(db_col_double(st, 1), tb, sizeof(tb)));
		ret = LEASE_BUSY;
	}
out:
	db_finalize(st);
	return ret;
}

/* Inside a transaction: lease DUT and PEER to JOB_ID (both usable and free, or ours) or nothing. */
static enum lease_status acquire_locked(struct db *db, int64_t job_id, const char *dut, const char *peer,
					int ttl_s, struct buf *why)
{
	const char *names[2] = { dut, peer };
	double now = now_wall();
	enum lease_status s;

	for (int i = 0; i < 2; i++) {
		s = check_machine(db, job_id, names[i], why);
		if (s != LEASE_OK)
			return s;
	}
	for (int i = 0; i < 2; i++)
		if (db_run(db, "INSERT INTO leases (machine, job_id, acquired, expires) VALUES (?, ?, ?, ?) "
			   "ON CONFLICT (machine) DO UPDATE SET expires = excluded.expires",
			   "sidd", names[i], job_id, now, now + ttl_s))
			return LEASE_ERROR;
	if (db_run(db, "UPDATE jobs SET dut = ?, peer = ? WHERE id = ?", "ssi", dut, peer, job_id))
		return LEASE_ERROR;
	return LEASE_OK;
}

enum lease_status lease_acquire(struct db *db, int64_t job_id, const char *dut, const char *peer,
				int ttl_s, struct buf *why)
{
	enum lease_status ret = LEASE_ERROR;

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
	ret = acquire_locked(db, job_id, dut, peer, ttl_s, why);
	if (ret == LEASE_OK && db_commit(db) == 0)
		return LEASE_OK;
	if (ret == LEASE_OK)
		ret = LEASE_ERROR;
out:
	db_rollback(db);
	return ret;
}

/*
 * One BEGIN IMMEDIATE transaction for the whole pool, not one per pair:
 * under contention (64 jobs starting at once) a job scans every pair
 * while it holds the write lock, so no two jobs can pick the same free
 * pair, and a scan costs one lock wait, not one a pair. A pair already
 * leased to this job (the lease step ran again after a crash) is taken
 * before any other, so a job never holds two pairs.
 */
enum lease_status lease_acquire_pool(struct db *db, const struct klab_config *cfg, int64_t job_id,
				     const char *pool, int ttl_s, const char **dut, const char **peer,
				     struct buf *why)
{
	enum lease_status best = LEASE_UNUSABLE, s = LEASE_ERROR;
	struct buf reasons = BUF_INIT;
	char *ours = NULL;
	int pairs = 0;

	if (db_begin(db))
		return LEASE_ERROR;
	if (reclaim_locked(db) < 0 ||
	    db_get_str(db, &ours, "SELECT machine FROM leases WHERE job_id = ? ORDER BY machine LIMIT 1", "i",
		       job_id) < 0)
		goto fail;
	for (int pass = ours ? 0 : 1; pass < 2; pass++) {
		for (size_t i = 0; i < cfg->n_machines; i++) {
			const struct conf_machine *m = &cfg->machines[i];
			struct buf w = BUF_INIT;

			if (m->role != ROLE_DUT || !m->pool || strcmp(m->pool, pool) || !m->peer)
				continue;
			if (pass == 0 && strcmp(m->name, ours) && strcmp(m->peer, ours))
				continue;
			pairs += pass;
			s = acquire_locked(db, job_id, m->name, m->peer, ttl_s, &w);
			if (s == LEASE_OK) {
				buf_release(&w);
				if (db_commit(db))
					goto fail;
				*dut = m->name;
				*peer = m->peer;
				free(ours);
				buf_release(&reasons);
				return LEASE_OK;
			}
			if (s == LEASE_ERROR) {
				buf_release(&w);
				goto fail;
			}
			if (s == LEASE_BUSY)
				best = LEASE_BUSY;
			if (pass)
				buf_addf(&reasons, "%s%s", reasons.len ? "; " : "", w.buf);
			buf_release(&w);
		}
	}
	db_rollback(db);
	if (why) {
		if (!pairs)
			buf_addf(why, "pool '%s' has no dut with a peer", pool);
		else
			buf_addf(why, "no free pair in pool '%s': %s", pool, reasons.buf);
	}
	free(ours);
	buf_release(&reasons);
	return best;
fail:
	db_rollback(db);
	free(ours);
	buf_release(&reasons);
	return LEASE_ERROR;
}

int lease_renew(struct db *db, int64_t job_id, int ttl_s)
{
	if (db_run(db, "UPDATE leases SET expires = ? WHERE job_id = ?", "di", now_wall() + ttl_s, job_id))
		return -1;
	if (db_changes(db) == 0)
		return error("job %lld holds no machine lease any more", (long long)job_id);
	return 0;
}

int lease_release(struct db *db, int64_t job_id)
{
	return db_run(db, "DELETE FROM leases WHERE job_id = ?", "i", job_id);
}

int lease_free_pairs(struct db *db, const struct klab_config *cfg)
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
