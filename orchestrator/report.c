/* report.c: `klab report`: the static report pages (index, job, history) and their charts. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "buf.h"
#include "db.h"
#include "html.h"
#include "jsonh.h"
#include "log.h"
#include "plot.h"
#include "report.h"
#include "report_int.h"
#include "stats.h"
#include "strvec.h"
#include "util.h"

/* A chart referenced by a page, resolved once gnuplot has run. */
struct chart_ref {
	char *file;		/* relative to the output folder: charts/NAME.svg */
	char *title;
};

struct page {
	char *name;		/* file name in the output folder */
	struct buf html;
};

struct rep {
	struct db *db;
	char *outdir;
	struct plot_batch pb;
	struct chart_ref *charts;
	size_t n_charts, a_charts;
	struct page *pages;
	size_t n_pages, a_pages;
	int64_t *jobs;		/* jobs whose pages this run writes */
	size_t n_jobs;
	int no_charts;
	int max_jobs;
	char generated[32];
};

/* The marker a page holds where chart N goes: control bytes never survive html_escape(). */
#define CHART_MARK '\x01'

/* ---- small formatting helpers (shared with mailreport.c via report_int.h) ---- */

char *rep_colstr(struct db_stmt *st, int i)
{
	const char *s = db_col_text(st, i);

	return s ? xstrdup((const char *)s) : NULL;
}

double rep_coldbl(struct db_stmt *st, int i)
{
	return db_col_null(st, i) ? NAN : db_col_double(st, i);
}

void rep_fmt_si(struct buf *b, double v)
{
	double a = fabs(v);

	if (!isfinite(v))
		buf_addstr(b, "-");
	else if (a >= 1e9)
		buf_addf(b, "%.4gG", v / 1e9);
	else if (a >= 1e6)
		buf_addf(b, "%.4gM", v / 1e6);
	else if (a >= 1e4)
		buf_addf(b, "%.4gk", v / 1e3);
	else
		buf_addf(b, "%.4g", v);
}

void rep_fmt_pct(struct buf *b, double v)
{
	if (!isfinite(v))
		buf_addstr(b, "-");
	else
		buf_addf(b, "%+.2f%%", v);
}

void rep_fmt_p(struct buf *b, double p)
{
	if (!isfinite(p))
		buf_addstr(b, "-");
	else if (p < 0.0001)
		buf_addstr(b, "<0.0001");
	else if (p < 0.01)
		buf_addf(b, "%.4f", p);
	else
		buf_addf(b, "%.3f", p);
}

void rep_fmt_time(struct buf *b, double t)
{
	char s[32];
	time_t tt = (time_t)t;
	struct tm tm;

	if (!isfinite(t) || t <= 0 || !gmtime_r(&tt, &tm)) {
		buf_addstr(b, "-");
		return;
	}
	strftime(s, sizeof(s), "%Y-%m-%d %H:%M", &tm);
	buf_addstr(b, s);
}

int rep_metric_rank(const char *metric)
{
	static const char *const head[] = { "tps", "tx_pps", "rx_pps", "tx_bps" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(head); i++)
		if (!strcmp(metric, head[i]))
			return (int)i;
	if (!strcmp(metric, "cpu_us_per_op"))
		return 10;
	if (starts_with(metric, "latency_"))
		return 11;
	if (!strcmp(metric, "cpu_busy_pct"))
		return 12;
	return 20;
}

/* ---- comparisons ---- */

static const char CMP_COLS[] =
	"id, label_a, label_b, workload, metric, unit, better, n_a, n_b, mean_a, mean_b, cov_a, cov_b, "
	"change_pct, ci_lo, ci_hi, p_welch, p_holm, p_mwu, hl_ratio, mde_pct, threshold_pct, verdict, "
	"claim, job_id, created";

static void cmp_read(struct db_stmt *st, struct rep_cmp *c)
{
	memset(c, 0, sizeof(*c));
	c->id = db_col_int64(st, 0);
	c->label_a = rep_colstr(st, 1);
	c->label_b = rep_colstr(st, 2);
	c->workload = rep_colstr(st, 3);
	c->metric = rep_colstr(st, 4);
	c->unit = rep_colstr(st, 5);
	c->better = rep_colstr(st, 6);
	c->n_a = db_col_int64(st, 7);
	c->n_b = db_col_int64(st, 8);
	c->mean_a = rep_coldbl(st, 9);
	c->mean_b = rep_coldbl(st, 10);
	c->cov_a = rep_coldbl(st, 11);
	c->cov_b = rep_coldbl(st, 12);
	c->change_pct = rep_coldbl(st, 13);
	c->ci_lo = rep_coldbl(st, 14);
	c->ci_hi = rep_coldbl(st, 15);
	c->p_welch = rep_coldbl(st, 16);
	c->p_holm = rep_coldbl(st, 17);
	c->p_mwu = rep_coldbl(st, 18);
	c->hl_ratio = rep_coldbl(st, 19);
	c->mde_pct = rep_coldbl(st, 20);
	c->threshold_pct = rep_coldbl(st, 21);
	c->verdict = rep_colstr(st, 22);
	c->claim = rep_colstr(st, 23);
	c->job_id = db_col_int64(st, 24);
	c->created = rep_coldbl(st, 25);
}

static void cmp_free(struct rep_cmp *c)
{
	free(c->label_a);
	free(c->label_b);
	free(c->workload);
	free(c->metric);
	free(c->unit);
	free(c->better);
	free(c->verdict);
	free(c->claim);
}

void rep_cmps_free(struct rep_cmp *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cmp_free(&c[i]);
	free(c);
}

static int cmp_order(const void *x, const void *y)
{
	const struct rep_cmp *a = x, *b = y;
	int r = strcmp(a->workload, b->workload);

	if (r)
		return r;
	r = rep_metric_rank(a->metric) - rep_metric_rank(b->metric);
	return r ? r : strcmp(a->metric, b->metric);
}

int rep_load_cmps(struct db *db, int64_t job_id, struct rep_cmp **out, size_t *n)
{
	struct buf sql = BUF_INIT;
	struct db_stmt *st;
	struct rep_cmp *v = NULL;
	size_t nv = 0, av = 0;
	int rc;

	buf_addf(&sql, "SELECT %s FROM comparisons WHERE id IN "
		 "(SELECT MAX(id) FROM comparisons WHERE job_id = ? GROUP BY workload, metric)", CMP_COLS);
	st = db_prepare(db, sql.buf, "i", job_id);
	buf_release(&sql);
	if (!st)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		if (nv == av) {
			av = av ? 2 * av : 16;
			v = xrealloc(v, av * sizeof(*v));
		}
		cmp_read(st, &v[nv++]);
	}
	db_finalize(st);
	if (rc != DB_DONE) {
		rep_cmps_free(v, nv);
		return error("cannot read the comparisons of job %lld: %s", (long long)job_id, db_errmsg(db));
	}
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_order);
	*out = v;
	*n = nv;
	return 0;
}

/* +1: the change goes the better way, -1: the worse way, 0: unknown. */
int rep_direction(const struct rep_cmp *c)
{
	if (!c->better || !isfinite(c->change_pct) || c->change_pct == 0)
		return 0;
	if (!strcmp(c->better, "higher"))
		return c->change_pct > 0 ? 1 : -1;
	if (!strcmp(c->better, "lower"))
		return c->change_pct < 0 ? 1 : -1;
	return 0;
}

const char *rep_verdict_text(const struct rep_cmp *c)
{
	const char *v = c->verdict ? c->verdict : "";

	if (!strcmp(v, "CHANGED")) {
		int d = rep_direction(c);

		return d > 0 ? "CHANGED (better)" : d < 0 ? "CHANGED (worse)" : "CHANGED";
	}
	if (!*v)
		return "not compared";
	return v;
}

static const char *verdict_class(const struct rep_cmp *c)
{
	const char *v = c->verdict ? c->verdict : "";

	if (!strcmp(v, "CHANGED")) {
		int d = rep_direction(c);

		return d > 0 ? "v-better" : d < 0 ? "v-worse" : "v-changed";
	}
	if (!strcmp(v, "EQUIVALENT"))
		return "v-equivalent";
	if (!strcmp(v, "INCONCLUSIVE"))
		return "v-inconclusive";
	return "v-descriptive";
}

const char *rep_claim_text(const char *claim)
{
	if (!claim)
		return NULL;
	if (!strcmp(claim, "consistent"))
		return "consistent with the claim";
	if (!strcmp(claim, "outside"))
		return "changed, but outside the claimed range";
	if (!strcmp(claim, "opposite"))
		return "opposite to the claim";
	if (!strcmp(claim, "unsupported"))
		return "the claim is not supported";
	return claim;
}

/* ---- the report run: pages, charts ---- */

static void chart_add(struct rep *r, struct buf *html, const char *file, const char *title)
{
	if (r->n_charts == r->a_charts) {
		r->a_charts = r->a_charts ? 2 * r->a_charts : 32;
		r->charts = xrealloc(r->charts, r->a_charts * sizeof(*r->charts));
	}
	r->charts[r->n_charts].file = xstrdup(file);
	r->charts[r->n_charts].title = xstrdup(title);
	buf_addf(html, "%c%zu%c", CHART_MARK, r->n_charts, CHART_MARK);
	r->n_charts++;
}

/* File-name-safe form of an outside string; a hash keeps two different names apart. */
void rep_slug(struct buf *b, const char *s)
{
	size_t start = b->len, i;
	int changed = 0;
	char hex[65];

	for (i = 0; s[i] && i < 48; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-' || (c == '.' && i > 0)) {
			buf_addch(b, c);
		} else {
			buf_addch(b, '_');
			changed = 1;
		}
	}
	if (s[i])
		changed = 1;
	if (b->len == start)
		buf_addch(b, '_');
	if (changed) {
		sha256_hex(s, strlen(s), hex);
		buf_addf(b, "-%.8s", hex);
	}
}

static char *chart_file(struct rep *r, const char *fmt, ...) KLAB_PRINTF(2, 3);
static char *chart_file(struct rep *r, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	buf_addstr(&b, "charts/");
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	buf_addstr(&b, plot_ext(&r->pb));
	return buf_detach(&b, NULL);
}

static char *history_name(const char *workload, const char *metric)
{
	struct buf b = BUF_INIT;

	buf_addstr(&b, "history-");
	rep_slug(&b, workload);
	buf_addstr(&b, "--");
	rep_slug(&b, metric);
	buf_addstr(&b, ".html");
	return buf_detach(&b, NULL);
}

static int add_page(struct rep *r, const char *name, const char *title, const struct buf *content)
{
	struct buf tmpl = BUF_INIT;
	struct page *p;
	const struct html_var vars[] = {
		{ "title", title, 0 },
		{ "content", content->buf, 1 },
		{ "version", KLAB_VERSION, 0 },
		{ "generated", r->generated, 0 },
	};
	int ret = -1;

	if (html_load_static(&tmpl, "page.tmpl") < 0)
		goto out;
	if (r->n_pages == r->a_pages) {
		r->a_pages = r->a_pages ? 2 * r->a_pages : 16;
		r->pages = xrealloc(r->pages, r->a_pages * sizeof(*r->pages));
	}
	p = &r->pages[r->n_pages];
	p->name = xstrdup(name);
	buf_init(&p->html, content->len + tmpl.len + 256);
	if (html_fill(&p->html, tmpl.buf, "page.tmpl", vars, ARRAY_SIZE(vars)) < 0) {
		free(p->name);
		buf_release(&p->html);
		goto out;
	}
	r->n_pages++;
	ret = 0;
out:
	buf_release(&tmpl);
	return ret;
}

