/*
 * calib.h: the calibrations of klab's instruments (table `calibrations`,
 * migration 0022): the noise of a workload's metric on an instrument, learnt
 * from A/A data, and the readers of a job's boots and runs that learning
 * needs. The model and its use are in docs/statistics.md ("A calibrated
 * instrument"); compare/noise.c learns and looks up through these calls.
 */
#ifndef KLAB_STORE_CALIB_H
#define KLAB_STORE_CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"
#include "store/jobs.h"

/*
 * The instrument key of a boot: what a calibration is valid for, made from
 * what the boot recorded, so that a job's own boots say which instrument
 * measured them:
 *
 *	MACHINE;CLOCK;CPU MODEL xCOUNT[ smt=S][ gov=G];LAB WORDS
 *
 * LAB WORDS are the words of the kernel command line that the lab sets
 * (`klab.*` and `maxcpus=`), sorted, with the values of those that only
 * name one lab instance dropped (klab.name, dir, mgmt, mgmt_mac, lab,
 * lab_mac, dummy, peerns: addresses, MACs, folders), so `klab.queues=2`,
 * `klab.cpus=2`, `klab.cachemodel=1` and any word a lab adds later (its
 * qemu version, say) are part of the key. SYSINFO is the boot's `klab-agent
 * sysinfo` document (NULL or unreadable: the CPU part is "?"). A malloc'd
 * string.
 */
char *calib_instrument_key(const char *machine, const char *clock, const char *sysinfo);

/*
 * The workload key: the first 12 hex digits of the SHA-256 of the
 * workload's definition in a job spec (its type, generator parameters,
 * window and warm-up), so a calibration of `udp_rr` with other flows or a
 * shorter window does not apply. W NULL: "-".
 */
#define CALIB_WL_KEY_LEN 12
void calib_workload_key(const struct job_spec_workload *w, char out[CALIB_WL_KEY_LEN + 1]);

/* A row of `calibrations`. Strings malloc'd; run_var and run_df NaN when NULL. */
struct calib_row {
	int64_t id;
	char *instrument, *machine, *clock, *workload, *wl_key, *metric;
	double boot_var, boot_df;
	int64_t boots, aa_boots;
	double runs_per_boot;
	double run_var, run_df;
	char *jobs;		/* "3,5" */
	double created, updated;
};
void calib_row_release(struct calib_row *r);
void calib_rows_free(struct calib_row *v, size_t n);

/* The calibration of (INSTRUMENT, WORKLOAD, WL_KEY, METRIC) into *R: 1, 0 (none), -1. */
int calib_get(struct db *db, const char *instrument, const char *workload, const char *wl_key, const char *metric,
	      struct calib_row *r);
/* Store R (inserted, or replacing the row of its key; R->id is not read). 0 or -1. */
int calib_put(struct db *db, const struct calib_row *r);
/* Every calibration by machine, clock, instrument, workload, metric into *OUT. 0 or -1. */
int calib_list(struct db *db, struct calib_row **out, size_t *n);
/* Forget the calibrations of MACHINE (NULL: all) and WORKLOAD (NULL: all); *N gets how many went. 0 or -1. */
int calib_delete(struct db *db, const char *machine, const char *workload, int64_t *n);

/*
 * A calibration file (`klab calibrate export`/`import`): the rows of
 * `calibrations` as one JSON document, {"klab_calibrations": 1, "rows":
 * [{"instrument": ..., "workload": ..., "boot_var": ..., ...}]}, so that
 * a calibration outlives the database it was learnt in (the demo keeps its
 * own beside the kernel cache: docs/demo.md). calib_rows_json() makes it
 * (a new reference); calib_rows_from_json() reads it into *OUT (*N rows),
 * errors naming WHAT and the row: 0 or -1. A row read back lists no jobs:
 * the ids of its jobs belong to the database it was learnt in.
 */
struct json_object;
struct json_object *calib_rows_json(const struct calib_row *rows, size_t n);
int calib_rows_from_json(struct json_object *doc, const char *what, struct calib_row **out, size_t *n);

/* A boot of a job as learning reads it. Strings valid during the callback; NULL where the column is. */
struct calib_boot {
	int64_t id, kernel_id;	/* kernel_id 0: none */
	int seq;
	const char *side, *machine, *clock, *sysinfo;
	double started;
};
/* Call FN with each boot of job JOB_ID by seq. 0, or -1 (FN not called after it). */
int calib_job_boots_each(struct db *db, int64_t job_id, void (*fn)(const struct calib_boot *b, void *data),
			 void *data);

/*
 * A measured run's metric value (RESULT_MEASURED_SQL, seq >= WARMUP, runs
 * inside a boot only), by workload, metric, boot and run. Strings valid
 * during the callback.
 */
struct calib_run_value {
	int64_t boot_id;
	const char *workload, *metric, *unit;
	double value;
};
int calib_job_runs_each(struct db *db, int64_t job_id, int warmup,
			void (*fn)(const struct calib_run_value *v, void *data), void *data);

/*
 * The newest boot of MACHINE that recorded its sysinfo (the instrument as
 * it is now, for staleness): *CLOCK and *SYSINFO malloc'd, *STARTED. 1, 0
 * (none), -1.
 */
int calib_machine_last_boot(struct db *db, const char *machine, char **clock, char **sysinfo, double *started);

#endif
