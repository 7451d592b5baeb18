/* sched.c: cron expressions, next fire times across DST changes, and the schedule pass of klabd. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/db.h"
#include "log.h"
#include "nightly/sched.h"
#include "store/schedules.h"
#include "strvec.h"
#include "util.h"

static const char *const field_names[] = { "minute", "hour", "day of month", "month", "day of week" };
static const int field_lo[] = { 0, 0, 1, 1, 0 };
static const int field_hi[] = { 59, 23, 31, 12, 7 };
static const char *const mon_names[] = { "jan", "feb", "mar", "apr", "may", "jun",
					 "jul", "aug", "sep", "oct", "nov", "dec" };
static const char *const dow_names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat" };

/* A number or (months, days) a three-letter name; advances *p. -1 when neither. */
static int parse_value(const char **p, int field, int *out)
{
	const char *s = *p;

	if (isdigit((unsigned char)*s)) {
		long v = 0;
		while (isdigit((unsigned char)*s)) {
			v = v * 10 + (*s - '0');
			if (v > 1000)
				return -1;
			s++;
		}
		*out = (int)v;
		*p = s;
		return 0;
	}
	if ((field == 3 || field == 4) && isalpha((unsigned char)s[0]) &&
	    isalpha((unsigned char)s[1]) && isalpha((unsigned char)s[2])) {
		const char *const *names = field == 3 ? mon_names : dow_names;
		size_t n = field == 3 ? 12 : 7;
		for (size_t i = 0; i < n; i++) {
			if (!strncasecmp(s, names[i], 3)) {
				*out = (int)i + (field == 3 ? 1 : 0);
				*p = s + 3;
				return 0;
			}
		}
	}
	return -1;
}

/* Parse one field into a bit mask; *star set when it starts with '*'. */
static int parse_field(const char *text, int field, uint64_t *mask, int *star, char *why, size_t whylen)
{
	int lo = field_lo[field], hi = field_hi[field];
	char *copy = xstrdup(text), *save = NULL, *part;
	int ret = -1;

	*mask = 0;
	*star = text[0] == '*';
	if (!*text || text[0] == ',' || text[strlen(text) - 1] == ',' || strstr(text, ",,")) {
		snprintf(why, whylen, "empty list element in '%s'", text);
		goto out;
	}
	for (part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
		const char *p = part;
		int a, b, step = 1;

		if (*p == '*') {
			a = lo;
			b = hi == 7 ? 6 : hi;
			p++;
		} else {
			if (parse_value(&p, field, &a)) {
				snprintf(why, whylen, "'%s' is not a number%s", part,
					 field == 3 ? " or month name" : field == 4 ? " or day name" : "");
				goto out;
			}
			b = a;
			if (*p == '-') {
				p++;
				if (parse_value(&p, field, &b)) {
					snprintf(why, whylen, "bad range '%s'", part);
					goto out;
				}
			}
		}
		if (*p == '/') {
			long st;
			p++;
			if (parse_long(p, 1, hi, &st)) {
				snprintf(why, whylen, "bad step in '%s' (1-%d)", part, hi);
				goto out;
			}
			step = (int)st;
			if (b == a && part[0] != '*')
				b = hi == 7 ? 6 : hi;	/* "5/15": from 5 to the end */
			p += strlen(p);
		}
		if (*p) {
			snprintf(why, whylen, "unexpected '%s' in '%s'", p, part);
			goto out;
		}
		if (a < lo || a > hi || b < lo || b > hi) {
			snprintf(why, whylen, "value in '%s' out of range %d-%d", part, lo, hi);
			goto out;
		}
		if (a > b) {
			snprintf(why, whylen, "range '%s' goes backwards", part);
			goto out;
		}
		for (int v = a; v <= b; v += step)
			*mask |= 1ULL << (field == 4 && v == 7 ? 0 : v);
	}
	if (!*mask) {
		snprintf(why, whylen, "empty field");
		goto out;
	}
	ret = 0;
out:
	free(copy);
	return ret;
}

