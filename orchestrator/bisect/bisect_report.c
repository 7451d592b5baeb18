/* bisect_report.c: what a finished bisection says: the mail text (bisect_mail) from the database, and its report page. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect/bisect.h"
#include "bisect/bisect_db.h"
#include "buf.h"
#include "report/html.h"
#include "log.h"
#include "report/plot.h"
#include "util.h"

/* The strings of a bisection's answer, owned here. */
struct answer_rows {
	char *s[14];
};

static const char *col(struct db_stmt *q, int i, struct answer_rows *o, int k)
{
	o->s[k] = db_col_text(q, i) ? xstrdup(db_col_text(q, i)) : NULL;
	return o->s[k];
}

/* 0 with *A filled, 1 when the bisection has no commit to name (yet), -1 on an error. */
static int load_answer(struct db *db, int64_t id, struct bisect_answer *a, struct answer_rows *o, char **state,
		       int *regression)
{
	struct db_stmt *q = db_prepare(db,
		"SELECT b.tree, b.good_ref, b.bad_ref, b.workload, b.metric, b.first_bad, b.first_bad_subject, "
		"(SELECT k.release FROM bisect_steps s JOIN kernels k ON k.id = s.kernel_id WHERE s.bisection_id = b.id "
		" AND s.seq = 0), "
		"(SELECT k.release FROM bisect_steps s JOIN kernels k ON k.id = s.kernel_id WHERE s.bisection_id = b.id "
		" AND s.seq = 1), "
		"j.dut, j.peer, "
		"(SELECT r.clock FROM runs r WHERE r.job_id = j.id LIMIT 1), "
		"(SELECT m.unit FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = j.id AND "
		" r.workload = b.workload AND m.name = b.metric LIMIT 1), "
		"(SELECT m.better FROM runs r JOIN metrics m ON m.run_id = r.id WHERE r.job_id = j.id AND "
		" r.workload = b.workload AND m.name = b.metric LIMIT 1), "
		"b.change_pct, b.ci_lo, b.ci_hi, b.alpha, b.state, COALESCE(b.result, ''), "
		"(SELECT count(*) FROM bisect_steps s WHERE s.bisection_id = b.id AND s.role = 'step'), "
		"(SELECT COALESCE(SUM(s.boots), 0) FROM bisect_steps s WHERE s.bisection_id = b.id) "
		"FROM bisections b LEFT JOIN jobs j ON j.id = (SELECT MAX(id) FROM jobs WHERE bisection_id = b.id AND "
		"bisect_seq = 0) WHERE b.id = ?", "i", id);
	int ret = -1;

	memset(a, 0, sizeof(*a));
	if (!q)
		return -1;
	if (db_step(q) != DB_ROW) {
		error("no bisection %lld (klab bisect list shows them)", (long long)id);
		goto out;
	}
	a->tree = col(q, 0, o, 0);
	a->good = col(q, 1, o, 1);
	a->bad = col(q, 2, o, 2);
	a->workload = col(q, 3, o, 3);
	a->metric = col(q, 4, o, 4);
	a->commit = col(q, 5, o, 5);
	a->subject = col(q, 6, o, 6);
	a->good_kernel = col(q, 7, o, 7);
	a->bad_kernel = col(q, 8, o, 8);
	a->dut = col(q, 9, o, 9);
	a->peer = col(q, 10, o, 10);
	a->clock = col(q, 11, o, 11) && !strcmp(o->s[11], "icount") ? "instruction count (icount)" : "real time";
	a->unit = col(q, 12, o, 12);
	*regression = !col(q, 13, o, 13) || strcmp(o->s[13], "lower");	/* higher is better unless said */
	a->change_pct = db_col_null(q, 14) ? NAN : db_col_double(q, 14);
	a->ci_lo = db_col_null(q, 15) ? NAN : db_col_double(q, 15);
	a->ci_hi = db_col_null(q, 16) ? NAN : db_col_double(q, 16);
	a->alpha = db_col_double(q, 17);
	*state = xasprintf("%s %s", db_col_text(q, 18), db_col_text(q, 19));
	a->ambiguous = !strcmp(db_col_text(q, 19), "ambiguous");
	a->steps = (int)db_col_int(q, 20);
	a->boots = (int)db_col_int(q, 21);
	a->id = id;
	*regression = *regression ? a->change_pct < 0 : a->change_pct > 0;
	ret = a->commit && (!strcmp(db_col_text(q, 19), "found") || a->ambiguous) ? 0 : 1;
out:
	db_finalize(q);
	return ret;
}

static void rows_release(struct answer_rows *o)
{
	for (size_t i = 0; i < ARRAY_SIZE(o->s); i++)
		free(o->s[i]);
}

int bisect_mail_text(struct db *db, int64_t id, struct buf *out)
{
	struct bisect_answer a;
	struct answer_rows o;
	char *state = NULL;
	int regression = 0, r;

	memset(&o, 0, sizeof(o));
	r = load_answer(db, id, &a, &o, &state, &regression);
	if (r == 0)
		bisect_mail(out, &a, regression);
	else if (r == 1)
		buf_addf(out, "bisection %lld names no commit: %s\n", (long long)id, state);
	free(state);
	rows_release(&o);
	return r;
}

