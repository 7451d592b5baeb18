/* lease.c: leasing dut + peer pairs to jobs atomically (BEGIN IMMEDIATE), with expiry and reclaim. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/db.h"
#include "store/jobs.h"
#include "store/machines.h"
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
		if (machines_put_config(db, m->name, m->host, m->port, m->role == ROLE_DUT ? "dut" : "peer",
					m->clock ? m->clock : "real", now_wall()))
			return -1;
	}
	return 0;
}

/* Inside a transaction: drop expired leases and leases of jobs that are not running. */
static int reclaim_locked(struct db *db)
{
	struct lease_row *l;
	size_t n;

	if (leases_stale(db, now_wall(), &l, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		char tb[32];
		if (l[i].expires < now_wall())
			log_msg(LOG_NOTICE, "reclaiming machine '%s' from job %lld: its lease expired at %s",
				l[i].machine, (long long)l[i].job_id, fmt_clock(l[i].expires, tb, sizeof(tb)));
		else
			log_msg(LOG_NOTICE, "reclaiming machine '%s' from job %lld, which is %s",
				l[i].machine, (long long)l[i].job_id, l[i].job_state ? l[i].job_state : "gone");
	}
	leases_free(l, n);
	if (n && leases_delete_stale(db, now_wall()))
		return -1;
	return (int)n;
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
	struct machine_row m;
	enum lease_status ret = LEASE_ERROR;
	int64_t holder = 0;
	double expires = 0;
	char tb[32];
	int found = machines_get(db, name, &m);

	if (found < 0)
		return LEASE_ERROR;
	if (!found) {
		if (why)
			buf_addf(why, "machine '%s' is not in the config", name);
		return LEASE_UNUSABLE;
	}
	if (m.state && strcmp(m.state, "free")) {
		if (why)
			buf_addf(why, "machine '%s' is %s since %s%s%s", name, m.state,
				 fmt_clock(m.state_since, tb, sizeof(tb)),
				 m.state_reason ? ": " : "", m.state_reason ? m.state_reason : "");
		ret = LEASE_UNUSABLE;
		goto out;
	}
	found = leases_get(db, name, &holder, &expires);
	if (found < 0)
		goto out;
	ret = LEASE_OK;
	if (found && holder != job_id) {
		if (why)
			buf_addf(why, "machine '%s' is leased to job %lld until %s", name, (long long)holder,
				 fmt_clock(expires, tb, sizeof(tb)));
		ret = LEASE_BUSY;
	}
out:
	machine_row_release(&m);
	return ret;
}

/*
 * Inside a transaction: lease DUT and PEER to JOB_ID (both usable and free,
 * or ours) or nothing. MAIN: they become the job's pair (jobs.dut/peer);
 * else a pair more beside it (lease_acquire_more()).
 */
static enum lease_status acquire_pair(struct db *db, int64_t job_id, const char *dut, const char *peer,
				      int ttl_s, int main, struct buf *why)
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
		if (leases_put(db, names[i], job_id, now, now + ttl_s))
			return LEASE_ERROR;
	if (main && jobs_set_machines(db, job_id, dut, peer))
		return LEASE_ERROR;
	return LEASE_OK;
}

static enum lease_status acquire(struct db *db, int64_t job_id, const char *dut, const char *peer,
				 int ttl_s, int main, struct buf *why)
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
	ret = acquire_pair(db, job_id, dut, peer, ttl_s, main, why);
	if (ret == LEASE_OK && db_commit(db) == 0)
		return LEASE_OK;
	if (ret == LEASE_OK)
		ret = LEASE_ERROR;
out:
	db_rollback(db);
	return ret;
}

enum lease_status lease_acquire(struct db *db, int64_t job_id, const char *dut, const char *peer,
				int ttl_s, struct buf *why)
{
	return acquire(db, job_id, dut, peer, ttl_s, 1, why);
}

enum lease_status lease_acquire_extra(struct db *db, int64_t job_id, const char *dut, const char *peer,
				      int ttl_s, struct buf *why)
{
	return acquire(db, job_id, dut, peer, ttl_s, 0, why);
}

/* 1 when machine NAME is leased to JOB_ID now, 0 when not, -1 on an error. */
static int leased_to(struct db *db, const char *name, int64_t job_id)
{
	int64_t holder = 0;
	double expires = 0;
	int found = leases_get(db, name, &holder, &expires);

	return found < 0 ? -1 : found && holder == job_id;
}

int lease_acquire_more(struct db *db, const struct klab_config *cfg, int64_t job_id, const char *pool,
		       const char *main_dut, int want, int ttl_s, const struct conf_machine **duts)
{
	int n = 0;

	if (want <= 0)
		return 0;
	if (db_begin(db))
		return -1;
	if (reclaim_locked(db) < 0)
		goto fail;
	/* pass 0: pairs the job holds already (a job run again after a crash); pass 1: free ones */
	for (int pass = 0; pass < 2 && n < want; pass++) {
		for (size_t i = 0; i < cfg->n_machines && n < want; i++) {
			const struct conf_machine *m = &cfg->machines[i];
			int ours, taken = 0;
			enum lease_status s;

			if (m->role != ROLE_DUT || !m->pool || strcmp(m->pool, pool) || !m->peer ||
			    !strcmp(m->name, main_dut))
				continue;
			for (int k = 0; k < n; k++)
				taken |= duts[k] == m;
			if (taken)
				continue;
			ours = leased_to(db, m->name, job_id);
			if (ours < 0)
				goto fail;
			if (ours != (pass == 0))
				continue;
			s = acquire_pair(db, job_id, m->name, m->peer, ttl_s, 0, NULL);
			if (s == LEASE_ERROR)
				goto fail;
			if (s == LEASE_OK)
				duts[n++] = m;
		}
	}
	if (db_commit(db))
		goto fail;
	return n;
fail:
	db_rollback(db);
	return -1;
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
	    leases_first_of_job(db, job_id, &ours))
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
			s = acquire_pair(db, job_id, m->name, m->peer, ttl_s, 1, &w);
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
	int n = leases_renew(db, job_id, now_wall() + ttl_s);

	if (n < 0)
		return -1;
	if (n == 0)
		return error("job %lld holds no machine lease any more", (long long)job_id);
	return 0;
}

int lease_release(struct db *db, int64_t job_id)
{
	return leases_delete_job(db, job_id);
}

int lease_free_pairs(struct db *db, const struct klab_config *cfg)
{
	int n = 0;

	for (size_t i = 0; i < cfg->n_machines; i++) {
		const struct conf_machine *m = &cfg->machines[i];
		int64_t busy = 0;
		if (m->role != ROLE_DUT || !m->peer)
			continue;
		if (machines_count_busy(db, m->name, m->peer, now_wall(), &busy))
			return -1;
		if (busy == 0)
			n++;
	}
	return n;
}