int cron_parse(struct cron *c, const char *expr, const char *what)
{
	static const struct { const char *name, *expr; } shorthands[] = {
		{ "@yearly", "0 0 1 1 *" }, { "@annually", "0 0 1 1 *" },
		{ "@monthly", "0 0 1 * *" }, { "@weekly", "0 0 * * 0" },
		{ "@daily", "0 0 * * *" }, { "@midnight", "0 0 * * *" },
		{ "@hourly", "0 * * * *" },
	};
	struct strvec f = STRVEC_INIT;
	const char *e = expr;
	char why[160] = "";
	int ret = -1, bad = -1;

	memset(c, 0, sizeof(*c));
	while (isspace((unsigned char)*e))
		e++;
	if (*e == '@') {
		size_t i;
		for (i = 0; i < ARRAY_SIZE(shorthands); i++) {
			size_t n = strlen(shorthands[i].name);
			if (!strncasecmp(e, shorthands[i].name, n) && (!e[n] || isspace((unsigned char)e[n])))
				break;
		}
		if (i == ARRAY_SIZE(shorthands)) {
			snprintf(why, sizeof(why), "unknown shorthand (use @yearly, @monthly, @weekly, @daily or @hourly)");
			goto out;
		}
		e = shorthands[i].expr;
	}
	strvec_split(&f, e, " \t");
	if (f.n != 5) {
		snprintf(why, sizeof(why), "%zu fields, wanted 5 (minute hour day-of-month month day-of-week)", f.n);
		goto out;
	}
	for (int i = 0; i < 5; i++) {
		uint64_t m;
		int star;
		if (parse_field(f.v[i], i, &m, &star, why, sizeof(why))) {
			bad = i;
			goto out;
		}
		switch (i) {
		case 0: c->min = m; break;
		case 1: c->hour = (uint32_t)m; break;
		case 2: c->dom = (uint32_t)m; c->dom_star = star; break;
		case 3: c->mon = (uint32_t)m; break;
		case 4: c->dow = (uint32_t)m; c->dow_star = star; break;
		}
	}
	ret = 0;
out:
	if (ret) {
		if (bad >= 0)
			error("%s%sinvalid cron expression '%s': field %d (%s): %s", what ? what : "",
			      what ? ": " : "", expr, bad + 1, field_names[bad], why);
		else
			error("%s%sinvalid cron expression '%s': %s", what ? what : "", what ? ": " : "",
			      expr, why);
	}
	strvec_clear(&f);
	return ret;
}

/*
 * Time arithmetic is done on "naive" wall-clock seconds: the local
 * broken-down time read as if it were UTC (timegm), so that adding 60
 * always moves the wall clock by one minute, whatever DST does.
 */
static time_t naive_of(time_t t)
{
	struct tm tm;
	localtime_r(&t, &tm);
	return timegm(&tm);
}

static long gmtoff_at(time_t t)
{
	struct tm tm;
	localtime_r(&t, &tm);
	return tm.tm_gmtoff;
}

/*
 * The instant (> after) at which the local wall clock shows W, following
 * the DST rules of cron_next(); -1 when none is > after.
 */
static time_t instant_of(time_t w, time_t after)
{
	long o1 = gmtoff_at(w - 86400), o2 = gmtoff_at(w + 86400);
	time_t c1 = w - o1, c2 = w - o2, best = -1;

	/* A repeated wall-clock time counts at its first occurrence only. */
	if (naive_of(c1) == w)
		best = c1;
	if (naive_of(c2) == w && (best == -1 || c2 < best))
		best = c2;
	if (best != -1)
		return best > after ? best : -1;
	/*
	 * W falls into a gap (clocks jumped forward over it). The instants
	 * around the gap are min(c1,c2) (before: shows a time before W) and
	 * max(c1,c2) (after); find the first instant whose wall clock is past
	 * W: that is the moment of the change.
	 */
	time_t lo = c1 < c2 ? c1 : c2, hi = c1 < c2 ? c2 : c1;
	if (naive_of(hi) < w)
		return -1;	/* not a simple gap: give up on this minute */
	while (hi - lo > 1) {
		time_t mid = lo + (hi - lo) / 2;
		if (naive_of(mid) > w)
			hi = mid;
		else
			lo = mid;
	}
	return hi > after ? hi : -1;
}

static int day_matches(const struct cron *c, const struct tm *tm)
{
	int dom = !!(c->dom & (1U << tm->tm_mday));
	int dow = !!(c->dow & (1U << tm->tm_wday));

	if (c->dom_star && c->dow_star)
		return 1;
	if (c->dom_star)
		return dow;
	if (c->dow_star)
		return dom;
	return dom || dow;
}