/* The page's table and chart of the steps. */
static void steps_html(struct db *db, int64_t id, struct buf *h, struct plot_batch *pb, const char *chart,
		       const char *title)
{
	struct db_stmt *q = db_prepare(db, "SELECT s.seq, s.role, s.commit_id, COALESCE(s.subject, ''), s.boots, "
				       "s.value, COALESCE(s.verdict, '-'), COALESCE(s.reason, ''), s.job_id, "
				       "COALESCE(s.remaining, 0) FROM bisect_steps s WHERE s.bisection_id = ? ORDER BY s.seq",
				       "i", id);
	struct plot_xy *pts = NULL;
	long long *xl = NULL;
	size_t n = 0;

	buf_addstr(h, "<table class=\"steps\"><tr><th>#</th><th>role</th><th>commit</th><th>subject</th>"
		   "<th>commits left</th><th>boots</th><th>mean</th><th>verdict</th><th>why</th><th>job</th></tr>\n");
	while (q && db_step(q) == DB_ROW) {
		const char *v = db_col_text(q, 6);
		buf_addf(h, "<tr class=\"%s\"><td>%lld</td><td>", v, (long long)db_col_int(q, 0));
		html_escape(h, db_col_text(q, 1));
		buf_addstr(h, "</td><td><code>");
		html_escape_n(h, db_col_text(q, 2), 12);
		buf_addstr(h, "</code></td><td>");
		html_escape(h, db_col_text(q, 3));
		buf_addf(h, "</td><td>%lld</td><td>%lld</td><td>", (long long)db_col_int(q, 9), (long long)db_col_int(q, 4));
		if (!db_col_null(q, 5))
			buf_addf(h, "%.6g", db_col_double(q, 5));
		buf_addstr(h, "</td><td>");
		html_escape(h, v);
		buf_addstr(h, "</td><td>");
		html_escape(h, db_col_text(q, 7));
		buf_addstr(h, "</td><td>");
		if (!db_col_null(q, 8))
			buf_addf(h, "<a href=\"job-%lld.html\">%lld</a>", (long long)db_col_int(q, 8),
				 (long long)db_col_int(q, 8));
		buf_addstr(h, "</td></tr>\n");
		if (!db_col_null(q, 5)) {
			pts = xrealloc(pts, (n + 1) * sizeof(*pts));
			xl = xrealloc(xl, (n + 1) * sizeof(*xl));
			pts[n].x = (double)n;
			pts[n].y = db_col_double(q, 5);
			xl[n] = db_col_int(q, 0);
			n++;
		}
	}
	db_finalize(q);
	buf_addstr(h, "</table>\n");
	plot_history(pb, chart, title, "mean per boot", pts, n, NULL, 0, NULL, 0, xl);
	free(pts);
	free(xl);
}

int bisect_page(struct db *db, int64_t id, const char *outdir)
{
	struct buf h = BUF_INIT, mail = BUF_INIT;
	struct plot_batch pb;
	struct bisect_answer a;
	struct answer_rows o;
	char *state = NULL, *chart = NULL, *path = NULL, *title = NULL, *txt = NULL;
	int regression = 0, r, ret = -1;

	memset(&o, 0, sizeof(o));
	r = load_answer(db, id, &a, &o, &state, &regression);
	if (r < 0)
		goto out;
	if (mkdir_p(outdir) < 0)
		goto out;
	plot_batch_init(&pb, outdir, PLOT_SVG);
	chart = xasprintf("charts/bisect-%lld%s", (long long)id, plot_ext(&pb));
	title = xasprintf("%s.%s per measured commit, in the order measured", a.workload, a.metric);
	buf_addf(&h, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bisection %lld</title>"
		 "<link rel=\"stylesheet\" href=\"style.css\"></head><body>\n<p><a href=\"index.html\">all jobs</a></p>\n",
		 (long long)id);
	buf_addf(&h, "<h1>Bisection %lld: ", (long long)id);
	html_escapef(&h, "%s.%s on tree %s, %s..%s", a.workload, a.metric, a.tree, a.good, a.bad);
	buf_addstr(&h, "</h1>\n<p class=\"answer\">");
	if (r == 0) {
		html_escapef(&h, "%s %+.2f%% (95%% CI %+.2f%% to %+.2f%%) of %s.%s on commit %.12s (\"%s\")%s, measured by %s.",
			     regression ? "Regression" : "Improvement", a.change_pct, a.ci_lo, a.ci_hi, a.workload, a.metric,
			     a.commit, a.subject ? a.subject : "",
			     a.ambiguous ? ", or on a skipped commit just before it" : "", a.clock);
		if (a.clock && strstr(a.clock, "icount"))
			buf_addstr(&h, " An instruction count is a path length, not hardware throughput: cache misses, "
				   "contention and NIC limits are not in it.");
	} else {
		html_escapef(&h, "No commit named: %s.", state);
	}
	buf_addstr(&h, "</p>\n");
	steps_html(db, id, &h, &pb, chart, title);
	buf_addstr(&h, "<figure><img src=\"");
	html_escape(&h, chart);
	buf_addstr(&h, "\" alt=\"the metric per measured commit\"></figure>\n");
	if (r == 0) {
		bisect_mail(&mail, &a, regression);
		buf_addstr(&h, "<h2>Mail text</h2>\n<pre>");
		html_escape(&h, mail.buf);
		buf_addstr(&h, "</pre>\n");
	}
	buf_addstr(&h, "</body></html>\n");
	if (plot_batch_run(&pb) < 0)
		warn("bisection %lld: the chart was not drawn", (long long)id);
	plot_batch_release(&pb);
	path = xasprintf("%s/bisect-%lld.html", outdir, (long long)id);
	if (write_file_atomic(path, h.buf, h.len, 0644) < 0)
		goto out;
	if (r == 0) {
		txt = xasprintf("%s/bisect-%lld.txt", outdir, (long long)id);
		if (write_file_atomic(txt, mail.buf, mail.len, 0644) < 0)
			goto out;
	}
	ret = 0;
out:
	free(state);
	free(chart);
	free(path);
	free(title);
	free(txt);
	rows_release(&o);
	buf_release(&h);
	buf_release(&mail);
	return ret;
}