/* Fill web-static/NAME with VARS into OUT. */
static int fill_static(struct buf *out, const char *name, const struct html_var *vars, size_t n)
{
	struct buf tmpl = BUF_INIT;
	int ret = -1;

	if (html_load_static(&tmpl, name) == 0)
		ret = html_fill(out, tmpl.buf, name, vars, n);
	buf_release(&tmpl);
	return ret;
}

static int job_rendered(const struct rep *r, int64_t id)
{
	char *p;
	int ok;

	for (size_t i = 0; i < r->n_jobs; i++)
		if (r->jobs[i] == id)
			return 1;
	p = xasprintf("%s/job-%lld.html", r->outdir, (long long)id);
	ok = file_exists(p);
	free(p);
	return ok;
}

/* A link to job ID's page if it has one, else the plain number. */
static void job_link(const struct rep *r, struct buf *h, int64_t id)
{
	if (job_rendered(r, id))
		buf_addf(h, "<a href=\"job-%lld.html\">job %lld</a>", (long long)id, (long long)id);
	else
		buf_addf(h, "job %lld", (long long)id);
}

static void verdict_badge(struct buf *h, const struct rep_cmp *c)
{
	buf_addf(h, "<span class=\"badge %s\">", verdict_class(c));
	html_escape(h, rep_verdict_text(c));
	buf_addstr(h, "</span>");
}

static void claim_cell(struct buf *h, const char *claim)
{
	const char *t = rep_claim_text(claim);

	if (!t) {
		buf_addstr(h, "<span class=\"muted\">no claim</span>");
		return;
	}
	buf_addstr(h, "<span class=\"claim-");
	rep_slug(h, claim);
	buf_addstr(h, "\">");
	html_escape(h, t);
	buf_addstr(h, "</span>");
}

static void metric_label(struct buf *b, const char *metric, const char *unit)
{
	buf_addstr(b, metric);
	if (unit && *unit)
		buf_addf(b, " (%s)", unit);
}

/* ---- the job page ---- */

struct side {
	char *label, *profile, *tree, *commit, *variant, *release, *build_id, *compiler;
	int64_t kernel_id;
	int present;		/* the job has this side */
};

struct job {
	int64_t id, series_id, order_seed;
	int have_seed;
	char *name, *state, *tree, *schedule, *dut, *peer, *error;
	double created, started, finished;
	char *s_source, *s_url, *s_subject, *s_author, *s_msgid;
	int64_t s_version, s_total;
	struct side side[2];
};

static void job_free(struct job *j)
{
	free(j->name); free(j->state); free(j->tree); free(j->schedule); free(j->dut);
	free(j->peer); free(j->error); free(j->s_source); free(j->s_url); free(j->s_subject);
	free(j->s_author); free(j->s_msgid);
	for (int i = 0; i < 2; i++) {
		struct side *s = &j->side[i];

		free(s->label); free(s->profile); free(s->tree); free(s->commit);
		free(s->variant); free(s->release); free(s->build_id); free(s->compiler);
	}
	memset(j, 0, sizeof(*j));
}

static int job_load(struct db *db, int64_t id, struct job *j)
{
	struct db_stmt *st;
	int rc;

	memset(j, 0, sizeof(*j));
	st = db_prepare(db, "SELECT id, name, state, tree, schedule, dut, peer, error, created, started, "
			"finished, order_seed, series_id FROM jobs WHERE id = ?", "i", id);
	if (!st)
		return -1;
	rc = db_step(st);
	if (rc != DB_ROW) {
		db_finalize(st);
		return error("cannot report job %lld: no such job", (long long)id);
	}
	j->id = db_col_int64(st, 0);
	j->name = rep_colstr(st, 1);
	j->state = rep_colstr(st, 2);
	j->tree = rep_colstr(st, 3);
	j->schedule = rep_colstr(st, 4);
	j->dut = rep_colstr(st, 5);
	j->peer = rep_colstr(st, 6);
	j->error = rep_colstr(st, 7);
	j->created = rep_coldbl(st, 8);
	j->started = rep_coldbl(st, 9);
	j->finished = rep_coldbl(st, 10);
	j->have_seed = !db_col_null(st, 11);
	j->order_seed = db_col_int64(st, 11);
	j->series_id = db_col_int64(st, 12);
	db_finalize(st);

	if (j->series_id) {
		st = db_prepare(db, "SELECT source, source_url, subject, author, message_id, version, total "
				"FROM series WHERE id = ?", "i", j->series_id);
		if (!st)
			return -1;
		if (db_step(st) == DB_ROW) {
			j->s_source = rep_colstr(st, 0);
			j->s_url = rep_colstr(st, 1);
			j->s_subject = rep_colstr(st, 2);
			j->s_author = rep_colstr(st, 3);
			j->s_msgid = rep_colstr(st, 4);
			j->s_version = db_col_int64(st, 5);
			j->s_total = db_col_int64(st, 6);
		}
		db_finalize(st);
	}
	st = db_prepare(db, "SELECT s.side, s.label, s.profile, k.tree, k.commit_id, k.variant, k.release, "
			"k.build_id, k.compiler, s.kernel_id FROM job_sides s LEFT JOIN kernels k ON k.id = s.kernel_id "
			"WHERE s.job_id = ? ORDER BY s.side", "i", id);
	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		const char *sd = db_col_text(st, 0);
		struct side *s;

		if (!sd || (sd[0] != 'A' && sd[0] != 'B'))
			continue;
		s = &j->side[sd[0] - 'A'];
		s->label = rep_colstr(st, 1);
		s->profile = rep_colstr(st, 2);
		s->tree = rep_colstr(st, 3);
		s->commit = rep_colstr(st, 4);
		s->variant = rep_colstr(st, 5);
		s->release = rep_colstr(st, 6);
		s->build_id = rep_colstr(st, 7);
		s->compiler = rep_colstr(st, 8);
		s->kernel_id = db_col_int64(st, 9);
	}
	db_finalize(st);
	for (int i = 0; i < 2; i++) {
		j->side[i].present = j->side[i].label != NULL;
		if (!j->side[i].label)
			j->side[i].label = xstrdup(i ? "B" : "A");
	}
	return 0;
}

/* The link to the series: its recorded URL, else lore by Message-ID. */
static void series_href(struct buf *h, const struct job *j)
{
	if (j->s_url && *j->s_url) {
		html_url(h, j->s_url);
	} else if (j->s_msgid && *j->s_msgid) {
		struct buf u = BUF_INIT;
		const char *m = j->s_msgid;
		size_t n = strlen(m);

		if (*m == '<' && n >= 2 && m[n - 1] == '>') {
			m++;
			n -= 2;
		}
		buf_addstr(&u, "https://lore.kernel.org/r/");
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)m[i];

			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    strchr("-._~@!$+=", c))
				buf_addch(&u, c);
			else
				buf_addf(&u, "%%%02X", c);
		}
		html_url(h, u.buf);
		buf_release(&u);
	} else {
		buf_addch(h, '#');
	}
}

/* NIC driver and queue counts of the job's DUT, from its sysinfo. */
static void nic_facts(struct db *db, const struct job *j, struct buf *nic, struct buf *cmdline)
{
	struct db_stmt *st;
	char *sysinfo = NULL, *cl[2] = { NULL, NULL }, *want_nic = NULL;
	struct json_object *o = NULL, *nics, *k;
	int found = 0;

	st = db_prepare(db, "SELECT side, cmdline, sysinfo, machine FROM boots WHERE job_id = ? ORDER BY seq", "i", j->id);
	if (!st)
		return;
	while (db_step(st) == DB_ROW) {
		const char *sd = db_col_text(st, 0);
		const char *mach = db_col_text(st, 3);
		int i = sd && sd[0] == 'B';

		if (j->dut && mach && strcmp((const char *)mach, j->dut))
			continue;
		if (!cl[i])
			cl[i] = rep_colstr(st, 1);
		if (!sysinfo)
			sysinfo = rep_colstr(st, 2);
	}
	db_finalize(st);
	/* the workload NIC is named in the run spec */
	if (db_get_str(db, &want_nic, "SELECT json_extract(result, '$.spec.nic') FROM runs "
		       "WHERE job_id = ? AND json_valid(result) AND json_extract(result, '$.spec.nic') IS NOT NULL "
		       "LIMIT 1", "i", j->id) < 0)
		want_nic = NULL;
	if (sysinfo)
		o = json_parse(sysinfo, strlen(sysinfo), "boot sysinfo");
	if (o && json_object_object_get_ex(o, "kernel", &k) && !cl[0]) {
		struct json_object *c;

		if (json_object_object_get_ex(k, "cmdline", &c) && json_object_is_type(c, json_type_string))
			cl[0] = xstrdup(json_object_get_string(c));
	}
	if (o && json_object_object_get_ex(o, "nics", &nics) && json_object_is_type(nics, json_type_object)) {
		json_object_object_foreach(nics, name, n) {
			struct json_object *d, *tq, *rq;

			if (!strcmp(name, "lo") || (want_nic && strcmp(name, want_nic)))
				continue;
			if (!json_object_is_type(n, json_type_object))
				continue;
			if (found++)
				buf_addstr(nic, "; ");
			html_escape(nic, name);
			buf_addstr(nic, ": driver <code>");
			if (json_object_object_get_ex(n, "driver", &d) && json_object_is_type(d, json_type_string))
				html_escape(nic, json_object_get_string(d));
			else
				buf_addstr(nic, "unknown");
			buf_addstr(nic, "</code>");
			if (json_object_object_get_ex(n, "tx_queues", &tq) && json_object_object_get_ex(n, "rx_queues", &rq))
				buf_addf(nic, ", %d TX / %d RX queues", json_object_get_int(tq), json_object_get_int(rq));
		}
	}
	if (!found)
		buf_addstr(nic, "<span class=\"muted\">not recorded</span>");
	if (cl[0]) {
		buf_addstr(cmdline, "<code>");
		html_escape(cmdline, cl[0]);
		buf_addstr(cmdline, "</code>");
		if (cl[1] && strcmp(cl[0], cl[1])) {
			buf_addstr(cmdline, " (A); <code>");
			html_escape(cmdline, cl[1]);
			buf_addstr(cmdline, "</code> (B)");
		}
	} else {
		buf_addstr(cmdline, "<span class=\"muted\">not recorded</span>");
	}
	json_object_put(o);
	free(sysinfo);
	free(cl[0]);
	free(cl[1]);
	free(want_nic);
}

static void fact(struct buf *h, const char *dt, const char *dd_html)
{
	buf_addf(h, "<dt>%s</dt><dd>%s</dd>\n", dt, dd_html);
}

