/* lease.h: machines leased to one job at a time (a dut + peer pair), with expiry, in sqlite. */
#ifndef KLAB_LEASE_H
#define KLAB_LEASE_H

#include <stdint.h>

#include "buf.h"
#include "conf/conf.h"
#include "store/db.h"

/* Results of lease_acquire(). */
enum lease_status {
	LEASE_ERROR = -1,	/* database error (logged) */
	LEASE_OK = 0,		/* both machines are leased to the job */
	LEASE_BUSY = 1,		/* a machine is leased to another live job: wait and retry */
	LEASE_UNUSABLE = 2,	/* a machine is broken or drained (or unknown): the job cannot use it */
};

/*
 * Make sure every [machine] of the config has a row in `machines` (state
 * 'free'), updating host/port/role of existing rows. 0 or -1.
 */
int lease_sync_machines(struct db *db, const struct klab_config *cfg);

/*
 * Lease DUT and PEER to JOB_ID for TTL_S seconds, both or neither, in one
 * BEGIN IMMEDIATE transaction. Leases that expired (their job died without
 * renewing) and leases of jobs that ended are reclaimed first, with a log
 * line. A pair already leased to this job is renewed. `why` (may be NULL)
 * receives the reason for LEASE_BUSY ("machine 'dut' is leased to job 3
 * until 12:01:02") or LEASE_UNUSABLE ("machine 'dut' is broken since ...:
 * REASON").
 */
enum lease_status lease_acquire(struct db *db, int64_t job_id, const char *dut, const char *peer,
				int ttl_s, struct buf *why);

/*
 * Pick a free pair from POOL (machines of the config whose pool = POOL:
 * each dut with its peer), trying them in config order, and lease it as
 * lease_acquire(). *dut and *peer are set (borrowed from the config) on
 * LEASE_OK; LEASE_UNUSABLE when no pair of the pool is usable at all.
 */
enum lease_status lease_acquire_pool(struct db *db, const struct klab_config *cfg, int64_t job_id,
				     const char *pool, int ttl_s, const char **dut, const char **peer,
				     struct buf *why);

/*
 * Lease DUT and PEER to JOB_ID as lease_acquire() does, as a pair more
 * beside the job's own (jobs.dut/peer stay): a job whose boots run on
 * several pairs at once (docs/jobs.md, "Boots on several pairs").
 */
enum lease_status lease_acquire_extra(struct db *db, int64_t job_id, const char *dut, const char *peer,
				      int ttl_s, struct buf *why);

/*
 * Up to WANT more pairs of POOL for JOB_ID, which holds MAIN_DUT's pair:
 * without waiting, in one BEGIN IMMEDIATE transaction, the pairs it holds
 * already first (a job run again after a crash), then free ones in config
 * order. Their duts go into DUTS[0..] (borrowed from the config; each
 * dut's peer is m->peer). Returns how many (0..WANT), or -1 (logged).
 */
int lease_acquire_more(struct db *db, const struct klab_config *cfg, int64_t job_id, const char *pool,
		       const char *main_dut, int want, int ttl_s, const struct conf_machine **duts);

/* Extend every lease of JOB_ID to now + TTL_S: 0, or -1 (also when the job holds no lease any more). */
int lease_renew(struct db *db, int64_t job_id, int ttl_s);

/* Drop every lease of JOB_ID: 0 or -1. */
int lease_release(struct db *db, int64_t job_id);

/*
 * Reclaim leases that expired or whose job is no longer running: returns
 * how many were dropped, or -1.
 */
int lease_reclaim(struct db *db);

/*
 * The number of dut+peer pairs of the config that are free now (both
 * machines usable and not leased): the daemon's concurrency bound.
 */
int lease_free_pairs(struct db *db, const struct klab_config *cfg);

#endif
