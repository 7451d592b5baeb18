/*
 * watch.c: klabd's patchwork watcher (watch/watch.h, docs/patchwork.md):
 * events in, series through intake, jobs queued and followed, checks out.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "buf.h"
#include "compare/compare.h"
#include "intake/diff.h"
#include "intake/intake.h"
#include "intake/series.h"
#include "job/job.h"
#include "jsonh.h"
#include "log.h"
#include "report/report_watch.h"
#include "store/patchwork.h"
#include "strvec.h"
#include "util.h"
#include "watch/pw_api.h"
#include "watch/watch.h"

#define MAX_EVENTS 100		/* per poll: the rest at the next */
#define MAX_SERIES 16		/* new series taken through intake per poll */
#define DESC_MAX 400		/* a check's description: one line (Patchwork keeps any length; two workloads take ~280) */

struct poll {
	struct db *db;
	const struct klab_config *cfg;
	const struct conf_patchwork *w;
	struct pw_api api;
	struct watch_stats *st;
};

int watch_glob_match(const char *g, const char *p)
{
	for (; *g; g++, p++) {
		if (g[0] == '*' && g[1] == '*') {
			g += 2;
			if (*g == '/')
				g++;	/* a double star and '/' also match no folder at all */
			for (const char *q = p; ; q++) {
				if (watch_glob_match(g, q))
					return 1;
				if (!*q)
					return 0;
			}
		}
		if (*g == '*') {
			for (const char *q = p; ; q++) {
				if (watch_glob_match(g + 1, q))
					return 1;
				if (!*q || *q == '/')
					return 0;
			}
		}
		if (!*p)
			return 0;
		if (*g == '?') {
			if (*p == '/')
				return 0;
			continue;
		}
		if (*g != *p)
			return 0;
	}
	return !*p;
}

double watch_parse_date(const char *s)
{
	struct tm tm;
	int y, mo, d, h, mi, n = 0;
	double sec;

	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n < 19)
		return -1;
	if (s[n] && strcmp(s + n, "Z") && strcmp(s + n, "+00:00"))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec < 0 || sec >= 61)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	return (double)timegm(&tm) + sec;
}

/* One line, at most DESC_MAX bytes (cut at a character boundary). */
static void one_line(struct buf *b)
{
	for (size_t i = 0; i < b->len; i++)
		if (b->buf[i] == '\n' || b->buf[i] == '\r' || b->buf[i] == '\t')
			b->buf[i] = ' ';
	if (b->len > DESC_MAX) {
		size_t n = DESC_MAX - 3;

		while (n && ((unsigned char)b->buf[n] & 0xc0) == 0x80)
			n--;
		buf_setlen(b, n);
		buf_addstr(b, "...");
	}
}

static void fmt_dur(struct buf *b, double s)
{
	if (s < 90)
		buf_addf(b, "%.0fs", s);
	else if (s < 5400)
		buf_addf(b, "%.0fm", s / 60);
	else
		buf_addf(b, "%.1fh", s / 3600);
}

static char *target_url(const struct conf_patchwork *w, int64_t job)
{
	if (!w->report_url || !job)
		return NULL;
	return xasprintf("%s/job-%lld.html", w->report_url, (long long)job);
}

/* The intents of one check state on every patch of a series. */
struct intent {
	struct poll *p;
	int64_t pw_series;
	const char *state, *desc, *url;
};

static int intend_one(int64_t patch_id, const char *name, void *data)
{
	struct intent *in = data;

	(void)name;
	return pw_check_intend(in->p->db, in->p->w->name, in->pw_series, patch_id, in->p->w->context, in->state,
			       in->desc, in->url) ? -1 : 0;
}

static int intend_all(struct poll *p, int64_t pw_series, const char *state, const char *desc, const char *url)
{
	struct intent in = { p, pw_series, state, desc, url };

	return pw_patches_each(p->db, p->w->name, pw_series, intend_one, &in) ? -1 : 0;
}

/* S percent-encoded for a query string (caller frees). */
static char *url_escape(const char *s)
{
	struct buf b = BUF_INIT;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~", c))
			buf_addch(&b, c);
		else
			buf_addf(&b, "%%%02X", c);
	}
	return buf_detach(&b, NULL);
}

/* --- events ---------------------------------------------------------------- */