time_t cron_next(const struct cron *c, time_t after)
{
	time_t w = naive_of(after) / 60 * 60 + 60;
	time_t end = w + 8 * 366 * 86400L;
	struct tm tm;

	while (w < end) {
		gmtime_r(&w, &tm);
		if (!(c->mon & (1U << (tm.tm_mon + 1)))) {
			tm.tm_mon++;
			tm.tm_mday = 1;
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
			w = timegm(&tm);
			continue;
		}
		if (!day_matches(c, &tm)) {
			tm.tm_mday++;
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
			w = timegm(&tm);
			continue;
		}
		if (!(c->hour & (1U << tm.tm_hour))) {
			tm.tm_hour++;
			tm.tm_min = tm.tm_sec = 0;
			w = timegm(&tm);
			continue;
		}
		if (!(c->min & (1ULL << tm.tm_min))) {
			w += 60;
			continue;
		}
		time_t t = instant_of(w, after);
		if (t != -1)
			return t;
		w += 60;
	}
	return (time_t)-1;
}

const char *sched_fmt_time(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (t == (time_t)-1 || t == 0) {
		snprintf(buf, len, "never");
		return buf;
	}
	localtime_r(&t, &tm);
	if (!strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, len, "%lld", (long long)t);
	return buf;
}

void sched_fires_free(struct sched_fire *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].schedule);
		free(f[i].job);
	}
	free(f);
}

int sched_tick(struct db *db, const struct klab_config *cfg, time_t now, int slack_s,
	       sched_submit_fn submit, void *arg, struct sched_fire **fires, size_t *n_fires)
{
	int ret = -1;

	*fires = NULL;
	*n_fires = 0;
	for (size_t i = 0; i < cfg->n_schedules; i++) {
		const struct conf_schedule *s = &cfg->schedules[i];
		struct cron c;
		struct schedule_row row;
		char what[64], tb[64];
		int64_t next = 0;
		double next_raw = 0;
		int found;

		snprintf(what, sizeof(what), "schedule '%s'", s->name);
		if (cron_parse(&c, s->cron, what))
			continue;
		found = schedule_get(db, s->name, &row);
		if (found < 0)
			goto out;
		next_raw = row.next_fire;
		next = (int64_t)next_raw;

		if (!found || strcmp(row.cron, s->cron) || strcmp(row.job, s->job) || next <= 0) {
			time_t nf = cron_next(&c, now);
			info("schedule '%s' (%s): next fire %s", s->name, s->cron, sched_fmt_time(nf, tb, sizeof(tb)));
			if (schedule_put(db, s->name, s->cron, s->job, nf == (time_t)-1 ? 0.0 : (double)nf)) {
				schedule_row_release(&row);
				goto out;
			}
		} else if (next <= now) {
			struct sched_fire f = { 0 };
			time_t nf = cron_next(&c, now);

			f.schedule = xstrdup(s->name);
			f.job = xstrdup(s->job);
			f.due = (time_t)next;
			f.missed = now - next > slack_s;
			if (f.missed)
				log_msg(LOG_NOTICE, "schedule '%s' missed its fire time %s (no daemon was running); "
					"firing once now", s->name, sched_fmt_time((time_t)next, tb, sizeof(tb)));
			else
				log_msg(LOG_NOTICE, "schedule '%s' fires (due %s)", s->name,
					sched_fmt_time((time_t)next, tb, sizeof(tb)));
			/*
			 * Move next_fire first: if submitting crashes half way, the
			 * schedule does not fire twice. A failed submit is logged.
			 * Only from the next_fire read: another klabd on the same
			 * database (PostgreSQL) that moved it first fired it.
			 */
			int moved = schedule_fired(db, s->name, (double)now, nf == (time_t)-1 ? 0.0 : (double)nf,
						   next_raw);
			if (moved <= 0) {
				free(f.schedule);
				free(f.job);
				schedule_row_release(&row);
				if (moved == 0)
					continue;	/* fired elsewhere */
				goto out;
			}
			f.job_id = submit ? submit(arg, s) : 0;
			if (f.job_id < 0) {
				warn("schedule '%s': cannot submit job '%s'", s->name, s->job);
				f.job_id = 0;
			}
			*fires = xrealloc(*fires, (*n_fires + 1) * sizeof(**fires));
			(*fires)[(*n_fires)++] = f;
		}
		schedule_row_release(&row);
	}
	/* Forget schedules no longer configured. */
	{
		struct strvec names = STRVEC_INIT;
		if (schedule_names(db, &names)) {
			strvec_clear(&names);
			goto out;
		}
		for (size_t i = 0; i < names.n; i++) {
			size_t k;
			for (k = 0; k < cfg->n_schedules; k++)
				if (!strcmp(cfg->schedules[k].name, names.v[i]))
					break;
			if (k == cfg->n_schedules)
				schedule_delete(db, names.v[i]);
		}
		strvec_clear(&names);
	}
	ret = 0;
out:
	return ret;
}