static void kernel_desc(struct buf *h, const struct side *s, char side)
{
	buf_addf(h, "<span class=\"side-%c\">%c</span> ", side == 'A' ? 'a' : 'b', side);
	html_escape(h, s->label);
	if (s->tree || s->commit) {
		buf_addstr(h, ": <code>");
		html_escape(h, s->tree ? s->tree : "");
		if (s->commit) {
			buf_addch(h, ' ');
			html_escape_n(h, s->commit, strlen(s->commit) > 12 ? 12 : strlen(s->commit));
		}
		buf_addstr(h, "</code>");
	}
	if (s->variant) {
		buf_addstr(h, " (");
		html_escape(h, s->variant);
		buf_addch(h, ')');
	}
	if (s->release) {
		buf_addstr(h, ", uname -r <code>");
		html_escape(h, s->release);
		buf_addstr(h, "</code>");
	}
}

/* Boots x runs per side and workload, e.g. "udp_rr_500: A 4 x 3, B 4 x 3". */
static void boots_runs(struct db *db, int64_t job, struct buf *h)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT workload, side, COUNT(DISTINCT boot_id), COUNT(*) FROM runs "
		"WHERE job_id = ? AND status = 'ok' GROUP BY workload, side ORDER BY workload, side", "i", job);
	char *last = NULL;
	int n = 0;

	if (!st)
		return;
	while (db_step(st) == DB_ROW) {
		const char *wl = db_col_text(st, 0);
		int64_t boots = db_col_int64(st, 2), runs = db_col_int64(st, 3);

		if (!last || strcmp(last, wl)) {
			if (n++)
				buf_addstr(h, "<br>");
			html_escape(h, wl);
			buf_addstr(h, ":");
			free(last);
			last = xstrdup(wl);
		}
		const char *sd = db_col_text(st, 1);

		buf_addf(h, "%s %s ", sd && sd[0] == 'B' ? "," : "", sd && sd[0] == 'B' ? "B" : "A");
		if (boots > 0)
			buf_addf(h, "%lld boot%s &times; ", (long long)boots, boots == 1 ? "" : "s");
		if (!boots)
			buf_addf(h, "%lld run%s (no boot recorded)", (long long)runs, runs == 1 ? "" : "s");
		else if (runs % boots == 0)
			buf_addf(h, "%lld runs", (long long)(runs / boots));
		else
			buf_addf(h, "%lld runs in all", (long long)runs);
	}
	db_finalize(st);
	free(last);
	if (!n)
		buf_addstr(h, "<span class=\"muted\">no runs stored</span>");
}

/* A/A noise: the CI half-width of the latest A/A comparison of this workload's headline metric. */
static void aa_noise(struct rep *r, const struct rep_cmp *c, size_t n, struct buf *h)
{
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		struct db_stmt *st;

		if (rep_metric_rank(c[i].metric) >= 10 || (i && !strcmp(c[i].workload, c[i - 1].workload)))
			continue;
		st = db_prepare(r->db, "SELECT job_id, ci_lo, ci_hi, cov_a FROM comparisons WHERE label_a = label_b "
				"AND workload = ? AND metric = ? ORDER BY created DESC, id DESC LIMIT 1",
				"ss", c[i].workload, c[i].metric);
		if (!st)
			continue;
		if (db_step(st) == DB_ROW) {
			double lo = rep_coldbl(st, 1), hi = rep_coldbl(st, 2);

			if (found++)
				buf_addstr(h, "<br>");
			html_escape(h, c[i].workload);
			buf_addch(h, ' ');
			html_escape(h, c[i].metric);
			buf_addf(h, ": &plusmn;%.2f%% (95%% CI half-width, ", isfinite(lo) && isfinite(hi) ? (hi - lo) / 2 : NAN);
			job_link(r, h, db_col_int64(st, 0));
			buf_addch(h, ')');
		}
		db_finalize(st);
	}
	if (!found)
		buf_addstr(h, "<span class=\"muted\">not measured (run an A/A job to know the noise floor)</span>");
}

static void claims_section(struct db *db, const struct job *j, struct buf *h)
{
	struct db_stmt *st;
	int n = 0;

	if (!j->series_id)
		return;
	st = db_prepare(db, "SELECT patch_seq, metric, direction, lo_pct, hi_pct, before, after, unit, text "
			"FROM expectations WHERE series_id = ? ORDER BY patch_seq, id", "i", j->series_id);
	if (!st)
		return;
	while (db_step(st) == DB_ROW) {
		double lo = rep_coldbl(st, 3), hi = rep_coldbl(st, 4);

		if (!n++)
			buf_addstr(h, "<h3>Claims found in the series</h3>\n<div class=\"table-wrap\"><table>"
				   "<tr><th>patch</th><th>metric</th><th>expected</th><th>text</th></tr>\n");
		buf_addf(h, "<tr><td class=\"num\">%lld</td><td><code>", (long long)db_col_int64(st, 0));
		html_escape(h, db_col_text(st, 1));
		buf_addstr(h, "</code></td><td>");
		html_escape(h, db_col_text(st, 2));
		if (isfinite(lo) || isfinite(hi)) {
			buf_addstr(h, " by ");
			if (isfinite(lo))
				buf_addf(h, "%g", lo);
			if (isfinite(lo) && isfinite(hi))
				buf_addstr(h, " to ");
			if (isfinite(hi))
				buf_addf(h, "%g", hi);
			buf_addstr(h, "%");
		}
		buf_addstr(h, "</td><td>");
		html_escape(h, db_col_text(st, 8));
		buf_addstr(h, "</td></tr>\n");
	}
	db_finalize(st);
	if (n)
		buf_addstr(h, "</table></div>\n");
}

static void mean_cov(struct buf *h, double mean, double cov, int64_t n)
{
	buf_addf(h, "<td class=\"num\" title=\"mean of %lld boots\">", (long long)n);
	rep_fmt_si(h, mean);
	buf_addstr(h, " <span class=\"muted\">&plusmn;");
	if (isfinite(cov))
		buf_addf(h, "%.2f%%", cov);
	else
		buf_addstr(h, "-");
	buf_addstr(h, "</span></td>");
}

static void kpi_table(struct rep *r, const struct rep_cmp *c, size_t n, struct buf *h)
{
	if (!n) {
		buf_addstr(h, "<p class=\"note\">No comparison has been computed for this job yet.</p>\n");
		return;
	}
	buf_addstr(h, "<div class=\"table-wrap\"><table class=\"kpi\">\n<tr><th>metric</th>"
		   "<th class=\"num\">A &plusmn;CoV</th><th class=\"num\">B &plusmn;CoV</th>"
		   "<th class=\"num\">% change [95% CI]</th><th class=\"num\">p</th>"
		   "<th class=\"num\">MWU p</th><th class=\"num\">MDE</th><th>verdict</th><th>claim check</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const struct rep_cmp *x = &c[i];

		if (!i || strcmp(x->workload, c[i - 1].workload)) {
			buf_addstr(h, "<tr class=\"group\"><th colspan=\"9\">");
			html_escape(h, x->workload);
			buf_addf(h, " <span class=\"muted\">(%lld vs %lld boots)</span></th></tr>\n",
				 (long long)x->n_a, (long long)x->n_b);
		}
		buf_addf(h, "<tr id=\"kpi-%zu\"><td class=\"metric\"><code>", i);
		html_escape(h, x->metric);
		buf_addstr(h, "</code>");
		if (x->unit && *x->unit) {
			buf_addstr(h, " <span class=\"muted\">");
			html_escape(h, x->unit);
			buf_addstr(h, "</span>");
		}
		buf_addstr(h, "</td>");
		mean_cov(h, x->mean_a, x->cov_a, x->n_a);
		mean_cov(h, x->mean_b, x->cov_b, x->n_b);
		buf_addstr(h, "<td class=\"num\"><strong>");
		rep_fmt_pct(h, x->change_pct);
		buf_addstr(h, "</strong> <span class=\"muted\">[");
		rep_fmt_pct(h, x->ci_lo);
		buf_addstr(h, ", ");
		rep_fmt_pct(h, x->ci_hi);
		buf_addstr(h, "]</span></td><td class=\"num\" title=\"Welch; Holm-adjusted: ");
		rep_fmt_p(h, x->p_holm);
		buf_addstr(h, "\">");
		rep_fmt_p(h, x->p_welch);
		buf_addstr(h, "</td><td class=\"num\">");
		rep_fmt_p(h, x->p_mwu);
		buf_addstr(h, "</td><td class=\"num\">");
		if (isfinite(x->mde_pct))
			buf_addf(h, "%.2f%%", x->mde_pct);
		else
			buf_addstr(h, "-");
		buf_addstr(h, "</td><td>");
		verdict_badge(h, x);
		buf_addstr(h, "</td><td>");
		claim_cell(h, x->claim);
		buf_addstr(h, "</td></tr>\n");
	}
	buf_addstr(h, "</table></div>\n<p class=\"note\">A, B: means over boots &plusmn; coefficient of variation. "
		   "% change of B against A from Welch's t on log values, with its 95% confidence interval; "
		   "p: Welch (hover for the Holm-adjusted value); MWU: exact Mann-Whitney as a check; "
		   "MDE: the smallest change this many boots could detect.</p>\n");
	(void)r;
}

/* Values of METRIC for every ok run of the job's WORKLOAD, in run order. */
static int load_runs(struct db *db, int64_t job, const char *wl, const char *metric,
		     struct plot_run **out, int64_t **run_ids, size_t *n)
{
	struct db_stmt *st = db_prepare(db,
		"SELECT r.side, COALESCE(b.seq, 0), m.value, r.id FROM runs r "
		"LEFT JOIN boots b ON b.id = r.boot_id "
		"JOIN metrics m ON m.run_id = r.id AND m.name = ? "
		"WHERE r.job_id = ? AND r.workload = ? AND r.status = 'ok' "
		"ORDER BY COALESCE(b.seq, 0), r.seq, r.id", "sis", metric, job, wl);
	struct plot_run *v = NULL;
	int64_t *ids = NULL;
	size_t nv = 0, av = 0;

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		const char *sd = db_col_text(st, 0);

		if (nv == av) {
			av = av ? 2 * av : 32;
			v = xrealloc(v, av * sizeof(*v));
			ids = xrealloc(ids, av * sizeof(*ids));
		}
		v[nv].side = sd && sd[0] == 'B' ? 'B' : 'A';
		v[nv].boot = (long)db_col_int64(st, 1);
		v[nv].value = rep_coldbl(st, 2);
		ids[nv] = db_col_int64(st, 3);
		nv++;
	}
	db_finalize(st);
	*out = v;
	*run_ids = ids;
	*n = nv;
	return 0;
}

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The run of SIDE whose value is the median of its side (for the per-second chart). */
static int64_t median_run(const struct plot_run *v, const int64_t *ids, size_t n, char side)
{
	double *vals = xmalloc((n + 1) * sizeof(*vals)), med;
	size_t k = 0, i;
	int64_t best = 0;
	double bestd = INFINITY;

	for (i = 0; i < n; i++)
		if (v[i].side == side && isfinite(v[i].value))
			vals[k++] = v[i].value;
	if (!k) {
		free(vals);
		return 0;
	}
	qsort(vals, k, sizeof(*vals), dbl_cmp);
	med = vals[(k - 1) / 2];
	for (i = 0; i < n; i++)
		if (v[i].side == side && isfinite(v[i].value) && fabs(v[i].value - med) < bestd) {
			bestd = fabs(v[i].value - med);
			best = ids[i];
		}
	free(vals);
	return best;
}

