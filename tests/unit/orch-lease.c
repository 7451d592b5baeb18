/* orch-lease.c: machine leases on a real sqlite file: one job per machine, expiry, broken machines, two processes. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/db.h"
#include "lab/lease.h"
#include "log.h"
#include "tap.h"

static int64_t new_job(struct db *db, const char *state)
{
	db_run(db, "INSERT INTO jobs (name, state, spec, created) VALUES ('t', ?, '{}', ?)", "sd",
	       state, now_wall());
	return db_last_id(db);
}

static struct conf_machine mach(const char *name, enum machine_role role, const char *peer, const char *pool)
{
	struct conf_machine m;
	memset(&m, 0, sizeof(m));
	m.name = (char *)name;
	m.host = (char *)"198.18.255.2";
	m.port = 22;
	m.role = role;
	m.peer = (char *)peer;
	m.pool = (char *)pool;
	return m;
}

/* A config of PAIRS pairs dutK/peerK (K from 1) in pool p, in MS (2 * PAIRS entries). */
static void pool_config(struct klab_config *cfg, struct conf_machine *ms, int pairs)
{
	static const char *const duts[] = { "dut1", "dut2", "dut3" }, *const peers[] = { "peer1", "peer2", "peer3" };

	for (int i = 0; i < pairs; i++) {
		ms[2 * i] = mach(duts[i], ROLE_DUT, peers[i], "p");
		ms[2 * i + 1] = mach(peers[i], ROLE_PEER, NULL, "p");
	}
	memset(cfg, 0, sizeof(*cfg));
	cfg->machines = ms;
	cfg->n_machines = 2 * (size_t)pairs;
}