static int poll_events(struct poll *p)
{
	struct json_object *arr = NULL;
	struct buf url = BUF_INIT;
	char *since = NULL, *esc_since, *esc_proj;
	int rc, ret = 0;

	if (pw_cursor_get(p->db, p->w->name, &since) < 0)
		return -1;
	if (!since) {
		/* a new watcher starts at `since`, else now: it does not test the project's history */
		if (p->w->since) {
			since = xstrdup(p->w->since);
		} else {
			char now[32];
			time_t t = time(NULL);
			struct tm tm;

			strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%S", gmtime_r(&t, &tm));
			since = xstrdup(now);
		}
		if (pw_cursor_set(p->db, p->w->name, since) < 0)
			goto out;
	}
	esc_since = url_escape(since);
	esc_proj = url_escape(p->w->project);
	buf_addf(&url, "/api/1.3/events/?category=series-completed&project=%s&since=%s&order=date&per_page=%d",
		 esc_proj, esc_since, MAX_EVENTS);
	free(esc_since);
	free(esc_proj);
	rc = pw_api_get_json(&p->api, url.buf, &arr);
	if (rc == PW_API_TRANSIENT) {
		p->st->transient = 1;
		goto out;
	}
	if (rc) {
		ret = -1;
		goto out;
	}
	if (!json_object_is_type(arr, json_type_array)) {
		ret = error("patchwork events '%s%s': not a JSON array", p->api.base, url.buf);
		goto out;
	}
	for (size_t i = 0; i < json_object_array_length(arr) && i < MAX_EVENTS; i++) {
		struct json_object *ev = json_object_array_get_idx(arr, i), *payload, *series;
		const char *date = NULL, *cat = NULL;
		int64_t eid = -1, sid;
		char what[96];
		double t;
		int added;

		p->st->events++;
		if (json_get_int(ev, "id", &eid, "patchwork event") != 0)
			eid = -1;
		snprintf(what, sizeof(what), "patchwork event %lld", (long long)eid);
		/* each field checked: a document that is no use is named with its field, and the next one read */
		if (json_get_str(ev, "date", &date, what) || (t = watch_parse_date(date)) < 0) {
			error("%s: field 'date' is %s", what, date ? "not an ISO 8601 date" : "missing");
			p->st->malformed++;
			continue;
		}
		if (json_get_str(ev, "category", &cat, what) || strcmp(cat, "series-completed")) {
			error("%s: field 'category' is %s%s%s", what, cat ? "'" : "missing", cat ? cat : "",
			      cat ? "', not 'series-completed'" : "");
			p->st->malformed++;
		} else if (json_get_obj(ev, "payload", &payload, what) ||
			   json_get_obj(payload, "series", &series, what) ||
			   json_get_int(series, "id", &sid, what) || sid <= 0) {
			error("%s: field 'payload.series.id' is missing or not a series id", what);
			p->st->malformed++;
		} else {
			if (pw_series_add(p->db, p->w->name, sid, t, &added) < 0) {
				ret = -1;
				break;
			}
			if (added) {
				p->st->seen++;
				log_msg(LOG_NOTICE, "patchwork '%s': series %lld completed at %s", p->w->name,
					(long long)sid, date);
			}
		}
		/* the cursor moves past an event only after its series is recorded (since is inclusive) */
		if (pw_cursor_set(p->db, p->w->name, date) < 0) {
			ret = -1;
			break;
		}
	}
out:
	json_object_put(arr);
	buf_release(&url);
	free(since);
	return ret;
}

/* --- a new series -------------------------------------------------------- */

/* The files a series touches (old and new names), for the path globs. */
static void series_files(const struct series *s, struct strvec *files)
{
	for (size_t i = 0; i < s->n_patches; i++) {
		struct diff d;

		if (!s->patches[i].diff)
			continue;
		memset(&d, 0, sizeof(d));
		if (diff_parse(s->patches[i].diff, &d) == 1) {
			for (size_t k = 0; k < d.n_files; k++) {
				if (d.files[k].old_path)
					strvec_push(files, d.files[k].old_path);
				if (d.files[k].new_path && (!d.files[k].old_path ||
							      strcmp(d.files[k].old_path, d.files[k].new_path)))
					strvec_push(files, d.files[k].new_path);
			}
		}
		diff_free(&d);
	}
}