static size_t load_samples(struct db *db, int64_t run, const char *metric, struct plot_xy **out)
{
	struct db_stmt *st;
	struct plot_xy *v = NULL;
	size_t n = 0, a = 0;

	*out = NULL;
	if (!run)
		return 0;
	st = db_prepare(db, "SELECT t, value FROM samples WHERE run_id = ? AND metric = ? ORDER BY t", "is", run, metric);
	if (!st)
		return 0;
	while (db_step(st) == DB_ROW) {
		if (n == a) {
			a = a ? 2 * a : 64;
			v = xrealloc(v, a * sizeof(*v));
		}
		v[n].x = db_col_double(st, 0);
		v[n].y = db_col_double(st, 1);
		n++;
	}
	db_finalize(st);
	*out = v;
	return n;
}

#define MAX_CPUS_SHOWN 16

static int cpu_busy_cmp(const void *x, const void *y)
{
	const struct plot_cpu *a = x, *b = y;

	return a->idle < b->idle ? -1 : a->idle > b->idle;
}

/* Per-CPU averages of one side; the busiest MAX_CPUS_SHOWN, "all" first. */
static size_t load_cpus(struct db *db, int64_t job, const char *wl, char side, struct plot_cpu **out, size_t *total)
{
	char sd[2] = { side, 0 };
	struct db_stmt *st = db_prepare(db,
		"SELECT c.cpu, AVG(c.usr), AVG(c.sys), AVG(c.irq), AVG(c.soft), "
		"AVG(COALESCE(c.nice, 0) + COALESCE(c.iowait, 0) + COALESCE(c.steal, 0)), AVG(c.idle) "
		"FROM cpu_stats c JOIN runs r ON r.id = c.run_id "
		"WHERE r.job_id = ? AND r.workload = ? AND r.side = ? AND r.status = 'ok' "
		"GROUP BY c.cpu ORDER BY c.cpu", "iss", job, wl, sd);
	struct plot_cpu *v = NULL, all;
	size_t n = 0, a = 0, i;
	int have_all = 0;

	*out = NULL;
	*total = 0;
	if (!st)
		return 0;
	while (db_step(st) == DB_ROW) {
		struct plot_cpu c;
		int cpu = db_col_int(st, 0);

		memset(&c, 0, sizeof(c));
		if (cpu < 0)
			snprintf(c.label, sizeof(c.label), "all");
		else
			snprintf(c.label, sizeof(c.label), "cpu%d", cpu);
		c.usr = db_col_double(st, 1);
		c.sys = db_col_double(st, 2);
		c.irq = db_col_double(st, 3);
		c.soft = db_col_double(st, 4);
		c.other = db_col_double(st, 5);
		c.idle = db_col_double(st, 6);
		if (cpu < 0) {
			all = c;
			have_all = 1;
			continue;
		}
		if (n == a) {
			a = a ? 2 * a : 16;
			v = xrealloc(v, (a + 1) * sizeof(*v));
		}
		v[n++] = c;
	}
	db_finalize(st);
	*total = n;
	if (n > MAX_CPUS_SHOWN) {
		/* keep the busiest, then put them back in CPU order */
		qsort(v, n, sizeof(*v), cpu_busy_cmp);
		n = MAX_CPUS_SHOWN;
		for (i = 0; i < n; i++)
			for (size_t k = i + 1; k < n; k++)
				if (atoi(v[k].label + 3) < atoi(v[i].label + 3)) {
					struct plot_cpu t = v[i];

					v[i] = v[k];
					v[k] = t;
				}
	}
	if (have_all) {
		v = xrealloc(v, (n + 1) * sizeof(*v));
		memmove(v + 1, v, n * sizeof(*v));
		v[0] = all;
		n++;
	}
	*out = v;
	return n;
}

/* "[1K, 2K)" as bpftrace prints buckets. */
static void bucket_label(char *out, size_t len, double lo, double hi)
{
	char a[16], b[16];
	const struct { double f; const char *s; } u[] = { { 1099511627776.0, "T" }, { 1073741824.0, "G" },
							   { 1048576.0, "M" }, { 1024.0, "K" } };
	for (int k = 0; k < 2; k++) {
		double v = k ? hi : lo;
		char *o = k ? b : a;
		size_t i;

		for (i = 0; i < ARRAY_SIZE(u); i++)
			if (v >= u[i].f && fmod(v, u[i].f) == 0) {
				snprintf(o, 16, "%.0f%s", v / u[i].f, u[i].s);
				break;
			}
		if (i == ARRAY_SIZE(u))
			snprintf(o, 16, "%g", v);
	}
	snprintf(out, len, "[%s, %s)", a, b);
}

static void histograms_section(struct rep *r, const struct job *j, const char *wl, const char *wslug, struct buf *h)
{
	struct db_stmt *st = db_prepare(r->db,
		"SELECT h.name, h.lo, h.hi, SUM(CASE WHEN r.side = 'A' THEN h.count ELSE 0 END), "
		"SUM(CASE WHEN r.side = 'B' THEN h.count ELSE 0 END) "
		"FROM histograms h JOIN runs r ON r.id = h.run_id "
		"WHERE r.job_id = ? AND r.workload = ? AND r.status = 'ok' "
		"GROUP BY h.name, h.lo, h.hi ORDER BY h.name, h.lo", "is", j->id, wl);
	struct plot_bucket *bk = NULL;
	size_t n = 0, a = 0;
	char *name = NULL;
	int rc, shown = 0;

	if (!st)
		return;
	for (;;) {
		const char *nm;

		rc = db_step(st);
		nm = rc == DB_ROW ? db_col_text(st, 0) : NULL;
		if (name && (!nm || strcmp(nm, name))) {
			struct buf t = BUF_INIT, x = BUF_INIT, f = BUF_INIT, s = BUF_INIT;
			char *file;

			rep_slug(&s, name);
			file = chart_file(r, "j%lld-%s-hist-%s", (long long)j->id, wslug, s.buf);
			buf_addf(&t, "%s: histogram %s, both kernels", wl, name);
			buf_addf(&x, "%s", name);
			if (ends_with(name, "_ns") || ends_with(name, "ns"))
				buf_addstr(&x, " (ns)");
			else if (ends_with(name, "_us"))
				buf_addstr(&x, " (us)");
			plot_histogram(&r->pb, file, t.buf, x.buf, bk, n, j->side[0].label, j->side[1].label);
			chart_add(r, h, file, t.buf);
			shown++;
			free(file);
			buf_release(&t);
			buf_release(&x);
			buf_release(&f);
			buf_release(&s);
			free(name);
			name = NULL;
			n = 0;
		}
		if (rc != DB_ROW)
			break;
		if (!name)
			name = xstrdup(nm ? nm : "?");
		if (n == a) {
			a = a ? 2 * a : 32;
			bk = xrealloc(bk, a * sizeof(*bk));
		}
		bucket_label(bk[n].label, sizeof(bk[n].label), db_col_double(st, 1), db_col_double(st, 2));
		bk[n].a = db_col_double(st, 3);
		bk[n].b = db_col_double(st, 4);
		n++;
	}
	db_finalize(st);
	free(bk);
	if (!shown) {
		char *file = chart_file(r, "j%lld-%s-hist", (long long)j->id, wslug);
		struct buf t = BUF_INIT;

		buf_addf(&t, "%s: histograms", wl);
		plot_empty(&r->pb, file, t.buf, "no histogram was recorded (bpftrace or latency monitor)");
		chart_add(r, h, file, t.buf);
		free(file);
		buf_release(&t);
	}
}

struct prof_row {
	char *symbol;
	char *dso;
	char side;
	int64_t run;
	double pct;
};

static int prof_row_cmp(const void *x, const void *y)
{
	const struct prof_row *a = x, *b = y;
	int c = strcmp(a->symbol, b->symbol);

	if (c)
		return c;
	return a->side - b->side;
}

static int prof_sym_cmp(const void *x, const void *y)
{
	const struct rep_prof *a = x, *b = y;
	double ma = fmax(a->a, a->b), mb = fmax(b->a, b->b);

	return ma > mb ? -1 : ma < mb;
}

void rep_prof_free(struct rep_prof *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].symbol);
		free(p[i].dso);
	}
	free(p);
}

/*
 * Profile of each side for WORKLOAD: per symbol (summed over comms) the mean
 * share over the profiled runs of the side, a run without the symbol
 * counting as 0; with at least 3 profiled runs per side, Welch's t on the
 * per-run shares gives a p-value. Sorted by the larger share, top LIMIT.
 */
int rep_load_profile(struct db *db, int64_t job, const char *wl, size_t limit,
		     struct rep_prof **out, size_t *n_out, int *runs_a, int *runs_b)
{
	struct db_stmt *st;
	struct prof_row *rows = NULL;
	struct rep_prof *syms = NULL;
	size_t n = 0, a = 0, ns = 0, i, k;
	int nra = 0, nrb = 0;

	*out = NULL;
	*n_out = 0;
	st = db_prepare(db, "SELECT r.side, COUNT(DISTINCT p.run_id) FROM profile_rows p JOIN runs r ON r.id = p.run_id "
			"WHERE r.job_id = ? AND r.workload = ? AND r.status = 'ok' GROUP BY r.side", "is", job, wl);
	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		const char *sd = db_col_text(st, 0);

		if (sd && sd[0] == 'A')
			nra = db_col_int(st, 1);
		else if (sd && sd[0] == 'B')
			nrb = db_col_int(st, 1);
	}
	db_finalize(st);
	*runs_a = nra;
	*runs_b = nrb;
	if (!nra && !nrb)
		return 0;
	st = db_prepare(db, "SELECT r.side, p.run_id, p.symbol, MIN(COALESCE(p.dso, '')), SUM(p.percent) "
			"FROM profile_rows p JOIN runs r ON r.id = p.run_id "
			"WHERE r.job_id = ? AND r.workload = ? AND r.status = 'ok' "
			"GROUP BY r.side, p.run_id, p.symbol", "is", job, wl);
	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		const char *sd = db_col_text(st, 0);

		if (n == a) {
			a = a ? 2 * a : 256;
			rows = xrealloc(rows, a * sizeof(*rows));
		}
		rows[n].side = sd && sd[0] == 'B' ? 'B' : 'A';
		rows[n].run = db_col_int64(st, 1);
		rows[n].symbol = rep_colstr(st, 2);
		if (!rows[n].symbol)
			rows[n].symbol = xstrdup("?");
		rows[n].dso = rep_colstr(st, 3);
		rows[n].pct = db_col_double(st, 4);
		n++;
	}
	db_finalize(st);
	if (n)
		qsort(rows, n, sizeof(*rows), prof_row_cmp);
	syms = xcalloc(n + 1, sizeof(*syms));
	for (i = 0; i < n; i = k) {
		double *va = xcalloc((size_t)nra + 1, sizeof(double)), *vb = xcalloc((size_t)nrb + 1, sizeof(double));
		size_t ka = 0, kb = 0;
		struct rep_prof *s = &syms[ns++];

		for (k = i; k < n && !strcmp(rows[k].symbol, rows[i].symbol); k++) {
			if (rows[k].side == 'A' && ka < (size_t)nra)
				va[ka++] = rows[k].pct;
			else if (rows[k].side == 'B' && kb < (size_t)nrb)
				vb[kb++] = rows[k].pct;
		}
		s->symbol = xstrdup(rows[i].symbol);
		s->dso = rows[i].dso ? xstrdup(rows[i].dso) : NULL;
		/* runs without the symbol are zeros: the arrays are already zero-filled */
		s->a = nra ? stats_mean(va, (size_t)nra) : NAN;
		s->b = nrb ? stats_mean(vb, (size_t)nrb) : NAN;
		s->p = NAN;
		if (nra >= 3 && nrb >= 3) {
			struct stats_welch w;

			if (stats_welch(va, (size_t)nra, vb, (size_t)nrb, &w) == 0)
				s->p = w.p;
		}
		free(va);
		free(vb);
	}
	for (i = 0; i < n; i++) {
		free(rows[i].symbol);
		free(rows[i].dso);
	}
	free(rows);
	if (ns)
		qsort(syms, ns, sizeof(*syms), prof_sym_cmp);
	for (i = limit; i < ns; i++) {
		free(syms[i].symbol);
		free(syms[i].dso);
	}
	*out = syms;
	*n_out = ns < limit ? ns : limit;
	return 0;
}

