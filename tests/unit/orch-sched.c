/* orch-sched.c: cron parsing and next fire times against a table, across DST changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/db.h"
#include "log.h"
#include "nightly/sched.h"
#include "tap.h"

/* "YYYY-MM-DD HH:MM[:SS] +HHMM" -> time_t ("never" -> -1). */
static time_t at(const char *s)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, sec = 0, off;
	char sign;

	if (!strcmp(s, "never"))
		return (time_t)-1;
	if (sscanf(s, "%d-%d-%d %d:%d:%d %c%d", &y, &mo, &d, &h, &mi, &sec, &sign, &off) != 8) {
		sec = 0;
		if (sscanf(s, "%d-%d-%d %d:%d %c%d", &y, &mo, &d, &h, &mi, &sign, &off) != 7) {
			fprintf(stderr, "bad time in table: %s\n", s);
			abort();
		}
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	long offs = (off / 100) * 3600 + (off % 100) * 60;
	return timegm(&tm) - (sign == '-' ? -offs : offs);
}

static void set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

static const struct {
	const char *tz, *expr, *after, *want;
} table[] = {
	{ "UTC", "* * * * *", "2026-01-01 00:00:30 +0000", "2026-01-01 00:01 +0000" },
	{ "UTC", "0 3 * * *", "2026-01-01 03:00 +0000", "2026-01-02 03:00 +0000" },
	{ "UTC", "0 3 * * *", "2026-01-01 02:59:59 +0000", "2026-01-01 03:00 +0000" },
	{ "UTC", "*/15 * * * *", "2026-01-01 10:07 +0000", "2026-01-01 10:15 +0000" },
	{ "UTC", "5-10/2 * * * *", "2026-01-01 10:06 +0000", "2026-01-01 10:07 +0000" },
	{ "UTC", "5-10/2 * * * *", "2026-01-01 10:09 +0000", "2026-01-01 11:05 +0000" },
	{ "UTC", "0 0 1 jan *", "2026-03-01 00:00 +0000", "2027-01-01 00:00 +0000" },
	{ "UTC", "0 12 * * mon-fri", "2026-01-03 13:00 +0000", "2026-01-05 12:00 +0000" },
	{ "UTC", "0 12 * * MON-FRI", "2026-01-05 11:00 +0000", "2026-01-05 12:00 +0000" },
	{ "UTC", "0 0 13 * fri", "2026-01-01 00:00 +0000", "2026-01-02 00:00 +0000" },
	{ "UTC", "0 0 13 * *", "2026-01-01 00:00 +0000", "2026-01-13 00:00 +0000" },
	{ "UTC", "0 0 29 feb *", "2026-03-01 00:00 +0000", "2028-02-29 00:00 +0000" },
	{ "UTC", "0 0 30 2 *", "2026-03-01 00:00 +0000", "never" },
	{ "UTC", "@daily", "2026-05-05 10:00 +0000", "2026-05-06 00:00 +0000" },
	{ "UTC", "@hourly", "2026-05-05 10:00 +0000", "2026-05-05 11:00 +0000" },
	{ "UTC", "@weekly", "2026-01-01 00:00 +0000", "2026-01-04 00:00 +0000" },
	{ "UTC", "@monthly", "2026-01-31 23:59 +0000", "2026-02-01 00:00 +0000" },
	{ "UTC", "0 0 * * 7", "2026-01-01 00:00 +0000", "2026-01-04 00:00 +0000" },
	{ "UTC", "30 1 1,15 * *", "2026-01-01 01:30 +0000", "2026-01-15 01:30 +0000" },
	{ "UTC", "0 22 * jan,feb,dec sat,sun", "2026-02-28 22:00 +0000", "2026-12-05 22:00 +0000" },
	{ "UTC", "59 23 31 12 *", "2026-12-31 23:59 +0000", "2027-12-31 23:59 +0000" },
	/* Europe/Berlin: CET -> CEST on 2026-03-29 02:00, back on 2026-10-25 03:00. */
	{ "Europe/Berlin", "0 2 * * *", "2026-01-10 12:00 +0100", "2026-01-11 02:00 +0100" },
	{ "Europe/Berlin", "30 2 * * *", "2026-03-28 03:00 +0100", "2026-03-29 03:00 +0200" },
	{ "Europe/Berlin", "30 2 * * *", "2026-03-29 03:00 +0200", "2026-03-30 02:30 +0200" },
	{ "Europe/Berlin", "*/15 2 * * *", "2026-03-29 01:50 +0100", "2026-03-29 03:00 +0200" },
	{ "Europe/Berlin", "*/15 2 * * *", "2026-03-29 03:00 +0200", "2026-03-30 02:00 +0200" },
	{ "Europe/Berlin", "0 3 * * *", "2026-03-28 04:00 +0100", "2026-03-29 03:00 +0200" },
	{ "Europe/Berlin", "0 * * * *", "2026-03-29 01:30 +0100", "2026-03-29 03:00 +0200" },
	{ "Europe/Berlin", "0 * * * *", "2026-03-29 03:00 +0200", "2026-03-29 04:00 +0200" },
	{ "Europe/Berlin", "30 2 * * *", "2026-10-24 03:00 +0200", "2026-10-25 02:30 +0200" },
	{ "Europe/Berlin", "30 2 * * *", "2026-10-25 02:30 +0200", "2026-10-26 02:30 +0100" },
	{ "Europe/Berlin", "30 2 * * *", "2026-10-25 02:10 +0100", "2026-10-26 02:30 +0100" },
	{ "Europe/Berlin", "0 * * * *", "2026-10-25 02:00 +0200", "2026-10-25 03:00 +0100" },
	{ "Europe/Berlin", "0 0 * * *", "2026-10-24 12:00 +0200", "2026-10-25 00:00 +0200" },
	{ "Europe/Berlin", "0 0 * * *", "2026-10-25 00:00 +0200", "2026-10-26 00:00 +0100" },
	/* America/New_York: EST -> EDT on 2026-03-08 02:00, back on 2026-11-01 02:00. */
	{ "America/New_York", "30 2 * * *", "2026-03-07 12:00 -0500", "2026-03-08 03:00 -0400" },
	{ "America/New_York", "30 2 * * *", "2026-03-08 03:00 -0400", "2026-03-09 02:30 -0400" },
	{ "America/New_York", "30 1 * * *", "2026-10-31 12:00 -0400", "2026-11-01 01:30 -0400" },
	{ "America/New_York", "30 1 * * *", "2026-11-01 01:30 -0400", "2026-11-02 01:30 -0500" },
	{ "America/New_York", "0 9 * * 1-5", "2026-03-06 10:00 -0500", "2026-03-09 09:00 -0400" },
	{ "America/New_York", "0 1 * * *", "2026-11-01 01:00 -0500", "2026-11-02 01:00 -0500" },
};