/* NULL when some file matches a glob of W (or W has none), else why not (caller frees). */
static char *paths_filter(const struct conf_patchwork *w, const struct strvec *files)
{
	struct buf b = BUF_INIT;

	if (!w->paths.n)
		return NULL;
	for (size_t i = 0; i < files->n; i++)
		for (size_t g = 0; g < w->paths.n; g++)
			if (watch_glob_match(w->paths.v[g], files->v[i]))
				return NULL;
	buf_addstr(&b, "touches no path of");
	for (size_t g = 0; g < w->paths.n; g++)
		buf_addf(&b, " %s", w->paths.v[g]);
	buf_addstr(&b, " (it touches");
	for (size_t i = 0; i < files->n && i < 4; i++)
		buf_addf(&b, "%s %s", i ? "," : "", files->v[i]);
	if (files->n > 4)
		buf_addf(&b, " and %zu more", files->n - 4);
	if (!files->n)
		buf_addstr(&b, " no file");
	buf_addstr(&b, ")");
	return buf_detach(&b, NULL);
}

/* NULL when every patch passes W's delegate and state filters, else why not (caller frees); *TRANSIENT on a server failure. */
static char *patch_filter(struct poll *p, struct json_object *patches, int *err)
{
	const struct conf_patchwork *w = p->w;

	*err = 0;
	if (!w->delegate && !w->states.n)
		return NULL;
	for (size_t i = 0; i < json_object_array_length(patches); i++) {
		struct json_object *pa = json_object_array_get_idx(patches, i), *doc = NULL, *dl = NULL;
		const char *state = NULL, *user = NULL;
		char path[96], *why = NULL;
		int64_t id;
		int rc, ok = 0;

		if (json_get_int(pa, "id", &id, "patchwork series") != 0)
			continue;
		snprintf(path, sizeof(path), "/api/1.3/patches/%lld/", (long long)id);
		rc = pw_api_get_json(&p->api, path, &doc);
		if (rc) {
			*err = rc;
			return NULL;
		}
		if (w->states.n) {
			if (json_get_str(doc, "state", &state, "patchwork patch") != 0)
				why = xasprintf("patch %lld: field 'state' is missing", (long long)id);
			for (size_t k = 0; !why && k < w->states.n && !ok; k++)
				ok = !strcmp(w->states.v[k], state);
			if (!why && !ok)
				why = xasprintf("patch %lld is in state '%s', not one of the states watched", (long long)id,
						state);
		}
		if (!why && w->delegate) {
			if (json_object_object_get_ex(doc, "delegate", &dl) && dl &&
			    json_object_is_type(dl, json_type_object))
				json_get_str(dl, "username", &user, "patchwork patch delegate");
			if (!user || strcmp(user, w->delegate))
				why = xasprintf("patch %lld is delegated to %s%s%s, not '%s'", (long long)id,
						user ? "'" : "", user ? user : "nobody", user ? "'" : "", w->delegate);
		}
		json_object_put(doc);
		if (why)
			return why;
	}
	return NULL;
}

struct older {
	struct poll *p;
	int64_t by_pw, version;
};

static int supersede(const struct pw_series_row *r, void *data)
{
	struct older *o = data;
	struct buf why = BUF_INIT;
	char *url = target_url(o->p->w, r->job_id);
	int ret = 0;

	buf_addf(&why, "not tested: superseded by v%lld (patchwork series %lld)", (long long)o->version,
		 (long long)o->by_pw);
	if (r->job_id && r->job_state && (!strcmp(r->job_state, "queued") || !strcmp(r->job_state, "running")) &&
	    job_cancel(o->p->db, r->job_id))
		warn("patchwork '%s': cannot cancel job %lld of series %lld", o->p->w->name, (long long)r->job_id,
		     (long long)r->pw_id);
	if (pw_series_set_state(o->p->db, r->id, "superseded", why.buf) ||
	    intend_all(o->p, r->pw_id, "warning", why.buf, url))
		ret = -1;
	else
		log_msg(LOG_NOTICE, "patchwork '%s': series %lld (job %lld) %s", o->p->w->name, (long long)r->pw_id,
			(long long)r->job_id, why.buf + strlen("not tested: "));
	o->p->st->superseded++;
	free(url);
	buf_release(&why);
	return ret;
}