static void bar(struct buf *h, const char *cls, double pct, double scale)
{
	double w = isfinite(pct) ? fabs(pct) * scale : 0;

	if (w > 0.4)
		buf_addf(h, "<span class=\"bar %s\" style=\"width:%.1fpx\"></span> ", cls, w > 120 ? 120 : w);
}

static void profile_section(struct rep *r, const struct job *j, const char *wl, struct buf *h)
{
	struct rep_prof *p;
	size_t n, i;
	int ra, rb;

	if (rep_load_profile(r->db, j->id, wl, 20, &p, &n, &ra, &rb) < 0)
		return;
	buf_addstr(h, "<h3>perf profile: top symbols</h3>\n");
	if (!n) {
		buf_addstr(h, "<div class=\"chart-missing\">No data: no perf profile was recorded for this workload "
			   "(perf-profile monitor).</div>\n");
		rep_prof_free(p, n);
		return;
	}
	buf_addf(h, "<p class=\"note\">Share of samples per symbol (summed over commands), mean over %d profiled "
		 "run(s) of A and %d of B. pp: percentage points, B minus A. %s</p>\n", ra, rb,
		 ra >= 3 && rb >= 3 ? "p: Welch's t on the per-run shares."
				    : "No p-value: fewer than 3 profiled runs per side.");
	buf_addstr(h, "<div class=\"table-wrap\"><table class=\"profile\"><tr><th>symbol</th><th>dso</th>"
		   "<th class=\"num\">A %</th><th class=\"num\">B %</th><th class=\"num\">B &minus; A (pp)</th>"
		   "<th class=\"num\">p</th></tr>\n");
	for (i = 0; i < n; i++) {
		double d = p[i].b - p[i].a;

		buf_addstr(h, "<tr><td><code>");
		html_escape(h, p[i].symbol);
		buf_addstr(h, "</code></td><td class=\"muted\">");
		html_escape(h, p[i].dso);
		buf_addstr(h, "</td><td class=\"num\">");
		bar(h, "a", p[i].a, 3);
		buf_addf(h, "%.2f</td><td class=\"num\">", p[i].a);
		bar(h, "b", p[i].b, 3);
		buf_addf(h, "%.2f</td><td class=\"num\">", p[i].b);
		bar(h, d < 0 ? "a" : "b", d, 4);
		buf_addf(h, "%+.2f</td><td class=\"num\">", d);
		rep_fmt_p(h, p[i].p);
		buf_addstr(h, "</td></tr>\n");
	}
	buf_addstr(h, "</table></div>\n");
	rep_prof_free(p, n);
}

static void workload_section(struct rep *r, const struct job *j, const struct rep_cmp *c, size_t n,
			     const char *wl, struct buf *h)
{
	struct buf ws = BUF_INIT, title = BUF_INIT, ylab = BUF_INIT;
	const struct rep_cmp *head = NULL;
	const char *metric = NULL, *unit = NULL, *la = j->side[0].label, *lb = j->side[1].label;
	char *own_metric = NULL, *own_unit = NULL;
	struct plot_run *runs = NULL;
	int64_t *ids = NULL;
	size_t nr = 0, i;
	char *file;

	rep_slug(&ws, wl);
	for (i = 0; i < n; i++)
		if (!strcmp(c[i].workload, wl) && (!head || rep_metric_rank(c[i].metric) < rep_metric_rank(head->metric)))
			head = &c[i];
	if (head) {
		metric = head->metric;
		unit = head->unit;
	} else {
		/* no comparison yet (a one-kernel or running job): the runs' own headline metric */
		db_get_str(r->db, &own_metric, "SELECT m.name FROM metrics m JOIN runs r ON r.id = m.run_id "
			   "WHERE r.job_id = ? AND r.workload = ? AND m.name IN ('tps', 'tx_pps', 'rx_pps', 'tx_bps') "
			   "ORDER BY CASE m.name WHEN 'tps' THEN 0 WHEN 'tx_pps' THEN 1 WHEN 'rx_pps' THEN 2 ELSE 3 END "
			   "LIMIT 1", "is", j->id, wl);
		db_get_str(r->db, &own_unit, "SELECT m.unit FROM metrics m JOIN runs r ON r.id = m.run_id "
			   "WHERE r.job_id = ? AND r.workload = ? AND m.name = ? LIMIT 1", "iss", j->id, wl,
			   own_metric ? own_metric : "");
		metric = own_metric;
		unit = own_unit;
	}
	buf_addstr(h, "<section class=\"workload\" id=\"wl-");
	buf_addstr(h, ws.buf);
	buf_addstr(h, "\">\n<h2>Workload ");
	html_escape(h, wl);
	buf_addstr(h, "</h2>\n");
	if (metric) {
		metric_label(&ylab, metric, unit);
		buf_addstr(h, "<p class=\"note\">Headline metric <code>");
		html_escape(h, metric);
		buf_addstr(h, "</code>");
		if (head) {
			buf_addstr(h, "; ");
			html_escape(h, rep_verdict_text(head));
			buf_addstr(h, ", ");
			rep_fmt_pct(h, head->change_pct);
		} else {
			buf_addstr(h, "; not compared");
		}
		buf_addstr(h, ".</p>\n");
		load_runs(r->db, j->id, wl, metric, &runs, &ids, &nr);
	}

	/* run order */
	file = chart_file(r, "j%lld-%s-order", (long long)j->id, ws.buf);
	buf_addf(&title, "%s: %s of every run, in run order", wl, metric ? metric : "headline metric");
	if (metric)
		plot_run_order(&r->pb, file, title.buf, ylab.buf, runs, nr, la, lb);
	else
		plot_empty(&r->pb, file, title.buf, "no run stored a headline metric (tps, tx_pps, rx_pps, tx_bps)");
	buf_addstr(h, "<h3>Run order</h3>\n");
	chart_add(r, h, file, title.buf);
	free(file);

	/* distribution and CI */
	{
		double *va = xmalloc((nr + 1) * sizeof(double)), *vb = xmalloc((nr + 1) * sizeof(double));
		size_t na = 0, nb = 0;
		struct plot_ci ci = { 0, NAN, NAN, NAN, 0 };

		for (i = 0; i < nr; i++) {
			if (runs[i].side == 'A')
				va[na++] = runs[i].value;
			else
				vb[nb++] = runs[i].value;
		}
		if (head) {
			ci.have = 1;
			ci.change = head->change_pct;
			ci.lo = head->ci_lo;
			ci.hi = head->ci_hi;
			ci.threshold = isfinite(head->threshold_pct) ? head->threshold_pct : 0;
		}
		file = chart_file(r, "j%lld-%s-dist", (long long)j->id, ws.buf);
		buf_reset(&title);
		buf_addf(&title, "%s: %s per side, and B vs A", wl, metric ? metric : "headline metric");
		plot_distribution(&r->pb, file, title.buf, ylab.buf, va, na, vb, nb, la, lb, &ci);
		buf_addstr(h, "<h3>Distribution per side and the confidence interval of the change</h3>\n");
		chart_add(r, h, file, title.buf);
		free(file);
		free(va);
		free(vb);
	}

	/* per-CPU */
	{
		struct plot_cpu *ca, *cb;
		size_t tot_a, tot_b, na = load_cpus(r->db, j->id, wl, 'A', &ca, &tot_a);
		size_t nb = load_cpus(r->db, j->id, wl, 'B', &cb, &tot_b);

		file = chart_file(r, "j%lld-%s-cpu", (long long)j->id, ws.buf);
		buf_reset(&title);
		buf_addf(&title, "%s: CPU time per CPU (mean over runs)", wl);
		plot_cpu_breakdown(&r->pb, file, title.buf, ca, na, cb, nb, la, lb);
		buf_addstr(h, "<h3>Where the CPU time went</h3>\n");
		if (tot_a > MAX_CPUS_SHOWN || tot_b > MAX_CPUS_SHOWN)
			buf_addf(h, "<p class=\"note\">The %d busiest CPUs of each side are shown.</p>\n", MAX_CPUS_SHOWN);
		chart_add(r, h, file, title.buf);
		free(file);
		free(ca);
		free(cb);
	}

	/* histograms */
	buf_addstr(h, "<h3>Histograms</h3>\n");
	histograms_section(r, j, wl, ws.buf, h);

	/* profile */
	profile_section(r, j, wl, h);

	/* per-second series of one run per side */
	{
		struct plot_xy *sa = NULL, *sb = NULL;
		int64_t ra = median_run(runs, ids, nr, 'A'), rb = median_run(runs, ids, nr, 'B');
		size_t na = metric ? load_samples(r->db, ra, metric, &sa) : 0;
		size_t nb = metric ? load_samples(r->db, rb, metric, &sb) : 0;

		file = chart_file(r, "j%lld-%s-series", (long long)j->id, ws.buf);
		buf_reset(&title);
		buf_addf(&title, "%s: %s per second, the median run of each side", wl, metric ? metric : "headline");
		plot_timeseries(&r->pb, file, title.buf, ylab.buf, sa, na, sb, nb, la, lb);
		buf_addstr(h, "<h3>Per-second series</h3>\n");
		if (ra || rb) {
			char *ua = NULL, *ub = NULL;

			db_get_str(r->db, &ua, "SELECT uid FROM runs WHERE id = ?", "i", ra);
			db_get_str(r->db, &ub, "SELECT uid FROM runs WHERE id = ?", "i", rb);
			buf_addstr(h, "<p class=\"note\">The run whose value is the median of its side: A <code>");
			html_escape(h, ua ? ua : "-");
			buf_addstr(h, "</code>, B <code>");
			html_escape(h, ub ? ub : "-");
			buf_addstr(h, "</code>.</p>\n");
			free(ua);
			free(ub);
		}
		chart_add(r, h, file, title.buf);
		free(file);
		free(sa);
		free(sb);
	}
	buf_addstr(h, "</section>\n");
	free(own_metric);
	free(own_unit);
	free(runs);
	free(ids);
	buf_release(&ws);
	buf_release(&title);
	buf_release(&ylab);
}

