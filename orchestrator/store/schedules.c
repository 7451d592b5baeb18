/* schedules.c: the only SQL on `schedules` (fire times kept across daemon restarts). */
#include <stdlib.h>

#include "store/schedules.h"
#include "util.h"

int schedule_get(struct db *db, const char *name, struct schedule_row *r)
{
	struct db_stmt *st = db_prepare(db, "SELECT cron, job, next_fire FROM schedules WHERE name = ?", "s", name);
	int found;

	r->cron = r->job = NULL;
	r->last_fire = r->next_fire = 0;
	if (!st)
		return -1;
	found = db_step(st) == DB_ROW;
	if (found) {
		r->cron = xstrdup(db_col_text(st, 0));
		r->job = xstrdup(db_col_text(st, 1));
		r->next_fire = db_col_null(st, 2) ? 0 : db_col_double(st, 2);
	}
	db_finalize(st);
	return found;
}

void schedule_row_release(struct schedule_row *r)
{
	free(r->cron);
	free(r->job);
	r->cron = r->job = NULL;
}

int schedule_fire_times(struct db *db, const char *name, const char *cron, const char *job,
			double *last, double *next)
{
	struct db_stmt *q = db_prepare(db, "SELECT last_fire, next_fire FROM schedules WHERE name = ? AND cron = ? AND job = ?",
				       "sss", name, cron, job);

	*last = *next = 0;
	if (!q)
		return -1;
	if (db_step(q) == DB_ROW) {
		*last = db_col_double(q, 0);
		*next = db_col_double(q, 1);
	}
	db_finalize(q);
	return 0;
}

int schedule_put(struct db *db, const char *name, const char *cron, const char *job, double next)
{
	return db_run(db, "INSERT INTO schedules (name, cron, job, next_fire) VALUES (?, ?, ?, ?) "
		      "ON CONFLICT (name) DO UPDATE SET cron = excluded.cron, job = excluded.job, "
		      "next_fire = excluded.next_fire",
		      "sssd", name, cron, job, next);
}

int schedule_fired(struct db *db, const char *name, double now, double next, double was_next)
{
	if (db_run(db, "UPDATE schedules SET last_fire = ?, next_fire = ? WHERE name = ? AND next_fire = ?",
		   "ddsd", now, next, name, was_next))
		return -1;
	return db_changes(db) > 0;
}

int schedule_names(struct db *db, struct strvec *names)
{
	struct db_stmt *st = db_prepare(db, "SELECT name FROM schedules", "");

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW)
		strvec_push(names, db_col_text(st, 0));
	db_finalize(st);
	return 0;
}

int schedule_delete(struct db *db, const char *name)
{
	return db_run(db, "DELETE FROM schedules WHERE name = ?", "s", name);
}