static int pending_check(struct poll *p, const struct pw_series_row *r, int64_t job)
{
	struct buf d = BUF_INIT;
	int place, queued, ret;
	double mean_s, oldest, now = now_wall();
	char *url = target_url(p->w, job);

	if (pw_queue(p->db, p->w->name, job, &place, &queued, &mean_s, &oldest) < 0) {
		free(url);
		return -1;
	}
	buf_addf(&d, "queued as job %lld: place %d of %d", (long long)job, place, queued);
	if (mean_s > 0) {
		buf_addstr(&d, ", ETA ~");
		fmt_dur(&d, mean_s * place);
	} else {
		buf_addstr(&d, ", ETA not known yet");
	}
	if (p->w->max_lag_ms > 0 && oldest > 0 && (now - oldest) * 1000 > p->w->max_lag_ms) {
		buf_addstr(&d, "; the lab is behind: the oldest waiting series completed ");
		fmt_dur(&d, now - oldest);
		buf_addstr(&d, " ago (max_lag ");
		fmt_dur(&d, p->w->max_lag_ms / 1000.0);
		buf_addstr(&d, ")");
	}
	one_line(&d);
	ret = intend_all(p, r->pw_id, "pending", d.buf, url);
	buf_release(&d);
	free(url);
	return ret;
}

/*
 * Why intake refused a series, as its check says it: the helper's reason with
 * the mbox's path on this host ('/var/.../series-N.mbox') said as "the mbox".
 */
static char *intake_reason(const struct buf *reason, const char *file)
{
	struct buf b = BUF_INIT;
	char *quoted = xasprintf("'%s'", file);
	const char *r = reason->len ? reason->buf : NULL, *at;

	if (!r) {
		free(quoted);
		return xstrdup("the series cannot be read (the error is in klabd's log)");
	}
	buf_addstr(&b, "the series cannot be read: ");
	while ((at = strstr(r, quoted))) {
		buf_add(&b, r, (size_t)(at - r));
		buf_addstr(&b, "the mbox");
		r = at + strlen(quoted);
	}
	buf_addstr(&b, r);
	free(quoted);
	return buf_detach(&b, NULL);
}