static const char *const bad[] = {
	"60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8",
	"* * * *", "* * * * * *", "a * * * *", "*/0 * * * *", "5-1 * * * *",
	"@fortnightly", "* * * foo *", "1,,2 * * * *", "1- * * * *", "* * * dec-feb *", "", "*/x * * * *",
};

static int submits;

static int64_t fake_submit(void *arg, const struct conf_schedule *s)
{
	(void)arg;
	(void)s;
	return 100 + submits++;
}

/* sched_tick() on a real sqlite file with a fake clock. */
static void tick_tests(void)
{
	struct conf_schedule sc = { (char *)"nightly", (char *)"30 2 * * *", (char *)"nightly-job", 1 };
	struct klab_config cfg;
	struct sched_fire *f = NULL;
	size_t n = 0;
	char *path = NULL;
	struct db *db;
	double next = 0;
	time_t t0 = at("2026-06-01 12:00 +0000");

	set_tz("UTC");
	memset(&cfg, 0, sizeof(cfg));
	cfg.schedules = &sc;
	cfg.n_schedules = 1;
	free(path);
	path = tap_db_path("sched.db");
	if (!ok(!db_open(path, &db), "database"))
		return;
	ok(!sched_tick(db, &cfg, t0, 90, fake_submit, NULL, &f, &n) && n == 0, "first pass: registers, no fire");
	sched_fires_free(f, n);
	{
		char *s = NULL;
		db_get_str(db, &s, "SELECT next_fire FROM schedules WHERE name = 'nightly'", "");
		next = s ? atof(s) : 0;
		free(s);
	}
	is_int((time_t)next, at("2026-06-02 02:30 +0000"), "next fire stored");
	ok(!sched_tick(db, &cfg, at("2026-06-02 02:29 +0000"), 90, fake_submit, NULL, &f, &n) && n == 0,
	   "not due yet");
	sched_fires_free(f, n);
	ok(!sched_tick(db, &cfg, at("2026-06-02 02:30:05 +0000"), 90, fake_submit, NULL, &f, &n) && n == 1,
	   "due: fires");
	if (n == 1) {
		is_int(f[0].missed, 0, "on time, not missed");
		is_int(f[0].job_id, 100, "the job submitted");
		is_str(f[0].job, "nightly-job", "its job name");
	}
	sched_fires_free(f, n);
	ok(!sched_tick(db, &cfg, at("2026-06-02 02:30:06 +0000"), 90, fake_submit, NULL, &f, &n) && n == 0,
	   "fires once");
	sched_fires_free(f, n);
	/* The daemon is down for three nights: one fire at start, marked missed. */
	ok(!sched_tick(db, &cfg, at("2026-06-05 09:00 +0000"), 90, fake_submit, NULL, &f, &n) && n == 1,
	   "three missed nights fire once");
	if (n == 1) {
		is_int(f[0].missed, 1, "marked missed");
		is_int(f[0].due, at("2026-06-03 02:30 +0000"), "due at the first missed time");
	}
	sched_fires_free(f, n);
	ok(!sched_tick(db, &cfg, at("2026-06-05 09:00:01 +0000"), 90, fake_submit, NULL, &f, &n) && n == 0,
	   "and only once");
	sched_fires_free(f, n);
	is_int(submits, 2, "two jobs submitted in all");
	/* A changed expression is registered again, without firing. */
	sc.cron = (char *)"0 4 * * *";
	ok(!sched_tick(db, &cfg, at("2026-06-10 09:00 +0000"), 90, fake_submit, NULL, &f, &n) && n == 0,
	   "changed cron: no fire");
	sched_fires_free(f, n);
	{
		int64_t nf = 0;
		db_get_int(db, &nf, "SELECT CAST(next_fire AS INTEGER) FROM schedules WHERE name = 'nightly'", "");
		is_int(nf, at("2026-06-11 04:00 +0000"), "next fire of the new expression");
	}
	/* A bad expression is skipped; a schedule gone from the config is forgotten. */
	cfg.n_schedules = 0;
	ok(!sched_tick(db, &cfg, at("2026-06-10 09:00 +0000"), 90, fake_submit, NULL, &f, &n) && n == 0, "no schedules");
	sched_fires_free(f, n);
	{
		int64_t c = -1;
		db_get_int(db, &c, "SELECT count(*) FROM schedules", "");
		is_int(c, 0, "the removed schedule's row is gone");
	}
	db_close(db);
	free(path);
}

