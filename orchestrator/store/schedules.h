/* schedules.h: the schedules table: when each configured schedule fired last and fires next. */
#ifndef KLAB_STORE_SCHEDULES_H
#define KLAB_STORE_SCHEDULES_H

#include "store/db.h"
#include "strvec.h"

/* A row of `schedules` (times in seconds since the epoch; next_fire 0 when NULL). */
struct schedule_row {
	char *cron, *job;
	double last_fire, next_fire;
};

/* Schedule NAME into *R (release with schedule_row_release()): 1 found, 0 none, -1 error. */
int schedule_get(struct db *db, const char *name, struct schedule_row *r);
void schedule_row_release(struct schedule_row *r);
/*
 * The last and next fire of schedule NAME when it is stored with this CRON
 * and JOB (else both stay 0): 0, or -1 on an error.
 */
int schedule_fire_times(struct db *db, const char *name, const char *cron, const char *job,
			double *last, double *next);
/* Insert or update schedule NAME with its CRON, JOB and NEXT fire (0 for none): 0 or -1. */
int schedule_put(struct db *db, const char *name, const char *cron, const char *job, double next);
/*
 * Schedule NAME fired at NOW: its next fire moves from WAS_NEXT (what the
 * caller read) to NEXT. 1 moved, 0 when another process moved it first, -1 error.
 */
int schedule_fired(struct db *db, const char *name, double now, double next, double was_next);
/* The names of every stored schedule, appended to NAMES: 0 or -1. */
int schedule_names(struct db *db, struct strvec *names);
/* Forget schedule NAME: 0 or -1. */
int schedule_delete(struct db *db, const char *name);

#endif