static int take_series(const struct pw_series_row *r, void *data)
{
	struct poll *p = data;
	const struct conf_patchwork *w = p->w;
	struct json_object *doc = NULL, *patches = NULL, *sub = NULL;
	const char *name = NULL, *mbox_url = NULL, *email = NULL;
	struct buf mbox = BUF_INIT, path = BUF_INIT, src = BUF_INIT;
	struct strvec files = STRVEC_INIT;
	struct series *s = NULL;
	struct series_opts so = { 0 };
	struct job_submit_opts jo = JOB_SUBMIT_OPTS_INIT;
	const struct conf_job *tmpl = conf_job(p->cfg, w->job);
	struct buf reason = BUF_INIT;	/* a callee's reason: intake's, job_submit's */
	char api[96], what[96], *why = NULL;
	int64_t version = 1, sid, job;
	int rc, ret = 0, err, known = 0;	/* known: every patch of the series is recorded */

	if (p->st->queued + p->st->filtered + p->st->failed >= MAX_SERIES || p->st->transient)
		return 1;
	snprintf(api, sizeof(api), "/api/1.3/series/%lld/", (long long)r->pw_id);
	snprintf(what, sizeof(what), "patchwork series %lld", (long long)r->pw_id);
	rc = pw_api_get_json(&p->api, api, &doc);
	if (rc == PW_API_TRANSIENT) {
		p->st->transient = 1;
		return 1;
	}
	if (rc) {
		why = xasprintf("cannot read %s%s", p->api.base, api);
		goto failed;
	}
	/* every field the watcher uses, checked, the document named with the field */
	if (json_get_array(doc, "patches", &patches, what) || !patches) {
		why = xasprintf("%s: field 'patches' is missing or not a list", what);
		goto failed;
	}
	if (json_get_str(doc, "mbox", &mbox_url, what) || !mbox_url) {
		why = xasprintf("%s: field 'mbox' is missing or not a URL", what);
		goto failed;
	}
	if (json_get_int(doc, "version", &version, what) < 0 || version < 1) {
		why = xasprintf("%s: field 'version' is not a positive number", what);
		goto failed;
	}
	json_get_str(doc, "name", &name, what);
	if (json_get_obj(doc, "submitter", &sub, what) == 0 && sub)
		json_get_str(sub, "email", &email, what);
	if (!json_object_array_length(patches)) {
		why = xasprintf("%s: field 'patches' is empty", what);
		goto failed;
	}
	if (pw_series_set_info(p->db, r->id, version, name ? name : "", email ? email : ""))
		goto dberr;
	for (size_t i = 0; i < json_object_array_length(patches); i++) {
		struct json_object *pa = json_object_array_get_idx(patches, i);
		const char *pname = NULL;
		int64_t pid;

		if (json_get_int(pa, "id", &pid, what) != 0 || pid <= 0) {
			why = xasprintf("%s: field 'patches[%zu].id' is missing or not a patch id", what, i);
			goto failed;
		}
		json_get_str(pa, "name", &pname, what);
		if (pw_patch_add(p->db, w->name, r->pw_id, pid, (int)i + 1, pname))
			goto dberr;
	}
	known = 1;
	why = patch_filter(p, patches, &err);
	if (err == PW_API_TRANSIENT) {
		p->st->transient = 1;
		goto out;
	}
	if (why)
		goto filtered;
	/* the mbox, kept as a file the job's own intake reads again */
	rc = pw_api_get(&p->api, mbox_url, &mbox);
	if (rc == PW_API_TRANSIENT) {
		p->st->transient = 1;
		goto out;
	}
	if (rc) {
		why = xasprintf("cannot read the mbox of %s (%s)", what, mbox_url);
		goto failed;
	}
	buf_addf(&path, "%s/patchwork/%s", p->cfg->lab.work_dir, w->name);
	if (mkdir_p(path.buf) || chmod(path.buf, 0755)) {
		why = xasprintf("cannot make the folder '%s': %s", path.buf, strerror(errno));
		goto failed;
	}
	buf_addf(&path, "/series-%lld.mbox", (long long)r->pw_id);
	if (write_file_atomic(path.buf, mbox.buf, mbox.len, 0644)) {
		why = xasprintf("cannot write '%s'", path.buf);
		goto failed;
	}
	buf_addf(&src, "mbox:%s", path.buf);
	so.timeout_ms = w->timeout_ms;
	/* untrusted mail: parsed by the sandboxed helper, its JSON read back field by field */
	so.why = &reason;
	if (series_load_sandboxed(p->cfg, src.buf, &so, &s)) {
		why = intake_reason(&reason, path.buf);
		goto failed;
	}
	series_files(s, &files);
	why = paths_filter(w, &files);
	if (why)
		goto filtered;
	if (series_store(p->db, s, &sid, NULL, NULL))
		goto dberr;
	{
		struct older o = { p, r->pw_id, version };

		if (version > 1 && pw_series_older(p->db, w->name, name ? name : "", email ? email : "", version,
						   supersede, &o) < 0)
			goto dberr;
	}
	jo.job = w->job;
	/* a template that builds a kernel gets the series; a tuning one (the netns lab) runs as it is */
	if (tmpl && (tmpl->tree || tmpl->series))
		jo.series = src.buf;
	job = job_submit(p->db, p->cfg, &jo, &reason);
	if (job < 0) {
		why = xasprintf("job '%s' could not be queued: %s", w->job, reason.buf);
		goto failed;
	}
	if (pw_series_set_queued(p->db, r->id, sid, job) || pending_check(p, r, job))
		goto dberr;
	log_msg(LOG_NOTICE, "patchwork '%s': series %lld v%lld '%s' queued as job %lld", w->name,
		(long long)r->pw_id, (long long)version, name ? name : "", (long long)job);
	p->st->queued++;
	goto out;
filtered:
	log_msg(LOG_NOTICE, "patchwork '%s': series %lld filtered out: %s", w->name, (long long)r->pw_id, why);
	if (pw_series_set_state(p->db, r->id, "filtered", why))
		goto dberr;
	p->st->filtered++;
	goto out;
failed:
	error("patchwork '%s': series %lld: %s", w->name, (long long)r->pw_id, why);
	if (pw_series_set_state(p->db, r->id, "error", why))
		goto dberr;
	if (known) {
		/* its author learns it on every patch: a mail klab cannot read, a job it cannot queue */
		struct buf d = BUF_INIT;

		buf_addf(&d, "not tested: %s", why);
		one_line(&d);
		rc = intend_all(p, r->pw_id, "warning", d.buf, NULL);
		buf_release(&d);
		if (rc)
			goto dberr;
	}
	p->st->failed++;
	goto out;
dberr:
	ret = -1;
out:
	free(why);
	if (s)
		series_free(s);
	strvec_clear(&files);
	buf_release(&mbox);
	buf_release(&path);
	buf_release(&src);
	buf_release(&reason);
	json_object_put(doc);
	return ret;
}