int main(void)
{
	char *path = NULL;
	struct db *db;
	struct buf why = BUF_INIT;
	struct conf_machine ms[4];
	struct klab_config cfg;
	const char *dut = NULL, *peer = NULL;

	log_init("orch-lease", 0, LOG_ERR);
	free(path);
	path = tap_db_path("lease.db");
	if (!ok(!db_open(path, &db), "open database"))
		return done_testing();

	pool_config(&cfg, ms, 2);
	ok(!lease_sync_machines(db, &cfg), "machines synced");
	ok(!lease_sync_machines(db, &cfg), "machines synced twice");
	is_int(lease_free_pairs(db, &cfg), 2, "two free pairs");

	int64_t j1 = new_job(db, "running"), j2 = new_job(db, "running"), j3 = new_job(db, "running");
	is_int(lease_acquire(db, j1, "dut1", "peer1", 60, NULL), LEASE_OK, "job 1 leases dut1+peer1");
	is_int(lease_acquire(db, j1, "dut1", "peer1", 60, NULL), LEASE_OK, "job 1 renews by acquiring again");
	is_int(lease_free_pairs(db, &cfg), 1, "one free pair left");
	buf_reset(&why);
	is_int(lease_acquire(db, j2, "dut1", "peer2", 60, &why), LEASE_BUSY, "job 2 cannot take dut1");
	ok(strstr(why.buf, "machine 'dut1' is leased to job") != NULL, "reason names the machine: %s", why.buf);
	{
		int64_t n = -1;
		db_get_int(db, &n, "SELECT count(*) FROM leases WHERE job_id = ?", "i", j2);
		is_int(n, 0, "both or neither: peer2 was not leased to job 2");
	}
	is_int(lease_acquire(db, j2, "dut1", "dut1", 60, NULL), LEASE_UNUSABLE, "same machine twice refused");
	is_int(lease_acquire_pool(db, &cfg, j2, "p", 60, &dut, &peer, NULL), LEASE_OK, "job 2 gets a pair from the pool");
	is_str(dut, "dut2", "... dut2");
	is_str(peer, "peer2", "... peer2");
	buf_reset(&why);
	is_int(lease_acquire_pool(db, &cfg, j3, "p", 60, &dut, &peer, &why), LEASE_BUSY, "job 3 waits: pool full");
	diag("%s", why.buf);

	ok(!lease_renew(db, j1, 120), "renew");
	ok(!lease_release(db, j1), "release job 1");
	ok(lease_renew(db, j1, 120) == -1, "renew without a lease fails");
	is_int(lease_acquire(db, j3, "dut1", "peer1", 60, NULL), LEASE_OK, "job 3 takes the released pair");

	/* Expiry: job 2's lease is in the past, job 4 reclaims it. */
	db_run(db, "UPDATE leases SET expires = ? WHERE job_id = ?", "di", now_wall() - 5, j2);
	int64_t j4 = new_job(db, "running");
	is_int(lease_acquire(db, j4, "dut2", "peer2", 60, NULL), LEASE_OK, "an expired lease is reclaimed");

	/* A finished job's lease is reclaimed at once. */
	db_run(db, "UPDATE jobs SET state = 'failed' WHERE id = ?", "i", j4);
	is_int(lease_reclaim(db), 2, "leases of a failed job are reclaimed");

	/* Broken and drained machines are not leased. */
	db_run(db, "UPDATE machines SET state = 'broken', state_since = ?, state_reason = 'did not come back' "
	       "WHERE name = 'dut2'", "d", now_wall());
	buf_reset(&why);
	int64_t j5 = new_job(db, "running");
	is_int(lease_acquire(db, j5, "dut2", "peer2", 60, &why), LEASE_UNUSABLE, "broken machine refused");
	ok(strstr(why.buf, "machine 'dut2' is broken since") && strstr(why.buf, "did not come back"),
	   "reason: %s", why.buf);
	buf_reset(&why);
	is_int(lease_acquire(db, j5, "dut9", "peer2", 60, &why), LEASE_UNUSABLE, "unknown machine refused");
	ok(strstr(why.buf, "'dut9' is not in the config") != NULL, "reason: %s", why.buf);
	db_run(db, "UPDATE machines SET state = 'drained' WHERE name = 'dut2'", "");
	is_int(lease_acquire(db, j5, "dut2", "peer2", 60, NULL), LEASE_UNUSABLE, "drained machine refused");
	is_int(lease_free_pairs(db, &cfg), 0, "no free pair (one leased, one drained)");
	db_run(db, "UPDATE machines SET state = 'free' WHERE name = 'dut2'", "");

	/*
	 * Two processes race for one pair many times: each round exactly one
	 * wins (BEGIN IMMEDIATE serialises them).
	 */
	lease_release(db, j3);
	int rounds = 30, both = 0, none = 0;
	for (int r = 0; r < rounds; r++) {
		int64_t a = new_job(db, "running"), b = new_job(db, "running");
		pid_t pid[2];
		int wins = 0;
		for (int k = 0; k < 2; k++) {
			pid[k] = fork();
			if (pid[k] == 0) {
				struct db *d2;
				if (db_open(path, &d2))
					_exit(3);
				int s = lease_acquire(d2, k ? b : a, "dut2", "peer2", 60, NULL);
				db_close(d2);
				_exit(s == LEASE_OK ? 0 : s == LEASE_BUSY ? 1 : 2);
			}
		}
		for (int k = 0; k < 2; k++) {
			int st;
			waitpid(pid[k], &st, 0);
			if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
				wins++;
		}
		if (wins == 2)
			both++;
		if (wins == 0)
			none++;
		lease_release(db, a);
		lease_release(db, b);
	}
	is_int(both, 0, "never two winners in %d races", rounds);
	is_int(none, 0, "always one winner in %d races", rounds);

	/* More pairs for one job (a job whose boots run on several pairs at once). */
	{
		struct conf_machine m3[6];
		struct klab_config cfg3;
		const struct conf_machine *more[4] = { NULL };
		char *jd = NULL;
		int64_t a = new_job(db, "running"), b = new_job(db, "running");

		pool_config(&cfg3, m3, 3);
		ok(!lease_sync_machines(db, &cfg3), "3 pairs synced");
		is_int(lease_acquire(db, a, "dut1", "peer1", 60, NULL), LEASE_OK, "job a leases dut1");
		is_int(lease_acquire_more(db, &cfg3, a, "p", "dut1", 0, 60, more), 0, "wanting none takes none");
		is_int(lease_acquire_more(db, &cfg3, a, "p", "dut1", 3, 60, more), 2, "job a takes the 2 other pairs");
		ok(more[0] == &m3[2] && more[1] == &m3[4], "... dut2 and dut3, in config order");
		db_get_str(db, &jd, "SELECT dut FROM jobs WHERE id = ?", "i", a);
		is_str(jd, "dut1", "the job's own pair stays dut1");
		free(jd);
		{
			int64_t n = -1;
			db_get_int(db, &n, "SELECT count(*) FROM leases WHERE job_id = ?", "i", a);
			is_int(n, 6, "job a holds 6 machines");
		}
		is_int(lease_acquire_pool(db, &cfg3, b, "p", 60, &dut, &peer, NULL), LEASE_BUSY, "job b waits: pool full");
		lease_release(db, a);
		is_int(lease_acquire(db, a, "dut1", "peer1", 60, NULL), LEASE_OK, "job a leases dut1 again");
		is_int(lease_acquire(db, b, "dut2", "peer2", 60, NULL), LEASE_OK, "job b leases dut2");
		is_int(lease_acquire_more(db, &cfg3, a, "p", "dut1", 2, 60, more), 1, "job a takes the one free pair");
		ok(more[0] == &m3[4], "... dut3, not dut2 of job b");
		lease_release(db, b);
		is_int(lease_acquire_more(db, &cfg3, a, "p", "dut1", 1, 60, more), 1, "one more again");
		ok(more[0] == &m3[4], "... dut3, which job a holds, before the free dut2 ahead of it");
		is_int(lease_acquire_extra(db, a, "dut2", "peer2", 60, NULL), LEASE_OK, "a pair more by name");
		db_get_str(db, &jd, "SELECT dut FROM jobs WHERE id = ?", "i", a);
		is_str(jd, "dut1", "the job's own pair is still dut1");
		free(jd);
		lease_release(db, a);
	}

	db_close(db);
	free(path);
	buf_release(&why);
	return done_testing();
}