static int job_page(struct rep *r, int64_t id)
{
	struct job j;
	struct rep_cmp *c = NULL;
	size_t n = 0, i;
	struct buf facts = BUF_INIT, kpi = BUF_INIT, wls = BUF_INIT, claims = BUF_INIT, t = BUF_INIT;
	struct buf content = BUF_INIT, sub = BUF_INIT, state = BUF_INIT, nic = BUF_INIT, cl = BUF_INIT;
	struct strvec workloads = STRVEC_INIT;
	struct db_stmt *st;
	char name[64], idstr[32];
	int ret = -1;

	if (job_load(r->db, id, &j) < 0)
		return -1;
	if (rep_load_cmps(r->db, id, &c, &n) < 0)
		goto out;

	buf_addstr(&state, "<span class=\"badge s-");
	rep_slug(&state, j.state ? j.state : "unknown");
	buf_addstr(&state, "\">");
	html_escape(&state, j.state);
	buf_addstr(&state, "</span>");
	html_escape(&sub, j.side[0].label);
	if (j.side[1].present) {
		buf_addstr(&sub, " versus ");
		html_escape(&sub, j.side[1].label);
	} else {
		buf_addstr(&sub, " (one kernel)");
	}
	buf_addstr(&sub, " · created ");
	rep_fmt_time(&sub, j.created);
	if (isfinite(j.finished)) {
		buf_addstr(&sub, " · finished ");
		rep_fmt_time(&sub, j.finished);
	}
	if (j.schedule) {
		buf_addstr(&sub, " · schedule ");
		html_escape(&sub, j.schedule);
	}

	buf_addstr(&facts, "<dl class=\"facts\">\n");
	html_escape(&t, j.tree ? j.tree : j.side[0].tree);
	fact(&facts, "tree", t.len ? t.buf : "-");
	buf_reset(&t);
	kernel_desc(&t, &j.side[0], 'A');
	fact(&facts, "base", t.buf);
	buf_reset(&t);
	if (j.side[1].present)
		kernel_desc(&t, &j.side[1], 'B');
	else
		buf_addstr(&t, "<span class=\"muted\">none: this job measured one kernel</span>");
	fact(&facts, "patched", t.buf);
	buf_reset(&t);
	if (j.s_subject || j.s_source) {
		buf_addstr(&t, "<a href=\"");
		series_href(&t, &j);
		buf_addstr(&t, "\">");
		html_escape(&t, j.s_subject ? j.s_subject : j.s_source);
		buf_addstr(&t, "</a>");
		if (j.s_author) {
			buf_addstr(&t, " by ");
			html_escape(&t, j.s_author);
		}
		buf_addf(&t, " <span class=\"muted\">(v%lld, %lld patch%s; ", (long long)j.s_version,
			 (long long)j.s_total, j.s_total == 1 ? "" : "es");
		html_escape(&t, j.s_source);
		buf_addstr(&t, ")</span>");
		fact(&facts, "series", t.buf);
		buf_reset(&t);
	}
	buf_addstr(&t, "DUT <code>");
	html_escape(&t, j.dut ? j.dut : "-");
	buf_addstr(&t, "</code>, peer <code>");
	html_escape(&t, j.peer ? j.peer : "-");
	buf_addstr(&t, "</code>");
	fact(&facts, "machines", t.buf);
	buf_reset(&t);
	nic_facts(r->db, &j, &nic, &cl);
	fact(&facts, "NIC", nic.buf);
	fact(&facts, "kernel cmdline", cl.buf);
	html_escape(&t, j.side[0].profile ? j.side[0].profile : "default");
	if (j.side[1].profile && (!j.side[0].profile || strcmp(j.side[0].profile, j.side[1].profile))) {
		buf_addstr(&t, " (A), ");
		html_escape(&t, j.side[1].profile);
		buf_addstr(&t, " (B)");
	}
	fact(&facts, "tuning profile", t.buf);
	buf_reset(&t);
	boots_runs(r->db, id, &t);
	fact(&facts, "boots &times; runs", t.buf);
	buf_reset(&t);
	if (j.have_seed)
		buf_addf(&t, "randomised ABBA, seed <code>%lld</code>", (long long)j.order_seed);
	else
		buf_addstr(&t, "<span class=\"muted\">not recorded</span>");
	fact(&facts, "order", t.buf);
	buf_reset(&t);
	aa_noise(r, c, n, &t);
	fact(&facts, "A/A noise", t.buf);
	buf_reset(&t);
	if (j.error) {
		html_escape(&t, j.error);
		fact(&facts, "error", t.buf);
		buf_reset(&t);
	}
	buf_addstr(&facts, "</dl>\n");
	claims_section(r->db, &j, &claims);
	kpi_table(r, c, n, &kpi);

	/* workloads: those compared, then any others that have runs */
	for (i = 0; i < n; i++)
		if (strvec_find(&workloads, c[i].workload) < 0)
			strvec_push(&workloads, c[i].workload);
	st = db_prepare(r->db, "SELECT DISTINCT workload FROM runs WHERE job_id = ? ORDER BY workload", "i", id);
	if (st) {
		while (db_step(st) == DB_ROW) {
			const char *w = db_col_text(st, 0);

			if (w && strvec_find(&workloads, w) < 0)
				strvec_push(&workloads, w);
		}
		db_finalize(st);
	}
	for (i = 0; i < workloads.n; i++)
		workload_section(r, &j, c, n, workloads.v[i], &wls);
	if (!workloads.n)
		buf_addstr(&wls, "<p class=\"note\">No run of this job has been stored yet.</p>\n");

	snprintf(idstr, sizeof(idstr), "%lld", (long long)id);
	{
		const struct html_var vars[] = {
			{ "id", idstr, 0 },
			{ "name", j.name, 0 },
			{ "state", state.buf, 1 },
			{ "subtitle", sub.buf, 1 },
			{ "facts", facts.buf, 1 },
			{ "claims", claims.buf, 1 },
			{ "kpi", kpi.buf, 1 },
			{ "workloads", wls.buf, 1 },
		};
		if (fill_static(&content, "job.tmpl", vars, ARRAY_SIZE(vars)) < 0)
			goto out;
	}
	snprintf(name, sizeof(name), "job-%lld.html", (long long)id);
	buf_reset(&t);
	buf_addf(&t, "job %lld: %s", (long long)id, j.name ? j.name : "");
	ret = add_page(r, name, t.buf, &content);
out:
	job_free(&j);
	rep_cmps_free(c, n);
	strvec_clear(&workloads);
	buf_release(&facts); buf_release(&kpi); buf_release(&wls); buf_release(&claims); buf_release(&t);
	buf_release(&content); buf_release(&sub); buf_release(&state); buf_release(&nic); buf_release(&cl);
	return ret;
}

/* ---- history pages ---- */

struct hpoint {
	int64_t job;
	double created, value;
	int64_t n;
};