/* --- jobs followed ---------------------------------------------------------- */

/* The final check of a job that ended: *STATE and the one-line description into D. */
static void outcome(struct poll *p, const struct pw_series_row *r, const char **state, struct buf *d)
{
	const char *err = r->job_error ? r->job_error : "";

	if (!strcmp(r->job_state, "done")) {
		struct compare_result res;
		int worse = 0, n = 0;
		struct buf rows = BUF_INIT;
		const char *wl = NULL;	/* the workload of the last row written */

		memset(&res, 0, sizeof(res));
		if (compare_load(p->db, r->job_id, 0, &res) != 1) {
			*state = "warning";
			buf_addf(d, "job %lld ended without a comparison", (long long)r->job_id);
			return;
		}
		/* the rows grouped by workload: "udp_rr: a, b; udp_tx_dummy: c" */
		for (size_t i = 0; i < res.n_rows; i++) {
			const struct compare_row *c = &res.rows[i];
			const char *cw = c->workload ? c->workload : "";
			int bad;

			if (!c->headline)
				continue;
			bad = c->st.verdict == VERDICT_CHANGED && c->better &&
			      ((!strcmp(c->better, "higher") && c->st.change_pct < 0) ||
			       (!strcmp(c->better, "lower") && c->st.change_pct > 0));
			worse += bad;
			if (!wl || strcmp(wl, cw))
				buf_addf(&rows, "%s%s: ", n ? "; " : "", cw);
			else
				buf_addstr(&rows, ", ");
			wl = cw;
			n++;
			buf_addf(&rows, "%s%s %+.2f%% [%+.2f, %+.2f] %s", c->metric, bad ? " (worse)" : "",
				 c->st.change_pct, c->st.ci_lo, c->st.ci_hi, stats_verdict_name(c->st.verdict));
		}
		*state = worse ? "warning" : "success";
		/* what measured it first: a description cut at DESC_MAX keeps it */
		if (worse)
			buf_addf(d, "%d headline%s worse", worse, worse == 1 ? "" : "s");
		else
			buf_addstr(d, "no headline worse");
		buf_addf(d, " (%s): ", res.clock && !strcmp(res.clock, "icount") ? "path length, icount" : "wall clock, real");
		buf_addstr(d, n ? rows.buf : "no headline metric");
		buf_release(&rows);
		compare_result_free(&res);
	} else if (!strcmp(r->job_state, "failed")) {
		const char *reason = strstr(err, " failed: ");
		int build = starts_with(err, "step build:") || starts_with(err, "step intake");

		reason = reason ? reason + 9 : err;
		if (strstr(err, "cannot apply") || strstr(err, "does not apply")) {
			*state = "warning";
			buf_addf(d, "does not apply: %s", reason);
		} else if (build) {
			*state = "fail";
			buf_addf(d, "does not build: %s", reason);
		} else {
			*state = "warning";
			buf_addf(d, "not tested (lab error): %s", err);
		}
	} else {
		*state = "warning";
		buf_addf(d, "not tested: job %lld was cancelled", (long long)r->job_id);
	}
	one_line(d);
}

