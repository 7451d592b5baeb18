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
#include "store/bisections.h"
#include "util.h"

/* The strings of a bisection's answer, owned here. */
struct answer_rows {
	char *s[14];
};

static const char *keep(const char *v, struct answer_rows *o, int k)
{
	o->s[k] = v ? xstrdup(v) : NULL;
	return o->s[k];
}

struct answer_ctx {
	struct bisect_answer *a;
	struct answer_rows *o;
	char **state;
	int *regression;
	int ret;
};

static void answer_read(const struct bisection_answer_row *row, void *data)
{
	struct answer_ctx *x = data;
	struct bisect_answer *a = x->a;
	struct answer_rows *o = x->o;

	a->tree = keep(row->tree, o, 0);
	a->good = keep(row->good_ref, o, 1);
	a->bad = keep(row->bad_ref, o, 2);
	a->workload = keep(row->workload, o, 3);
	a->metric = keep(row->metric, o, 4);
	a->commit = keep(row->first_bad, o, 5);
	a->subject = keep(row->subject, o, 6);
	a->good_kernel = keep(row->good_kernel, o, 7);
	a->bad_kernel = keep(row->bad_kernel, o, 8);
	a->dut = keep(row->dut, o, 9);
	a->peer = keep(row->peer, o, 10);
	a->clock = keep(row->clock, o, 11) && !strcmp(o->s[11], "icount") ? "instruction count (icount)" : "real time";
	a->unit = keep(row->unit, o, 12);
	*x->regression = !keep(row->better, o, 13) || strcmp(o->s[13], "lower");	/* higher is better unless said */
	a->change_pct = row->change_pct;
	a->ci_lo = row->ci_lo;
	a->ci_hi = row->ci_hi;
	a->alpha = row->alpha;
	*x->state = xasprintf("%s %s", row->state, row->result);
	a->ambiguous = !strcmp(row->result, "ambiguous");
	a->steps = (int)row->steps;
	a->boots = (int)row->boots;
	*x->regression = *x->regression ? a->change_pct < 0 : a->change_pct > 0;
	x->ret = a->commit && (!strcmp(row->result, "found") || a->ambiguous) ? 0 : 1;
}

/* 0 with *A filled, 1 when the bisection has no commit to name (yet), -1 on an error. */
static int load_answer(struct db *db, int64_t id, struct bisect_answer *a, struct answer_rows *o, char **state,
		       int *regression)
{
	struct answer_ctx x = { a, o, state, regression, -1 };
	int r;

	memset(a, 0, sizeof(*a));
	r = bisection_answer_get(db, id, answer_read, &x);
	if (r < 0)
		return -1;
	if (r == 0) {
		error("no bisection %lld (klab bisect list shows them)", (long long)id);
		return -1;
	}
	a->id = id;
	return x.ret;
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

struct steps_ctx {
	struct buf *h;
	struct plot_xy *pts;
	long long *xl;
	size_t n;
};

static void step_row(const struct bisect_step_page_row *s, void *data)
{
	struct steps_ctx *x = data;
	struct buf *h = x->h;
	const char *v = s->verdict;

	buf_addf(h, "<tr class=\"%s\"><td>%lld</td><td>", v, (long long)s->seq);
	html_escape(h, s->role);
	buf_addstr(h, "</td><td><code>");
	html_escape_n(h, s->commit, 12);
	buf_addstr(h, "</code></td><td>");
	html_escape(h, s->subject);
	buf_addf(h, "</td><td>%lld</td><td>%lld</td><td>", (long long)s->remaining, (long long)s->boots);
	if (s->has_value)
		buf_addf(h, "%.6g", s->value);
	buf_addstr(h, "</td><td>");
	html_escape(h, v);
	buf_addstr(h, "</td><td>");
	html_escape(h, s->reason);
	buf_addstr(h, "</td><td>");
	if (s->has_job)
		buf_addf(h, "<a href=\"job-%lld.html\">%lld</a>", (long long)s->job_id, (long long)s->job_id);
	buf_addstr(h, "</td></tr>\n");
	if (s->has_value) {
		x->pts = xrealloc(x->pts, (x->n + 1) * sizeof(*x->pts));
		x->xl = xrealloc(x->xl, (x->n + 1) * sizeof(*x->xl));
		x->pts[x->n].x = (double)x->n;
		x->pts[x->n].y = s->value;
		x->xl[x->n] = s->seq;
		x->n++;
	}
}

/* The page's table and chart of the steps. */
static void steps_html(struct db *db, int64_t id, struct buf *h, struct plot_batch *pb, const char *chart,
		       const char *title)
{
	struct steps_ctx x = { h, NULL, NULL, 0 };

	buf_addstr(h, "<table class=\"steps\"><tr><th>#</th><th>role</th><th>commit</th><th>subject</th>"
		   "<th>commits left</th><th>boots</th><th>mean</th><th>verdict</th><th>why</th><th>job</th></tr>\n");
	bisect_steps_page_each(db, id, step_row, &x);
	buf_addstr(h, "</table>\n");
	plot_history(pb, chart, title, "mean per boot", x.pts, x.n, NULL, 0, NULL, 0, x.xl);
	free(x.pts);
	free(x.xl);
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