static int history_page(struct rep *r, const char *wl, const char *metric, struct buf *tile)
{
	struct buf content = BUF_INIT, chart = BUF_INIT, cps = BUF_INIT, pts = BUF_INIT, cmps = BUF_INIT;
	struct buf title = BUF_INIT, sub = BUF_INIT, ylab = BUF_INIT, hs = BUF_INIT;
	struct hpoint *p = NULL;
	struct plot_xy *xy = NULL;
	struct plot_segment *seg = NULL;
	double *cpx = NULL;
	size_t n = 0, a = 0, ncp = 0, nseg = 0, i;
	char *unit = NULL, *file, *page = history_name(wl, metric);
	struct db_stmt *st;
	int ret = -1, ncp_rows = 0;
	double last_cp_change = NAN;
	int64_t last_cp_job = 0;
	double last_cp_time = NAN;

	db_get_str(r->db, &unit, "SELECT unit FROM comparisons WHERE workload = ? AND metric = ? AND unit IS NOT NULL "
		   "ORDER BY id DESC LIMIT 1", "ss", wl, metric);
	if (!unit)
		db_get_str(r->db, &unit, "SELECT m.unit FROM metrics m JOIN runs r ON r.id = m.run_id WHERE r.workload = ? "
			   "AND m.name = ? AND m.unit IS NOT NULL LIMIT 1", "ss", wl, metric);
	metric_label(&ylab, metric, unit);

	/* the nightly series: per scheduled job, the mean of its newest side */
	st = db_prepare(r->db,
		"SELECT j.id, j.created, AVG(m.value), COUNT(*) FROM jobs j "
		"JOIN runs r ON r.job_id = j.id JOIN metrics m ON m.run_id = r.id AND m.name = ? "
		"WHERE j.schedule IS NOT NULL AND r.workload = ? AND r.status = 'ok' "
		"AND r.side = (SELECT MAX(r2.side) FROM runs r2 WHERE r2.job_id = j.id) "
		"GROUP BY j.id ORDER BY j.created, j.id", "ss", metric, wl);
	if (!st)
		goto out;
	while (db_step(st) == DB_ROW) {
		if (n == a) {
			a = a ? 2 * a : 32;
			p = xrealloc(p, a * sizeof(*p));
		}
		p[n].job = db_col_int64(st, 0);
		p[n].created = db_col_double(st, 1);
		p[n].value = db_col_double(st, 2);
		p[n].n = db_col_int64(st, 3);
		n++;
	}
	db_finalize(st);
	xy = xcalloc(n + 1, sizeof(*xy));
	for (i = 0; i < n; i++) {
		xy[i].x = (double)(i + 1);
		xy[i].y = p[i].value;
	}

	/* change points */
	cpx = xcalloc(1, sizeof(*cpx));
	st = db_prepare(r->db, "SELECT job_id, tree, machines, mean_before, mean_after, change_pct, p, created "
			"FROM changepoints WHERE workload = ? AND metric = ? ORDER BY created, id", "ss", wl, metric);
	if (!st)
		goto out;
	while (db_step(st) == DB_ROW) {
		int64_t job = db_col_int64(st, 0);

		if (!ncp_rows++)
			buf_addstr(&cps, "<div class=\"table-wrap\"><table><tr><th>first job after</th><th>tree</th>"
				   "<th>machines</th><th class=\"num\">mean before</th><th class=\"num\">mean after</th>"
				   "<th class=\"num\">change</th><th class=\"num\">p</th><th>found</th></tr>\n");
		buf_addstr(&cps, "<tr><td>");
		job_link(r, &cps, job);
		buf_addstr(&cps, "</td><td>");
		html_escape(&cps, db_col_text(st, 1));
		buf_addstr(&cps, "</td><td>");
		html_escape(&cps, db_col_text(st, 2));
		buf_addstr(&cps, "</td><td class=\"num\">");
		rep_fmt_si(&cps, rep_coldbl(st, 3));
		buf_addstr(&cps, "</td><td class=\"num\">");
		rep_fmt_si(&cps, rep_coldbl(st, 4));
		buf_addstr(&cps, "</td><td class=\"num\">");
		rep_fmt_pct(&cps, rep_coldbl(st, 5));
		buf_addstr(&cps, "</td><td class=\"num\">");
		rep_fmt_p(&cps, rep_coldbl(st, 6));
		buf_addstr(&cps, "</td><td>");
		rep_fmt_time(&cps, rep_coldbl(st, 7));
		buf_addstr(&cps, "</td></tr>\n");
		last_cp_job = job;
		last_cp_change = rep_coldbl(st, 5);
		last_cp_time = rep_coldbl(st, 7);
		for (i = 0; i < n; i++)
			if (p[i].job == job && i > 0) {
				cpx = xrealloc(cpx, (ncp + 1) * sizeof(*cpx));
				cpx[ncp++] = (double)(i + 1);
			}
	}
	db_finalize(st);
	if (ncp_rows)
		buf_addstr(&cps, "</table></div>\n");
	else
		buf_addstr(&cps, "<p class=\"note\">No change point found in this series.</p>\n");

	/* segment means between change points */
	if (n) {
		size_t start = 0;

		qsort(cpx, ncp, sizeof(*cpx), dbl_cmp);
		seg = xcalloc(ncp + 1, sizeof(*seg));
		for (size_t s = 0; s <= ncp; s++) {
			size_t end = s < ncp ? (size_t)cpx[s] - 1 : n;	/* exclusive, 0-based */
			double sum = 0;

			if (end <= start)
				continue;
			for (i = start; i < end; i++)
				sum += p[i].value;
			seg[nseg].x0 = (double)(start + 1);
			seg[nseg].x1 = (double)end;
			seg[nseg].mean = sum / (double)(end - start);
			nseg++;
			start = end;
		}
	}
	buf_addf(&title, "%s: %s, nightly", wl, metric);
	buf_reset(&hs);
	buf_addstr(&hs, page);
	hs.len -= 5;	/* drop ".html" */
	hs.buf[hs.len] = 0;
	file = chart_file(r, "%s", hs.buf);
	{
		long long *ids = xcalloc(n + 1, sizeof(*ids));

		for (i = 0; i < n; i++)
			ids[i] = (long long)p[i].job;
		plot_history(&r->pb, file, title.buf, ylab.buf, xy, n, seg, nseg, cpx, ncp, ids);
		free(ids);
	}
	chart_add(r, &chart, file, title.buf);
	free(file);

	if (n) {
		buf_addstr(&pts, "<div class=\"table-wrap\"><table><tr><th class=\"num\">#</th><th>job</th><th>date</th>"
			   "<th class=\"num\">mean</th><th class=\"num\">runs</th></tr>\n");
		for (i = n; i-- > 0;) {
			buf_addf(&pts, "<tr><td class=\"num\">%zu</td><td>", i + 1);
			job_link(r, &pts, p[i].job);
			buf_addstr(&pts, "</td><td>");
			rep_fmt_time(&pts, p[i].created);
			buf_addstr(&pts, "</td><td class=\"num\">");
			rep_fmt_si(&pts, p[i].value);
			buf_addf(&pts, "</td><td class=\"num\">%lld</td></tr>\n", (long long)p[i].n);
		}
		buf_addstr(&pts, "</table></div>\n");
	} else {
		buf_addstr(&pts, "<p class=\"note\">No scheduled (nightly) job measured this metric yet.</p>\n");
	}

	/* every comparison of this metric, newest first */
	{
		struct buf sql = BUF_INIT;
		int k = 0;

		buf_addf(&sql, "SELECT %s FROM comparisons WHERE workload = ? AND metric = ? ORDER BY created DESC, id DESC "
			 "LIMIT 100", CMP_COLS);
		st = db_prepare(r->db, sql.buf, "ss", wl, metric);
		buf_release(&sql);
		if (!st)
			goto out;
		while (db_step(st) == DB_ROW) {
			struct rep_cmp c;

			cmp_read(st, &c);
			if (!k++)
				buf_addstr(&cmps, "<div class=\"table-wrap\"><table><tr><th>job</th><th>A</th><th>B</th>"
					   "<th class=\"num\">% change [95% CI]</th><th>verdict</th></tr>\n");
			buf_addstr(&cmps, "<tr><td>");
			if (c.job_id)
				job_link(r, &cmps, c.job_id);
			else
				buf_addstr(&cmps, "-");
			buf_addstr(&cmps, "</td><td>");
			html_escape(&cmps, c.label_a);
			buf_addstr(&cmps, "</td><td>");
			html_escape(&cmps, c.label_b);
			buf_addstr(&cmps, "</td><td class=\"num\">");
			rep_fmt_pct(&cmps, c.change_pct);
			buf_addstr(&cmps, " [");
			rep_fmt_pct(&cmps, c.ci_lo);
			buf_addstr(&cmps, ", ");
			rep_fmt_pct(&cmps, c.ci_hi);
			buf_addstr(&cmps, "]</td><td>");
			verdict_badge(&cmps, &c);
			buf_addstr(&cmps, "</td></tr>\n");
			cmp_free(&c);
		}
		db_finalize(st);
		if (k)
			buf_addstr(&cmps, "</table></div>\n");
		else
			buf_addstr(&cmps, "<p class=\"note\">None.</p>\n");
	}
	buf_addf(&sub, "%zu nightly point(s), %d change point(s); the line segments are the means between change points.",
		 n, ncp_rows);
	{
		const struct html_var vars[] = {
			{ "workload", wl, 0 },
			{ "metric", metric, 0 },
			{ "subtitle", sub.buf, 0 },
			{ "chart", chart.buf, 1 },
			{ "changepoints", cps.buf, 1 },
			{ "points", pts.buf, 1 },
			{ "comparisons", cmps.buf, 1 },
		};
		if (fill_static(&content, "history.tmpl", vars, ARRAY_SIZE(vars)) < 0)
			goto out;
	}
	buf_reset(&title);
	buf_addf(&title, "history %s %s", wl, metric);
	if (add_page(r, page, title.buf, &content) < 0)
		goto out;

	/* the tile on the index, for series with nightly data */
	if (tile && n) {
		buf_addf(tile, "<div class=\"tile\"><h3><a href=\"%s\">", page);
		html_escape(tile, wl);
		buf_addstr(tile, " &middot; ");
		html_escape(tile, metric);
		buf_addstr(tile, "</a></h3><div class=\"big\">");
		rep_fmt_si(tile, p[n - 1].value);
		buf_addstr(tile, "</div><div class=\"muted\">");
		html_escape(tile, unit);
		buf_addf(tile, " latest of %zu nightly run(s)</div><div>", n);
		if (ncp_rows) {
			buf_addstr(tile, "last change point: <strong>");
			rep_fmt_pct(tile, last_cp_change);
			buf_addstr(tile, "</strong> at ");
			job_link(r, tile, last_cp_job);
			buf_addstr(tile, " (");
			rep_fmt_time(tile, last_cp_time);
			buf_addstr(tile, ")");
		} else {
			buf_addstr(tile, "<span class=\"muted\">no change point</span>");
		}
		buf_addstr(tile, "</div></div>\n");
	}
	ret = 0;
out:
	free(p); free(xy); free(seg); free(cpx); free(unit); free(page);
	buf_release(&content); buf_release(&chart); buf_release(&cps); buf_release(&pts);
	buf_release(&cmps); buf_release(&title); buf_release(&sub); buf_release(&ylab); buf_release(&hs);
	return ret;
}

/* Every (workload, metric) that was compared or has change points gets a history page. */
static int history_pages(struct rep *r, struct buf *tiles, struct buf *list)
{
	struct db_stmt *st = db_prepare(r->db,
		"SELECT workload, metric FROM comparisons UNION SELECT workload, metric FROM changepoints "
		"ORDER BY 1, 2", "");
	int n = 0, ret = 0;

	if (!st)
		return -1;
	while (db_step(st) == DB_ROW) {
		const char *wl = db_col_text(st, 0);
		const char *m = db_col_text(st, 1);
		char *page;

		if (!wl || !m)
			continue;
		if (history_page(r, wl, m, tiles) < 0) {
			ret = -1;
			continue;
		}
		page = history_name(wl, m);
		if (!n++)
			buf_addstr(list, "<h3>Every history page</h3>\n<p>");
		else
			buf_addstr(list, " &middot; ");
		buf_addf(list, "<a href=\"%s\">", page);
		html_escape(list, wl);
		buf_addch(list, ' ');
		html_escape(list, m);
		buf_addstr(list, "</a>");
		free(page);
	}
	db_finalize(st);
	if (n)
		buf_addstr(list, "</p>\n");
	return ret;
}

/* ---- index ---- */

static void verdict_summary(struct rep *r, int64_t job, struct buf *h)
{
	struct rep_cmp *c;
	size_t n, i;
	int better = 0, worse = 0, changed = 0, equiv = 0, inconcl = 0;

	if (rep_load_cmps(r->db, job, &c, &n) < 0 || !n) {
		buf_addstr(h, "<span class=\"muted\">no comparison</span>");
		return;
	}
	for (i = 0; i < n; i++) {
		const char *v = c[i].verdict ? c[i].verdict : "";

		if (!strcmp(v, "CHANGED")) {
			int d = rep_direction(&c[i]);

			if (d > 0)
				better++;
			else if (d < 0)
				worse++;
			else
				changed++;
		} else if (!strcmp(v, "EQUIVALENT")) {
			equiv++;
		} else if (!strcmp(v, "INCONCLUSIVE")) {
			inconcl++;
		}
	}
	if (better)
		buf_addf(h, "<span class=\"badge v-better\">%d better</span> ", better);
	if (worse)
		buf_addf(h, "<span class=\"badge v-worse\">%d worse</span> ", worse);
	if (changed)
		buf_addf(h, "<span class=\"badge v-changed\">%d changed</span> ", changed);
	if (equiv)
		buf_addf(h, "<span class=\"badge v-equivalent\">%d equivalent</span> ", equiv);
	if (inconcl)
		buf_addf(h, "<span class=\"badge v-inconclusive\">%d inconclusive</span> ", inconcl);
	/* the headline of each workload */
	for (i = 0; i < n; i++) {
		if (i && !strcmp(c[i].workload, c[i - 1].workload))
			continue;
		buf_addstr(h, "<br><span class=\"muted\">");
		html_escape(h, c[i].workload);
		buf_addch(h, ' ');
		html_escape(h, c[i].metric);
		buf_addstr(h, "</span> ");
		rep_fmt_pct(h, c[i].change_pct);
	}
	rep_cmps_free(c, n);
}

