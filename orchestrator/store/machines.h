/* machines.h: the machines family of tables (machines, leases): typed calls, the only SQL on them. */
#ifndef KLAB_STORE_MACHINES_H
#define KLAB_STORE_MACHINES_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/* ---- machines */

/* A machine as the database knows it, with its lease (lease_job 0: none). Strings malloc'd, NULL when NULL. */
struct machine_row {
	char *name, *host, *role, *state, *state_reason, *last_kernel, *last_build_id;
	double state_since, last_seen;	/* machines_get(): 0 when NULL; machines_list(): last_seen NaN when NULL */
	int leased;
	int64_t lease_job;
	double lease_expires;
};
void machine_row_release(struct machine_row *r);

/* Machine NAME from the config: inserted 'free' at NOW, or its host, port, role and clock updated. 0 or -1. */
int machines_put_config(struct db *db, const char *name, const char *host, int port, const char *role,
			const char *clock, double now);
/* Machine NAME is STATE (free, broken, drained) since NOW, for REASON (may be NULL); inserted when new. 0 or -1. */
int machines_put_state(struct db *db, const char *name, const char *state, double now, const char *reason);
/* Machine NAME runs RELEASE (and BUILD_ID) as seen at NOW; inserted when new. 0 or -1. */
int machines_put_kernel(struct db *db, const char *name, const char *release, const char *build_id, double now);
/* Machine NAME (a known one) runs RELEASE as seen at NOW. 0 or -1. */
int machines_put_seen(struct db *db, const char *name, const char *release, double now);
/* Machine NAME with its lease into *R: 1 found, 0 not, -1 error (R zeroed unless found). */
int machines_get(struct db *db, const char *name, struct machine_row *r);
/* Every machine with its lease, by name (name, host, role, state, reason, last kernel and seen, lease). 0 or -1. */
int machines_list(struct db *db, struct machine_row **out, size_t *n);
void machines_list_free(struct machine_row *v, size_t n);
/*
 * How many of machines A and B are not free or leased until NOW or later by
 * a queued or running job, into *BUSY: 0 or -1.
 */
int machines_count_busy(struct db *db, const char *a, const char *b, double now, int64_t *busy);

/* ---- leases */

/* A lease to drop: expired before NOW, or its job not queued or running (job_state NULL: the job is gone). */
struct lease_row {
	char *machine, *job_state;
	int64_t job_id;
	double expires;
};
/* The leases to reclaim at NOW (see struct lease_row) into *OUT: 0 or -1. */
int leases_stale(struct db *db, double now, struct lease_row **out, size_t *n);
void leases_free(struct lease_row *v, size_t n);
/* Drop the leases leases_stale() lists at NOW: 0 or -1. */
int leases_delete_stale(struct db *db, double now);
/* The lease of MACHINE: 1 (with its job and expiry), 0 none, -1 error. */
int leases_get(struct db *db, const char *machine, int64_t *job_id, double *expires);
/* Lease MACHINE to JOB_ID from NOW to EXPIRES (an existing lease gets the new expiry): 0 or -1. */
int leases_put(struct db *db, const char *machine, int64_t job_id, double now, double expires);
/* The first (by name) machine leased to JOB_ID into *MACHINE (malloc'd, NULL when none): 0 or -1. */
int leases_first_of_job(struct db *db, int64_t job_id, char **machine);
/* How many machines JOB_ID holds into *N: 0 or -1. */
int leases_count_job(struct db *db, int64_t job_id, int64_t *n);
/* Every lease of JOB_ID expires at EXPIRES: the number of leases renewed, or -1. */
int leases_renew(struct db *db, int64_t job_id, double expires);
/* Drop the leases of JOB_ID, or of MACHINE: 0 or -1. */
int leases_delete_job(struct db *db, int64_t job_id);
int leases_delete_machine(struct db *db, const char *machine);
/*
 * How many leases on the dut or peer of job ID belong to another queued
 * or running job and last until NOW or later, into *N: 0 or -1.
 */
int leases_held_by_others(struct db *db, int64_t id, double now, int64_t *n);

#endif