static int follow(const struct pw_series_row *r, void *data)
{
	struct poll *p = data;
	const char *state = NULL;
	struct buf d = BUF_INIT;
	char *url;
	int ret = 0;

	if (!r->job_state)
		return 0;
	if (!strcmp(r->job_state, "queued"))
		return 0;
	if (!strcmp(r->job_state, "running")) {
		if (strcmp(r->state, "running")) {
			p->st->running++;
			return pw_series_set_state(p->db, r->id, "running", NULL) ? -1 : 0;
		}
		return 0;
	}
	outcome(p, r, &state, &d);
	url = target_url(p->w, r->job_id);
	if (intend_all(p, r->pw_id, state, d.buf, url) || pw_series_set_outcome(p->db, r->id, state, d.buf))
		ret = -1;
	else
		log_msg(LOG_NOTICE, "patchwork '%s': series %lld: job %lld %s: %s: %s", p->w->name, (long long)r->pw_id,
			(long long)r->job_id, r->job_state, state, d.buf);
	p->st->ended++;
	free(url);
	buf_release(&d);
	return ret;
}

/* --- checks posted --------------------------------------------------------- */

static int post_one(const struct pw_check_row *c, void *data)
{
	struct poll *p = data;
	struct buf err = BUF_INIT;
	int rc;

	if (c->attempts >= 10)
		return 0;	/* refused ten times: left for a person (klab watch shows the error) */
	if (c->attempts > 0) {
		/* an earlier post may have reached the server before klabd died: look before posting again */
		rc = pw_api_has_check(&p->api, c->patch_id, c->context, c->state);
		if (rc == PW_API_TRANSIENT) {
			p->st->transient = 1;
			return 1;
		}
		if (rc == 1) {
			log_msg(LOG_NOTICE, "patchwork '%s': the %s check of patch %lld is on the server already; not "
				"posted again", p->w->name, c->state, (long long)c->patch_id);
			p->st->found++;
			return pw_check_posted(p->db, c->id, 1) ? -1 : 0;
		}
	}
	if (pw_check_attempt(p->db, c->id))
		return -1;
	rc = pw_api_post_check(&p->api, c->patch_id, c->state, c->context, c->description, c->target_url, &err);
	if (rc == 0 && getenv("KLAB_TEST_PW_KILL") && !strcmp(getenv("KLAB_TEST_PW_KILL"), "after-post"))
		raise(SIGKILL);	/* tests only: klabd dies between the post and its record */
	if (rc == 0) {
		p->st->posted++;
		rc = pw_check_posted(p->db, c->id, 0) ? -1 : 0;
	} else {
		pw_check_failed(p->db, c->id, err.buf);
		if (rc == PW_API_TRANSIENT) {
			p->st->transient = 1;
			rc = 1;	/* the order of checks is kept: the rest wait for the next poll */
		} else {
			rc = 0;
		}
	}
	buf_release(&err);
	return rc;
}

static int finish(const struct pw_series_row *r, void *data)
{
	struct poll *p = data;
	int n, unposted;
	double last;

	if (r->final > 0)
		return 0;
	if (pw_checks_final(p->db, p->w->name, r->pw_id, &n, &unposted, &last))
		return -1;
	if (n > 0 && unposted == 0) {
		log_msg(LOG_NOTICE, "patchwork '%s': series %lld: %s check on every patch, %.1f s after it completed",
			p->w->name, (long long)r->pw_id, r->outcome ? r->outcome : "final", last - r->completed);
		return pw_series_set_final(p->db, r->id, last) ? -1 : 0;
	}
	return 0;
}

int watch_poll(struct db *db, const struct klab_config *cfg, const struct conf_patchwork *w,
	       struct watch_stats *st)
{
	struct poll p = { db, cfg, w, { 0 }, st };
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (pw_api_open(&p.api, w->url, w->token_file, w->timeout_ms))
		goto out;
	if (poll_events(&p) < 0)
		goto out;
	if (!st->transient && pw_series_each(db, w->name, "seen", take_series, &p) < 0)
		goto out;
	if (pw_series_each(db, w->name, "queued", follow, &p) < 0 ||
	    pw_series_each(db, w->name, "running", follow, &p) < 0)
		goto out;
	if (pw_checks_unposted(db, w->name, post_one, &p) < 0)
		goto out;
	if (pw_series_each(db, w->name, "done", finish, &p) < 0 ||
	    pw_series_each(db, w->name, "superseded", finish, &p) < 0)
		goto out;
	/* the status page of the report site; a failure to write it is logged, not the poll's */
	if (cfg->lab.report_dir)
		report_watch_page(db, cfg, cfg->lab.report_dir);
	ret = 0;
out:
	st->requests = p.api.requests;
	st->retries = p.api.retries;
	pw_api_close(&p.api);
	return ret;
}