int main(void)
{
	char got_s[64], want_s[64];

	log_init("orch-sched", 0, LOG_ERR);
	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		struct cron c;
		set_tz(table[i].tz);
		if (!ok(!cron_parse(&c, table[i].expr, NULL), "parse '%s'", table[i].expr))
			continue;
		time_t got = cron_next(&c, at(table[i].after));
		time_t want = at(table[i].want);
		sched_fmt_time(got, got_s, sizeof(got_s));
		sched_fmt_time(want, want_s, sizeof(want_s));
		if (!is_int(got, want, "%s '%s' after %s -> %s", table[i].tz, table[i].expr,
			    table[i].after, table[i].want))
			diag("got %s, wanted %s", got_s, want_s);
	}

	/* A walk through a whole DST day: hourly fires 23 times on the short day. */
	set_tz("Europe/Berlin");
	{
		struct cron c;
		time_t t = at("2026-03-29 00:00 +0100") - 1, end = at("2026-03-30 00:00 +0200");
		int n = 0;
		cron_parse(&c, "0 * * * *", NULL);
		while ((t = cron_next(&c, t)) < end && n < 100)
			n++;
		is_int(n, 23, "hourly fires 23 times on the day clocks go forward");
		t = at("2026-10-25 00:00 +0200") - 1;
		end = at("2026-10-26 00:00 +0100");
		n = 0;
		while ((t = cron_next(&c, t)) < end && n < 100)
			n++;
		is_int(n, 24, "hourly fires 24 times (each wall-clock hour once) on the 25-hour day");
	}

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct cron c;
		ok(cron_parse(&c, bad[i], NULL) == -1, "'%s' is refused", bad[i]);
	}
	tick_tests();
	return done_testing();
}