static int index_page(struct rep *r, const char *tiles, const char *hist_list)
{
	struct buf jobs = BUF_INIT, mach = BUF_INIT, content = BUF_INIT, tl = BUF_INIT;
	struct db_stmt *st;
	int n = 0, ret = -1;

	st = db_prepare(r->db,
		"SELECT j.id, j.name, j.state, j.created, j.dut, j.peer, "
		"(SELECT label FROM job_sides WHERE job_id = j.id AND side = 'A'), "
		"(SELECT label FROM job_sides WHERE job_id = j.id AND side = 'B'), s.subject, j.schedule "
		"FROM jobs j LEFT JOIN series s ON s.id = j.series_id ORDER BY j.id DESC LIMIT ?", "i",
		(int64_t)r->max_jobs);
	if (!st)
		goto out;
	while (db_step(st) == DB_ROW) {
		int64_t id = db_col_int64(st, 0);
		const char *state = db_col_text(st, 2);

		if (!n++)
			buf_addstr(&jobs, "<div class=\"table-wrap\"><table><tr><th>job</th><th>state</th><th>created</th>"
				   "<th>kernels (A vs B)</th><th>series</th><th>machines</th><th>verdicts</th></tr>\n");
		buf_addstr(&jobs, "<tr><td>");
		job_link(r, &jobs, id);
		buf_addstr(&jobs, "<br><span class=\"muted\">");
		html_escape(&jobs, db_col_text(st, 1));
		if (!db_col_null(st, 9))
			buf_addstr(&jobs, " (scheduled)");
		buf_addstr(&jobs, "</span></td><td><span class=\"s-");
		rep_slug(&jobs, state ? state : "unknown");
		buf_addstr(&jobs, "\">");
		html_escape(&jobs, state);
		buf_addstr(&jobs, "</span></td><td>");
		rep_fmt_time(&jobs, rep_coldbl(st, 3));
		buf_addstr(&jobs, "</td><td><span class=\"side-a\">A</span> ");
		html_escape(&jobs, db_col_text(st, 6));
		if (!db_col_null(st, 7)) {
			buf_addstr(&jobs, "<br><span class=\"side-b\">B</span> ");
			html_escape(&jobs, db_col_text(st, 7));
		}
		buf_addstr(&jobs, "</td><td>");
		html_escape(&jobs, db_col_text(st, 8));
		buf_addstr(&jobs, "</td><td>");
		html_escape(&jobs, db_col_text(st, 4));
		buf_addstr(&jobs, " &rarr; ");
		html_escape(&jobs, db_col_text(st, 5));
		buf_addstr(&jobs, "</td><td>");
		verdict_summary(r, id, &jobs);
		buf_addstr(&jobs, "</td></tr>\n");
	}
	db_finalize(st);
	if (n)
		buf_addstr(&jobs, "</table></div>\n");
	else
		buf_addstr(&jobs, "<p class=\"note\">No job yet: <code>klab submit</code> queues one.</p>\n");

	n = 0;
	st = db_prepare(r->db, "SELECT m.name, m.host, m.role, m.state, m.state_since, m.state_reason, m.last_kernel, "
			"m.last_seen, l.job_id, l.expires FROM machines m LEFT JOIN leases l ON l.machine = m.name "
			"ORDER BY m.name", "");
	if (!st)
		goto out;
	while (db_step(st) == DB_ROW) {
		const char *state = db_col_text(st, 3);

		if (!n++)
			buf_addstr(&mach, "<div class=\"table-wrap\"><table><tr><th>machine</th><th>host</th><th>role</th>"
				   "<th>state</th><th>leased to</th><th>last kernel</th><th>last seen</th></tr>\n");
		buf_addstr(&mach, "<tr><td><code>");
		html_escape(&mach, db_col_text(st, 0));
		buf_addstr(&mach, "</code></td><td>");
		html_escape(&mach, db_col_text(st, 1));
		buf_addstr(&mach, "</td><td>");
		html_escape(&mach, db_col_text(st, 2));
		buf_addstr(&mach, "</td><td><span class=\"");
		buf_addstr(&mach, state && !strcmp(state, "free") ? "s-done" : "s-failed");
		buf_addstr(&mach, "\">");
		html_escape(&mach, state);
		buf_addstr(&mach, "</span>");
		if (!db_col_null(st, 5)) {
			buf_addstr(&mach, " <span class=\"muted\">(");
			html_escape(&mach, db_col_text(st, 5));
			buf_addstr(&mach, ")</span>");
		}
		buf_addstr(&mach, "</td><td>");
		if (!db_col_null(st, 8))
			job_link(r, &mach, db_col_int64(st, 8));
		else
			buf_addstr(&mach, "-");
		buf_addstr(&mach, "</td><td>");
		html_escape(&mach, db_col_text(st, 6));
		buf_addstr(&mach, "</td><td>");
		rep_fmt_time(&mach, rep_coldbl(st, 7));
		buf_addstr(&mach, "</td></tr>\n");
	}
	db_finalize(st);
	if (n)
		buf_addstr(&mach, "</table></div>\n");
	else
		buf_addstr(&mach, "<p class=\"note\">No machine has been seen yet.</p>\n");
	if (*tiles)
		buf_addf(&tl, "<div class=\"tiles\">\n%s</div>\n", tiles);
	else
		buf_addstr(&tl, "<p class=\"note\">No nightly series yet: a schedule in the config fires them.</p>\n");
	{
		const struct html_var vars[] = {
			{ "jobs", jobs.buf, 1 },
			{ "tiles", tl.buf, 1 },
			{ "histories", hist_list, 1 },
			{ "machines", mach.buf, 1 },
		};
		if (fill_static(&content, "index.tmpl", vars, ARRAY_SIZE(vars)) < 0)
			goto out;
	}
	ret = add_page(r, "index.html", "reports", &content);
out:
	buf_release(&jobs);
	buf_release(&mach);
	buf_release(&content);
	buf_release(&tl);
	return ret;
}

/* ---- writing ---- */

/* Replace the chart markers with an image or, when the chart is missing, a note. */
static void resolve_charts(const struct rep *r, const char *why_missing, const struct buf *in, struct buf *out)
{
	const char *p = in->buf, *m;

	while ((m = memchr(p, CHART_MARK, (size_t)(in->buf + in->len - p)))) {
		char *end;
		unsigned long idx = strtoul(m + 1, &end, 10);

		buf_add(out, p, (size_t)(m - p));
		if (*end != CHART_MARK || idx >= r->n_charts) {
			p = m + 1;	/* cannot happen: markers are only made by chart_add() */
			continue;
		}
		if (!why_missing && plot_exists(&r->pb, r->charts[idx].file)) {
			buf_addstr(out, "<figure class=\"chart\"><img src=\"");
			html_url(out, r->charts[idx].file);
			buf_addstr(out, "\" alt=\"");
			html_escape(out, r->charts[idx].title);
			buf_addstr(out, "\"></figure>");
		} else {
			buf_addstr(out, "<div class=\"chart-missing\">Chart not drawn: ");
			html_escape(out, r->charts[idx].title);
			buf_addstr(out, "<br>");
			html_escape(out, why_missing ? why_missing : "gnuplot failed on this chart (see the klab log)");
			buf_addstr(out, "</div>");
		}
		p = end + 1;
	}
	buf_addstr(out, p);
}

static int copy_static(const char *outdir, const char *name)
{
	struct buf b = BUF_INIT;
	char *dst;
	int ret;

	if (html_load_static(&b, name) < 0)
		return -1;
	dst = xasprintf("%s/%s", outdir, name);
	ret = write_file_atomic(dst, b.buf, b.len, 0644);
	free(dst);
	buf_release(&b);
	return ret;
}

static int rep_finish(struct rep *r, struct report_stats *st)
{
	const char *why = NULL;
	int ret = 0;
	size_t i;

	if (r->no_charts)
		why = "charts are turned off for this report (--no-charts).";
	else if (!plot_gnuplot())
		why = "gnuplot is not installed (apt-get install gnuplot-nox), so no chart was drawn.";
	if (!why) {
		int made = plot_batch_run(&r->pb);

		if (made < 0)
			why = "gnuplot could not be run (see the klab log).";
		else if (st)
			st->charts_drawn = made;
	}
	if (st) {
		st->charts = (int)r->n_charts;
		st->gnuplot_runs = r->pb.processes;
	}
	if (copy_static(r->outdir, "style.css") < 0)
		ret = -1;
	for (i = 0; i < r->n_pages; i++) {
		struct buf out = BUF_INIT;
		char *path = xasprintf("%s/%s", r->outdir, r->pages[i].name);

		resolve_charts(r, why, &r->pages[i].html, &out);
		if (write_file_atomic(path, out.buf, out.len, 0644) < 0)
			ret = -1;
		else if (st)
			st->pages++;
		free(path);
		buf_release(&out);
	}
	return ret;
}

static void rep_init(struct rep *r, struct db *db, const char *outdir, const struct report_opts *o)
{
	time_t now = time(NULL);
	struct tm tm;

	memset(r, 0, sizeof(*r));
	r->db = db;
	r->outdir = xstrdup(outdir);
	r->no_charts = o ? o->no_charts : 0;
	r->max_jobs = o && o->max_jobs > 0 ? o->max_jobs : 200;
	plot_batch_init(&r->pb, outdir, PLOT_SVG);
	gmtime_r(&now, &tm);
	strftime(r->generated, sizeof(r->generated), "%Y-%m-%d %H:%M", &tm);
}

static void rep_release(struct rep *r)
{
	size_t i;

	for (i = 0; i < r->n_charts; i++) {
		free(r->charts[i].file);
		free(r->charts[i].title);
	}
	free(r->charts);
	for (i = 0; i < r->n_pages; i++) {
		free(r->pages[i].name);
		buf_release(&r->pages[i].html);
	}
	free(r->pages);
	free(r->jobs);
	free(r->outdir);
	plot_batch_release(&r->pb);
}

static int rep_run(struct rep *r, struct report_stats *st)
{
	struct buf tiles = BUF_INIT, hist = BUF_INIT;
	char *charts;
	int ret = 0;
	size_t i;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!html_static_dir())
		return error("cannot find the web-static folder with the page templates (set KLAB_WEB_STATIC)");
	charts = xasprintf("%s/charts", r->outdir);
	if (mkdir_p(charts) < 0) {
		free(charts);
		return -1;
	}
	free(charts);
	for (i = 0; i < r->n_jobs; i++)
		if (job_page(r, r->jobs[i]) < 0)
			ret = -1;
	if (history_pages(r, &tiles, &hist) < 0)
		ret = -1;
	if (index_page(r, tiles.buf, hist.buf) < 0)
		ret = -1;
	if (rep_finish(r, st) < 0)
		ret = -1;
	buf_release(&tiles);
	buf_release(&hist);
	return ret;
}

int report_jobs(struct db *db, const char *outdir, const int64_t *ids, size_t n,
		const struct report_opts *opts, struct report_stats *st)
{
	struct rep r;
	int ret;

	rep_init(&r, db, outdir, opts);
	r.jobs = xcalloc(n + 1, sizeof(*r.jobs));
	memcpy(r.jobs, ids, n * sizeof(*ids));
	r.n_jobs = n;
	ret = rep_run(&r, st);
	rep_release(&r);
	return ret;
}

int report_job(struct db *db, const char *outdir, int64_t job_id)
{
	return report_jobs(db, outdir, &job_id, 1, NULL, NULL);
}

int report_write_all(struct db *db, const char *outdir, const struct report_opts *opts,
		     struct report_stats *st)
{
	struct rep r;
	struct db_stmt *s;
	size_t a = 0;
	int ret;

	rep_init(&r, db, outdir, opts);
	s = db_prepare(db, "SELECT id FROM jobs WHERE state != 'queued' ORDER BY id DESC LIMIT ?", "i",
		       (int64_t)r.max_jobs);
	if (!s) {
		rep_release(&r);
		return -1;
	}
	while (db_step(s) == DB_ROW) {
		if (r.n_jobs == a) {
			a = a ? 2 * a : 32;
			r.jobs = xrealloc(r.jobs, a * sizeof(*r.jobs));
		}
		r.jobs[r.n_jobs++] = db_col_int64(s, 0);
	}
	db_finalize(s);
	ret = rep_run(&r, st);
	rep_release(&r);
	return ret;
}
