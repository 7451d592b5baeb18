/* sched.h: five-field cron expressions, next fire times in local time, and firing [schedule] sections. */
#ifndef KLAB_SCHED_H
#define KLAB_SCHED_H

#include <stdint.h>
#include <time.h>

#include "conf/conf.h"
#include "store/db.h"

/*
 * A parsed cron expression: "MIN HOUR DOM MON DOW" with '*', ranges
 * "a-b", lists "a,b", steps "*\/n" and "a-b/n", month names jan-dec and
 * day names sun-sat (case-insensitive; 7 is Sunday too), or one of the
 * shorthands @yearly @annually @monthly @weekly @daily @midnight @hourly.
 * As in Vixie cron, when both day-of-month and day-of-week are restricted
 * a day matches when either does.
 */
struct cron {
	uint64_t min;		/* bit 0..59 */
	uint32_t hour;		/* bit 0..23 */
	uint32_t dom;		/* bit 1..31 */
	uint32_t mon;		/* bit 1..12 */
	uint32_t dow;		/* bit 0..6, 0 = Sunday */
	int dom_star, dow_star;	/* the field was '*' (or a '*' step) */
};

/*
 * Parse EXPR. 0, or -1 after logging "invalid cron expression 'EXPR':
 * field N (hour): REASON" (WHAT, when not NULL, is put before it, e.g.
 * "config:12").
 */
int cron_parse(struct cron *c, const char *expr, const char *what);

/*
 * The first fire time strictly after AFTER, in the local time zone (TZ).
 * The expression is matched against local wall-clock time. Daylight saving:
 * a wall-clock time that does not exist (the hour skipped in spring) fires
 * once at the first instant after the gap (03:00 in Europe/Berlin); a
 * wall-clock time that happens twice (the hour repeated in autumn) fires
 * once, at its first occurrence. Returns the time, or (time_t)-1 when
 * nothing matches within 8 years (e.g. "0 0 30 2 *").
 */
time_t cron_next(const struct cron *c, time_t after);

/*
 * What a schedule pass did; sched_tick() fills one per [schedule] section
 * that fired.
 */
struct sched_fire {
	char *schedule;		/* schedule name */
	char *job;		/* job name it submits */
	int64_t job_id;		/* the job created (0 when submitting failed) */
	int missed;		/* it fired late: the time passed while no daemon ran */
	time_t due;		/* the fire time it was due at */
};

/*
 * Submits one job for a schedule: returns the new job id, or -1.
 * The daemon passes job_submit_schedule() (job.h).
 */
typedef int64_t (*sched_submit_fn)(void *arg, const struct conf_schedule *s);

/*
 * One pass over the config's [schedule] sections at time NOW, with the
 * state in the `schedules` table:
 * - a schedule seen for the first time (or whose cron or job changed) gets
 *   next_fire = cron_next(now) and does not fire;
 * - a schedule whose next_fire <= NOW fires once (however many fire times
 *   were missed), last_fire = NOW, next_fire = cron_next(NOW). It counts as
 *   missed when NOW is more than `slack_s` seconds past its due time (the
 *   daemon was down), and the log says so;
 * - rows of schedules no longer in the config are deleted.
 * Fired schedules are appended to *fires (*n_fires entries; free with
 * sched_fires_free()). 0, or -1 on a database error (a bad cron
 * expression is logged and that schedule skipped).
 */
int sched_tick(struct db *db, const struct klab_config *cfg, time_t now, int slack_s,
	       sched_submit_fn submit, void *arg, struct sched_fire **fires, size_t *n_fires);
void sched_fires_free(struct sched_fire *f, size_t n);

/* Format T as local "YYYY-MM-DD HH:MM:SS ZONE" into buf (at least 40 bytes). */
const char *sched_fmt_time(time_t t, char *buf, size_t len);

#endif
